package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/ratelimit"
	"payd/internal/server/servertest"
)

// TestEarlyRefusal: once this process found a merchant's bucket empty, a
// request naming one of its app-ids is refused without a database read
// until a request's worth has refilled; another kind, another merchant, an
// app-id never authenticated here and the refilled bucket all go through
// authentication and Take as usual.
func TestEarlyRefusal(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		noisy, quiet := e.Merchant(t, "AUD")["AUD"], e.Merchant(t, "AUD")["AUD"]
		one := int64(1)
		if _, err := ratelimit.SetLimits(ctx, e.DB, noisy.MerchantID, &one, &one); err != nil {
			t.Fatal(err)
		}
		l := ratelimit.NewLimiter(e.DB, e.Clock)
		l.Remember(noisy.AppID, noisy.MerchantID)
		l.Remember(quiet.AppID, quiet.MerchantID)
		if _, refused := l.Early(noisy.AppID, ratelimit.Write); refused {
			t.Fatal("refused early before any bucket was read")
		}
		var allowed int
		for range 3 { // a full bucket holds two seconds at 1/s
			d, err := l.Take(ctx, noisy.MerchantID, ratelimit.Write)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				allowed++
			}
		}
		if allowed != 2 {
			t.Fatalf("3 takes from a bucket of 2: %d allowed", allowed)
		}

		tests := []struct {
			name        string
			appID       string
			kind        ratelimit.Kind
			advance     time.Duration
			wantRefused bool
		}{
			{"the empty bucket's merchant", noisy.AppID, ratelimit.Write, 0, true},
			{"its other kind", noisy.AppID, ratelimit.Read, 0, false},
			{"another merchant", quiet.AppID, ratelimit.Write, 0, false},
			{"an app-id not authenticated here", "app_unknown", ratelimit.Write, 0, false},
			{"after a request's worth refilled", noisy.AppID, ratelimit.Write, time.Second, false},
		}
		for _, tt := range tests {
			e.Clock.Advance(tt.advance)
			d, refused := l.Early(tt.appID, tt.kind)
			if refused != tt.wantRefused {
				t.Errorf("%s: refused early = %v, want %v", tt.name, refused, tt.wantRefused)
			}
			if refused && (d.Allowed || d.RetryAfter <= 0 || d.Limit != 2) {
				t.Errorf("%s: refusal %+v, want a retry time and the limit 2", tt.name, d)
			}
		}
	})
}
