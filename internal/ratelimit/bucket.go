package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// Kind separates a merchant's writes from its reads: each has its own bucket.
type Kind string

const (
	Write Kind = "write"
	Read  Kind = "read"
)

// Default rates, in requests per second, for a merchant whose operator set
// none: generous, so that they stop a runaway client, not an integration.
const (
	DefaultWriteRate = 1000
	DefaultReadRate  = 2000
	// MaxRate bounds what an operator may set.
	MaxRate = 1_000_000
)

// burstSeconds is how many seconds of requests a full bucket holds.
const burstSeconds = 2

// leaseParts is how finely a bucket is leased: a process takes a
// twentieth of a second's requests at a time (at least one), so the
// database sees one write per lease, not one per request.
const leaseParts = 20

// leaseLife is how long a process keeps tokens it leased and did not use;
// then they are dropped, so tokens do not pile up in an idle process.
const leaseLife = time.Second

// CodeRateLimited is the answer to a merchant over its limit.
const CodeRateLimited = fault.CodeRateLimited

// Decision is the outcome of taking one request from a bucket, with what
// the RateLimit headers report.
type Decision struct {
	Allowed bool
	// Limit is the bucket's capacity; Remaining an estimate of what is left
	// in it; Reset how long until it is full again.
	Limit, Remaining int64
	Reset            time.Duration
	// RetryAfter is when a refused request may succeed.
	RetryAfter time.Duration
	// MerchantID is the merchant Early refused.
	MerchantID string
}

// Limiter holds the leases this process took from merchants' buckets.
type Limiter struct {
	db    *store.DB
	clock clock.Clock

	mu     sync.Mutex
	leases map[leaseKey]*lease
	// apps maps the app-ids this process refused to their merchant, so
	// that the next requests of a merchant over its limit are refused
	// before their credentials cost a database read (see Early).
	apps map[string]string
}

type leaseKey struct {
	merchantID string
	kind       Kind
}

// lease is tokens taken from a shared bucket, spent locally.
type lease struct {
	mu        sync.Mutex
	tokens    int64 // whole requests left in the lease
	expires   time.Time
	emptyTill time.Time // the shared bucket was empty: refuse locally until then
	rate      int64
	shared    int64 // whole requests left in the shared bucket at the last lease
}

// NewLimiter returns a Limiter on db.
func NewLimiter(db *store.DB, clk clock.Clock) *Limiter {
	return &Limiter{db: db, clock: clk, leases: map[leaseKey]*lease{}, apps: map[string]string{}}
}

// maxLeases bounds the leases held: past it, expired ones are dropped.
// maxApps bounds the remembered app-ids: past it, the memory starts over.
const (
	maxLeases = 100_000
	maxApps   = 100_000
)

// Remember notes that appID authenticated as merchantID and was refused.
func (l *Limiter) Remember(appID, merchantID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.apps[appID] == merchantID {
		return
	}
	if len(l.apps) >= maxApps {
		clear(l.apps)
	}
	l.apps[appID] = merchantID
}

// Early refuses, without touching the database, a request that names an
// app-id of a merchant whose kind bucket this process already found empty:
// such a request would be refused after authentication anyway, and a
// merchant far over its limit must cost the server next to nothing, so that
// it does not slow the others (the noisy-neighbour rule). It reports false
// when the request must go through authentication and Take as usual.
func (l *Limiter) Early(appID string, kind Kind) (Decision, bool) {
	l.mu.Lock()
	merchantID, known := l.apps[appID]
	le := l.leases[leaseKey{merchantID, kind}]
	l.mu.Unlock()
	if !known || le == nil {
		return Decision{}, false
	}
	le.mu.Lock()
	defer le.mu.Unlock()
	now := l.clock.Now()
	if le.tokens > 0 && !now.After(le.expires) || !now.Before(le.emptyTill) {
		return Decision{}, false
	}
	d := le.refusal(now)
	d.MerchantID = merchantID
	return d, true
}

// refusal is the answer of an empty lease at now.
func (le *lease) refusal(now time.Time) Decision {
	capacity := le.rate * burstSeconds
	wait := max(le.emptyTill.Sub(now), time.Millisecond)
	return Decision{Limit: capacity, Remaining: 0, Reset: resetOf(capacity, 0, le.rate), RetryAfter: wait}
}

// Take spends one request of merchantID's kind bucket.
func (l *Limiter) Take(ctx context.Context, merchantID string, kind Kind) (Decision, error) {
	le := l.leaseOf(merchantID, kind)
	le.mu.Lock()
	defer le.mu.Unlock()
	now := l.clock.Now()
	if now.After(le.expires) {
		le.tokens = 0
	}
	if le.tokens == 0 && !now.Before(le.emptyTill) {
		if err := l.refill(ctx, merchantID, kind, le, now); err != nil {
			return Decision{}, err
		}
	}
	if le.tokens == 0 {
		return le.refusal(now), nil
	}
	capacity := le.rate * burstSeconds
	le.tokens--
	remaining := le.shared + le.tokens
	return Decision{Allowed: true, Limit: capacity, Remaining: remaining, Reset: resetOf(capacity, remaining, le.rate)}, nil
}

