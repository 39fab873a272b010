package job_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

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

func TestRunOne(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createRuns(t, db)
		merchant := newMerchant(t, db)
		q, obs := newQueue(db, clock.NewManual(t0))
		var got []job.Job
		handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			got = append(got, j)
			return recordRun(ctx, tx, j, "q")
		})
		enqueue(t, q, db, "work", map[string]any{"n": 7, "s": "x"}, job.Options{ClockOf: merchant})

		ran, err := q.RunOne(ctx, "")
		if !ran || err != nil {
			t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
		}
		ran, err = q.RunOne(ctx, "")
		if ran || err != nil {
			t.Errorf("second RunOne = %v, %v; want false, nil", ran, err)
		}
		if len(got) != 1 {
			t.Fatalf("handler ran %d times, want once", len(got))
		}
		if got[0].Kind != "work" || got[0].ClockOf != merchant || got[0].Attempt != 1 || string(got[0].Payload) != `{"n":7,"s":"x"}` {
			t.Errorf("handler got %+v (payload %s), want kind work, clock of %s, attempt 1, payload {\"n\":7,\"s\":\"x\"}", got[0], got[0].Payload, merchant)
		}
		if n := count(t, db, `SELECT count(*) FROM jobs`); n != 0 {
			t.Errorf("%d jobs left, want the run job deleted", n)
		}
		if n := count(t, db, `SELECT count(*) FROM job_runs`); n != 1 {
			t.Errorf("%d handler writes committed, want 1", n)
		}
		if o := obs.list(); !slices.Equal(o, []string{"work done"}) {
			t.Errorf("observed %v, want [work done]", o)
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

// TestHandlerErrorRetries fails a job with max_attempts 3 three times: each
// failure rolls back the handler's writes, counts the attempt and reschedules
// the job after a backoff; the third marks it failed for good.
func TestHandlerErrorRetries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createRuns(t, db)
		clk := clock.NewManual(t0)
		q, obs := newQueue(db, clk)
		var attempts []int
		handle(q, "flaky", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			attempts = append(attempts, j.Attempt)
			if err := recordRun(ctx, tx, j, fmt.Sprint(j.Attempt)); err != nil {
				return err
			}
			return fmt.Errorf("upstream said no (attempt %d)", j.Attempt)
		})
		enqueue(t, q, db, "flaky", "p", job.Options{MaxAttempts: 3})

		steps := []struct {
			name      string
			advance   time.Duration
			wantRan   bool
			wantState job.State
			wantTries int
			wantError string
			wantLater bool // run_at is after the clock's now
		}{
			{"first run fails", 0, true, job.Available, 1, "upstream said no (attempt 1)", true},
			{"not due again at once", 0, false, job.Available, 1, "upstream said no (attempt 1)", true},
			{"not due before the shortest backoff", 799 * time.Millisecond, false, job.Available, 1, "upstream said no (attempt 1)", true},
			{"second run fails", time.Hour, true, job.Available, 2, "upstream said no (attempt 2)", true},
			{"third run fails for good", time.Hour, true, job.Failed, 3, "upstream said no (attempt 3)", true},
			{"a failed job never runs again", 24 * time.Hour, false, job.Failed, 3, "upstream said no (attempt 3)", false},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				now := clk.Advance(st.advance)
				ran, err := q.RunOne(ctx, "")
				if ran != st.wantRan || err != nil {
					t.Errorf("RunOne = %v, %v; want %v, nil", ran, err, st.wantRan)
				}
				got := jobOf(t, db, "flaky")
				if got.State != st.wantState || got.Attempts != st.wantTries || got.LastError != st.wantError {
					t.Errorf("job = %+v, want state %s, %d attempts, last error %q", got, st.wantState, st.wantTries, st.wantError)
				}
				if later := got.RunAt > now.UnixMilli(); later != st.wantLater {
					t.Errorf("run_at %d after now %d = %v, want %v", got.RunAt, now.UnixMilli(), later, st.wantLater)
				}
			})
		}
		if n := count(t, db, `SELECT count(*) FROM job_runs`); n != 0 {
			t.Errorf("%d handler writes committed, want every failed run rolled back", n)
		}
		if !slices.Equal(attempts, []int{1, 2, 3}) {
			t.Errorf("handler saw attempts %v, want [1 2 3]", attempts)
		}
		if o := obs.list(); !slices.Equal(o, []string{"flaky retry", "flaky retry", "flaky failed"}) {
			t.Errorf("observed %v, want [flaky retry flaky retry flaky failed]", o)
		}
	})
}

