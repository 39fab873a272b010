package job_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
)

// t0 is the instant the job tests start at.
var t0 = time.Date(2025, time.March, 3, 9, 30, 0, 0, time.UTC)

// outcomes records what the queue's Observer hears.
type outcomes struct {
	mu   sync.Mutex
	runs []string // "kind outcome"
}

func (o *outcomes) observe(kind, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs = append(o.runs, kind+" "+outcome)
}

func (o *outcomes) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.runs...)
}

// newQueue returns a queue on db reading time from clk, silent, with its observations.
func newQueue(db *store.DB, clk clock.Clock) (*job.Queue, *outcomes) {
	o := &outcomes{}
	return job.New(db, clk, slog.New(slog.DiscardHandler), o.observe), o
}

// newMerchant inserts a merchant row (a job of a merchant runs on its clock) and returns its id.
func newMerchant(t testing.TB, db *store.DB) string {
	t.Helper()
	id := store.RandomID(store.UUIDLen)
	exec(t, db, `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at)
		VALUES ($1, 'Test Merchant', 'JP', 'Asia/Tokyo', 'whsec_test', 0)`, id)
	return id
}

// exec runs raw SQL in its own transaction.
func exec(t testing.TB, db *store.DB, query string, args ...any) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), query, args...)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func count(t testing.TB, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// handle registers h, which reads the job's payload as stored (j.Payload),
// for kind, a kind of any payload: the queue's tests are about running
// jobs, not their payloads (kind_test.go is).
func handle(q *job.Queue, kind string, h job.Handler) {
	job.Register(q, job.NewKind[json.RawMessage](kind), func(ctx context.Context, tx *store.Tx, j job.Job, _ json.RawMessage) error {
		return h(ctx, tx, j)
	})
}

// enqueueIn adds a job of kind, a kind of any payload, in tx.
func enqueueIn(ctx context.Context, tx *store.Tx, q *job.Queue, kind string, payload any, opt job.Options) error {
	return job.Enqueue(ctx, tx, q, job.NewKind[any](kind), payload, opt)
}

// enqueue adds one job in its own transaction.
func enqueue(t testing.TB, q *job.Queue, db *store.DB, kind string, payload any, opt job.Options) {
	t.Helper()
	ctx := context.Background()
	if err := db.Exec(ctx, func(tx *store.Tx) error { return enqueueIn(ctx, tx, q, kind, payload, opt) }); err != nil {
		t.Fatalf("enqueue %s: %v", kind, err)
	}
}

// jobRow is the stored state of a job.
type jobRow struct {
	State     job.State
	Attempts  int
	RunAt     int64
	LastError string
}

// jobOf reads the one job of kind.
func jobOf(t testing.TB, db *store.DB, kind string) jobRow {
	t.Helper()
	var r jobRow
	err := db.Read().QueryRow(`SELECT state, attempts, run_at, COALESCE(last_error, '') FROM jobs WHERE kind = $1`, kind).
		Scan(&r.State, &r.Attempts, &r.RunAt, &r.LastError)
	if err != nil {
		t.Fatalf("read job %s: %v", kind, err)
	}
	return r
}

// createRuns makes the table handlers write to, keyed so a second run of the
// same job would be a unique violation.
func createRuns(t testing.TB, db *store.DB) {
	t.Helper()
	exec(t, db, `CREATE TABLE job_runs (payload TEXT PRIMARY KEY, runner TEXT NOT NULL)`)
}

// recordRun is a handler step: it writes the job's payload into job_runs.
func recordRun(ctx context.Context, tx *store.Tx, j job.Job, runner string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO job_runs (payload, runner) VALUES ($1, $2)`, string(j.Payload), runner)
	return err
}

// drain runs q's due jobs one by one until none is left and returns how many ran.
func drain(t *testing.T, q *job.Queue) int {
	t.Helper()
	n := 0
	for ; n < 1000; n++ {
		ran, err := q.RunOne(context.Background(), "")
		if err != nil {
			t.Fatalf("RunOne: %v", err)
		}
		if !ran {
			return n
		}
	}
	t.Fatal("queue did not drain after 1000 runs")
	return n
}

// completions counts committed job runs and closes done when it reaches want.
type completions struct {
	want int64
	n    atomic.Int64
	done chan struct{}
}

func newCompletions(want int) *completions {
	return &completions{want: int64(want), done: make(chan struct{})}
}

// commit is registered with AfterCommit by a handler; it closes done once,
// on the want-th call.
func (c *completions) commit() {
	if c.n.Add(1) == c.want {
		close(c.done)
	}
}

// wait waits for every completion, failing the test after timeout.
func (c *completions) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		t.Fatalf("only %d of %d jobs completed in %v", c.n.Load(), c.want, timeout)
	}
}
