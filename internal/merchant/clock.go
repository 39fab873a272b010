package merchant

import (
	"context"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// Now is the time on merchantID's clock: the real clock plus the merchant's
// sandbox offset (always zero in production).
func (s *Service) Now(ctx context.Context, q store.Querier, merchantID string) (time.Time, error) {
	return Now(ctx, q, s.clock, merchantID)
}

// Now is the time on merchantID's clock read from base: the one way every
// service and job tells a merchant's time (its sandbox test clock).
func Now(ctx context.Context, q store.Querier, base clock.Clock, merchantID string) (time.Time, error) {
	var offset int64
	if err := q.QueryRowContext(ctx, `SELECT clock_offset_ms FROM merchants WHERE id = $1`, merchantID).Scan(&offset); err != nil {
		if isNoRows(err) {
			return time.Time{}, fault.NotFoundf("no merchant %s", merchantID)
		}
		return time.Time{}, fmt.Errorf("merchant clock: %w", err)
	}
	return base.Now().Add(time.Duration(offset) * time.Millisecond), nil
}

// MaxClockAdvance bounds one move of a test clock (ten years).
const MaxClockAdvance = 10 * 365 * 24 * time.Hour

// AdvanceClock moves merchantID's test clock to `to`, which must not be
// earlier than its current time: a test clock only moves forward. It returns
// the new time.
func (s *Service) AdvanceClock(ctx context.Context, merchantID string, to func(now time.Time) (time.Time, error)) (time.Time, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (time.Time, error) {
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
		return target, nil
	})
}
