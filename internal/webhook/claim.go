package webhook

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"payd/internal/job"
	"payd/internal/store"
)

// claimed is an event reserved for one attempt.
type claimed struct {
	id, merchantID, eventType, endpoint, auth, secret string
	// eventID is the webhook-id: the event's id, which is the row's own
	// for a delivery to a record's endpoint_url.
	eventID string
	// endpointID is the webhook endpoint a delivery goes to ("" for a
	// record's endpoint_url), whose secrets sign it (previous too, for a
	// day after a rotation).
	endpointID, previous string
	body                 []byte
	attempts             int
	// clockOffsetMS is the merchant's test-clock offset when the event
	// was claimed (read with its secret): the attempt is logged at its
	// start on the merchant's clock.
	clockOffsetMS int64
}

// dueEvents are the events due and free at $1, which a claim over every
// endpoint probes for (job.Probe) before a write transaction is spent on
// claiming.
const dueEvents = `webhook_events
	WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until < $1)`

// claim reserves up to n due events (skipping saturated endpoints, and
// none past an endpoint's MaxPerEndpoint with those already busy) for Lease.
func (d *Dispatcher) claim(ctx context.Context, n int, busy map[string]int, saturated []string) ([]claimed, error) {
	now := d.clock.Now().UnixMilli()
	if due, err := job.Probe(ctx, d.db.Read(), dueEvents, now); err != nil || !due {
		return nil, err
	}
	args := []any{now}
	var exclude []string
	for _, ep := range saturated {
		exclude = append(exclude, arg(&args, ep))
	}
	d.claims.Add(1)
	return store.Do(ctx, d.db, func(tx *store.Tx) ([]claimed, error) {
		if err := leaseTx(ctx, tx); err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, d.claimQuery(n, exclude), args...)
		if err != nil {
			return nil, fmt.Errorf("claim webhook events: %w", err)
		}
		var out []claimed
		perEndpoint := maps.Clone(busy)
		for rows.Next() {
			var c claimed
			if err := rows.Scan(&c.id, &c.merchantID, &c.eventType, &c.endpoint, &c.auth, &c.body, &c.attempts, &c.secret, &c.clockOffsetMS, &c.eventID, &c.endpointID); err != nil {
				rows.Close()
				return nil, err
			}
			if perEndpoint[c.endpoint] >= d.MaxPerEndpoint {
				continue
			}
			perEndpoint[c.endpoint]++
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, nil
		}
		keys := make([]eventKey, len(out))
		for i, c := range out {
			keys[i] = eventKey{c.merchantID, c.id}
		}
		which, lease := byKeys([]any{now + d.Lease.Milliseconds(), now}, keys)
		leased := map[string]bool{}
		err = tx.Query(ctx, `UPDATE webhook_events SET locked_until = $1
			WHERE `+which+` AND status = 'pending' AND (locked_until IS NULL OR locked_until < $2)
			RETURNING id`, lease, func(row store.Row) error {
			var id string
			err := row.Scan(&id)
			leased[id] = true
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("claim webhook events: %w", err)
		}
		return slices.DeleteFunc(out, func(c claimed) bool { return !leased[c.id] }), nil
	})
}

// claimQuery is claim's statement for up to n events: $1 now, and exclude
// the placeholders of the endpoints to skip.
func (d *Dispatcher) claimQuery(n int, exclude []string) string {
	skip := ""
	if len(exclude) > 0 {
		skip = " AND e.endpoint_url NOT IN (" + strings.Join(exclude, ", ") + ")"
	}
	return `SELECT e.id, e.merchant_id, e.event_type, e.endpoint_url, e.authorization_header, e.body, e.attempts, m.webhook_secret, m.clock_offset_ms,
		COALESCE(e.event_id, e.id), COALESCE(e.endpoint_id, '')
		FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id
		WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND (e.locked_until IS NULL OR e.locked_until < $1)` + skip + inRecordOrder("e") + `
		ORDER BY e.next_attempt_at` + store.Limit(n) + d.skipLocked("e")
}

// stillFree is the lease's condition on Citus (see skipLocked); on
// PostgreSQL the claim's locks already keep the events free.
func (d *Dispatcher) stillFree() string {
	return d.db.RecheckAcross(` AND status = 'pending' AND (locked_until IS NULL OR locked_until < $3)`)
}

// skipLocked is the claims' row-locking suffix. Citus cannot lock the rows
// of a query that spans shards, so there a claim reads without locking,
// and its lease, an update on the condition that the event is still free,
// is what one dispatcher alone wins (the others' updates, which wait for
// its commit, then find the event leased and skip it).
func (d *Dispatcher) skipLocked(alias string) string {
	return d.db.SkipLockedAcross(alias)
}

