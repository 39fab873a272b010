package job_test

import (
	"context"
	"encoding/json"
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

// TestLaneJobsRunOnceInTheirLane enqueues jobs with a Lane while workers
// idle (they never poll): on PostgreSQL each job runs at once after its
// commit, in its lane; on SQLite (one lane for every write) the woken
// workers run it. Either way every job runs exactly once.
func TestLaneJobsRunOnceInTheirLane(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		lane := runLaneJobs(t, db, time.Hour)
		wantRunner := lane
		if db.Dialect() == store.SQLite {
			wantRunner = ""
		}
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = $1`, wantRunner); got != laneJobs {
			t.Errorf("%d runs by %q, want %d", got, wantRunner, laneJobs)
		}
	})
}

// TestLaneJobsRaceWorkers has workers poll all the time while jobs with a
// Lane are enqueued, so lane runs and workers race for the same jobs: each
// job still runs once.
func TestLaneJobsRaceWorkers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		runLaneJobs(t, db, time.Millisecond)
	})
}

// laneJobs is how many jobs runLaneJobs enqueues.
const laneJobs = 60

// runLaneJobs enqueues laneJobs jobs with one merchant's lane, from several
// goroutines, into a queue worked by two workers polling every poll; it
// checks every job ran exactly once and returns the lane.
func runLaneJobs(t *testing.T, db *store.DB, poll time.Duration) string {
	t.Helper()
	createRuns(t, db)
	q, observed := newQueue(db, clock.NewManual(t0))
	q.PollInterval = poll
	done := newCompletions(laneJobs)
	handle(q, "clear", func(ctx context.Context, tx *store.Tx, j job.Job) error {
		tx.AfterCommit(done.commit)
		return recordRun(ctx, tx, j, store.LaneOf(ctx))
	})
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { q.Run(ctx, 2); close(stopped) }()
	defer func() { stop(); <-stopped }()

	lane := store.MerchantLane(newMerchant(t, db))
	// One job first, run whichever way, so that the queue is being worked
	// (Run has begun) when the others are enqueued.
	warmUp := newCompletions(1)
	handle(q, "warm-up", func(ctx context.Context, tx *store.Tx, j job.Job) error {
		tx.AfterCommit(warmUp.commit)
		return nil
	})
	enqueue(t, q, db, "warm-up", 0, job.Options{Lane: lane})
	warmUp.wait(t, 30*time.Second)
	var wg sync.WaitGroup
	for b := range 3 {
		wg.Go(func() {
			for i := range laneJobs / 3 {
				enqueue(t, q, db, "clear", strconv.Itoa(b*100+i), job.Options{Lane: lane})
			}
		})
	}
	wg.Wait()
	done.wait(t, 30*time.Second)
	stop()
	<-stopped
	if got := count(t, db, `SELECT count(*) FROM job_runs`); got != laneJobs {
		t.Errorf("%d runs, want %d", got, laneJobs)
	}
	if got := count(t, db, `SELECT count(*) FROM jobs`); got != 0 {
		t.Errorf("%d jobs left, want 0", got)
	}
	for _, o := range observed.list() {
		if o != "clear done" && o != "warm-up done" {
			t.Errorf("outcome %q, want only %q", o, "clear done")
		}
	}
	return lane
}

// TestLaneJobWaitsForWorkersWhenNotRunning enqueues a job with a Lane in a
// process whose queue is not being worked (it crashed, say, or has not
// started): the job stays queued and a worker runs it once.
func TestLaneJobWaitsForWorkersWhenNotRunning(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createRuns(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		handle(q, "clear", func(ctx context.Context, tx *store.Tx, j job.Job) error { return recordRun(ctx, tx, j, "worker") })
		enqueue(t, q, db, "clear", "c", job.Options{Lane: store.MerchantLane(newMerchant(t, db))})
		if got := count(t, db, `SELECT count(*) FROM jobs`); got != 1 {
			t.Fatalf("%d jobs queued, want 1", got)
		}
		if got := drain(t, q); got != 1 {
			t.Errorf("workers ran %d jobs, want 1", got)
		}
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'worker'`); got != 1 {
			t.Errorf("%d runs, want 1", got)
		}
	})
}

// TestHeldJobOfAStoppedProcessIsReleased holds a job for its lane run the
// way a process does that stopped (crashed) between the commit and the run:
// the job is written held, and nothing runs it in a lane. Another process's
// workers leave it alone while it may still be run in its lane, and release
// and run it, once, after maxLaneHold (5 s on the queues' clock).
func TestHeldJobOfAStoppedProcessIsReleased(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("jobs are held for a lane run on PostgreSQL only")
		}
		createRuns(t, db)
		merchant := newMerchant(t, db)
		exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
			VALUES ('clear', $1, '"c"', $2, 25, 'held', 'lane:STOPPED', $2)`, merchant, t0.UnixMilli())
		clk := clock.NewManual(t0)
		q, _ := newQueue(db, clk)
		done := newCompletions(1)
		handle(q, "clear", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			tx.AfterCommit(done.commit)
			return recordRun(ctx, tx, j, "worker")
		})
		if got := drain(t, q); got != 0 {
			t.Fatalf("workers ran %d held jobs, want 0", got)
		}
		ctx, stop := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { q.Run(ctx, 1); close(stopped) }()
		defer func() { stop(); <-stopped }()
		clk.Advance(5 * time.Second)
		done.wait(t, 30*time.Second)
		stop()
		<-stopped
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'worker'`); got != 1 {
			t.Errorf("%d runs, want 1", got)
		}
		if got := count(t, db, `SELECT count(*) FROM jobs`); got != 0 {
			t.Errorf("%d jobs left, want 0", got)
		}
	})
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
		handle(q, "work", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			var m string
			if err := json.Unmarshal(j.Payload, &m); err != nil {
				return err
			}
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
