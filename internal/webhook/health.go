package webhook

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// DefaultDisableAfter is how long every delivery to a webhook endpoint may
// fail before payd disables it (CONTRACT §21: three days).
const DefaultDisableAfter = 72 * time.Hour

// endpointHealth follows the outcomes of the deliveries to webhook
// endpoints in rows, in the recording transaction: one delivered clears an
// endpoint's failing_since; one that failed sets it (when unset), and
// disables the endpoint once it is DisableAfter old; a 410 disables it at
// once (CONTRACT §21).
func (d *Dispatcher) endpointHealth(ctx context.Context, tx *store.Tx, rows []attemptRow, now time.Time) error {
	for _, a := range rows {
		if a.endpointID == "" || a.final {
			continue
		}
		if a.status == Delivered {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = NULL
				WHERE merchant_id = $1 AND id = $2 AND failing_since IS NOT NULL`, a.merchantID, a.endpointID); err != nil {
				return fmt.Errorf("endpoint health: %w", err)
			}
			continue
		}
		if a.gone {
			if err := d.disable(ctx, tx, a, "the endpoint answered 410 Gone", now); err != nil {
				return err
			}
			continue
		}
		var since sql.NullInt64
		err := tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $1)
			WHERE merchant_id = $2 AND id = $3 RETURNING failing_since`, now.UnixMilli(), a.merchantID, a.endpointID).Scan(&since)
		if store.IsNoRows(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("endpoint health: %w", err)
		}
		if now.Sub(clock.FromMillis(since.Int64)) >= d.DisableAfter {
			reason := fmt.Sprintf("every delivery failed for %s", d.DisableAfter)
			if d.DisableAfter == DefaultDisableAfter {
				reason = "every delivery failed for 3 days"
			}
			if err := d.disable(ctx, tx, a, reason, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// disable disables a's endpoint, when enabled, for reason, and emits
// webhook_endpoint.disabled (to the merchant's other endpoints: this one
// is disabled by then, and the events log).
func (d *Dispatcher) disable(ctx context.Context, tx *store.Tx, a attemptRow, reason string, now time.Time) error {
	at := now.Add(time.Duration(a.clockOffsetMS) * time.Millisecond)
	ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $1, updated_at = $2
		WHERE merchant_id = $3 AND id = $4 AND status = 'enabled'`, reason, at.UnixMilli(), a.merchantID, a.endpointID))
	if err != nil || !ok {
		return err
	}
	ep, err := d.Endpoint(ctx, tx, a.merchantID, a.endpointID)
	if err != nil {
		return err
	}
	d.log.Warn("webhook endpoint disabled", "merchant_id", a.merchantID, "endpoint_id", a.endpointID, "reason", reason)
	_, err = d.Emit(ctx, tx, Event{MerchantID: a.merchantID, Type: EventEndpointDisabled, RecordUUID: ep.ID, Payload: ep, At: at.Truncate(time.Millisecond)})
	return err
}