// TestRetryBackoff checks the first retry's run_at: one second ±20 % after the failure.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewManual(t0)
		q, _ := newQueue(db, clk)
		handle(q, "fail", func(context.Context, *store.Tx, job.Job) error { return errors.New("no") })
		enqueue(t, q, db, "fail", nil, job.Options{})
		if ran, err := q.RunOne(context.Background(), ""); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v", ran, err)
		}
		got := time.Duration(jobOf(t, db, "fail").RunAt-t0.UnixMilli()) * time.Millisecond
		if got < 800*time.Millisecond || got > 1200*time.Millisecond {
			t.Errorf("retry scheduled %v after the failure, want 0.8s..1.2s", got)
		}
	})
}

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

func TestBackoff(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		attempt := rapid.IntRange(1, 200).Draw(t, "attempt")
		base := min(time.Second<<min(attempt-1, 30), time.Hour)
		got := job.Backoff(attempt)
		if got < base*8/10 || got > base*12/10 {
			t.Fatalf("Backoff(%d) = %v, want %v ± 20 %%", attempt, got, base)
		}
	})
}

func TestBackoffGrows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 800 * time.Millisecond, 1200 * time.Millisecond},
		{2, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{5, 12800 * time.Millisecond, 19200 * time.Millisecond},
		{12, 2048 * 800 * time.Millisecond, 2048 * 1200 * time.Millisecond},
		{13, 48 * time.Minute, 72 * time.Minute},
		{1000, 48 * time.Minute, 72 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			if got := job.Backoff(tt.attempt); got < tt.min || got > tt.max {
				t.Errorf("Backoff(%d) = %v, want %v..%v", tt.attempt, got, tt.min, tt.max)
			}
		})
	}
}

// TestClaimPlansEachTime: on PostgreSQL a worker's claim is planned with its
// values every time (store.Tx.PlanEachTime), never with a plan kept from
// when the jobs table was small, which reads every waiting job (a
// sequential scan; 2.3 ms a claim with 20,000 expiry jobs waiting, against
// 0.09 ms through the due index). The jobs it runs in the same transaction
// are planned as usual (store.Tx.PlanAsUsual): planning each of their
// statements every time was a tenth of PostgreSQL's work settling payouts.
// The handler reads both in the claim's session: its own setting, and how
// the claim's prepared statement was planned there, past the five runs
// after which PostgreSQL may keep a generic plan.
func TestClaimPlansEachTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite plans every statement as it prepares it")
		}
		q, _ := newQueue(db, clock.NewManual(t0))
		var modes []string
		var generic, mostCustom int64
		handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			var mode string
			if err := tx.QueryRowContext(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&mode); err != nil {
				return err
			}
			modes = append(modes, mode)
			var g, c int64
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(sum(generic_plans), 0), COALESCE(max(custom_plans), 0) FROM pg_prepared_statements
				WHERE statement LIKE '%FROM jobs j%ORDER BY j.run_at, j.id%' AND statement NOT LIKE '%pg_prepared_statements%'`).Scan(&g, &c); err != nil {
				return err
			}
			generic, mostCustom = max(generic, g), max(mostCustom, c)
			return nil
		})
		merchant := newMerchant(t, db)
		for range 40 {
			enqueue(t, q, db, "work", map[string]any{}, job.Options{ClockOf: merchant})
			if ran, err := q.RunOne(context.Background(), ""); !ran || err != nil {
				t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
			}
		}
		for _, m := range modes {
			if m != "auto" {
				t.Fatalf("a job ran with plan_cache_mode %q, want auto (the claim's force_custom_plan ended with the claim)", m)
			}
		}
		if generic != 0 {
			t.Fatalf("the claim ran on a generic plan %d times, want every run planned with its values", generic)
		}
		if mostCustom <= 5 {
			t.Errorf("no session ran the claim more than 5 times (most custom plans: %d): the test shows nothing", mostCustom)
		}
	})
}
