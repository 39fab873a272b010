package job_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// batchKind is the kind of the batch tests' jobs, whose payload is a name.
var batchKind = job.NewKind[string]("sum")

// batchRuns records how the queue ran batchKind's jobs: each batch's
// payloads, and the jobs run one by one.
type batchRuns struct {
	mu      sync.Mutex
	batches [][]string
	singles []string
	// done, when set, counts each job's run once its transaction commits.
	done *completions
}

// committed counts the run of n jobs in tx with r.done, once tx commits.
func (r *batchRuns) committed(tx *store.Tx, n int) {
	if r.done == nil {
		return
	}
	for range n {
		tx.AfterCommit(r.done.commit)
	}
}

// register registers batchKind on q with handlers that write each job's
// run into job_runs (runner "single" or "batch") and record it in r, and
// fail as fail says: a batch holding a payload fail names fails, and so
// does that payload's single run when fail says "alone".
func (r *batchRuns) register(q *job.Queue, fail map[string]string) {
	job.RegisterBatch(q, batchKind, func(ctx context.Context, tx *store.Tx, j job.Job, name string) error {
		if fail[name] == "alone" {
			return errors.New("this job fails alone too")
		}
		r.mu.Lock()
		r.singles = append(r.singles, name)
		r.mu.Unlock()
		r.committed(tx, 1)
		return recordRun(ctx, tx, j, "single")
	}, func(ctx context.Context, tx *store.Tx, jobs []job.Job, names []string) error {
		for i, j := range jobs {
			if err := recordRun(ctx, tx, j, "batch"); err != nil {
				return err
			}
			if fail[names[i]] != "" {
				return fmt.Errorf("%s fails its batch", names[i])
			}
		}
		r.mu.Lock()
		r.batches = append(r.batches, names)
		r.mu.Unlock()
		r.committed(tx, len(jobs))
		return nil
	})
}

// TestBatchRunsJobsThatComeTogether: of one merchant's due jobs that a
// worker claims together, those of a kind with a batch handler that come
// one after another run as one batch, each stretch its own; a job of
// another kind between them runs alone, with its own handler.
func TestBatchRunsJobsThatComeTogether(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createRuns(t, db)
		q, observed := newQueue(db, clock.NewManual(t0))
		var runs batchRuns
		runs.register(q, nil)
		handle(q, "other", func(ctx context.Context, tx *store.Tx, j job.Job) error { return recordRun(ctx, tx, j, "other") })
		m := newMerchant(t, db)
		for _, name := range []string{"a", "b", "c", "-", "d", "e"} {
			kind := batchKind.String()
			if name == "-" {
				kind = "other"
			}
			enqueue(t, q, db, kind, name, job.Options{ClockOf: m})
		}
		if err := q.RunDue(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		if want := [][]string{{"a", "b", "c"}, {"d", "e"}}; !slices.EqualFunc(runs.batches, want, slices.Equal) || len(runs.singles) != 0 {
			t.Errorf("batches %v and single runs %v, want batches %v and no single run", runs.batches, runs.singles, want)
		}
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'batch'`); got != 5 {
			t.Errorf("%d jobs ran in a batch, want 5", got)
		}
		if got := count(t, db, `SELECT count(*) FROM jobs`); got != 0 {
			t.Errorf("%d jobs left, want 0", got)
		}
		if got := observed.list(); len(got) != 6 || slices.ContainsFunc(got, func(o string) bool { return !strings.HasSuffix(o, " done") }) {
			t.Errorf("outcomes %v, want 6 done", got)
		}
	})
}

// TestFailedBatchRunsEachJobAlone: a batch that fails is undone whole, and
// its jobs run one by one: those that succeed alone are done, and the one
// that fails alone too is retried later, by itself.
func TestFailedBatchRunsEachJobAlone(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createRuns(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		var runs batchRuns
		runs.register(q, map[string]string{"b": "alone"})
		m := newMerchant(t, db)
		for _, name := range []string{"a", "b", "c"} {
			enqueue(t, q, db, batchKind.String(), name, job.Options{ClockOf: m})
		}
		if err := q.RunDue(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		if len(runs.batches) != 0 || !slices.Equal(runs.singles, []string{"a", "c"}) {
			t.Errorf("batches %v and single runs %v, want no batch and a, c alone", runs.batches, runs.singles)
		}
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'batch'`); got != 0 {
			t.Errorf("%d runs of the failed batch were kept, want 0", got)
		}
		if got := count(t, db, `SELECT count(*) FROM job_runs WHERE runner = 'single'`); got != 2 {
			t.Errorf("%d jobs done alone, want 2", got)
		}
		if r := jobOf(t, db, batchKind.String()); r.Attempts != 1 || !strings.Contains(r.LastError, "fails alone") {
			t.Errorf("the failing job has %d attempts and last error %q, want 1 and its own error", r.Attempts, r.LastError)
		}
	})
}

// TestLaneRunTakesTheJobsThatCameMeanwhile: on PostgreSQL, jobs held for
// their lane run that commit while an earlier lane run of their lane is
// still running run in the next lane run together, as one batch.
func TestLaneRunTakesTheJobsThatCameMeanwhile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("jobs are held for a lane run on PostgreSQL only")
		}
		createRuns(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		q.PollInterval = time.Hour // no worker takes a job released by a failed lane run
		done := newCompletions(4)
		runs := batchRuns{done: done}
		runs.register(q, nil)
		// The first job's lane run waits until the others have committed.
		first, others := make(chan struct{}), make(chan struct{})
		job.Register(q, job.NewKind[string]("first"), func(ctx context.Context, tx *store.Tx, j job.Job, _ string) error {
			close(first)
			<-others
			tx.AfterCommit(done.commit)
			return recordRun(ctx, tx, j, "first")
		})
		ctx, stop := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { q.Run(ctx, 1); close(stopped) }()
		defer func() { stop(); <-stopped }()
		waitWorked(t, q, db)

		m := newMerchant(t, db)
		lane := store.MerchantLane(m) + "/1"
		enqueue(t, q, db, "first", "first", job.Options{ClockOf: m, Lane: lane})
		<-first
		for _, name := range []string{"a", "b", "c"} {
			enqueue(t, q, db, batchKind.String(), name, job.Options{ClockOf: m, Lane: lane})
		}
		close(others)
		done.wait(t, 30*time.Second)
		if want := [][]string{{"a", "b", "c"}}; !slices.EqualFunc(runs.batches, want, slices.Equal) || len(runs.singles) != 0 {
			t.Errorf("batches %v and single runs %v, want batches %v", runs.batches, runs.singles, want)
		}
		if got := count(t, db, `SELECT count(*) FROM jobs`); got != 0 {
			t.Errorf("%d jobs left, want 0", got)
		}
	})
}

// waitWorked waits until q's Run works the queue: a job enqueued with a
// lane runs in it.
func waitWorked(t *testing.T, q *job.Queue, db *store.DB) {
	t.Helper()
	warmUp := newCompletions(1)
	handle(q, "warm-up", func(ctx context.Context, tx *store.Tx, j job.Job) error {
		tx.AfterCommit(warmUp.commit)
		return nil
	})
	enqueue(t, q, db, "warm-up", 0, job.Options{Lane: store.MerchantLane(newMerchant(t, db))})
	warmUp.wait(t, 30*time.Second)
}
