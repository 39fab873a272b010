package merchant

import (
	"context"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/store"
)

// Clock tells a merchant's time: the deployment's clock plus the merchant's
// sandbox test-clock offset (always zero in production), to the millisecond,
// which is what the database keeps. It is the one way services and jobs read
// a merchant's time; build it once (NewClock) and inject it.
type Clock struct {
	base clock.Clock
}

// NewClock returns the merchant clock that runs on base.
func NewClock(base clock.Clock) Clock { return Clock{base: base} }

// System is the deployment's own time, on no merchant's clock (what runs on
// real time: retries, delivery attempts).
func (c Clock) System() time.Time { return c.base.Now() }

// Of is the time on the caller's clock, for a request: p carries the offset
// read when it authenticated.
func (c Clock) Of(p Principal) time.Time { return c.At(p.ClockOffset) }

// offsetQuery reads a merchant's clock offset, in milliseconds.
const offsetQuery = `SELECT clock_offset_ms FROM merchants WHERE id = $1`

// SendOffset reads merchantID's clock offset in milliseconds with the next
// statement that goes to the server (store.SendValue), for a caller that
// reads it with other rows; At turns it into the time.
func (c Clock) SendOffset(ctx context.Context, tx *store.Tx, merchantID string) (*store.Pending[int64], error) {
	return store.SendValue[int64](ctx, tx, offsetQuery, merchantID)
}

// Read is the time on merchantID's clock, read from q, for work that is not
// a request (jobs, hosted pages).
func (c Clock) Read(ctx context.Context, q store.Querier, merchantID string) (time.Time, error) {
	var offset int64
	if err := q.QueryRowContext(ctx, offsetQuery, merchantID).Scan(&offset); err != nil {
		if isNoRows(err) {
			return time.Time{}, fault.NotFoundf("no merchant %s", merchantID)
		}
		return time.Time{}, fmt.Errorf("merchant clock: %w", err)
	}
	return c.At(time.Duration(offset) * time.Millisecond), nil
}

// OfJob is the time on merchantID's clock for a job's work: from the offset
// read with the job's claim when the job runs on that merchant's clock (no
// query), else read from q.
func (c Clock) OfJob(ctx context.Context, q store.Querier, j job.Job, merchantID string) (time.Time, error) {
	if j.ClockOf == merchantID {
		return c.At(j.ClockOffset), nil
	}
	return c.Read(ctx, q, merchantID)
}

// At is the time on a clock running offset ahead of the deployment's, for
// callers that read the offset along with other columns.
func (c Clock) At(offset time.Duration) time.Time {
	return c.base.Now().Add(offset).Truncate(time.Millisecond)
}

// Now is the time on merchantID's clock, read from q.
func (s *Service) Now(ctx context.Context, q store.Querier, merchantID string) (time.Time, error) {
	return NewClock(s.clock).Read(ctx, q, merchantID)
}

// MaxClockAdvance bounds one move of a test clock (ten years).
const MaxClockAdvance = 10 * 365 * 24 * time.Hour

// AdvanceClock moves merchantID's test clock to `to`, which must not be
// earlier than its current time: a test clock only moves forward. It returns
// the new time.
func (s *Service) AdvanceClock(ctx context.Context, tx *store.Tx, merchantID string, to func(now time.Time) (time.Time, error)) (time.Time, error) {
	var offset int64
	if err := tx.QueryRowContext(ctx, `SELECT clock_offset_ms FROM merchants WHERE id = $1`+tx.DB().ForUpdate(), merchantID).Scan(&offset); err != nil {
		return time.Time{}, fmt.Errorf("advance clock: %w", err)
	}
	real := s.clock.Now()
	now := real.Add(time.Duration(offset) * time.Millisecond)
	target, err := to(now)
	if err != nil {
		return time.Time{}, err
	}
	if target.Before(now) {
		return time.Time{}, fault.Field("now", "is earlier than the clock's current time; a test clock only moves forward")
	}
	if target.Sub(now) > MaxClockAdvance {
		return time.Time{}, fault.Field("now", "moves the clock more than ten years at once")
	}
	// Round up to the next millisecond, so that the clock read right after
	// this never shows a time before the one it was set to.
	newOffset := (target.Sub(real) + time.Millisecond - 1).Milliseconds()
	if _, err := tx.ExecContext(ctx, `UPDATE merchants SET clock_offset_ms = $1 WHERE id = $2`, newOffset, merchantID); err != nil {
		return time.Time{}, fmt.Errorf("advance clock: %w", err)
	}
	s.principalChanged(tx)
	return target, nil
}

// ResetClock sets merchantID's test clock back to the deployment's own time
// and returns it (CONTRACT §25: the one exception to "a test clock never
// moves back", so that a developer who moved it can run a wall-clock client
// again). Records keep their times, and work scheduled on the moved clock
// runs when the real time reaches it. Each access token alive on the moved
// clock keeps what was left of its lifetime, and one that had expired there
// stays expired: else a token issued a year ahead would be good for a year.
func (s *Service) ResetClock(ctx context.Context, tx *store.Tx, merchantID string) (time.Time, error) {
	var offset int64
	if err := tx.QueryRowContext(ctx, `SELECT clock_offset_ms FROM merchants WHERE id = $1`+tx.DB().ForUpdate(), merchantID).Scan(&offset); err != nil {
		if isNoRows(err) {
			return time.Time{}, fault.NotFoundf("no merchant %s", merchantID)
		}
		return time.Time{}, fmt.Errorf("reset clock: %w", err)
	}
	real := s.clock.Now().Truncate(time.Millisecond)
	moved := real.Add(time.Duration(offset) * time.Millisecond)
	if _, err := tx.ExecContext(ctx, `UPDATE merchants SET clock_offset_ms = 0 WHERE id = $1`, merchantID); err != nil {
		return time.Time{}, fmt.Errorf("reset clock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE access_tokens SET expires_at = CASE WHEN expires_at > $2 THEN expires_at - $3 ELSE $4 END
		WHERE merchant_id = $1 AND expires_at > $4`, merchantID, moved.UnixMilli(), offset, real.UnixMilli()); err != nil {
		return time.Time{}, fmt.Errorf("reset clock: %w", err)
	}
	s.principalChanged(tx)
	return real, nil
}

// NowText names the time a rule about "now" was checked against, for its
// message: "now" on the real clock, and "the merchant's test clock, now
// <time>" when p's sandbox clock was moved, so that a developer whose
// client keeps wall-clock time sees why (issue 54 item 10).
func NowText(p Principal, now time.Time) string {
	if p.ClockOffset == 0 {
		return "now"
	}
	return "the merchant's test clock, now " + clock.Format(now)
}
