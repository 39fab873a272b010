package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"payd/internal/store"
)

// recordFailure records a failed run in tx: the job is retried after a
// growing delay, or marked failed once it has used its attempts. It returns
// the outcome, outcomeRetry or outcomeFailed.
func (q *Queue) recordFailure(ctx context.Context, tx *store.Tx, j Job, runErr error) (string, error) {
	msg := runErr.Error()
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	var state State
	err := tx.QueryRowContext(ctx, `UPDATE jobs SET attempts = attempts + 1, last_error = $1,
		state = CASE WHEN attempts + 1 >= max_attempts THEN `+failedSQL+` ELSE `+availableSQL+` END,
		run_at = $2 + `+ClockOffsetOf("jobs.merchant_id")+`
		WHERE merchant_id = $3 AND id = $4 RETURNING state`, msg, q.clock.Now().Add(Backoff(j.Attempt)).UnixMilli(), j.ClockOf, j.ID).Scan(&state)
	if err != nil {
		return "", fmt.Errorf("record failure of job %d: %w", j.ID, err)
	}
	if state == Failed {
		return outcomeFailed, nil
	}
	return outcomeRetry, nil
}

// Backoff is the delay before retry number attempt: exponential from one
// second, capped at one hour, with ±20 % jitter so retries do not march in step.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 12)
	d = min(d, time.Hour)
	jitter := time.Duration(rand.Int64N(int64(d)/5*2+1)) - d/5
	return d + jitter
}
