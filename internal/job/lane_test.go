package job_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

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
