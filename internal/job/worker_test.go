package job_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestRunWakesOnEnqueue runs workers that never poll (an hour's interval):
// jobs enqueued through the same queue must still run at once, because a
// committed Enqueue wakes the workers.
func TestRunWakesOnEnqueue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const jobs = 60
		createRuns(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		q.PollInterval = time.Hour
		finish := workRecorded(t, q, db, jobs)

		// In batches, from several goroutines, while the workers idle.
		var wg sync.WaitGroup
		for b := range 3 {
			wg.Go(func() {
				for i := range jobs / 3 {
					enqueue(t, q, db, "work", strconv.Itoa(b*100+i), job.Options{})
				}
			})
		}
		wg.Wait()
		finish()
	})
}

// workRecorded runs q's workers on "work" jobs, each of which records its
// run in job_runs, and returns finish: it waits for n runs, stops the
// workers, and checks that db holds n runs and no job.
func workRecorded(t *testing.T, q *job.Queue, db *store.DB, n int) (finish func()) {
	t.Helper()
	done := newCompletions(n)
	handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
		tx.AfterCommit(done.commit)
		return recordRun(ctx, tx, j, "q")
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { q.Run(ctx, 2); close(stopped) }()
	stop := sync.OnceFunc(func() { cancel(); <-stopped })
	t.Cleanup(stop)
	return func() {
		t.Helper()
		done.wait(t, 30*time.Second)
		stop()
		if got := count(t, db, `SELECT count(*) FROM job_runs`); got != n {
			t.Errorf("%d runs, want %d", got, n)
		}
		if got := count(t, db, `SELECT count(*) FROM jobs`); got != 0 {
			t.Errorf("%d jobs left, want 0", got)
		}
	}
}

// TestTwoProcessesRunEachJobOnce runs two queues on two connections pools
// ("processes") against one PostgreSQL (or Citus) database, two workers
// each. Every job must run exactly once. The jobs belong to ten merchants
// and to none; on Citus they are on those merchants' shards, where the
// process that enqueued them knows their merchants and the other finds them
// by asking every shard. The first job holds its transaction open until
// twenty others have committed, so the test also proves that workers run
// concurrently and skip a job another worker holds.
func TestTwoProcessesRunEachJobOnce(t *testing.T) {
	t.Parallel()
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			dsn := target.DSN(t)
			dbA, dbB := storetest.Open(t, dsn), storetest.Open(t, dsn)
			twoProcessesRunEachJobOnce(t, dbA, dbB)
		})
	}
}

