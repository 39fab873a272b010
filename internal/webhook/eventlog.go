package webhook

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// The events log (CONTRACT §21, §25): every event payd emits but ping,
// kept for the retention (30 days by default) and listed newest first by
// GET /v2/events. An event is written once; each of its deliveries (to its
// record's own endpoint_url, to each webhook endpoint, by a replay) is a
// row of the outbox whose webhook-id is the event's id.

// LoggedEvent is an event as GET /v2/events lists it.
type LoggedEvent struct {
	ID        string          `json:"id" doc:"The event id: the webhook-id of every delivery of it." example:"msg_0123456789ABCDEFGHIJ"`
	Type      string          `json:"type" doc:"The event type (X-Event-Type)." example:"payin.received"`
	CreatedAt clock.Time      `json:"created_at" doc:"When the event was written, on the merchant's clock."`
	Data      json.RawMessage `json:"data" doc:"The record as its detail endpoint returned it when the event was written." swaggertype:"object"`
}

// EventPage is a page of the events log.
type EventPage struct {
	Records    []LoggedEvent `json:"records"`
	NextCursor *string       `json:"next_cursor" doc:"Give as cursor for the next (older) page; null on the last page."`
	HasMore    bool          `json:"has_more"`
}

// EventFilter selects events of the log.
type EventFilter struct {
	// Types are patterns (an exact type, a prefix ending in *, or *); none: every type.
	Types []string
	// From and To bound created_at (From inclusive, To exclusive); zero: unbounded.
	From, To time.Time
	// Currency keeps events whose record is in it; "": every currency.
	Currency string
	Cursor   string
	Size     int
}

// Bounds of the events API (CONTRACT §25).
const (
	DefaultEventPage = 20
	MaxEventPage     = 100
	// maxTypeFilters bounds the patterns of one filter.
	maxTypeFilters = 20
)

// keep writes event id to the events log and to the outbox of every
// enabled webhook endpoint of the merchant that wants its type, in tx,
// without waiting for either statement's answer (a ping is not logged).
func (d *Dispatcher) keep(ctx context.Context, tx *store.Tx, id string, ev Event, body []byte, at time.Time) error {
	now := d.clock.Now().UnixMilli()
	if err := tx.Send(ctx, `INSERT INTO events (merchant_id, id, event_type, record_uuid, currency, body, created_at, written_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, ev.MerchantID, id, ev.Type, ev.RecordUUID, currencyOf(body), body, at.UnixMilli(), now); err != nil {
		return err
	}
	urls, err := store.SendQuery(ctx, tx, fanOutQuery(tx.DB().OneWriter()), []any{id, ev.Type, ev.RecordUUID, body, now, at.UnixMilli(), ev.MerchantID},
		func(row store.Row) (string, error) {
			var url string
			err := row.Scan(&url)
			return url, err
		})
	if err != nil {
		return err
	}
	merchantID := ev.MerchantID
	tx.AfterCommit(func() {
		d.streams.notify(merchantID)
		d.signals.add(merchantID)
		list, err := urls.Get()
		if err != nil {
			d.log.Error("webhook endpoint deliveries written without their answer", "event_id", id)
			d.Wake()
			return
		}
		for _, u := range list {
			d.wakeFor(u)
		}
	})
	return nil
}

// fanOutQuery writes a delivery of event $1 (type $2, record $3, body $4,
// written at $5 on the real clock and $6 on the merchant's) for each
// enabled endpoint of merchant $7 one of whose patterns matches the type,
// and returns their urls. A delivery's own id is the event's and the
// endpoint's; its webhook-id (event_id) is the event's.
func fanOutQuery(oneWriter bool) string {
	seqColumn, seqValue := "", ""
	if oneWriter {
		// On SQLite the seq subquery spans merchants: SQLite is never distributed.
		seqColumn, seqValue = ", seq", ", (SELECT COALESCE(MAX(seq), 0) FROM webhook_events) + ROW_NUMBER() OVER (ORDER BY w.id)"
	}
	return `INSERT INTO webhook_events (id, merchant_id, event_type, record_uuid, endpoint_url, authorization_header, body, status,
		next_attempt_at, created_at, updated_at, event_id, endpoint_id` + seqColumn + `)
		SELECT $1 || '.' || w.id, w.merchant_id, $2, $3, w.url, '', $4, 'pending', $5, $6, $5, $1, w.id` + seqValue + `
		FROM webhook_endpoints w WHERE w.merchant_id = $7 AND w.status = 'enabled' AND ` + wantsType("w", "$2") + `
		RETURNING endpoint_url`
}

// wantsType is the condition that endpoint alias has a pattern matching
// the type typ (a placeholder or column).
func wantsType(alias, typ string) string {
	return `EXISTS (SELECT 1 FROM webhook_endpoint_events p WHERE p.merchant_id = ` + alias + `.merchant_id AND p.endpoint_id = ` + alias + `.id
		AND ((p.wildcard = 0 AND p.pattern = ` + typ + `) OR (p.wildcard = 1 AND substr(` + typ + `, 1, length(p.prefix)) = p.prefix)))`
}

// currencyOf is the currency member of a record's body, "" when it has none.
func currencyOf(body []byte) string {
	var v struct {
		Currency any `json:"currency"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if s, ok := v.Currency.(string); ok && len(s) <= 8 {
		return strings.ToUpper(s)
	}
	return ""
}

// Events lists merchantID's events newest first (CONTRACT §21): a page of
// f.Size after f.Cursor.
func (d *Dispatcher) Events(ctx context.Context, merchantID string, f EventFilter) (EventPage, error) {
	args := []any{merchantID}
	var where []string
	if f.Cursor != "" {
		at, id, err := readCursor(f.Cursor)
		if err != nil {
			return EventPage{}, err
		}
		where = append(where, fmt.Sprintf("(created_at < %s OR (created_at = %s AND id < %s))", arg(&args, at), arg(&args, at), arg(&args, id)))
	}
	if cond := typeCondition(&args, "event_type", f.Types); cond != "" {
		where = append(where, cond)
	}
	if !f.From.IsZero() {
		where = append(where, "created_at >= "+arg(&args, f.From.UnixMilli()))
	}
	if !f.To.IsZero() {
		where = append(where, "created_at < "+arg(&args, f.To.UnixMilli()))
	}
	if f.Currency != "" {
		where = append(where, "currency = "+arg(&args, strings.ToUpper(f.Currency)))
	}
	size := min(max(f.Size, 1), MaxEventPage)
	rows, err := d.db.Read().QueryContext(ctx, `SELECT id, event_type, created_at, body FROM events WHERE merchant_id = $1`+andAll(where)+`
		ORDER BY created_at DESC, id DESC`+store.Limit(size+1), args...)
	if err != nil {
		return EventPage{}, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	page := EventPage{Records: []LoggedEvent{}}
	var last struct {
		at int64
		id string
	}
	for rows.Next() {
		var e LoggedEvent
		var at int64
		var body []byte
		if err := rows.Scan(&e.ID, &e.Type, &at, &body); err != nil {
			return EventPage{}, err
		}
		if len(page.Records) == size {
			page.HasMore = true
			break
		}
		e.CreatedAt, e.Data = clock.Time{T: clock.FromMillis(at)}, body
		page.Records = append(page.Records, e)
		last.at, last.id = at, e.ID
	}
	if err := rows.Err(); err != nil {
		return EventPage{}, err
	}
	if page.HasMore {
		c := writeCursor(last.at, last.id)
		page.NextCursor = &c
	}
	return page, nil
}

// andAll is conditions, each after " AND ".
func andAll(conditions []string) string {
	var b strings.Builder
	for _, c := range conditions {
		b.WriteString(" AND " + c)
	}
	return b.String()
}

// writeCursor is the opaque cursor after the event (at, id).
func writeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + ":" + id))
}

