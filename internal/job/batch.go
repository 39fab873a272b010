package job

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"payd/internal/store"
)

// Batch does the work of several due jobs of one kind and one merchant
// (their Job.ClockOf) inside tx, all at once, as the kind's Work would do
// them one by one: args[i] is jobs[i]'s payload decoded. It is for work
// whose cost is mostly shared (a hot account's clearings: one read of the
// payins, one round of posts). Returning an error rolls the whole batch
// back; the queue then runs each job by itself with its Work, so that a
// job that fails, fails alone.
type Batch[T any] func(ctx context.Context, tx *store.Tx, jobs []Job, args []T) error

// batchHandler is a Batch with its payloads decoded.
type batchHandler func(ctx context.Context, tx *store.Tx, jobs []Job) error

// RegisterBatch registers work as kind's handler on q (Register) and batch
// as the handler of several of kind's jobs at once: the queue runs due jobs
// of kind that it claims together (a worker's claim, a lane run's) and
// that belong to one merchant with batch, in one go.
func RegisterBatch[T any](q *Queue, kind Kind[T], work Work[T], batch Batch[T]) {
	Register(q, kind, work)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.batches[kind.name] = func(ctx context.Context, tx *store.Tx, jobs []Job) error {
		args := make([]T, len(jobs))
		for i, j := range jobs {
			if err := json.Unmarshal(j.Payload, &args[i]); err != nil {
				return fmt.Errorf("job %d (%s) payload: %w", j.ID, j.Kind, err)
			}
		}
		return batch(ctx, tx, jobs, args)
	}
}

// BatchHandler returns the batch handler registered for kind
// (RegisterBatch), which decodes the jobs' payloads and does their work at
// once, for a test that runs a batch's work in a transaction of its own.
func (q *Queue) BatchHandler(kind string) (func(ctx context.Context, tx *store.Tx, jobs []Job) error, bool) {
	b, ok := q.batchOf(kind)
	return b, ok
}

// batchOf is the batch handler of kind, if it has one.
func (q *Queue) batchOf(kind string) (batchHandler, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	b, ok := q.batches[kind]
	return b, ok
}

// together is how many of jobs, from the first, run as one batch: the
// first and those right after it of the same kind and merchant, when the
// kind has a batch handler (RegisterBatch); 1 otherwise.
func (q *Queue) together(jobs []Job) int {
	if _, ok := q.batchOf(jobs[0].Kind); !ok {
		return 1
	}
	n := 1
	for n < len(jobs) && jobs[n].Kind == jobs[0].Kind && jobs[n].ClockOf == jobs[0].ClockOf {
		n++
	}
	return n
}

// runGroup runs jobs, which together says run as one, in tx: a single one
// with its handler, several with their kind's batch handler, turning a
// panic into an error as run does.
func (q *Queue) runGroup(ctx context.Context, tx *store.Tx, jobs []Job) (err error) {
	if len(jobs) == 1 {
		return q.run(ctx, tx, jobs[0])
	}
	b, _ := q.batchOf(jobs[0].Kind)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return b(ctx, tx, jobs)
}

// runClaimedGroup runs claimed jobs that together says run as one inside a
// savepoint of tx, deletes them when the batch succeeds (as runClaimed
// does), and reports whether it did. If it fails, its writes are undone and the jobs are left
// for runClaimed to run one by one, each failing (and retried) alone. err
// is set only when tx itself cannot go on.
func (q *Queue) runClaimedGroup(ctx context.Context, tx *store.Tx, jobs []Job) (ok bool, err error) {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	runErr, err := tx.Savepoint(ctx, "job_batch", func(tx *store.Tx) error { return q.runGroup(ctx, tx, jobs) })
	if err != nil {
		return false, err
	}
	if runErr == nil {
		// The claiming transaction's own delete, as runClaimed's.
		in, args := store.In(2, ids)
		return true, tx.Send(ctx, `DELETE FROM jobs WHERE merchant_id = $1 AND id IN (`+in+`)`, append([]any{jobs[0].ClockOf}, args...)...)
	}
	if ctx.Err() != nil {
		return false, ctx.Err() // shutting down: the rollback hands the jobs back
	}
	q.log.Info("a batch of jobs failed; each runs by itself", "kind", jobs[0].Kind, "jobs", len(jobs), "err", runErr.Error())
	return false, nil
}
