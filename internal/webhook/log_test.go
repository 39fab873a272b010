package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// testClockAhead is how far the merchant's sandbox test clock of the
// delivery log's tests runs ahead of the real clock.
const testClockAhead = 30 * 24 * time.Hour

// setClockOffset moves merchantID's test clock to offset ahead of the real clock.
func setClockOffset(t *testing.T, db *store.DB, merchantID string, offset time.Duration) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE merchants SET clock_offset_ms = $1 WHERE id = $2`, offset.Milliseconds(), merchantID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeliveryLogOnTheMerchantClock: on a merchant whose test clock runs
// 30 days ahead, an event that fails once and is retried shows every time
// of its log on that clock: each attempt at or after the event's
// created_at, the pending retry's next_attempt_at after the first attempt
// and no later than the retry, delivered_at after it; while the retry
// itself comes after the schedule's real delay, not 30 days later.
func TestDeliveryLogOnTheMerchantClock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		setClockOffset(t, db, merchantID, testClockAhead)
		merchantNow := func() time.Time { return time.Now().Add(testClockAhead) }
		var calls atomic.Int64
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			<-release // the retry waits while the test reads the log
		}))
		defer srv.Close()
		outcomes := make(chan string, 4)
		d := NewDispatcher(db, clock.Real{}, slog.New(slog.DiscardHandler), Policy{AllowPrivate: true}, func(outcome string, _ time.Duration) { outcomes <- outcome })
		d.Schedule = fastSchedule
		d.PollInterval = 5 * time.Millisecond
		run(t, d)
		created := merchantNow().Truncate(time.Millisecond)
		id, err := store.Do(context.Background(), db, func(tx *store.Tx) (string, error) {
			return d.Emit(context.Background(), tx, Event{MerchantID: merchantID, Type: "test.event", RecordUUID: "CLOCK001",
				Target: Target{EndpointURL: srv.URL}, Payload: 1, At: created})
		})
		if err != nil {
			t.Fatal(err)
		}
		wantOutcome(t, outcomes, "retry")
		pending := status(t, d, merchantID, id)
		close(release)
		wantOutcome(t, outcomes, "delivered")
		delivered := status(t, d, merchantID, id)
		if pending.NextAttemptAt == nil || len(pending.Attempts) != 1 || len(delivered.Attempts) != 2 || delivered.DeliveredAt == nil {
			t.Fatalf("log while retrying %+v, once delivered %+v; want one attempt and a next_attempt_at, then two and delivered_at", pending, delivered)
		}
		end := merchantNow()
		tests := []struct {
			name          string
			got           time.Time
			notBefore, by time.Time
		}{
			{"created_at", delivered.CreatedAt.T, created, created},
			{"the first attempt's at", delivered.Attempts[0].At.T, created, end},
			{"next_attempt_at while the retry was due", pending.NextAttemptAt.T, delivered.Attempts[0].At.T, delivered.Attempts[1].At.T},
			{"the retry's at", delivered.Attempts[1].At.T, delivered.Attempts[0].At.T, end},
			{"delivered_at", delivered.DeliveredAt.T, delivered.Attempts[1].At.T, end},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.got.Before(tt.notBefore) || tt.got.After(tt.by) {
					t.Errorf("%s = %v, want from %v to %v (the merchant's clock)", tt.name, tt.got, tt.notBefore, tt.by)
				}
			})
		}
	})
}

// wantOutcome waits for the dispatcher to record an attempt with outcome.
func wantOutcome(t *testing.T, outcomes <-chan string, want string) {
	t.Helper()
	select {
	case got := <-outcomes:
		if got != want {
			t.Fatalf("attempt recorded %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no attempt recorded %q within 10s", want)
	}
}
