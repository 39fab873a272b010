package job_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestFailingHandlers checks every way a run can fail is contained: the
// handler's writes roll back, the attempt is counted, the reason is kept.
func TestFailingHandlers(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, *store.Tx, job.Job) error { return nil }
	tests := []struct {
		name string
		// kind is the job's kind; the handler is registered under handles.
		kind, handles string
		handler       job.Handler
		// wantError is how last_error starts (a regular expression).
		wantError string
	}{
		{"error", "err", "err", func(context.Context, *store.Tx, job.Job) error { return errors.New("boom") }, "boom"},
		{"panic with a string", "panic-string", "panic-string", func(context.Context, *store.Tx, job.Job) error { panic("boom") }, "panic: boom"},
		{"panic with an error", "panic-error", "panic-error", func(context.Context, *store.Tx, job.Job) error { panic(errors.New("kaboom")) }, "panic: kaboom"},
		{"runtime panic", "panic-runtime", "panic-runtime", func(context.Context, *store.Tx, job.Job) error {
			var m map[string]int
			m["x"] = 1
			return nil
		}, "panic: assignment to entry in nil map"},
		{"no handler for the kind", "unknown", "known", ok, `no handler for job kind "unknown"`},
		// A statement the handler sent (store.Tx.Send) fails after the
		// handler has returned: the job's savepoint, not the batch, takes it.
		{"a sent statement fails", "sent", "sent", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			return tx.Send(ctx, `INSERT INTO job_runs (payload, runner) VALUES ($1, 'again')`, string(j.Payload))
		}, "(ERROR: duplicate key|constraint failed: UNIQUE)"},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createRuns(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, obs := newQueue(db, clock.NewManual(t0))
				handle(q, tt.handles, func(ctx context.Context, tx *store.Tx, j job.Job) error {
					if err := recordRun(ctx, tx, j, tt.kind); err != nil {
						return err
					}
					return tt.handler(ctx, tx, j)
				})
				enqueue(t, q, db, tt.kind, tt.kind, job.Options{})
				ran, err := q.RunOne(ctx, "")
				if !ran || err != nil {
					t.Errorf("RunOne = %v, %v; want true, nil", ran, err)
				}
				got := jobOf(t, db, tt.kind)
				if got.State != job.Available || got.Attempts != 1 || !regexp.MustCompile("^"+tt.wantError).MatchString(got.LastError) {
					t.Errorf("job = %+v, want available after 1 attempt with last error %q…", got, tt.wantError)
				}
				if n := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = $1`, tt.kind); n != 0 {
					t.Errorf("%d handler writes committed, want 0", n)
				}
				if o := obs.list(); !slices.Equal(o, []string{tt.kind + " retry"}) {
					t.Errorf("observed %v, want [%s retry]", o, tt.kind)
				}
			})
		}
	})
}

// TestQueueKeepsWorkingAfterPanic runs a panicking job and then a good one
// with the same queue: the panic must not have broken the queue or left a
// transaction open (on SQLite that would hold the only write connection).
func TestQueueKeepsWorkingAfterPanic(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createRuns(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		handle(q, "bad", func(context.Context, *store.Tx, job.Job) error { panic("boom") })
		handle(q, "good", func(ctx context.Context, tx *store.Tx, j job.Job) error { return recordRun(ctx, tx, j, "good") })
		enqueue(t, q, db, "bad", 1, job.Options{})
		enqueue(t, q, db, "good", 2, job.Options{})
		for range 2 {
			if ran, err := q.RunOne(ctx, ""); !ran || err != nil {
				t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'good'`); n != 1 {
			t.Errorf("good job wrote %d rows, want 1", n)
		}
	})
}
