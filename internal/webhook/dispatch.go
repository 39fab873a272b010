package webhook

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
)

// DefaultSchedule is the delay before each retry (CONTRACT §3): about three
// days in all, after which the event is marked failed.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Status of an event's delivery.
type Status string

const (
	Pending   Status = "pending"
	Delivered Status = "delivered"
	Failed    Status = "failed"
)

// Dispatcher delivers events from the outbox.
type Dispatcher struct {
	db      *store.DB
	clock   clock.Clock
	log     *slog.Logger
	policy  Policy
	client  *http.Client
	observe func(outcome string, latency time.Duration)
	poller  *job.Poller

	// Schedule is the delay before each retry; its length bounds the retries.
	Schedule []time.Duration
	// Timeout bounds one attempt (15 s).
	Timeout time.Duration
	// MaxInFlight bounds concurrent attempts of this process, and
	// MaxPerEndpoint those to one endpoint, so that one slow receiver cannot
	// take every slot.
	MaxInFlight    int
	MaxPerEndpoint int
	// PollInterval is how often an idle dispatcher looks for due events
	// (retries that became due, events committed by other processes).
	PollInterval time.Duration
	// DisableAfter is how long every delivery to a webhook endpoint may fail
	// before it is disabled (DefaultDisableAfter).
	DisableAfter time.Duration
	// StreamPoll is how often an event stream looks for events no signal
	// told of (events committed here, or signalled by another process,
	// wake it at once);
	// StreamHeartbeat how often an idle stream sends a comment;
	// MaxStreams bounds a merchant's open streams in this process.
	StreamPoll, StreamHeartbeat time.Duration
	MaxStreams                  int
	streams                     *streamHub
	signals                     *signaller

	// Lease is how long a claimed event is reserved for this process: longer
	// than an attempt can take (Timeout), short enough that an event held by a
	// process that crashed is retried soon after by another.
	Lease time.Duration

	// failures logs failed deliveries, once a minute a receiver.
	failures failureLog

	mu       sync.Mutex
	inFlight int
	busy     map[string]int
	// hinted are endpoints that may have due events: true for one this
	// process just committed an event for that was not handed over at
	// birth, or one an attempt just finished on while it had a backlog;
	// false for one whose events were just recorded, which the claim
	// probes first (an event of the same record may have waited). They are
	// claimed for one endpoint at a time, which an index keeps cheap
	// whatever the backlog; the claim over every endpoint (which must skip
	// a saturated endpoint's backlog) runs only on the poll tick and on
	// Wake.
	hinted map[string]bool
	// full asks the next round for a claim over every endpoint.
	full bool
	// claims counts claim transactions (the tests read it).
	claims atomic.Int64
	// backlog are endpoints that may have events only a claim finds (not
	// handed over at birth): an attempt finishing there hints them.
	backlog map[string]bool
	// running is set while Run runs: events emitted here are handed over
	// at birth (handoff.go), and wait in ready for their slots.
	running bool
	ready   map[string][]handed
	waiting int // events in ready
}

// NewDispatcher returns a dispatcher. observe hears each attempt's outcome
// ("delivered", "retry", "failed") and latency, for metrics.
func NewDispatcher(db *store.DB, clk clock.Clock, log *slog.Logger, policy Policy, observe func(string, time.Duration)) *Dispatcher {
	if observe == nil {
		observe = func(string, time.Duration) {}
	}
	d := &Dispatcher{db: db, clock: clk, log: log, policy: policy, observe: observe, poller: job.NewPoller(),
		Schedule: DefaultSchedule, Timeout: 15 * time.Second, MaxInFlight: 64, MaxPerEndpoint: 16,
		PollInterval: 250 * time.Millisecond, Lease: 20 * time.Second, busy: map[string]int{}, hinted: map[string]bool{},
		backlog: map[string]bool{}, ready: map[string][]handed{},
		DisableAfter: DefaultDisableAfter, StreamPoll: DefaultStreamPoll, StreamHeartbeat: DefaultStreamHeartbeat, MaxStreams: DefaultMaxStreams, streams: newStreamHub(), signals: newSignaller()}
	d.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, Control: d.checkDial}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
			// As many kept-alive connections per receiver as attempts run
			// there at once: with fewer, every attempt past them opened a
			// connection (and in production a TLS session) and closed it.
			MaxIdleConnsPerHost: d.MaxPerEndpoint,
			IdleConnTimeout:     90 * time.Second,
		},
		// Redirects are not followed: a 3xx is an answer like any other non-2xx.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// Run delivers events until ctx is done; attempts in flight are then
