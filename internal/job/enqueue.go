package job

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"payd/internal/store"
)

// Options places a job in time.
type Options struct {
	// RunAt is when the job becomes due; zero means now.
	RunAt time.Time
	// ClockOf names the merchant whose (sandbox test) clock RunAt is read on,
	// and whose rows hold the job; empty means the real clock.
	ClockOf string
	// UniqueKey, when set, makes a second enqueue with the same key a no-op.
	UniqueKey string
	// MaxAttempts bounds retries (default 25).
	MaxAttempts int
	// Lane, for a job due now, runs it right after the enqueuing transaction
	// commits, in that store lane (store.WithLane) on PostgreSQL: work on the
	// same rows as the enqueuer (a receipt's clearing, on the merchant's
	// balance) is group-committed with it instead of alternating with
	// unlaned job batches. The job is held for that run (state held, which
	// no worker of any process claims) and stays in the queue until it
	// commits; should it not run (a failure, a crash), the job is released
	// to the workers, at once or after maxLaneHold (5 s).
	Lane string
}

const defaultMaxAttempts = 25

// enqueue adds a job of kind with payload's JSON in tx (Enqueue); it exists
// only if tx commits.
func (q *Queue) enqueue(ctx context.Context, tx *store.Tx, kind string, payload any, opt Options) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	runAt := opt.RunAt
	if runAt.IsZero() {
		runAt = q.clock.Now()
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = defaultMaxAttempts
	}
	const insert = insertJob + availableSQL + `, $6, $7)` + onKeyTaken
	args := []any{kind, opt.ClockOf, string(body), runAt.UnixMilli(), opt.MaxAttempts, nullable(opt.UniqueKey), q.clock.Now().UnixMilli()}
	if opt.Lane == "" || tx.DB().OneWriter() || !q.worked() {
		// Without lane runs in this process (an operator command's queue),
		// a held job would wait for its release, a transaction more each:
		// it is the workers' at once.
		if err := tx.Send(ctx, insert, args...); err != nil {
			return fmt.Errorf("enqueue %s: %w", kind, err)
		}
		tx.AfterCommit(func() { q.wakeFor(opt.ClockOf, runAt) })
		return nil
	}
	// Held in its row, so that no worker claims it between its commit and
	// its lane run, which finds it by its unique key: nothing needs to come
	// back before the commit. (Held in this process's memory by its id, read
	// back for that before the commit, a receipt took a round trip more, and
	// other processes' workers took held jobs.)
	key, insertHeld := opt.UniqueKey, insertHeldUnique
	if key == "" {
		// Drawn, not given: a clash, were there one, fails the transaction
		// rather than drop the job.
		key, insertHeld = laneKeyPrefix+store.RandomID(laneKeyLen), insertHeldDrawn
		args[5] = key
	}
	if err := tx.Send(ctx, insertHeld, args...); err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	tx.AfterCommit(func() { q.runInLane(opt.Lane, opt.ClockOf, key) })
	return nil
}

// insertJob is a job's insert up to its state; onKeyTaken makes a second
// enqueue with the same unique key do nothing.
const (
	insertJob = `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
		VALUES ($1, $2, $3, $4, $5, `
	onKeyTaken = ` ON CONFLICT (merchant_id, unique_key) DO NOTHING`
)

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
