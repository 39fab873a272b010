package job_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestQueuedCountsWaitingAndHeld: the queue's depth is its available jobs,
// due or not, and those held for their lane run; failed jobs are not queued.
func TestQueuedCountsWaitingAndHeld(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q, _ := newQueue(db, clock.NewManual(t0))
		merchant := newMerchant(t, db)
		enqueue(t, q, db, "now", 1, job.Options{ClockOf: merchant})
		enqueue(t, q, db, "later", 2, job.Options{ClockOf: merchant, RunAt: t0.Add(24 * time.Hour)})
		for _, st := range []job.State{job.Held, job.Failed} {
			exec(t, db, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
				VALUES ($1, $2, '{}', $3, 25, $1, $1, $3)`, string(st), merchant, t0.UnixMilli())
		}
		got, err := q.Queued(ctx)
		if err != nil || got != 3 {
			t.Errorf("Queued = %d, %v; want 3 (two available, one held), nil", got, err)
		}
	})
}