// abandoned and their events released for the next process. It also
// signals the events committed here to the event streams of other
// processes, and hears theirs (signal.go).
func (d *Dispatcher) Run(ctx context.Context) {
	records := make(chan recording, recordQueue)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.recorder(context.WithoutCancel(ctx), records)
	}()
	var wg sync.WaitGroup
	defer func() {
		d.stopHandOffs(context.WithoutCancel(ctx))
		wg.Wait()
		close(records)
		<-recorded
	}()
	wg.Go(func() { d.runSignals(ctx) })
	d.mu.Lock()
	d.full = true // the first round looks everywhere
	d.running = true
	d.mu.Unlock()
	launch := func(evs []claimed) {
		for _, ev := range evs {
			d.start(ev.endpoint)
			wg.Go(func() {
				defer d.finish(ev.endpoint)
				d.attempt(ctx, ev, records)
			})
		}
	}
	d.poller.Loop(ctx, d.PollInterval, func(polled bool) bool {
		if polled {
			d.mu.Lock()
			d.full = true // a poll looks everywhere
			d.mu.Unlock()
		}
		return d.round(ctx, launch)
	})
}

// round starts the events handed over at birth that have slots, claims
// over every endpoint when asked (the first round, Wake, a poll), then for
// the hinted endpoints, and reports whether a claim was full: there may be
// more to claim at once.
func (d *Dispatcher) round(ctx context.Context, launch func([]claimed)) bool {
	ready, stale := d.takeReady()
	launch(ready)
	d.release(ctx, stale)
	more := d.takeFull() && d.claimEverywhere(ctx, launch)
	return d.claimHinted(ctx, launch) || more
}

// claimEverywhere claims due events over every endpoint, as many as there
// are free slots, and reports whether it took that many.
func (d *Dispatcher) claimEverywhere(ctx context.Context, launch func([]claimed)) bool {
	free, busy, saturated := d.capacity()
	if free <= 0 {
		return false
	}
	evs, err := d.claim(ctx, free, busy, saturated)
	if err != nil && ctx.Err() == nil {
		d.log.Error("webhook claim", "err", err)
	}
	launch(evs)
	d.mu.Lock()
	for _, ev := range evs {
		d.backlog[ev.endpoint] = true // it may have more
	}
	d.mu.Unlock()
	return len(evs) > 0 && len(evs) == free
}

// claimHinted claims for each hinted endpoint that has a batch of free
// slots (claimable), and reports whether a claim took as many as it asked
// for: that endpoint is hinted again.
func (d *Dispatcher) claimHinted(ctx context.Context, launch func([]claimed)) bool {
	more := false
	for _, want := range d.claimable() {
		evs, err := d.claimFor(ctx, want.endpoint, want.n, want.probe)
		if err != nil && ctx.Err() == nil {
			d.log.Error("webhook claim", "endpoint", want.endpoint, "err", err)
		}
		launch(evs)
		if len(evs) == want.n {
			d.wakeFor(want.endpoint) // there may be more
			more = true
		} else if err == nil {
			d.claimedAll(want.endpoint)
		}
	}
	return more
}

// takeFull reports whether this round claims over every endpoint.
func (d *Dispatcher) takeFull() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	full := d.full
	d.full = false
	return full
}

// endpointClaim is how many events to claim for one endpoint, and whether
// to probe for them first.
type endpointClaim struct {
	endpoint string
	n        int
	probe    bool
}

// claimable takes the hinted endpoints with a claim batch of free slots
// (a quarter of MaxPerEndpoint, so that a busy endpoint is claimed for
// several events at a time), within the process's free slots. A hinted
// endpoint with fewer free slots stays hinted: an attempt finishing there
// frees them.
func (d *Dispatcher) claimable() []endpointClaim {
	d.mu.Lock()
	defer d.mu.Unlock()
	free := d.MaxInFlight - d.inFlight
	batch := max(d.MaxPerEndpoint/4, 1)
	var out []endpointClaim
	for ep, sure := range d.hinted {
		slots := d.MaxPerEndpoint - d.busy[ep]
		n := min(slots, free)
		if slots < batch || n <= 0 {
			continue
		}
		delete(d.hinted, ep)
		out = append(out, endpointClaim{ep, n, !sure})
		free -= n
	}
	return out
}

// capacity is how many attempts may start, the attempts in flight per
// endpoint, and the endpoints not to claim for now: those with fewer than
// a claim batch of free slots. Waiting for a batch's worth (a quarter of
// MaxPerEndpoint) means a busy endpoint's events are claimed several at a
// time, not one claim transaction per finished attempt.
func (d *Dispatcher) capacity() (int, map[string]int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	batch := max(d.MaxPerEndpoint/4, 1)
	busy := make(map[string]int, len(d.busy))
	var saturated []string
	for ep, n := range d.busy {
		busy[ep] = n
		if n > d.MaxPerEndpoint-batch {
			saturated = append(saturated, ep)
		}
	}
	return d.MaxInFlight - d.inFlight, busy, saturated
}

func (d *Dispatcher) start(endpoint string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight++
	d.busy[endpoint]++
}

func (d *Dispatcher) finish(endpoint string) {
	d.mu.Lock()
	d.inFlight--
	if d.busy[endpoint]--; d.busy[endpoint] <= 0 {
		delete(d.busy, endpoint)
	}
	if d.backlog[endpoint] {
		d.hint(endpoint)
	}
	d.mu.Unlock()
	d.signal()
}
