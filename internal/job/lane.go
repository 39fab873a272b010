package job

import (
	"context"
	"fmt"
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

// runInLane runs merchant's job held under key at once, in lane, if the
// queue is being worked (Run); otherwise, or if it fails, it releases the
// job to the workers.
func (q *Queue) runInLane(lane, merchant, key string) {
	q.laneMu.Lock()
	running := q.laneCtx != nil
	if running {
		ctx := store.WithLane(q.laneCtx, lane)
		q.laneRuns.Go(func() {
			if !q.runLaned(ctx, lane, merchant, key) {
				q.release(merchant, key)
			}
		})
	}
	q.laneMu.Unlock()
	if !running {
		q.release(merchant, key)
	}
}

// runLaned runs merchant's job held under key in the transaction that
// claims it, and reports whether it is done with: it ran and committed, or
// it had been released already (releaseStale). It is the common case made
// short: the claim deletes the job, and the handler runs without a
// savepoint of its own. If the handler fails, the whole transaction rolls
// back, so the job is held again as it was; released, a worker runs it, in
// a savepoint that records the failure and its retry (runClaimed).
func (q *Queue) runLaned(ctx context.Context, lane, merchant, key string) bool {
	var j Job
	started := q.clock.Now()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		jobs, err := q.claimHeld(ctx, tx, merchant, key)
		if err != nil || len(jobs) == 0 {
			j = Job{}
			return err
		}
		j = jobs[0]
		return q.run(ctx, tx, j)
	})
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil && j.ID == 0:
		q.log.Error("job queue", "job_key", key, "lane", lane, "err", err)
		return false
	case err != nil:
		q.log.Info("job run in its lane failed; a worker retries it", "job_id", j.ID, "kind", j.Kind, "err", err.Error())
		return false
	case j.ID == 0:
		return true
	}
	q.observe(j.Kind, outcomeDone, q.clock.Now().Sub(started))
	return true
}

// release hands merchant's job held under key to the workers, and wakes
// them. Should it fail, releaseStale does it after maxLaneHold.
func (q *Queue) release(merchant, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), maxLaneHold)
	defer cancel()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = `+availableSQL+` WHERE merchant_id = $1 AND unique_key = $2 AND state = `+heldSQL, merchant, key)
		return err
	})
	if err != nil {
		q.log.Error("job queue: release a held job", "job_key", key, "err", err)
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

// claimHeld deletes merchant's job held under key for its lane run,
// returning it, if it is still held (not released to the workers); the
// deletion commits with the job's work. Held jobs are claimed by no one
// else, so there is no lock to skip.
func (q *Queue) claimHeld(ctx context.Context, tx *store.Tx, merchant, key string) ([]Job, error) {
	var jobs []Job
	err := tx.Query(ctx, `DELETE FROM jobs j WHERE j.merchant_id = $2 AND j.unique_key = $1 AND j.state = `+heldSQL+`
		RETURNING j.id, j.kind, j.merchant_id, j.payload, j.attempts, `+ClockOffsetOf("j.merchant_id"),
		[]any{key, merchant}, func(row store.Row) error {
			j, err := scanJob(row)
			jobs = append(jobs, j)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("claim job %s: %w", key, err)
	}
	return jobs, nil
}
