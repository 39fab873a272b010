package webhook

import (
	"context"
	"fmt"
	"time"

	"payd/internal/fault"
	"payd/internal/store"
)

// MaxReplay bounds the events one replay sends (CONTRACT §25).
const MaxReplay = 10_000

// Replay is a replay's range, as the handler read it.
type Replay struct {
	EndpointID string
	// From and To bound the events' created_at (From inclusive, To exclusive).
	From, To time.Time
	// Types are patterns; none: every type the endpoint's enabled_events match.
	Types []string
}

// Replayed is the answer of a replay.
type Replayed struct {
	Queued int `json:"queued" doc:"How many events were queued again for the endpoint."`
}

// ReplayEvents queues the events of merchantID in r's range again for r's
// endpoint, in tx, with their own webhook-ids (CONTRACT §21): those whose
// type the endpoint's enabled_events and r.Types (when given) match. A
// disabled endpoint is 409 INVALID_STATE; more than MaxReplay events, 422
// naming to_date.
func (d *Dispatcher) ReplayEvents(ctx context.Context, tx *store.Tx, merchantID string, r Replay) (Replayed, error) {
	if err := CheckTypes("types", r.Types); err != nil {
		return Replayed{}, err
	}
	ep, err := d.Endpoint(ctx, tx, merchantID, r.EndpointID)
	if err != nil {
		return Replayed{}, err
	}
	if ep.Status != EndpointEnabled {
		return Replayed{}, fault.State("webhook endpoint %s is disabled: enable it (POST /v2/webhook_endpoints/update) before a replay", ep.ID)
	}
	args := []any{merchantID, ep.ID, r.From.UnixMilli(), r.To.UnixMilli()}
	which := `e.merchant_id = $1 AND e.created_at >= $3 AND e.created_at < $4 AND ` + wantsType("w", "e.event_type")
	if cond := typeCondition(&args, "e.event_type", r.Types); cond != "" {
		which += " AND " + cond
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM events e JOIN webhook_endpoints w ON w.merchant_id = e.merchant_id AND w.id = $2
		WHERE `+which+store.Limit(MaxReplay+1)+`) c`, args...).Scan(&n); err != nil {
		return Replayed{}, fmt.Errorf("count replayed events: %w", err)
	}
	if n > MaxReplay {
		return Replayed{}, fault.Field("to_date", fmt.Sprintf("the range holds more than %d events, the most one replay sends: end it earlier", MaxReplay))
	}
	if n == 0 {
		return Replayed{}, nil
	}
	now := d.clock.Now().UnixMilli()
	seqColumn, seqValue := "", ""
	if tx.DB().OneWriter() {
		// On SQLite the seq subquery spans merchants: SQLite is never distributed.
		seqColumn, seqValue = ", seq", ", (SELECT COALESCE(MAX(seq), 0) FROM webhook_events) + ROW_NUMBER() OVER (ORDER BY e.created_at, e.id)"
	}
	batch := store.RandomID(8)
	args = append(args, now, batch)
	nowArg, batchArg := fmt.Sprintf("$%d", len(args)-1), fmt.Sprintf("$%d", len(args))
	res, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, merchant_id, event_type, record_uuid, endpoint_url, authorization_header, body, status,
		next_attempt_at, created_at, updated_at, event_id, endpoint_id`+seqColumn+`)
		SELECT e.id || '.' || w.id || '.' || `+batchArg+`, e.merchant_id, e.event_type, e.record_uuid, w.url, '', e.body, 'pending', `+nowArg+`, e.created_at, `+nowArg+`, e.id, w.id`+seqValue+`
		FROM events e JOIN webhook_endpoints w ON w.merchant_id = e.merchant_id AND w.id = $2 WHERE `+which, args...)
	if err != nil {
		return Replayed{}, fmt.Errorf("replay events: %w", err)
	}
	queued, err := res.RowsAffected()
	if err != nil {
		return Replayed{}, err
	}
	url := ep.URL
	tx.AfterCommit(func() { d.wakeFor(url) })
	return Replayed{Queued: int(queued)}, nil
}
