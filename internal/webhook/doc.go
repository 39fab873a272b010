// Package webhook is the one way payd notifies merchants. Services call Emit
// inside the transaction that changes state, which writes the event to an
// outbox table: if the transaction rolls back, the event never existed; if it
// commits, the dispatcher delivers it at least once, retrying on the
// contract's schedule, signing every attempt (Standard Webhooks) and logging
// each one for GET /v2/webhooks/deliveries.
//
// # Outbox and dispatcher
//
// Webhooks have their own outbox table and dispatcher rather than being jobs:
// events are leased one by one, with a bound on concurrent attempts per
// endpoint, and delivered in record order (an event waits while an earlier
// event of its record is pending).
//
// An event emitted while this process's dispatcher runs is written already
// leased to it and handed over in memory once its transaction commits, so no
// claim transaction has to find it first (handoff.go). One whose record has
// an earlier event pending, or whose endpoint is saturated, waits in the table
// for a claim, and one that the process never attempts (it crashed, or the
// event waited too long for a slot) is claimed by any process once its lease
// ends or is released. On Citus the dispatcher leases events with a
// conditional update instead of row locks.
//
// Targets are checked on the address actually dialled, after DNS, not only
// when registered: in production a name that resolves (now) to a private
// address is refused (checkDial). The delivery log is stamped on the
// merchant's clock; retries run on the real clock.
package webhook
