package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestRetriesUntilDelivered: a receiver that fails twice then answers 200
// gets three attempts, each signed and carrying the same webhook-id, and the
// log shows all three.
func TestRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		wh, _ := standardwebhooks.NewWebhook(testSecret)
		var mu sync.Mutex
		var ids, auths, types []string
		var verifyErrs []error
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, r.Header.Get("webhook-id"))
			auths = append(auths, r.Header.Get("Authorization"))
			types = append(types, r.Header.Get("X-Event-Type"))
			if err := wh.Verify(body, r.Header); err != nil {
				verifyErrs = append(verifyErrs, err)
			}
			if string(body) != `{"status":"received","uuid":"REC00001"}` {
				verifyErrs = append(verifyErrs, errors.New("body "+string(body)))
			}
			if len(ids) <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		}))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		run(t, d)
		id := emit(t, db, d, merchantID, "REC00001", Target{EndpointURL: srv.URL, AuthorizationHeader: "Token abc"},
			map[string]string{"uuid": "REC00001", "status": "received"})
		waitFor(t, "delivery", 10*time.Second, func() bool { return status(t, d, merchantID, id).Status == Delivered })

		dl := status(t, d, merchantID, id)
		if len(dl.Attempts) != 3 {
			t.Fatalf("attempts = %d, want 3: %+v", len(dl.Attempts), dl.Attempts)
		}
		wantCodes := []int{503, 503, 200}
		for i, a := range dl.Attempts {
			if a.Attempt != i+1 || a.StatusCode == nil || *a.StatusCode != wantCodes[i] {
				t.Errorf("attempt %d = %+v, want status %d", i+1, a, wantCodes[i])
			}
		}
		if dl.DeliveredAt == nil || dl.NextAttemptAt != nil {
			t.Errorf("delivered event: delivered_at %v, next_attempt_at %v", dl.DeliveredAt, dl.NextAttemptAt)
		}
		var theirs int
		if err := db.Read().QueryRow(`SELECT count(*) FROM webhook_attempts WHERE event_id = $1 AND merchant_id = $2`, id, merchantID).Scan(&theirs); err != nil || theirs != 3 {
			t.Errorf("%d attempts name merchant %s (%v), want 3", theirs, merchantID, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range ids {
			if ids[i] != id || auths[i] != "Token abc" || types[i] != "test.event" {
				t.Errorf("attempt %d headers: webhook-id %q, Authorization %q, X-Event-Type %q", i+1, ids[i], auths[i], types[i])
			}
		}
		if len(verifyErrs) > 0 {
			t.Errorf("signature or body problems: %v", verifyErrs)
		}
	})
}

// TestGoneStopsAndScheduleEnds: 410 stops at once; a receiver that always
// fails is marked failed after the schedule; Resend delivers it later.
func TestGoneStopsAndScheduleEnds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var healthy atomic.Bool
		gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
		defer gone.Close()
		flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !healthy.Load() {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}))
		defer flaky.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		run(t, d)
		goneID := emit(t, db, d, merchantID, "R1", Target{EndpointURL: gone.URL}, 1)
		failID := emit(t, db, d, merchantID, "R2", Target{EndpointURL: flaky.URL}, 2)
		waitFor(t, "410 to stop", 10*time.Second, func() bool { return status(t, d, merchantID, goneID).Status == Failed })
		waitFor(t, "schedule to end", 10*time.Second, func() bool { return status(t, d, merchantID, failID).Status == Failed })
		if got := len(status(t, d, merchantID, goneID).Attempts); got != 1 {
			t.Errorf("410: attempts = %d, want 1", got)
		}
		if got := len(status(t, d, merchantID, failID).Attempts); got != len(fastSchedule)+1 {
			t.Errorf("always failing: attempts = %d, want %d", got, len(fastSchedule)+1)
		}
		healthy.Store(true)
		if _, err := storetest.Write(context.Background(), db, d.Resend, merchantID, failID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "resent delivery", 10*time.Second, func() bool { return status(t, d, merchantID, failID).Status == Delivered })
		if _, err := storetest.Write(context.Background(), db, d.Resend, "OTHER123", failID); err == nil {
			t.Errorf("Resend by another merchant = nil, want not found")
		}
	})
}

// TestAttemptConsequence: what recording an attempt writes: a retry after
// the schedule's delay spread by job.Jitter (±10 %), or the receiver's
// Retry-After as it is; its reason kept to maxErrorBytes, cut before a
// character (cut inside one, PostgreSQL refused the batch recording it).
func TestAttemptConsequence(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, time.March, 3, 9, 30, 0, 0, time.UTC)
	long := "a" + strings.Repeat("\u00e9", 300) // 601 bytes; byte 500 is inside an é
	tests := []struct {
		name             string
		o                outcome
		wantResult       string
		wantStatus       Status
		earliest, latest time.Duration // of the retry after now
		wantErr          string
	}{
		{"a 503 is retried on the schedule", outcome{statusCode: 503}, "retry", Pending, 9 * time.Second, 11 * time.Second, "the receiver answered 503"},
		{"Retry-After is kept as it is", outcome{statusCode: 429, retryAfter: time.Minute}, "retry", Pending, time.Minute, time.Minute, "the receiver answered 429"},
		{"a long reason is cut before a character", outcome{err: long}, "retry", Pending, 9 * time.Second, 11 * time.Second, long[:499]},
		{"410 ends the attempts", outcome{statusCode: 410}, "failed", Failed, 0, 0, "the receiver answered 410 Gone: no more attempts"},
	}
	d := &Dispatcher{Schedule: []time.Duration{10 * time.Second}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, result := d.next(recording{ev: claimed{id: "evt", merchantID: "m"}, started: now, o: tt.o}, now)
			next, _ := a.next.(int64)
			after := time.Duration(next-now.UnixMilli()) * time.Millisecond
			if next == 0 {
				after = 0
			}
			if result != tt.wantResult || a.status != tt.wantStatus || after < tt.earliest || after > tt.latest || a.errText != any(tt.wantErr) {
				t.Errorf("next = %s, status %s, retry after %v, error %.40q…; want %s, %s, %v..%v, %.40q…",
					result, a.status, after, a.errText, tt.wantResult, tt.wantStatus, tt.earliest, tt.latest, tt.wantErr)
			}
		})
	}
}
