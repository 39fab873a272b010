package job_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

func TestEnqueueTakesPartInTransaction(t *testing.T) {
	t.Parallel()
	errAbort := errors.New("abort")
	tests := []struct {
		name     string
		fnErr    error
		wantJobs int
		wantRan  bool
	}{
		{"commit keeps the job", nil, 1, true},
		{"rollback leaves no job", errAbort, 0, false},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				q, _ := newQueue(db, clock.NewManual(t0))
				handle(q, "work", func(context.Context, *store.Tx, job.Job) error { return nil })
				err := db.Exec(ctx, func(tx *store.Tx) error {
					if err := enqueueIn(ctx, tx, q, "work", map[string]int{"n": 1}, job.Options{}); err != nil {
						return err
					}
					return tt.fnErr
				})
				if !errors.Is(err, tt.fnErr) {
					t.Fatalf("Exec = %v, want %v", err, tt.fnErr)
				}
				if got := count(t, db, `SELECT count(*) FROM jobs`); got != tt.wantJobs {
					t.Errorf("%d jobs, want %d", got, tt.wantJobs)
				}
				ran, err := q.RunOne(ctx, "")
				if ran != tt.wantRan || err != nil {
					t.Errorf("RunOne = %v, %v; want %v, nil", ran, err, tt.wantRan)
				}
			})
		}
	})
}

func TestEnqueueBadPayload(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q, _ := newQueue(db, clock.NewManual(t0))
		err := db.Exec(ctx, func(tx *store.Tx) error { return enqueueIn(ctx, tx, q, "work", make(chan int), job.Options{}) })
		if err == nil {
			t.Error("Enqueue of an unmarshalable payload = nil, want an error")
		}
		if n := count(t, db, `SELECT count(*) FROM jobs`); n != 0 {
			t.Errorf("%d jobs, want 0", n)
		}
	})
}

// TestRunAt checks when a job becomes due on the real (queue) clock.
func TestRunAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		runAt   time.Time
		advance time.Duration
		wantRan bool
	}{
		{"zero RunAt is now", time.Time{}, 0, true},
		{"past", t0.Add(-time.Minute), 0, true},
		{"exactly now", t0, 0, true},
		{"a millisecond ahead", t0.Add(time.Millisecond), 0, false},
		{"ahead, clock not there yet", t0.Add(time.Hour), 59 * time.Minute, false},
		{"ahead, clock reached it", t0.Add(time.Hour), time.Hour, true},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				clk := clock.NewManual(t0)
				q, _ := newQueue(db, clk)
				kind := fmt.Sprintf("at-%d", i)
				runs := 0
				handle(q, kind, func(context.Context, *store.Tx, job.Job) error { runs++; return nil })
				enqueue(t, q, db, kind, nil, job.Options{RunAt: tt.runAt})
				clk.Advance(tt.advance)
				ran, err := q.RunOne(context.Background(), "")
				if ran != tt.wantRan || err != nil || (runs == 1) != tt.wantRan {
					t.Errorf("RunOne = %v, %v with %d handler runs; want %v", ran, err, runs, tt.wantRan)
				}
				// Leave nothing due for the next case.
				exec(t, db, `DELETE FROM jobs WHERE kind = $1`, kind)
			})
		}
	})
}

func TestUniqueKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		txs      [][]string // unique keys enqueued, one inner slice per transaction
		wantJobs int
	}{
		{"same key in one transaction", [][]string{{"a", "a"}}, 1},
		{"same key in two transactions", [][]string{{"b"}, {"b"}}, 1},
		{"different keys", [][]string{{"c1"}, {"c2"}}, 2},
		{"no key never de-duplicates", [][]string{{"", ""}, {""}}, 3},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q, _ := newQueue(db, clock.NewManual(t0))
				kind := fmt.Sprintf("unique-%d", i)
				n := 0
				for _, keys := range tt.txs {
					err := db.Exec(ctx, func(tx *store.Tx) error {
						for _, k := range keys {
							n++
							if err := enqueueIn(ctx, tx, q, kind, n, job.Options{UniqueKey: k}); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						t.Fatalf("enqueue: %v", err)
					}
				}
				if got := count(t, db, `SELECT count(*) FROM jobs WHERE kind = $1`, kind); got != tt.wantJobs {
					t.Errorf("%d jobs, want %d", got, tt.wantJobs)
				}
				// The first enqueue wins; later ones change nothing.
				if got := count(t, db, `SELECT count(*) FROM jobs WHERE kind = $1 AND payload = '1'`, kind); got != 1 {
					t.Errorf("%d jobs with the first payload, want 1", got)
				}
			})
		}
	})
}

// TestJobsSurviveRestart enqueues with one process and runs with another
// opened later on the same database: the jobs were durable, not in memory.
func TestJobsSurviveRestart(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		first := storetest.Open(t, dsn)
		createRuns(t, first)
		producer, _ := newQueue(first, clock.NewManual(t0))
		for i := range 5 {
			enqueue(t, producer, first, "carry-over", i, job.Options{})
		}

		second := storetest.Open(t, dsn)
		consumer, _ := newQueue(second, clock.NewManual(t0))
		handle(consumer, "carry-over", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			return recordRun(ctx, tx, j, "second")
		})
		if got := drain(t, consumer); got != 5 {
			t.Errorf("new process ran %d jobs, want 5", got)
		}
		if got := count(t, second, `SELECT count(*) FROM job_runs WHERE runner = 'second'`); got != 5 {
			t.Errorf("%d runs recorded, want 5", got)
		}
	})
}
