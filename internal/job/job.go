package job

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// Job is a claimed job as its handler sees it.
type Job struct {
	ID   int64
	Kind string
	// ClockOf is the merchant the job belongs to and whose clock it runs
	// on ("" for none).
	ClockOf string
	Payload json.RawMessage
	// Attempt counts from 1.
	Attempt int
	// ClockOffset is the test-clock offset of ClockOf's merchant when the
	// job was claimed (zero without ClockOf, and in production): its
	// handler reads the merchant's time as clock.At(ClockOffset), as a
	// request does from its principal, without another query.
	ClockOffset time.Duration
}

// Handler does a job's work inside tx: a kind's Work with the job's payload
// decoded (Register). Returning an error rolls the work back and retries the
// job later with a growing delay.
type Handler func(ctx context.Context, tx *store.Tx, j Job) error

// Observer hears how each run ended (outcomeDone, outcomeRetry,
// outcomeFailed: "done", "retry", "failed"), for metrics.
type Observer func(kind, outcome string, took time.Duration)

// The outcomes of a run an Observer hears.
const (
	outcomeDone   = "done"
	outcomeRetry  = "retry"
	outcomeFailed = "failed"
)

// Queue enqueues and runs jobs.
type Queue struct {
	db       *store.DB
	clock    clock.Clock
	log      *slog.Logger
	observe  Observer
	mu       sync.RWMutex
	handlers map[string]Handler
	// batches holds the batch handlers of the kinds that have one
	// (RegisterBatch).
	batches map[string]batchHandler
	poller  *Poller
	// laneMu guards laneCtx and laneRuns: laneCtx is the context of Run
	// while it works the queue (nil otherwise), under which jobs enqueued
	// with a Lane run at once after their commit.
	laneMu   sync.Mutex
	laneCtx  context.Context
	laneRuns sync.WaitGroup
	// waiting holds, by lane, the keys of the held jobs whose lane run is
	// to come (runInLane), guarded by laneMu.
	waiting map[string]*laneWaiting
	// hintMu guards hinted, the merchants of due jobs this process has
	// enqueued (not on SQLite, see runAny), and polledAt, when a worker last
	// asked which merchants have due jobs (on Citus, every shard).
	hintMu   sync.Mutex
	hinted   map[string]bool
	polledAt time.Time
	// PollInterval is how often idle workers look for jobs enqueued by other
	// processes or that became due (a local enqueue wakes them at once).
	PollInterval time.Duration
}

// New returns a queue on db.
func New(db *store.DB, clk clock.Clock, log *slog.Logger, observe Observer) *Queue {
	if observe == nil {
		observe = func(string, string, time.Duration) {}
	}
	return &Queue{db: db, clock: clk, log: log, observe: observe, handlers: map[string]Handler{}, batches: map[string]batchHandler{}, waiting: map[string]*laneWaiting{},
		poller: NewPoller(), hinted: map[string]bool{}, PollInterval: 250 * time.Millisecond}
}

// register makes h the handler of kind (Register); it panics when kind has
// one already.
func (q *Queue) register(kind string, h Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.handlers[kind]; ok {
		panic(fmt.Sprintf("job: kind %q registered twice", kind))
	}
	q.handlers[kind] = h
}

// Handler returns the handler registered for kind (Register), which decodes
// the job's payload and does its work, for a test that runs a job's work in
// a transaction of its own.
func (q *Queue) Handler(kind string) (Handler, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	h, ok := q.handlers[kind]
	return h, ok
}

// Wrap replaces the handler registered for kind by wrap of it, for a test
// that measures a job's work (its round trips) as the queue runs it. It
// panics when kind has no handler: there is nothing to wrap.
func (q *Queue) Wrap(kind string, wrap func(Handler) Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h, ok := q.handlers[kind]
	if !ok {
		panic(fmt.Sprintf("job: no handler of kind %q to wrap", kind))
	}
	q.handlers[kind] = wrap(h)
}

// run calls the job's handler, turning a panic into an error so one bad job
// cannot stop the worker.
func (q *Queue) run(ctx context.Context, tx *store.Tx, j Job) (err error) {
	h, ok := q.Handler(j.Kind)
	if !ok {
		return fmt.Errorf("no handler for job kind %q", j.Kind)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return h(ctx, tx, j)
}
