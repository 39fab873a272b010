package job

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/store"
)

// recordFailure records a failed run in tx: the job is retried after a
// growing delay, or marked failed once it has used its attempts. It returns
// the outcome, outcomeRetry or outcomeFailed.
func (q *Queue) recordFailure(ctx context.Context, tx *store.Tx, j Job, runErr error) (string, error) {
	msg := ErrorText(runErr.Error(), maxErrorBytes)
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

// maxErrorBytes bounds the last error a failed job keeps.
const maxErrorBytes = 2000

// Backoff is the delay before retry number attempt: exponential from one
// second, capped at one hour, with Jitter so that retries do not march in
// step.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 12)
	return Jitter(min(d, time.Hour))
}

// Jitter spreads a retry's delay d by up to a tenth either way (±10 %), so
// that the retries of many jobs, or of many webhook events, that failed
// together do not come back together. It is the one rule for both queues:
// a webhook's delays are the schedule receivers are told of (CONTRACT §3),
// which a wider spread would blur (±20 % of 10 h is two hours), and ±10 %
// still keeps a job's successive backoffs apart (0.9–1.1 s, 1.8–2.2 s, …).
func Jitter(d time.Duration) time.Duration {
	spread := int64(d) / 10
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}

// ErrorText is msg as a queue stores a failure's reason: valid UTF-8 (an
// invalid sequence becomes U+FFFD, which PostgreSQL's text refuses
// otherwise, failing the write that records the failure) and at most
// maxBytes long, cut before a character, never inside one.
func ErrorText(msg string, maxBytes int) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) <= maxBytes {
		return msg
	}
	cut := max(maxBytes, 0)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}
