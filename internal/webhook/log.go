package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/store"
)

// Delivery is an event and its attempts, as GET /v2/webhooks/deliveries
// shows it. Every time of it is on the merchant's clock (its sandbox test
// clock; in production the real clock), so that no attempt shows before
// its event: created_at, each attempt's at and delivered_at are stamped
// with the merchant's time as they happen. The retries run on the real
// clock (merchant.Clock.System), which next_attempt_at is kept on for the
// dispatcher; it is shown on the merchant's clock as it runs now (the
// merchant's offset when it is read). A test clock moved later moves it
// with it, and the retry still waits its real delay.
type Delivery struct {
	ID            string      `json:"id" doc:"The event id, sent as webhook-id on every attempt."`
	EventType     string      `json:"event_type"`
	UUID          string      `json:"uuid" doc:"The record the event is about."`
	EndpointURL   string      `json:"endpoint_url"`
	Status        Status      `json:"status" enum:"pending,delivered,failed"`
	NextAttemptAt *clock.Time `json:"next_attempt_at" doc:"When the next attempt is due; null once delivered or failed."`
	DeliveredAt   *clock.Time `json:"delivered_at"`
	CreatedAt     clock.Time  `json:"created_at"`
	Attempts      []Attempt   `json:"attempts"`
	// row is the outbox row's own id: the event's, for a delivery to a
	// record's endpoint_url; the event's and its endpoint's for one to a
	// webhook endpoint.
	row string
}

// Attempt is one try at delivering an event.
type Attempt struct {
	Attempt    int        `json:"attempt"`
	At         clock.Time `json:"at"`
	StatusCode *int       `json:"status_code" doc:"The receiver's HTTP status; null when no answer came."`
	LatencyMS  int64      `json:"latency_ms"`
	Error      *string    `json:"error" doc:"Why the attempt did not count as delivered; null on success."`
}

// maxListed bounds the events listed for one record.
const maxListed = 100

// deliveryColumns are what scanDelivery reads, from webhook_events.
var deliveryColumns = `id, COALESCE(event_id, id), event_type, record_uuid, endpoint_url, status, next_attempt_at, delivered_at, created_at, ` + merchantOffset

// merchantOffset is the test-clock offset, in milliseconds, of the merchant
// of a webhook_events row, as SQL.
var merchantOffset = job.ClockOffsetOf("webhook_events.merchant_id")

// Deliveries lists the events about record uuid of merchantID, newest first.
func (d *Dispatcher) Deliveries(ctx context.Context, merchantID, uuid string) ([]Delivery, error) {
	return d.listed(ctx, merchantID, `SELECT `+deliveryColumns+` FROM webhook_events
		WHERE merchant_id = $1 AND record_uuid = $2 ORDER BY seq DESC LIMIT $3`, merchantID, uuid, maxListed)
}

// Recent lists merchantID's latest events, newest first, with their
// attempts; status, when set, keeps only events in it.
func (d *Dispatcher) Recent(ctx context.Context, merchantID string, status Status, limit int) ([]Delivery, error) {
	return d.listed(ctx, merchantID, recentQuery, merchantID, string(status), min(limit, maxListed))
}

// recentQuery is Recent's: $1 the merchant, $2 the status (empty: any), $3 how
// many. The index on (merchant_id, created_at, id) reads them newest first.
var recentQuery = `SELECT ` + deliveryColumns + ` FROM webhook_events
	WHERE merchant_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC, id DESC LIMIT $3`