func readCursor(c string) (int64, string, error) {
	bad := fault.Field("cursor", "is not a cursor this list gave")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	ms, id, ok := strings.Cut(string(b), ":")
	at, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" || len(id) > 64 {
		return 0, "", bad
	}
	return at, id, nil
}

// CheckTypes refuses type patterns that are not an event type, a prefix
// ending in * ("payout.*") or * alone, naming field.
func CheckTypes(field string, patterns []string) error {
	if len(patterns) > maxTypeFilters {
		return fault.Field(field, fmt.Sprintf("has more than %d types", maxTypeFilters))
	}
	for _, p := range patterns {
		if !validPattern(p) {
			return fault.Field(field, fmt.Sprintf("%q is not an event type, a prefix ending in * (payout.*) or *", p))
		}
	}
	return nil
}

// maxPatternLen bounds one type pattern.
const maxPatternLen = 100

// validPattern reports whether p is an event type ("payin.received"), a
// prefix ending in a star ("payout.*", "payout*") or "*".
func validPattern(p string) bool {
	if p == "" || len(p) > maxPatternLen {
		return false
	}
	body := strings.TrimSuffix(p, "*")
	for _, r := range body {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Matches reports whether pattern (validPattern) matches event type typ.
func Matches(pattern, typ string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(typ, prefix)
	}
	return pattern == typ
}

// typeCondition is the condition that column matches one of patterns,
// with their values appended to args; "" for none (every type).
func typeCondition(args *[]any, column string, patterns []string) string {
	var or []string
	for _, p := range patterns {
		if p == "*" {
			return ""
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			or = append(or, fmt.Sprintf("substr(%s, 1, %d) = %s", column, len(prefix), arg(args, prefix)))
			continue
		}
		or = append(or, column+" = "+arg(args, p))
	}
	if len(or) == 0 {
		return ""
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// maxPrunedPerRun bounds the events one prune run deletes; a run that
// reaches it reports more.
const maxPrunedPerRun = 5000

// Prune deletes up to maxPrunedPerRun of merchantID's events written before
// cutoff (the retention, CONTRACT §21) in tx, and reports whether more
// may remain.
func Prune(ctx context.Context, tx *store.Tx, merchantID string, cutoff time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE merchant_id = $1 AND id IN
		(SELECT id FROM events WHERE merchant_id = $1 AND written_at < $2 ORDER BY written_at`+store.Limit(maxPrunedPerRun)+`)`,
		merchantID, cutoff.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("prune events of %s: %w", merchantID, err)
	}
	n, err := res.RowsAffected()
	return n == maxPrunedPerRun, err
}

// eventSeq is the stream position of merchantID's event id: false when
// there is no such event, or it is not yet in the stream.
func (d *Dispatcher) eventSeq(ctx context.Context, merchantID, id string) (int64, bool, error) {
	var seq sql.NullInt64
	err := d.db.Read().QueryRowContext(ctx, `SELECT seq FROM events WHERE merchant_id = $1 AND id = $2`, merchantID, id).Scan(&seq)
	if store.IsNoRows(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read event %s: %w", id, err)
	}
	return seq.Int64, seq.Valid, nil
}
