package webhook

import (
	"context"
	"strings"
	"sync"

	"payd/internal/store"
)

// Streams across processes (CONTRACT §21: a stream on any payd process sees
// the events every process commits). Once a transaction that wrote a
// merchant's events commits, this process signals the merchant on
// streamChannel (store.DB.Signal: NOTIFY on PostgreSQL), and every process
// listens there (store.DB.Listen, one connection a process) and wakes its
// streams of that merchant at once.
//
// One channel for every merchant, the merchant's id in the payload: a
// process listens once, whoever streams there, where a channel a merchant
// would be a LISTEN and an UNLISTEN as each merchant's first stream opens
// and its last closes; a process with no stream of the merchant drops the
// signal after a map lookup.
//
// The signal is sent after the commit, by one sender a process, not by the
// business transaction: PostgreSQL holds a lock on the notification queue
// from a notifying transaction's commit until it is durable, which would
// make every commit that writes events wait for the flush of the one
// before it. The sender names every merchant committed since its last
// signal in one statement, so signals do not grow with the event rate.
//
// A signal is a hint. One lost (a crash between commit and signal, a
// listener reconnecting, a process that never runs the sender, such as an
// operator command) is found by the streams' poll (StreamPoll); a listener
// that connects again wakes every stream of its process.

// streamChannel is the channel the processes signal new events on.
const streamChannel = "payd_events"

// maxSignalled bounds the merchants waiting to be signalled; past it a
// merchant committed is not signalled (the poll finds its events).
const maxSignalled = 10_000

// signaller gathers the merchants whose events this process committed,
// for its sender (runSignals).
type signaller struct {
	// origin names this process in its payloads ("ORIGIN MERCHANT"), so
	// that it skips its own signals: its streams woke at the commit.
	origin string
	wake   chan struct{}

	mu      sync.Mutex
	pending map[string]bool
}

func newSignaller() *signaller {
	return &signaller{origin: store.RandomID(12), wake: make(chan struct{}, 1), pending: map[string]bool{}}
}

// add notes that merchantID's events committed here.
func (s *signaller) add(merchantID string) {
	s.mu.Lock()
	if len(s.pending) < maxSignalled {
		s.pending[merchantID] = true
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take is up to store.MaxSignals payloads of the merchants waiting, which
// it forgets, and whether more wait.
func (s *signaller) take() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for m := range s.pending {
		if len(out) == store.MaxSignals {
			return out, true
		}
		delete(s.pending, m)
		out = append(out, s.origin+" "+m)
	}
	return out, false
}

// runSignals sends this process's signals and hears the others' until ctx
// ends.
func (d *Dispatcher) runSignals(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		d.db.Listen(ctx, streamChannel, store.Listener{
			Heard:     d.heard,
			Connected: d.streams.notifyAll,
			Broke: func(err error) {
				d.log.Warn("event streams stopped hearing other processes; connecting again", "err", err)
			},
		})
	})
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.signals.wake:
		}
		for more := true; more && ctx.Err() == nil; {
			var payloads []string
			payloads, more = d.signals.take()
			if err := d.db.Signal(ctx, streamChannel, payloads); err != nil && ctx.Err() == nil {
				d.log.Warn("event streams of other processes not woken (they poll)", "err", err)
			}
		}
	}
}

// heard wakes the streams of the merchant another process signalled.
func (d *Dispatcher) heard(payload string) {
	origin, merchantID, ok := strings.Cut(payload, " ")
	if !ok || origin == d.signals.origin {
		return
	}
	d.streams.notify(merchantID)
}
