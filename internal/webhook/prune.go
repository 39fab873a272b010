package webhook

import (
	"context"
	"fmt"
	"time"

	"payd/internal/job"
	"payd/internal/store"
)

// DefaultRetention is how long events are kept (CONTRACT §21: 30 days;
// payd serve --event-retention).
const DefaultRetention = 30 * 24 * time.Hour

// pruneArgs names the merchant whose old events a prune job deletes.
type pruneArgs struct {
	MerchantID string `json:"merchant_id"`
}

// jobPruneEvents deletes a merchant's events older than the retention, at
// most maxPrunedPerRun a run; a run that leaves more enqueues the next.
var jobPruneEvents = job.NewKind[pruneArgs]("events.prune")

// maxPruneMerchants bounds the merchants one SchedulePrune looks at.
const maxPruneMerchants = 10_000

// RegisterPrune makes q's workers prune events older than retention.
func (d *Dispatcher) RegisterPrune(q *job.Queue, retention time.Duration) {
	job.Register(q, jobPruneEvents, func(ctx context.Context, tx *store.Tx, _ job.Job, a pruneArgs) error {
		more, err := Prune(ctx, tx, a.MerchantID, d.clock.Now().Add(-retention))
		if err != nil || !more {
			return err
		}
		return job.Enqueue(ctx, tx, q, jobPruneEvents, a, job.Options{ClockOf: a.MerchantID, MaxAttempts: 3})
	})
}

// SchedulePrune enqueues a prune job for each merchant with events older
// than retention; key makes it once per period ("2026120306": hourly).
func (d *Dispatcher) SchedulePrune(ctx context.Context, q *job.Queue, retention time.Duration, key string) error {
	cutoff := d.clock.Now().Add(-retention).UnixMilli()
	rows, err := d.db.Read().QueryContext(ctx, `SELECT id FROM merchants ORDER BY id`+store.Limit(maxPruneMerchants))
	if err != nil {
		return fmt.Errorf("schedule event pruning: %w", err)
	}
	var merchants []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		merchants = append(merchants, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range merchants {
		old, err := job.Probe(ctx, d.db.Read(), `events WHERE merchant_id = $1 AND written_at < $2`, m, cutoff)
		if err != nil || !old {
			if err != nil {
				return err
			}
			continue
		}
		err = d.db.Exec(ctx, func(tx *store.Tx) error {
			return job.Enqueue(ctx, tx, q, jobPruneEvents, pruneArgs{MerchantID: m},
				job.Options{ClockOf: m, UniqueKey: jobPruneEvents.String() + ":" + m + ":" + key, MaxAttempts: 3})
		})
		if err != nil {
			return fmt.Errorf("schedule event pruning: %w", err)
		}
	}
	return nil
}