// listed reads the events of merchantID query selects (deliveryColumns),
// each with its attempts.
func (d *Dispatcher) listed(ctx context.Context, merchantID, query string, args ...any) ([]Delivery, error) {
	rows, err := d.db.Read().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	out := []Delivery{}
	for rows.Next() {
		dl, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, dl)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Attempts, err = d.attempts(ctx, d.db.Read(), merchantID, out[i].row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func scanDelivery(row interface{ Scan(...any) error }) (Delivery, error) {
	var dl Delivery
	var next, delivered sql.NullInt64
	var created, offset int64
	if err := row.Scan(&dl.row, &dl.ID, &dl.EventType, &dl.UUID, &dl.EndpointURL, &dl.Status, &next, &delivered, &created, &offset); err != nil {
		return Delivery{}, err
	}
	dl.CreatedAt = clock.Time{T: clock.FromMillis(created)}
	if next.Valid && dl.Status == Pending {
		dl.NextAttemptAt = &clock.Time{T: clock.FromMillis(next.Int64 + offset)}
	}
	if delivered.Valid {
		dl.DeliveredAt = &clock.Time{T: clock.FromMillis(delivered.Int64)}
	}
	dl.Attempts = []Attempt{}
	return dl, nil
}

func (d *Dispatcher) attempts(ctx context.Context, q store.Querier, merchantID, eventID string) ([]Attempt, error) {
	rows, err := q.QueryContext(ctx, `SELECT attempt, started_at, status_code, latency_ms, error FROM webhook_attempts
		WHERE merchant_id = $1 AND event_id = $2 ORDER BY attempt`, merchantID, eventID)
	if err != nil {
		return nil, fmt.Errorf("list attempts: %w", err)
	}
	defer rows.Close()
	out := []Attempt{}
	for rows.Next() {
		var a Attempt
		var at int64
		var code sql.NullInt64
		var errText sql.NullString
		if err := rows.Scan(&a.Attempt, &at, &code, &a.LatencyMS, &errText); err != nil {
			return nil, err
		}
		a.At = clock.Time{T: clock.FromMillis(at)}
		if code.Valid {
			c := int(code.Int64)
			a.StatusCode = &c
		}
		if errText.Valid {
			a.Error = &errText.String
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Delivery reads one event of merchantID by its id.
func (d *Dispatcher) Delivery(ctx context.Context, q store.Querier, merchantID, id string) (Delivery, error) {
	dl, err := scanDelivery(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+`
		FROM webhook_events WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, fault.NotFoundf("no webhook event %s", id)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("read delivery %s: %w", id, err)
	}
	dl.Attempts, err = d.attempts(ctx, q, merchantID, id)
	return dl, err
}

// Resend queues an event for another attempt now, whatever its state; if it
// fails again, the retry schedule starts over. The webhook-id stays the same,
// so a receiver that already processed it can recognise the duplicate.
func (d *Dispatcher) Resend(ctx context.Context, tx *store.Tx, merchantID, id string) (Delivery, error) {
	now := d.clock.Now().UnixMilli()
	ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE webhook_events SET status = 'pending', attempts = 0, next_attempt_at = $1,
		locked_until = NULL, updated_at = $1 WHERE merchant_id = $2 AND id = $3`, now, merchantID, id))
	if err != nil {
		return Delivery{}, fmt.Errorf("resend %s: %w", id, err)
	}
	if !ok {
		return Delivery{}, fault.NotFoundf("no webhook event %s", id)
	}
	tx.AfterCommit(d.Wake)
	return d.Delivery(ctx, tx, merchantID, id)
}

// Ping is the body of a test event.
type Ping struct {
	Type      string     `json:"type" enum:"ping"`
	UUID      string     `json:"uuid"`
	CreatedAt clock.Time `json:"created_at"`
}

// SendPing emits a ping event to target through the same path as every
// other event (signing, retries, log), so a merchant can check a receiver.
// clockOffset is the merchant's test-clock offset (zero in production): the
// ping is made at the merchant's time, and answered on its clock.
func (d *Dispatcher) SendPing(ctx context.Context, tx *store.Tx, merchantID string, target Target, clockOffset time.Duration) (Delivery, error) {
	if err := d.policy.Validate("", target); err != nil {
		return Delivery{}, err
	}
	if target.IsZero() {
		return Delivery{}, fault.Field("endpoint_url", "is required")
	}
	uuid := store.RandomID(store.UUIDLen)
	now := d.clock.Now().Add(clockOffset).Truncate(time.Millisecond)
	// The answer is the event as written, not read back: a round trip less
	// on PostgreSQL (TestSendPingAnswersAsRead).
	ev := Event{MerchantID: merchantID, Type: "ping", RecordUUID: uuid, Target: target,
		Payload: Ping{Type: "ping", UUID: uuid, CreatedAt: clock.Time{T: now}}, At: now}
	body, at, err := d.encode(ev)
	if err != nil {
		return Delivery{}, err
	}
	// A ping is not an event of the log (CONTRACT §25): only its delivery is written.
	dl, err := d.emit(ctx, tx, newEventID(), ev, body, at)
	if err != nil {
		return Delivery{}, err
	}
	dl.NextAttemptAt = &clock.Time{T: dl.NextAttemptAt.T.Add(clockOffset)}
	return dl, nil
}
