package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"payd/internal/job"
	"payd/internal/store"
)

// recording is an attempt's outcome on its way to the database.
type recording struct {
	ev      claimed
	started time.Time
	o       outcome
}

// recordQueue bounds the outcomes waiting to be written; past it, attempts
// wait (back pressure on a database that falls behind).
const recordQueue = 1024

// maxRecordBatch bounds how many attempts one transaction records.
const maxRecordBatch = 256

// recorder writes attempts as they finish, all those waiting in one
// transaction: a commit per batch rather than per attempt keeps the
// deliveries' bookkeeping off the critical path when many are in flight.
// A batch that fails is written again one attempt at a time, so that one
// bad record cannot hold back the others; an attempt that cannot be
// recorded is retried when its lease ends.
func (d *Dispatcher) recorder(ctx context.Context, in <-chan recording) {
	for first := range in {
		batch := []recording{first}
	fill:
		for len(batch) < maxRecordBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		if results, err := d.record(ctx, batch); err == nil {
			d.observeAll(batch, results)
			d.recorded(batch)
			continue
		}
		for _, r := range batch {
			one := []recording{r}
			results, err := d.record(ctx, one)
			if err != nil {
				d.log.Error("record webhook attempt", "event_id", r.ev.id, "err", err)
				continue
			}
			d.observeAll(one, results)
			d.recorded(one)
		}
	}
}

// recorded hints the endpoints of recorded attempts: an event of the same
// record may have been waiting for the one just delivered (inRecordOrder).
func (d *Dispatcher) recorded(batch []recording) {
	d.mu.Lock()
	for _, r := range batch {
		d.mayHave(r.ev.endpoint)
	}
	d.mu.Unlock()
	d.signal()
}

func (d *Dispatcher) observeAll(batch []recording, results []string) {
	for i, r := range batch {
		d.observe(results[i], r.o.latency)
	}
}

// attemptsPerStatement bounds the rows of one statement (and so its parameters).
const attemptsPerStatement = 100

// record writes each attempt to the log and its event's next state, in one
// transaction, and returns the outcomes' names. The attempts go in
// multi-row inserts, the deliveries (the common outcome) in one update.
func (d *Dispatcher) record(ctx context.Context, batch []recording) ([]string, error) {
	now := d.clock.Now()
	rows := make([]attemptRow, len(batch))
	results := make([]string, len(batch))
	var delivered []eventKey
	for i, r := range batch {
		rows[i], results[i] = d.next(r, now)
		if rows[i].status == Delivered {
			delivered = append(delivered, eventKey{rows[i].merchantID, rows[i].eventID})
		}
	}
	err := d.db.Exec(ctx, func(tx *store.Tx) error {
		if err := tx.PlanEachTime(ctx); err != nil { // the outbox swings (leaseTx)
			return err
		}
		for chunk := range slices.Chunk(rows, attemptsPerStatement) {
			values := make([]string, len(chunk))
			args := make([]any, 0, 6*len(chunk))
			for i, a := range chunk {
				n := len(args)
				values[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
				args = append(args, a.eventID, a.merchantID, a.attempt, a.started, a.code, a.latencyMS, a.errText)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (event_id, merchant_id, attempt, started_at, status_code, latency_ms, error)
				VALUES `+strings.Join(values, ", "), args...); err != nil {
				return err
			}
		}
		for chunk := range slices.Chunk(delivered, attemptsPerStatement) {
			which, args := byKeys([]any{now.UnixMilli()}, chunk)
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = 'delivered', attempts = attempts + 1, next_attempt_at = NULL,
				locked_until = NULL, last_error = NULL, delivered_at = $1 + `+merchantOffset+`, updated_at = $1 WHERE `+which, args...); err != nil {
				return err
			}
		}
		for _, a := range rows {
			if a.status == Delivered {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, attempts = attempts + 1, next_attempt_at = $2,
				locked_until = NULL, last_error = $3, updated_at = $4 WHERE merchant_id = $5 AND id = $6`,
				string(a.status), a.next, a.errText, now.UnixMilli(), a.merchantID, a.eventID); err != nil {
				return err
			}
		}
		return d.endpointHealth(ctx, tx, rows, now)
	})
	return results, err
}

// attemptRow is what recording one attempt writes.
type attemptRow struct {
	eventID, merchantID string
	attempt             int // the event's attempts before it, and 1
	// started is when the attempt started on the merchant's clock, where
	// the log shows it; next, when the retry is due, is on the real
	// clock, where the dispatcher looks for it.
	started, latencyMS int64
	code, errText      any
	status             Status
	next               any
	// endpointID is the webhook endpoint of the delivery ("" for a
	// record's endpoint_url): its health follows the outcome (health.go),
	// unless final (it is disabled or gone); gone is a 410 answer.
	endpointID    string
	final, gone   bool
	clockOffsetMS int64
}

// next decides an attempt's consequence: delivered, failed for good, or a
// retry after the schedule's delay (or the receiver's Retry-After).
func (d *Dispatcher) next(r recording, now time.Time) (attemptRow, string) {
	ev, o := r.ev, r.o
	result := "retry"
	a := attemptRow{eventID: ev.id, merchantID: ev.merchantID, attempt: ev.attempts + 1, started: r.started.UnixMilli() + ev.clockOffsetMS,
		latencyMS: o.latency.Milliseconds(), status: Pending, endpointID: ev.endpointID, final: o.final, clockOffsetMS: ev.clockOffsetMS}
	lastErr := o.err
	switch {
	case o.delivered():
		result, a.status = "delivered", Delivered
	case o.final:
		result, a.status = "failed", Failed
	case o.statusCode == http.StatusGone:
		result, a.status, lastErr = "failed", Failed, "the receiver answered 410 Gone: no more attempts"
		a.gone = true
	case ev.attempts+1 > len(d.Schedule):
		result, a.status = "failed", Failed
	default:
		delay := job.Jitter(d.Schedule[ev.attempts])
		if o.retryAfter > 0 {
			delay = o.retryAfter
		}
		a.next = now.Add(delay).UnixMilli()
	}
	if lastErr == "" && !o.delivered() {
		lastErr = "the receiver answered " + strconv.Itoa(o.statusCode)
	}
	if o.statusCode != 0 {
		a.code = o.statusCode
	}
	if !o.delivered() {
		a.errText = job.ErrorText(lastErr, maxErrorBytes)
	}
	return a, result
}

// maxErrorBytes bounds the last error an event and its attempt keep.
const maxErrorBytes = 500
