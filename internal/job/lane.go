package job

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"payd/internal/store"
)

// laneKeyPrefix begins the unique key a lane job without one is given, by
// which its lane run finds it, and laneKeyLen is the length of its random
// part (103 bits).
const (
	laneKeyPrefix = "lane:"
	laneKeyLen    = 20
)

// The inserts of a job held for its lane run, under a key drawn for it or
// the one it was given.
const (
	insertHeldDrawn  = insertJob + heldSQL + `, $6, $7)`
	insertHeldUnique = insertHeldDrawn + onKeyTaken
)

// maxLaneHold bounds how long a job stays held for its lane run: a process
// that enqueued one and stopped (crashed) before running it leaves it held,
// and any process's queue releases it after this (releaseStale). A lane run
// comes milliseconds after its commit; one that comes after the release
// finds the job gone, and the worker that took it ran it once all the same.
const maxLaneHold = 5 * time.Second

// staleSweepEvery is how often a queue releases jobs held past maxLaneHold.
const staleSweepEvery = time.Second

// worked reports whether the queue is being worked in this process (Run),
// which runs the lane runs of the jobs it holds.
func (q *Queue) worked() bool {
	q.laneMu.Lock()
	defer q.laneMu.Unlock()
	return q.laneCtx != nil
}

// maxLaneRun bounds how many held jobs of one lane one lane run takes.
const maxLaneRun = 64

// laneWaiting is a lane's held jobs waiting for their lane run: the keys
// they are held under, all of one merchant's (a lane is one merchant's).
type laneWaiting struct {
	merchant string
	keys     []string
}

// runInLane runs merchant's job held under key at once, in lane, if the
// queue is being worked (Run); otherwise, or if it fails, it releases the
// job to the workers. The jobs of one lane run one lane run at a time, each
// taking all those whose commit came while the one before ran (up to
// maxLaneRun): under load, a hot account's clearings come together, and a
// kind with a batch handler (RegisterBatch) does them at once.
func (q *Queue) runInLane(lane, merchant, key string) {
	q.laneMu.Lock()
	if q.laneCtx == nil {
		q.laneMu.Unlock()
		q.release(merchant, key)
		return
	}
	w, ok := q.waiting[lane]
	if !ok {
		w = &laneWaiting{merchant: merchant}
		q.waiting[lane] = w
		ctx := store.WithLane(q.laneCtx, lane)
		q.laneRuns.Go(func() { q.drainLane(ctx, lane, w) })
	}
	w.keys = append(w.keys, key)
	q.laneMu.Unlock()
}

// drainLane runs lane's waiting jobs (w), a lane run at a time, until none
// is left, releasing to the workers those of a run that fails.
func (q *Queue) drainLane(ctx context.Context, lane string, w *laneWaiting) {
	for {
		q.laneMu.Lock()
		n := min(len(w.keys), maxLaneRun)
		if n == 0 {
			delete(q.waiting, lane)
			q.laneMu.Unlock()
			return
		}
		keys := slices.Clone(w.keys[:n])
		w.keys = w.keys[n:]
		q.laneMu.Unlock()
		if !q.runLaned(ctx, lane, w.merchant, keys) {
			q.release(w.merchant, keys...)
		}
	}
}

// runLaned runs merchant's jobs held under keys in the transaction that
// claims them, and reports whether it is done with them: they ran and
// committed, or they had been released already (releaseStale). It is the
// common case made short: the claim deletes the jobs, and the handlers run
// without savepoints of their own. If one fails, the whole transaction
// rolls back, so the jobs are held again as they were; released, the
// workers run them, each in a savepoint that records its failure and retry
// (runClaimed).
func (q *Queue) runLaned(ctx context.Context, lane, merchant string, keys []string) bool {
	var jobs []Job
	started := q.clock.Now()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		var err error
		if jobs, err = q.claimHeld(ctx, tx, merchant, keys); err != nil {
			jobs = nil
			return err
		}
		for rest := jobs; len(rest) > 0; {
			group := rest[:q.together(rest)]
			rest = rest[len(group):]
			if err := q.runGroup(ctx, tx, group); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil && len(jobs) == 0:
		q.log.Error("job queue", "job_keys", len(keys), "lane", lane, "err", err)
		return false
	case err != nil:
		q.log.Info("job run in its lane failed; a worker retries it", "jobs", len(jobs), "kind", jobs[0].Kind, "err", err.Error())
		return false
	case len(jobs) == 0:
		return true
	}
	took := q.clock.Now().Sub(started) / time.Duration(len(jobs))
	for _, j := range jobs {
		q.observe(j.Kind, outcomeDone, took)
	}
	return true
}

// release hands merchant's jobs held under keys to the workers, and wakes
// them. Should it fail, releaseStale does it after maxLaneHold.
func (q *Queue) release(merchant string, keys ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), maxLaneHold)
	defer cancel()
	in, args := store.In(2, keys)
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = `+availableSQL+` WHERE merchant_id = $1 AND unique_key IN (`+in+`)
			AND state = `+heldSQL, append([]any{merchant}, args...)...)
		return err
	})
	if err != nil {
		q.log.Error("job queue: release held jobs", "jobs", len(keys), "err", err)
		return
	}
	q.wakeFor(merchant, time.Time{})
}

// releaseStale releases, at once and every staleSweepEvery until ctx
// ends, the jobs held longer than maxLaneHold: their lane run will not come
// (their process stopped before it).
func (q *Queue) releaseStale(ctx context.Context) {
	ticker := time.NewTicker(staleSweepEvery)
	defer ticker.Stop()
	for {
		var merchants []string
		err := q.db.Exec(ctx, func(tx *store.Tx) error {
			merchants = nil
			return tx.Query(ctx, `UPDATE jobs SET state = `+availableSQL+` WHERE state = `+heldSQL+` AND created_at <= $1 RETURNING merchant_id`,
				[]any{q.clock.Now().Add(-maxLaneHold).UnixMilli()}, func(row store.Row) error {
					var m string
					err := row.Scan(&m)
					merchants = append(merchants, m)
					return err
				})
		})
		n := len(merchants)
		switch {
		case err != nil && ctx.Err() == nil:
			q.log.Error("job queue: release stale held jobs", "err", err)
		case n > 0:
			q.log.Info("job queue: released jobs held for a lane run that did not come", "jobs", n)
			q.hint(merchants...) // workers run hinted merchants' jobs first
			q.Wake()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// claimHeld deletes merchant's jobs held under keys for their lane run,
// returning them in the order they were enqueued, those still held (not
// released to the workers); the deletion commits with the jobs' work. Held
// jobs are claimed by no one else, so there is no lock to skip.
func (q *Queue) claimHeld(ctx context.Context, tx *store.Tx, merchant string, keys []string) ([]Job, error) {
	var jobs []Job
	in, args := store.In(2, keys)
	err := tx.Query(ctx, `DELETE FROM jobs j WHERE j.merchant_id = $1 AND j.unique_key IN (`+in+`) AND j.state = `+heldSQL+`
		RETURNING j.id, j.kind, j.merchant_id, j.payload, j.attempts, `+ClockOffsetOf("j.merchant_id"),
		append([]any{merchant}, args...), func(row store.Row) error {
			j, err := scanJob(row)
			jobs = append(jobs, j)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("claim %d held jobs: %w", len(keys), err)
	}
	slices.SortFunc(jobs, func(a, b Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, nil
}
