package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/store"
)

// The event stream (GET /v2/events/stream, CONTRACT §21): each merchant's
// events in the order of their stream number (events.seq), which a
// sequencer gives them after they commit, under the merchant's
// event_streams row. Numbers are given in increasing order, each batch in
// one transaction, to committed events only: a reader that sees number N
// sees every number below it, so reading "seq > last" after the last
// number sent loses and repeats nothing, across restarts (Last-Event-ID)
// and across payd processes sharing a PostgreSQL database.
//
// A stream sequences its merchant's new events itself before it reads, so
// no background work runs while nobody streams. Events committed by this
// process wake the merchant's streams at once; those of other processes
// wake them when their signal is heard (signal.go), and a stream also
// polls (StreamPoll) for what a lost signal would leave unseen.

// Stream defaults.
const (
	DefaultStreamPoll      = 100 * time.Millisecond
	DefaultStreamHeartbeat = 15 * time.Second
	DefaultMaxStreams      = 5
	// maxStreamBatch bounds the events one read (and one sequencing) takes.
	maxStreamBatch = 500
)

// streamHub knows this process's open streams: how many each merchant
// has, how to wake them, and whether the server is shutting down.
type streamHub struct {
	mu      sync.Mutex
	open    map[string]map[chan struct{}]bool
	closing chan struct{}
	closed  bool
}

func newStreamHub() *streamHub {
	return &streamHub{open: map[string]map[chan struct{}]bool{}, closing: make(chan struct{})}
}

