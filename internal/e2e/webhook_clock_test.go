package e2e

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// deliveryView is one record of GET /v2/webhooks/deliveries.
type deliveryView struct {
	Status        string  `json:"status"`
	CreatedAt     string  `json:"created_at"`
	NextAttemptAt *string `json:"next_attempt_at"`
	DeliveredAt   *string `json:"delivered_at"`
	Attempts      []struct {
		At         string `json:"at"`
		StatusCode *int   `json:"status_code"`
	} `json:"attempts"`
}

// deliveryOf reads the one event of GET /v2/webhooks/deliveries?uuid=.
func (p *payd) deliveryOf(as creds, uuid string) deliveryView {
	p.t.Helper()
	r := p.get("/v2/webhooks/deliveries?uuid="+uuid, as)
	want(p.t, r, 200)
	var page struct {
		Records []deliveryView `json:"records"`
	}
	r.Decode(p.t, &page)
	if len(page.Records) != 1 {
		p.t.Fatalf("%d events about %s, want 1: %s", len(page.Records), uuid, r.Body)
	}
	return page.Records[0]
}

// TestWebhookLogOnTheTestClock: a merchant moves its sandbox test clock two
// days ahead, then pings a receiver that fails the first attempt. Through
// the real server, the delivery log shows every time on the merchant's
// clock: the attempts at or after the event's created_at, the retry's
// next_attempt_at after the first attempt and no later than the retry, and
// delivered_at after it, all by the clock's time once delivered; the retry
// itself came after its real delay, not two days later.
func TestWebhookLogOnTheTestClock(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.advance(m, 2*24*3600)
		var calls atomic.Int64
		retried, release := make(chan struct{}), make(chan struct{})
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch calls.Add(1) {
			case 1:
				w.WriteHeader(http.StatusServiceUnavailable)
			case 2:
				close(retried)
				<-release // the retry waits while the test reads the log
			}
		}))
		defer recv.Close()
		defer close(release)
		start := p.clockNow(m)
		r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL})
		want(t, r, 201)
		uuid := str(r.JSON(t), "uuid")
		select {
		case <-retried:
		case <-time.After(10 * time.Second):
			t.Fatalf("no retry within 10s (%d attempts)", calls.Load())
		}
		pending := p.deliveryOf(m, uuid)
		release <- struct{}{}
		waitUntil(t, "the retry logged as delivered", 10*time.Second, func() bool { return p.deliveryOf(m, uuid).Status == "delivered" })
		done := p.deliveryOf(m, uuid)
		end := p.clockNow(m)
		if pending.Status != "pending" || len(pending.Attempts) != 1 || pending.NextAttemptAt == nil || len(done.Attempts) != 2 || done.DeliveredAt == nil {
			t.Fatalf("log while retrying %+v, once delivered %+v; want one attempt and a next_attempt_at, then two and delivered_at", pending, done)
		}
		created, first, retry := parseTime(t, done.CreatedAt), parseTime(t, done.Attempts[0].At), parseTime(t, done.Attempts[1].At)
		tests := []struct {
			name          string
			got           string
			notBefore, by time.Time
		}{
			{"created_at", done.CreatedAt, start, end},
			{"the first attempt's at", done.Attempts[0].At, created, end},
			{"next_attempt_at while the retry was due", *pending.NextAttemptAt, first, retry},
			{"the retry's at", done.Attempts[1].At, first, end},
			{"delivered_at", *done.DeliveredAt, retry, end},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := parseTime(t, tt.got); got.Before(tt.notBefore) || got.After(tt.by) {
					t.Errorf("%s = %s, want from %s to %s (the merchant's clock)", tt.name, tt.got, tt.notBefore.Format(time.RFC3339Nano), tt.by.Format(time.RFC3339Nano))
				}
			})
		}
	}, fastRetries)
}
