package job_test

import (
	"context"
	"slices"
	"testing"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

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

// TestInterruptedJobIsHandedBack stops a process while its job runs (the
// context ends mid-handler): the job's work rolls back, the attempt is not
// counted, and the next process runs it.
func TestInterruptedJobIsHandedBack(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		first := storetest.Open(t, dsn)
		createRuns(t, first)
		dying, _ := newQueue(first, clock.NewManual(t0))
		ctx, shutdown := context.WithCancel(context.Background())
		handle(dying, "work", func(hctx context.Context, tx *store.Tx, j job.Job) error {
			if err := recordRun(hctx, tx, j, "first"); err != nil {
				return err
			}
			shutdown()
			return hctx.Err()
		})
		enqueue(t, dying, first, "work", "w", job.Options{})
		ran, err := dying.RunOne(ctx, "")
		if !ran || err != nil {
			t.Errorf("interrupted RunOne = %v, %v; want true, nil", ran, err)
		}
		if got := jobOf(t, first, "work"); got.State != job.Available || got.Attempts != 0 {
			t.Errorf("interrupted job = %+v, want available with no attempt counted", got)
		}

		second := storetest.Open(t, dsn)
		next, _ := newQueue(second, clock.NewManual(t0))
		handle(next, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error { return recordRun(ctx, tx, j, "second") })
		if got := drain(t, next); got != 1 {
			t.Errorf("next process ran %d jobs, want 1", got)
		}
		if got := count(t, second, `SELECT count(*) FROM job_runs WHERE runner = 'second'`); got != 1 {
			t.Errorf("%d runs by the next process, want 1", got)
		}
		if got := count(t, second, `SELECT count(*) FROM job_runs WHERE runner = 'first'`); got != 0 {
			t.Errorf("%d runs by the interrupted process survived, want 0", got)
		}
	})
}