// claimFor reserves up to n due events of one endpoint for Lease, in one
// statement (the index on status, endpoint and due time finds them without
// walking other endpoints' backlog); with probe, only if endpointDue
// finds one.
func (d *Dispatcher) claimFor(ctx context.Context, endpoint string, n int, probe bool) ([]claimed, error) {
	now := d.clock.Now().UnixMilli()
	if probe {
		if due, err := job.Probe(ctx, d.db.Read(), endpointDue, endpoint, now); err != nil || !due {
			return nil, err
		}
	}
	var sent *store.Pending[[]claimed]
	// On PostgreSQL the claim goes with its BEGIN (one round trip, its
	// COMMIT another), and its commit does not wait for the disk: a lease
	// lost in a crash only lets the event be claimed again. It is on the
	// dispatcher's serial path, so each wait there bounds delivery.
	d.claims.Add(1)
	err := d.db.Exec(ctx, func(tx *store.Tx) error {
		if err := leaseTx(ctx, tx); err != nil {
			return err
		}
		var err error
		sent, err = store.SendQuery(ctx, tx, d.claimForQuery(n), []any{now + d.Lease.Milliseconds(), endpoint, now}, func(row store.Row) (claimed, error) {
			var c claimed
			err := row.Scan(&c.id, &c.merchantID, &c.eventType, &c.endpoint, &c.auth, &c.body, &c.attempts, &c.secret, &c.clockOffsetMS, &c.eventID, &c.endpointID)
			return c, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook events: %w", err)
	}
	out, err := sent.Get()
	if err != nil {
		return nil, fmt.Errorf("claim webhook events: %w", err)
	}
	return out, nil
}

// leaseTx readies a claim's transaction: its commit need not wait for the
// disk (a lease lost in a crash only lets the event be claimed again), and
// its statements are planned with their values each time, since the
// outbox's backlog swings from nothing to thousands of events within
// seconds (store.Tx.PlanEachTime).
func leaseTx(ctx context.Context, tx *store.Tx) error {
	if err := tx.RelaxCommit(ctx); err != nil {
		return err
	}
	return tx.PlanEachTime(ctx)
}

// inRecordOrder keeps the claim (of webhook_events as alias) to events no
// earlier event of the same record to the same receiver is still waiting
// for: one record's events are delivered to each receiver in the order
// they were emitted (seq), the next only once the one before is delivered
// or has failed for good. A webhook endpoint and the record's own target
// do not wait for each other (a failing endpoint holds back no record's
// own endpoint_url). The receivers are told apart by endpoint_id, not by
// url: a condition on the url would let the planner look the earlier
// events up by the endpoint's index instead of the record's.
func inRecordOrder(alias string) string {
	return strings.ReplaceAll(` AND NOT EXISTS (SELECT 1 FROM webhook_events p WHERE p.merchant_id = E.merchant_id AND p.record_uuid = E.record_uuid
		AND COALESCE(p.endpoint_id, '') = COALESCE(E.endpoint_id, '') AND p.status = 'pending' AND p.seq < E.seq)`, "E.", alias+".")
}

// endpointDue are the events of endpoint $1 due and free at $2, in record
// order (claimFor's statement without its lease), which claimFor probes for
// (job.Probe) before a write transaction is spent on claiming after
// attempts were recorded: an event of the same record may have waited for
// them, but most of the events this process emits are handed over at birth
// (handoff.go), and then there is nothing to claim.
var endpointDue = `webhook_events w
	WHERE w.status = 'pending' AND w.endpoint_url = $1 AND w.next_attempt_at <= $2 AND (w.locked_until IS NULL OR w.locked_until < $2)` +
	inRecordOrder("w")

// claimForQuery is claimFor's statement for up to n events: $1 the lease's
// end, $2 the endpoint, $3 now.
func (d *Dispatcher) claimForQuery(n int) string {
	return `UPDATE webhook_events SET locked_until = $1
		WHERE (merchant_id, id) IN (SELECT w.merchant_id, w.id FROM webhook_events w
			WHERE w.status = 'pending' AND w.endpoint_url = $2 AND w.next_attempt_at <= $3 AND (w.locked_until IS NULL OR w.locked_until < $3)` +
		inRecordOrder("w") + `
			ORDER BY w.next_attempt_at` + store.Limit(n) + d.skipLocked("w") + `)` + d.stillFree() + `
		RETURNING id, merchant_id, event_type, endpoint_url, authorization_header, body, attempts,
			(SELECT m.webhook_secret FROM merchants m WHERE m.id = webhook_events.merchant_id),
			(SELECT m.clock_offset_ms FROM merchants m WHERE m.id = webhook_events.merchant_id),
			COALESCE(event_id, id), COALESCE(endpoint_id, '')`
}

// eventKey is an event's primary key.
type eventKey struct{ merchantID, id string }

// byKeys appends the merchants and ids of keys to args and returns the
// condition that finds those events through the primary key, merchant
// first: "merchant_id IN ($3) AND id IN ($4, $5)". An event id is random
// (store.RandomID, 20 characters), so no other merchant of the list has one
// of the ids, and the condition finds exactly the keys' events.
func byKeys(args []any, keys []eventKey) (string, []any) {
	merchants := map[string]bool{}
	var m, ids []string
	for _, k := range keys {
		if !merchants[k.merchantID] {
			merchants[k.merchantID] = true
			m = append(m, arg(&args, k.merchantID))
		}
	}
	for _, k := range keys {
		ids = append(ids, arg(&args, k.id))
	}
	return "merchant_id IN (" + strings.Join(m, ", ") + ") AND id IN (" + strings.Join(ids, ", ") + ")", args
}

// arg appends v to *args and returns its placeholder.
func arg(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}