// notify wakes merchantID's streams: an event of it committed here.
func (h *streamHub) notify(merchantID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.open[merchantID] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// notifyAll wakes every stream: events may have been committed that no
// signal told of.
func (h *streamHub) notifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, streams := range h.open {
		for c := range streams {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// ErrTooManyStreams refuses a stream over the merchant's bound (429).
func errTooManyStreams(n int) error {
	return fault.New(fault.RateLimited, fault.CodeRateLimited, "the merchant has %d event streams open, the most it may have here; close one first", n)
}

// join registers a stream of merchantID, unless it has max open already.
func (h *streamHub) join(merchantID string, max int) (chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fault.New(fault.Busy, fault.CodeUnavailable, "the server is shutting down")
	}
	if len(h.open[merchantID]) >= max {
		return nil, errTooManyStreams(max)
	}
	c := make(chan struct{}, 1)
	if h.open[merchantID] == nil {
		h.open[merchantID] = map[chan struct{}]bool{}
	}
	h.open[merchantID][c] = true
	return c, nil
}

func (h *streamHub) leave(merchantID string, c chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.open[merchantID], c)
	if len(h.open[merchantID]) == 0 {
		delete(h.open, merchantID)
	}
}

// CloseStreams ends every open stream and refuses new ones: the server is
// shutting down (http.Server.RegisterOnShutdown), and a stream would
// otherwise hold its shutdown until the grace ends.
func (d *Dispatcher) CloseStreams() {
	h := d.streams
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
}

// StreamEvent is one event of the stream.
type StreamEvent struct {
	ID   string
	Type string
	Data []byte
	seq  int64
}

// Stream is one open stream of a merchant's events.
type Stream struct {
	d          *Dispatcher
	merchantID string
	types      []string
	last       int64
	wake       chan struct{}
}

// OpenStream opens a stream of merchantID's events of types (patterns;
// none: every type), after the event lastEventID when given (else from
// the events written from now on). It is refused over MaxStreams.
func (d *Dispatcher) OpenStream(ctx context.Context, merchantID, lastEventID string, types []string) (*Stream, error) {
	if err := CheckTypes("type", types); err != nil {
		return nil, err
	}
	if len(lastEventID) > 64 {
		return nil, fault.Field("Last-Event-ID", "is not an event id")
	}
	if err := d.sequence(ctx, merchantID); err != nil {
		return nil, err
	}
	var last int64
	if lastEventID != "" {
		seq, ok, err := d.eventSeq(ctx, merchantID, lastEventID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fault.Field("Last-Event-ID", "is not one of the merchant's events within the retention")
		}
		last = seq
	} else if err := d.db.Read().QueryRowContext(ctx, `SELECT COALESCE(MAX(last_seq), 0) FROM event_streams WHERE merchant_id = $1`, merchantID).Scan(&last); err != nil {
		return nil, fmt.Errorf("open event stream: %w", err)
	}
	wake, err := d.streams.join(merchantID, d.MaxStreams)
	if err != nil {
		return nil, err
	}
	return &Stream{d: d, merchantID: merchantID, types: types, last: last, wake: wake}, nil
}

// Close ends s.
func (s *Stream) Close() { s.d.streams.leave(s.merchantID, s.wake) }

// Next returns the next events of s, waiting for some until ctx ends, the
// server shuts down (ok false), or heartbeat passes (none, ok true).
func (s *Stream) Next(ctx context.Context, heartbeat time.Duration) (events []StreamEvent, ok bool, err error) {
	deadline := time.NewTimer(heartbeat)
	defer deadline.Stop()
	poll := time.NewTicker(s.d.StreamPoll)
	defer poll.Stop()
	for {
		evs, err := s.read(ctx)
		if err != nil || len(evs) > 0 {
			return evs, err == nil, err
		}
		select {
		case <-ctx.Done():
			return nil, false, nil
		case <-s.d.streams.closing:
			return nil, false, nil
		case <-deadline.C:
			return nil, true, nil
		case <-s.wake:
		case <-poll.C:
		}
	}
}

// read sequences the merchant's new events and reads those after s.last.
func (s *Stream) read(ctx context.Context) ([]StreamEvent, error) {
	if err := s.d.sequence(ctx, s.merchantID); err != nil {
		return nil, err
	}
	rows, err := s.d.db.Read().QueryContext(ctx, `SELECT id, event_type, body, seq FROM events WHERE merchant_id = $1 AND seq > $2
		ORDER BY seq`+store.Limit(maxStreamBatch), s.merchantID, s.last)
	if err != nil {
		return nil, fmt.Errorf("read event stream: %w", err)
	}
	defer rows.Close()
	var out []StreamEvent
	for rows.Next() {
		var e StreamEvent
		if err := rows.Scan(&e.ID, &e.Type, &e.Data, &e.seq); err != nil {
			return nil, err
		}
		s.last = e.seq
		if s.wants(e.Type) {
			out = append(out, e)
		}
	}
	return out, rows.Err()
}

func (s *Stream) wants(typ string) bool {
	if len(s.types) == 0 {
		return true
	}
	for _, p := range s.types {
		if Matches(p, typ) {
			return true
		}
	}
	return false
}

// unsequenced are merchant $1's events not yet in its stream.
const unsequenced = `events WHERE merchant_id = $1 AND seq IS NULL`

// sequence gives merchantID's committed events that have none their
// stream numbers, up to maxStreamBatch of them in one transaction that
// holds the merchant's event_streams row: two sequencers of one merchant
// (two streams, two processes) take turns, and the second sees what the
// first numbered.
func (d *Dispatcher) sequence(ctx context.Context, merchantID string) error {
	if due, err := job.Probe(ctx, d.db.Read(), unsequenced, merchantID); err != nil || !due {
		return err
	}
	return d.db.Exec(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO event_streams (merchant_id, last_seq) VALUES ($1, 0) ON CONFLICT (merchant_id) DO NOTHING`, merchantID); err != nil {
			return fmt.Errorf("sequence events: %w", err)
		}
		var last int64
		if err := tx.QueryRowContext(ctx, `UPDATE event_streams SET last_seq = last_seq WHERE merchant_id = $1 RETURNING last_seq`, merchantID).Scan(&last); err != nil {
			return fmt.Errorf("sequence events: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM events WHERE merchant_id = $1 AND seq IS NULL ORDER BY written_at, id`+store.Limit(maxStreamBatch), merchantID)
		if err != nil {
			return fmt.Errorf("sequence events: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		// One update an event, sent without waiting for each answer
		// (store.Tx.Send): a batch costs no round trip an event.
		for _, id := range ids {
			last++
			if err := tx.Send(ctx, `UPDATE events SET seq = $1 WHERE merchant_id = $2 AND id = $3`, last, merchantID, id); err != nil {
				return fmt.Errorf("sequence events: %w", err)
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE event_streams SET last_seq = $1 WHERE merchant_id = $2`, last, merchantID)
		return err
	})
}
