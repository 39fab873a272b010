package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestRetryAfterIsHonoured: the receiver's Retry-After replaces the schedule's delay.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		run(t, d)
		id := emit(t, db, d, merchantID, "R1", Target{EndpointURL: srv.URL}, 1)
		waitFor(t, "first attempt", 10*time.Second, func() bool { return len(status(t, d, merchantID, id).Attempts) == 1 })
		dl := status(t, d, merchantID, id)
		if dl.NextAttemptAt == nil {
			t.Fatalf("no next attempt: %+v", dl)
		}
		wait := time.Until(dl.NextAttemptAt.T)
		if wait < 100*time.Second || wait > 121*time.Second {
			t.Errorf("next attempt in %s, want about 120s (Retry-After)", wait)
		}
	})
}

// TestProductionRefusesPrivateAddressWhenDialling: a name that resolves to
// loopback is refused at connect time, whatever validation said.
func TestProductionRefusesPrivateAddressWhenDialling(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer srv.Close()
		d := newDispatcher(db, Policy{})
		run(t, d)
		id := emit(t, db, d, merchantID, "R1", Target{EndpointURL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)}, 1)
		waitFor(t, "refused attempt", 10*time.Second, func() bool { return len(status(t, d, merchantID, id).Attempts) >= 1 })
		a := status(t, d, merchantID, id).Attempts[0]
		if a.Error == nil || !strings.Contains(*a.Error, "not a public address") || a.StatusCode != nil {
			t.Errorf("attempt = %+v, want a refusal naming the address", a)
		}
		if hits.Load() != 0 {
			t.Errorf("receiver was reached %d times", hits.Load())
		}
	})
}