func twoProcessesRunEachJobOnce(t *testing.T, dbA, dbB *store.DB) {
	const jobs = 200
	exec(t, dbA, `CREATE TABLE job_runs (payload BIGINT PRIMARY KEY, runner TEXT NOT NULL)`)
	merchants := []string{""}
	for range 10 {
		merchants = append(merchants, newMerchant(t, dbA))
	}

	done := newCompletions(jobs)
	twentyDone := newCompletions(20)
	var inFlight, peak, uniqueViolations, handlerErrors atomic.Int64
	handler := func(runner string) job.Handler {
		return func(ctx context.Context, tx *store.Tx, j job.Job) error {
			defer inFlight.Add(-1)
			raiseTo(&peak, inFlight.Add(1))
			n, err := strconv.Atoi(string(j.Payload))
			if err != nil {
				return err
			}
			if n == 0 {
				select {
				case <-twentyDone.done:
				case <-time.After(20 * time.Second):
					handlerErrors.Add(1)
					return fmt.Errorf("job 0 held its claim but no other job ran meanwhile")
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO job_runs (payload, runner) VALUES ($1, $2)`, n, runner); err != nil {
				if store.IsUniqueViolation(err) {
					uniqueViolations.Add(1)
				}
				handlerErrors.Add(1)
				return err
			}
			tx.AfterCommit(done.commit)
			if n != 0 {
				tx.AfterCommit(twentyDone.commit)
			}
			return nil
		}
	}
	qA, _ := newQueue(dbA, clock.NewManual(t0))
	qB, _ := newQueue(dbB, clock.NewManual(t0))
	handle(qA, "work", handler("A"))
	handle(qB, "work", handler("B"))
	qA.PollInterval, qB.PollInterval = 10*time.Millisecond, 10*time.Millisecond

	ctx := context.Background()
	err := dbA.Exec(ctx, func(tx *store.Tx) error {
		for i := range jobs {
			if err := enqueueIn(ctx, tx, qA, "work", i, job.Options{ClockOf: merchants[i%len(merchants)]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { qA.Run(runCtx, 2) })
	wg.Go(func() { qB.Run(runCtx, 2) })
	done.wait(t, 45*time.Second)
	stop()
	wg.Wait()

	if got := count(t, dbA, `SELECT count(*) FROM job_runs`); got != jobs {
		t.Errorf("%d distinct jobs ran, want %d", got, jobs)
	}
	if got := done.n.Load(); got != jobs {
		t.Errorf("%d runs committed, want %d (each job exactly once)", got, jobs)
	}
	if got := count(t, dbA, `SELECT count(*) FROM jobs`); got != 0 {
		t.Errorf("%d jobs left, want 0", got)
	}
	if uniqueViolations.Load() != 0 || handlerErrors.Load() != 0 {
		t.Errorf("%d unique violations, %d handler errors; want none (a job ran twice or stalled)", uniqueViolations.Load(), handlerErrors.Load())
	}
	if peak.Load() < 2 {
		t.Errorf("at most %d handlers ran at once, want at least 2", peak.Load())
	}
	byB := count(t, dbA, `SELECT count(*) FROM job_runs WHERE runner = 'B'`)
	t.Logf("peak concurrency %d; runs by A %d, by B %d", peak.Load(), jobs-byB, byB)
}

// TestWorkersRunOtherProcessesJobs enqueues jobs of five merchants and of
// none in one process and works the queue in another, which learns of them
// only by polling (on Citus, by asking every shard): every job runs.
func TestWorkersRunOtherProcessesJobs(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		const jobs = 30
		producerDB, workerDB := storetest.Open(t, dsn), storetest.Open(t, dsn)
		createRuns(t, producerDB)
		merchants := []string{""}
		for range 5 {
			merchants = append(merchants, newMerchant(t, producerDB))
		}
		producer, _ := newQueue(producerDB, clock.NewManual(t0))
		for i := range jobs {
			enqueue(t, producer, producerDB, "work", strconv.Itoa(i), job.Options{ClockOf: merchants[i%len(merchants)]})
		}
		worker, _ := newQueue(workerDB, clock.NewManual(t0))
		worker.PollInterval = 10 * time.Millisecond
		workRecorded(t, worker, workerDB, jobs)()
	})
}

// raiseTo sets v to n if n is larger.
func raiseTo(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// TestWorkersRunAMerchantsJobsInItsLane: on PostgreSQL and Citus a worker
// runs a merchant's jobs in that merchant's store lane, where its requests
// are group-committed (store.MerchantLane), so that they do not take turns
// with the jobs on its rows; a job of no merchant runs in no lane. On SQLite
// every write shares one lane and the context names none.
func TestWorkersRunAMerchantsJobsInItsLane(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchants := []string{newMerchant(t, db), newMerchant(t, db), ""}
		q, _ := newQueue(db, clock.NewManual(t0))
		var mu sync.Mutex
		lanes := map[string]string{} // payload (the job's merchant) → the lane it ran in
		done := newCompletions(2 * len(merchants))
		job.Register(q, job.NewKind[string]("work"), func(ctx context.Context, tx *store.Tx, _ job.Job, m string) error {
			mu.Lock()
			if prev, seen := lanes[m]; seen && prev != store.LaneOf(ctx) {
				lanes[m] = "two lanes: " + prev + ", " + store.LaneOf(ctx)
			} else {
				lanes[m] = store.LaneOf(ctx)
			}
			mu.Unlock()
			tx.AfterCommit(done.commit)
			return nil
		})
		for _, m := range merchants {
			for range 2 {
				enqueue(t, q, db, "work", m, job.Options{ClockOf: m})
			}
		}
		runUntilDone(t, q, 2, done)
		for _, m := range merchants {
			want := store.MerchantLane(m)
			if m == "" || db.Dialect() == store.SQLite {
				want = ""
			}
			if got := lanes[m]; got != want {
				t.Errorf("the jobs of merchant %q ran in lane %q, want %q", m, got, want)
			}
		}
	})
}

// TestWorkersTakeTheLongestWaitingMerchantsFirst: with more merchants due
// than a worker reads at once, the merchants whose due jobs have waited
// longest go first, whatever their ids: forty merchants have a job each,
// enqueued by another process (no hints), the last by id waiting longest;
// workers that poll once run sixteen, and its job is among them.
func TestWorkersTakeTheLongestWaitingMerchantsFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() == store.SQLite {
			t.Skip("on SQLite workers claim across merchants, oldest job first")
		}
		const merchants, oldest = 40, "M39"
		for i := range merchants {
			id := fmt.Sprintf("M%02d", i)
			exec(t, db, `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at)
				VALUES ($1, 'Test Merchant', 'JP', 'Asia/Tokyo', 'whsec_test', 0)`, id)
			waited := time.Minute
			if id == oldest {
				waited = time.Hour
			}
			exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, created_at)
				VALUES ('work', $1, $2, $3, 3, 'available', $3)`, id, `"`+id+`"`, t0.Add(-waited).UnixMilli())
		}
		q, _ := newQueue(db, clock.NewManual(t0))
		q.PollInterval = time.Hour // one look for due merchants, at start
		var mu sync.Mutex
		var ran []string
		done := newCompletions(16)
		handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			mu.Lock()
			ran = append(ran, j.ClockOf)
			mu.Unlock()
			tx.AfterCommit(done.commit)
			return nil
		})
		runUntilDone(t, q, 2, done)
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(ran, oldest) {
			t.Errorf("the workers ran %v, not the job of %s, which had waited longest", ran, oldest)
		}
	})
}

