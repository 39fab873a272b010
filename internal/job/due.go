package job

import (
	"context"
	"fmt"
	"time"
)

// RunDue runs every job that is due on merchantID's clock, including jobs
// that those jobs enqueue, and waits for due jobs another worker is running
// and for the jobs held for their lane run when it began. The sandbox test
// clock calls it after moving forward.
//
// A job held for its lane run after RunDue began is not waited for: it is
// a clearing of a receipt that came meanwhile (no job on a merchant's clock
// receives money), and under a steady load a merchant always has one
// coming, so that a clock move waited for a moment with none (in the soak,
// a clock move's p50 grew from a few milliseconds to 220 ms).
func (q *Queue) RunDue(ctx context.Context, merchantID string) error {
	began := q.clock.Now().UnixMilli()
	for ctx.Err() == nil {
		sc := scope{merchant: merchantID}
		ran, err := q.runBatch(ctx, sc, claimBatch)
		if err != nil {
			return err
		}
		if ran > 0 {
			continue
		}
		// Nothing we could claim; a due job may still be held by another worker.
		var n int
		now := q.clock.Now().UnixMilli()
		bound, err := q.dueBound(ctx, now)
		if err != nil {
			return fmt.Errorf("run due jobs: %w", err)
		}
		where, args := sc.filter([]any{now, bound, began})
		// Jobs held for their lane run are due too: their run is coming.
		if err := q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM jobs j WHERE ((j.state = `+heldSQL+` AND j.created_at <= $3) OR `+dueWhere+`)`+where, args...).Scan(&n); err != nil {
			return fmt.Errorf("run due jobs: %w", err)
		}
		// On Citus the merchant's jobs are on its shard with the rows they
		// change, so a job gone from the queue shows its effects there too.
		// (When the queue was on the coordinator, two-phase commits with no
		// snapshot across nodes let a job be gone before its effects showed.)
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return ctx.Err()
}
