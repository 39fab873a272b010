// Package ratelimit holds payd's two request limits: the throttle on failed
// authentication, and each merchant's token buckets for writes and reads.
// Their state lives in the database, so several payd processes on one
// PostgreSQL database share it: three nodes do not allow three times the
// attempts or the requests.
package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// Throttle slows down and then refuses clients that keep failing
// authentication (CONTRACT §2). It counts failures per client address and
// presented app-id, and per client address alone (a client cycling through
// app-ids), each in a window that opens at its first failure. A request with valid credentials is never
// asked about: the throttle only decides how a failure is answered.
type Throttle struct {
	db    *store.DB
	clock clock.Clock
	// Window is how long failures are counted together.
	Window time.Duration
	// PerApp and PerClient bound the failures of one client with one
	// app-id, and of one client with any.
	PerApp, PerClient Bounds

	mu sync.Mutex
	// refused caches the clients refused until a time, so that a refused
	// client's further failures cost no database write.
	refused map[string]time.Time
}

// Bounds are a failure count's two thresholds.
type Bounds struct {
	// SlowAfter failures, each further failure is answered later and later;
	// past RefuseAfter, it is refused with 429 until the window ends.
	SlowAfter, RefuseAfter int
}

// Verdict is how to answer a failed authentication.
type Verdict struct {
	// Delay holds the 401 back.
	Delay time.Duration
	// Refused answers 429 instead, with Retry-After.
	Refused    bool
	RetryAfter time.Duration
}

// maxDelay bounds how long one failure's answer is held back.
const maxDelay = 2 * time.Second

// maxCachedRefusals bounds the refusal cache under a flood of addresses.
const maxCachedRefusals = 100_000

// NewThrottle returns the throttle with CONTRACT §2's bounds: a client is
// slowed after 5 failures with one app-id in a minute and refused after 20;
// after 20 and 100 failures with any.
func NewThrottle(db *store.DB, clk clock.Clock) *Throttle {
	return &Throttle{db: db, clock: clk, Window: time.Minute,
		PerApp: Bounds{SlowAfter: 5, RefuseAfter: 20}, PerClient: Bounds{SlowAfter: 20, RefuseAfter: 100},
		refused: map[string]time.Time{}}
}

// Refused reports whether client is refused now without counting anything:
// for a client already refused, a further failure need not be recorded.
func (t *Throttle) Refused(client, appID string) (time.Duration, bool) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, key := range []string{clientKey(client), appKey(client, appID)} {
		if until, ok := t.refused[key]; ok {
			if now.Before(until) {
				return until.Sub(now), true
			}
			delete(t.refused, key)
		}
	}
	return 0, false
}

// Failed records a failed authentication by client presenting appID (empty
// for an access token) and returns how to answer it.
func (t *Throttle) Failed(ctx context.Context, client, appID string) (Verdict, error) {
	if wait, ok := t.Refused(client, appID); ok {
		return Verdict{Refused: true, RetryAfter: wait}, nil
	}
	now := t.clock.Now()
	type count struct {
		failures int
		opened   int64
	}
	counts, err := store.Do(ctx, t.db, func(tx *store.Tx) ([2]count, error) {
		var counts [2]count
		for i, key := range []string{appKey(client, appID), clientKey(client)} {
			// A window that has ended starts again with this failure.
			if err := tx.QueryRowContext(ctx, `INSERT INTO auth_failures (key, window_start, failures) VALUES ($1, $2, 1)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN auth_failures.window_start <= $3 THEN 1 ELSE auth_failures.failures + 1 END,
					window_start = CASE WHEN auth_failures.window_start <= $3 THEN excluded.window_start ELSE auth_failures.window_start END
				RETURNING failures, window_start`,
				key, now.UnixMilli(), now.Add(-t.Window).UnixMilli()).Scan(&counts[i].failures, &counts[i].opened); err != nil {
				return counts, fmt.Errorf("count failed authentication: %w", err)
			}
		}
		// Ended windows are of no more use: a client's first failure of a
		// window clears them.
		if counts[1].failures == 1 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM auth_failures WHERE window_start <= $1`, now.Add(-t.Window).UnixMilli()); err != nil {
				return counts, fmt.Errorf("purge failed authentications: %w", err)
			}
		}
		return counts, nil
	})
	if err != nil {
		return Verdict{}, err
	}
	perApp, perClient := counts[0].failures, counts[1].failures
	appEnd := time.UnixMilli(counts[0].opened).Add(t.Window)
	clientEnd := time.UnixMilli(counts[1].opened).Add(t.Window)
	switch {
	case perApp > t.PerApp.RefuseAfter:
		t.refuse(appKey(client, appID), appEnd)
		return Verdict{Refused: true, RetryAfter: appEnd.Sub(now)}, nil
	case perClient > t.PerClient.RefuseAfter:
		t.refuse(clientKey(client), clientEnd)
		return Verdict{Refused: true, RetryAfter: clientEnd.Sub(now)}, nil
	}
	over := max(perApp-t.PerApp.SlowAfter, perClient-t.PerClient.SlowAfter, 0)
	return Verdict{Delay: min(time.Duration(over)*100*time.Millisecond, maxDelay)}, nil
}

func (t *Throttle) refuse(key string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.refused) >= maxCachedRefusals {
		now := t.clock.Now()
		for k, u := range t.refused {
			if !now.Before(u) {
				delete(t.refused, k)
			}
		}
		if len(t.refused) >= maxCachedRefusals {
			return // the database still refuses it, one write per failure
		}
	}
	t.refused[key] = until
}

// maxKeyPart bounds what a client puts into a counter's key.
const maxKeyPart = 64

func clientKey(client string) string { return "client " + client }

// appKey is the key of a client's failures with appID, which is whatever
// the header held: cut to maxKeyPart bytes and made valid UTF-8 (a text
// column refuses anything else), broken sequences all counting as one.
func appKey(client, appID string) string {
	if len(appID) > maxKeyPart {
		appID = appID[:maxKeyPart]
	}
	return "app " + client + " " + strings.ToValidUTF8(appID, "\uFFFD")
}