// runUntilDone works q with n workers until done has seen all its commits,
// then stops them.
func runUntilDone(t *testing.T, q *job.Queue, n int, done *completions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { q.Run(ctx, n); close(stopped) }()
	done.wait(t, 30*time.Second)
	cancel()
	<-stopped
}

// TestAWorkerRunsSeveralMerchantsAtOnce: one worker runs the batches of
// several merchants side by side, each in its merchant's lane (a
// transaction and a commit each), so that many merchants with a few jobs
// each are not run one commit after another: four merchants' jobs, each of
// which waits until all four have started, all run with one worker.
func TestAWorkerRunsSeveralMerchantsAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() == store.SQLite {
			t.Skip("on SQLite one writer runs every batch")
		}
		const merchants = 4
		for range merchants {
			m := newMerchant(t, db)
			exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, created_at)
				VALUES ('work', $1, '{}', $2, 3, 'available', $2)`, m, t0.UnixMilli())
		}
		q, _ := newQueue(db, clock.NewManual(t0))
		var started atomic.Int32
		all := make(chan struct{})
		var alone atomic.Bool
		done := newCompletions(merchants)
		handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			if started.Add(1) == merchants {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				alone.Store(true)
				return fmt.Errorf("the other merchants' jobs did not start beside this one")
			}
			tx.AfterCommit(done.commit)
			return nil
		})
		runUntilDone(t, q, 1, done)
		if alone.Load() {
			t.Errorf("a merchant's job waited alone: one worker ran the merchants one after another")
		}
	})
}
