package webhook

import (
	"context"
	"slices"

	"payd/internal/store"
)

// Events are handed to this process's dispatcher at birth when they can be.
//
// An event that a running dispatcher's own process emits is written
// already leased to that dispatcher (locked_until set in its INSERT) and,
// once its transaction commits, handed over in memory: no claim
// transaction finds it, so it costs the outbox no second write before its
// attempt, and the attempt starts as soon as a slot is free, not after a
// claim's round trips. Everything else about it is an ordinary claimed
// event: the endpoint's and the process's slots bound its attempt, the
// recorder writes its outcome, and a retry goes through the claim.
//
// An event is written unleased, for the claim to find as before, when:
//   - an earlier event of its record is still pending: the claim keeps one
//     record's events in order (inRecordOrder), and the INSERT itself
//     checks this;
//   - its endpoint has every slot busy, or already four rounds of events
//     (4 × MaxPerEndpoint) handed over and waiting for slots, or the
//     process four rounds of its own (4 × MaxInFlight): a slow receiver's
//     events wait in the table, not in memory;
//   - the dispatcher is not running in this process, or the database is
//     Citus, whose INSERT cannot hold the subqueries the check needs.
//
// If the process dies between the commit and the attempt, the lease ends
// (Lease) and any dispatcher claims the event. A handed-over event that
// has waited so long for a slot that its lease could end during its
// attempt is released instead of attempted, for a claim to find.

// handed is an event handed over at birth, waiting for a slot.
type handed struct {
	ev       claimed
	leaseEnd int64 // Unix milliseconds
}

// birthLease says whether an event for endpoint, emitted now (Unix
// milliseconds) on db, may be written leased to this dispatcher, and until
// when.
func (d *Dispatcher) birthLease(db *store.DB, endpoint string, now int64) (int64, bool) {
	if db.Distributed() {
		return 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running || d.busy[endpoint] >= d.MaxPerEndpoint || len(d.ready[endpoint]) >= 4*d.MaxPerEndpoint || d.waiting >= 4*d.MaxInFlight {
		return 0, false
	}
	return now + d.Lease.Milliseconds(), true
}

// leasedIfFirst is the locked_until value of an event INSERT that leases
// the event ($10) unless an earlier event of its record ($2 merchant, $4
// record) to the record's own target is still pending.
const leasedIfFirst = `CASE WHEN EXISTS (SELECT 1 FROM webhook_events p WHERE p.merchant_id = $2 AND p.record_uuid = $4 AND p.endpoint_id IS NULL AND p.status = 'pending')
	THEN NULL ELSE CAST($10 AS BIGINT) END`

// bornLeased is what the INSERT of an event written by leasedIfFirst
// returns: whether it was leased, its merchant's signing secret and test-clock offset.
const bornLeased = ` RETURNING locked_until IS NOT NULL, (SELECT m.webhook_secret FROM merchants m WHERE m.id = $2),
	(SELECT m.clock_offset_ms FROM merchants m WHERE m.id = $2)`

// handOff gives a committed event leased at birth to the running
// dispatcher.
func (d *Dispatcher) handOff(ev claimed, leaseEnd int64) {
	d.mu.Lock()
	if !d.running { // stopped since: the lease ends and a claim finds it
		d.mu.Unlock()
		return
	}
	d.ready[ev.endpoint] = append(d.ready[ev.endpoint], handed{ev, leaseEnd})
	d.waiting++
	d.mu.Unlock()
	d.signal()
}

// takeReady takes the handed-over events that have slots now, within the
// process's and each endpoint's bounds, and those whose lease could end
// before their attempt would, to be released (stale).
func (d *Dispatcher) takeReady() (out, stale []claimed) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now().UnixMilli()
	free := d.MaxInFlight - d.inFlight
	for ep, waiting := range d.ready {
		d.waiting -= len(waiting)
		waiting = slices.DeleteFunc(waiting, func(h handed) bool {
			if h.leaseEnd-now >= d.Timeout.Milliseconds() {
				return false
			}
			stale = append(stale, h.ev)
			return true
		})
		n := min(d.MaxPerEndpoint-d.busy[ep], free, len(waiting))
		if n > 0 {
			for _, h := range waiting[:n] {
				out = append(out, h.ev)
			}
			waiting = waiting[n:]
			free -= n
		}
		d.waiting += len(waiting)
		if len(waiting) == 0 {
			delete(d.ready, ep)
		} else {
			d.ready[ep] = waiting
		}
	}
	return out, stale
}

// stopHandOffs ends hand-overs when Run returns and releases the leases of
// the events still waiting, so that the next process claims them at once.
func (d *Dispatcher) stopHandOffs(ctx context.Context) {
	d.mu.Lock()
	d.running = false
	var evs []claimed
	for _, waiting := range d.ready {
		for _, h := range waiting {
			evs = append(evs, h.ev)
		}
	}
	clear(d.ready)
	d.waiting = 0
	d.mu.Unlock()
	d.release(ctx, evs)
}

// release ends the leases of evs, events still pending that this process
// will not attempt, and hints their endpoints, so that a claim finds them
// at once.
func (d *Dispatcher) release(ctx context.Context, evs []claimed) {
	if len(evs) == 0 {
		return
	}
	keys := make([]eventKey, len(evs))
	for i, ev := range evs {
		keys[i] = eventKey{ev.merchantID, ev.id}
	}
	for chunk := range slices.Chunk(keys, attemptsPerStatement) {
		which, args := byKeys(nil, chunk)
		err := d.db.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET locked_until = NULL WHERE `+which+` AND status = 'pending'`, args...)
			return err
		})
		if err != nil {
			d.log.Error("release webhook events", "err", err)
		}
	}
	d.mu.Lock()
	for _, ev := range evs {
		d.hint(ev.endpoint)
	}
	d.mu.Unlock()
}