func (l *Limiter) leaseOf(merchantID string, kind Kind) *lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := leaseKey{merchantID, kind}
	le, ok := l.leases[key]
	if !ok {
		if len(l.leases) >= maxLeases {
			now := l.clock.Now()
			for k, old := range l.leases {
				if old.mu.TryLock() {
					if now.After(old.expires) && !now.Before(old.emptyTill) {
						delete(l.leases, k)
					}
					old.mu.Unlock()
				}
			}
		}
		le = &lease{}
		l.leases[key] = le
	}
	return le
}

// refill leases tokens from the shared bucket: it fills the bucket for the
// time since it was last touched, up to its capacity, and takes a lease's
// worth, or what there is. An empty bucket sets emptyTill, the moment a
// lease will be there again.
func (l *Limiter) refill(ctx context.Context, merchantID string, kind Kind, le *lease, now time.Time) error {
	type got struct{ granted, left, rate int64 }
	g, err := store.Do(ctx, l.db, func(tx *store.Tx) (got, error) {
		rate, err := rateOf(ctx, tx, merchantID, kind)
		if err != nil {
			return got{}, err
		}
		capMilli := rate * burstSeconds * 1000
		var tokens, updated int64
		err = tx.QueryRowContext(ctx, `SELECT tokens_milli, updated_at FROM rate_buckets WHERE merchant_id = $1 AND kind = $2`+tx.DB().ForUpdate(),
			merchantID, string(kind)).Scan(&tokens, &updated)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			tokens, updated = capMilli, now.UnixMilli()
		case err != nil:
			return got{}, fmt.Errorf("read rate bucket: %w", err)
		}
		if elapsed := now.UnixMilli() - updated; elapsed > 0 {
			tokens += min(elapsed, burstSeconds*1000) * rate // elapsed ms × rate/s = thousandths of a request
		}
		tokens = min(tokens, capMilli)
		want := max(rate/leaseParts, 1)
		granted := min(want, tokens/1000)
		tokens -= granted * 1000
		if _, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (merchant_id, kind, tokens_milli, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (merchant_id, kind) DO UPDATE SET tokens_milli = excluded.tokens_milli, updated_at = excluded.updated_at`,
			merchantID, string(kind), tokens, max(now.UnixMilli(), updated)); err != nil {
			return got{}, fmt.Errorf("write rate bucket: %w", err)
		}
		return got{granted: granted, left: tokens / 1000, rate: rate}, nil
	})
	if err != nil {
		return err
	}
	le.rate, le.shared, le.tokens, le.expires = g.rate, g.left, g.granted, now.Add(leaseLife)
	if want := max(g.rate/leaseParts, 1); g.left < want {
		// The bucket cannot fund another lease: once these tokens are
		// spent, refuse from here until a lease's worth has arrived
		// (want×1000/rate ms), so that a merchant far over its limit costs
		// the database one write per lease, not one per refused moment.
		le.emptyTill = now.Add(time.Duration((want*1000+g.rate-1)/g.rate) * time.Millisecond)
	}
	return nil
}

// rateOf reads the merchant's rate for kind, or the default.
func rateOf(ctx context.Context, tx *store.Tx, merchantID string, kind Kind) (int64, error) {
	var write, read int64
	if err := tx.QueryRowContext(ctx, `SELECT write_rate, read_rate FROM merchants WHERE id = $1`, merchantID).Scan(&write, &read); err != nil {
		return 0, fmt.Errorf("read rate limits of %s: %w", merchantID, err)
	}
	if kind == Write {
		return cmp(write, DefaultWriteRate), nil
	}
	return cmp(read, DefaultReadRate), nil
}

// cmp is set, or def when set is 0.
func cmp(set, def int64) int64 {
	if set <= 0 {
		return def
	}
	return set
}

// resetOf is how long an emptied bucket takes to be full again.
func resetOf(capacity, remaining, rate int64) time.Duration {
	if rate <= 0 || remaining >= capacity {
		return 0
	}
	return time.Duration((capacity-remaining)*1000/rate) * time.Millisecond
}

// Limits are a merchant's rates, in requests per second; 0 is the default.
type Limits struct {
	WriteRate int64 `json:"write_rate"`
	ReadRate  int64 `json:"read_rate"`
}

// SetLimits changes a merchant's rates (the operator's `payd merchant
// limits`). A nil rate is left as it is. Running processes apply it at
// their next lease, within a second.
func SetLimits(ctx context.Context, db *store.DB, merchantID string, write, read *int64) (Limits, error) {
	f := fault.Fields{}
	for name, v := range map[string]*int64{"write_rate": write, "read_rate": read} {
		if v != nil && (*v < 0 || *v > MaxRate) {
			f.Add(name, fmt.Sprintf("must be 0 (the default) to %d requests per second", MaxRate))
		}
	}
	if err := f.Err(); err != nil {
		return Limits{}, err
	}
	return store.Do(ctx, db, func(tx *store.Tx) (Limits, error) {
		var out Limits
		err := tx.QueryRowContext(ctx, `UPDATE merchants SET write_rate = COALESCE($1, write_rate), read_rate = COALESCE($2, read_rate)
			WHERE id = $3 RETURNING write_rate, read_rate`, write, read, merchantID).Scan(&out.WriteRate, &out.ReadRate)
		if errors.Is(err, sql.ErrNoRows) {
			return Limits{}, fault.NotFoundf("no merchant %s", merchantID)
		}
		if err != nil {
			return Limits{}, fmt.Errorf("set rate limits: %w", err)
		}
		return out, nil
	})
}
