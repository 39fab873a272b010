package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/qr"
)

// eventLog is a webhook receiver that records (event type, record) in order.
type eventLog struct {
	url    string
	mu     sync.Mutex
	events []loggedEvent
}

type loggedEvent struct {
	ID     string // the webhook-id: one event's redeliveries share it
	Type   string
	Auth   string
	Record map[string]any
}

func newEventLog(t *testing.T) *eventLog {
	l := &eventLog{}
	recv := newHookReceiver(t, true)
	recv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			// The sender hung up mid-body (its attempt timed out under
			// load): no delivery, and it retries.
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if v := eventViolation(r.Header.Get("X-Event-Type"), raw); v != "" {
			t.Errorf("%s webhook breaks the OpenAPI document: %s\nbody: %.500s", r.Header.Get("X-Event-Type"), v, raw)
		}
		var rec map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // numbers as the detail endpoint's are read: exact digits
		dec.Decode(&rec)
		l.mu.Lock()
		l.events = append(l.events, loggedEvent{ID: r.Header.Get("webhook-id"), Type: r.Header.Get("X-Event-Type"), Auth: r.Header.Get("Authorization"), Record: rec})
		l.mu.Unlock()
	})
	l.url = recv.URL
	return l
}

func (l *eventLog) types() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.Type)
	}
	return out
}

// waitTypes waits until the log holds exactly want, in order.
func (l *eventLog) waitTypes(t *testing.T, want ...string) {
	t.Helper()
	waitUntil(t, "webhooks "+join(want), 10*time.Second, func() bool { return join(l.types()) == join(want) })
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func balance(t *testing.T, p *payd, m creds, bucket string) string {
	t.Helper()
	r := p.get("/v2/balances/detail?currency="+m.Currency, m)
	want(t, r, 200)
	return r.JSON(t)[bucket].(json.Number).String()
}

// TestPayinQRFlow: create → simulate → received → webhook → balances and
// history → partial refund → return_received.
func TestPayinQRFlow(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		hooks := newEventLog(t)
		r := p.post("/v2/payins", m, map[string]any{
			"currency": "IDR", "amount": 100000, "payin_method_name": "id_bank_qris_idr", "external_id": "order-1",
			"webhook_notification": map[string]any{"endpoint_url": hooks.url, "authorization_header": "Bearer merchant-secret"},
		})
		want(t, r, 201)
		pi := r.JSON(t)
		uuid := str(pi, "uuid")
		if str(pi, "status") != "pending" || str(pi, "amount") != "100000.00" || str(pi, "total") != "100000.00" {
			t.Fatalf("payin = %s", r.Body)
		}
		want(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 200)
		p.runDue(m)
		hooks.waitTypes(t, "payin.received")
		if got := balance(t, p, m, "available_balance"); got != "99300.00" {
			t.Errorf("available = %s, want 99300.00 (100000 less the 0.7 %% fee)", got)
		}
		r = p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": "30000", "description": "customer returned item"})
		want(t, r, 200)
		if got := balance(t, p, m, "outgoing_balance"); got != "30000.00" {
			t.Errorf("outgoing during refund = %s, want 30000.00", got)
		}
		want(t, p.post("/v2/sandbox/clock", m, map[string]any{"advance_seconds": 10}), 200)
		hooks.waitTypes(t, "payin.received", "payin.return_pending", "payin.return_received")
		detail := p.get("/v2/payins/detail?uuid="+uuid, m).JSON(t)
		if str(detail, "status") != "return_received" || str(detail["refund_information"].(map[string]any), "refund_amount") != "30000.00" {
			t.Errorf("after refund: %v", detail)
		}
		if got := balance(t, p, m, "available_balance"); got != "69300.00" {
			t.Errorf("available after refund = %s, want 69300.00", got)
		}
		// Refunds never exceed what was paid.
		r = p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": "70000.01", "description": "too much back"})
		want(t, r, 422)
		hist := p.get("/v2/balances/history", m).JSON(t)["records"].([]any)
		if len(hist) != 2 {
			t.Errorf("history has %d records, want payment and refund", len(hist))
		}
		if hooks.events[0].Auth != "Bearer merchant-secret" || str(hooks.events[0].Record, "uuid") != uuid {
			t.Errorf("webhook = %+v", hooks.events[0])
		}
	})
}

// TestPayinQRCodesAreRealEMVCo: every QR method's qr_string decodes as an
// EMVCo payload with a valid CRC, carrying the total and the payin's uuid.
func TestPayinQRCodesAreRealEMVCo(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("IDR", "VND", "THB")
		tests := []struct {
			currency, method, amount, wantAmount string
			params                               map[string]any
		}{
			{"IDR", "id_bank_qris_idr", "150000", "150000", nil},
			{"VND", "vn_vietqr_vnd", "250000", "250000", map[string]any{"ip_address": "203.0.113.9", "phone": "+84901234567"}},
			{"THB", "th_qrpay_thb", "99.50", "99.50", map[string]any{"first_name": "Somchai", "last_name": "Jaidee", "phone": "+66812345678", "bank_code": "KBANK"}},
		}
		for _, tt := range tests {
			t.Run(tt.method, func(t *testing.T) {
				m := apps[tt.currency]
				r := p.post("/v2/payins", m, map[string]any{"currency": tt.currency, "amount": tt.amount, "payin_method_name": tt.method, "payin_method_params": tt.params})
				want(t, r, 201)
				pi := r.JSON(t)
				qrString := str(pi["pay_code"].(map[string]any), "qr_string")
				payload, err := qr.Decode(qrString)
				if err != nil {
					t.Fatalf("qr_string does not decode: %v (%s)", err, r.Body)
				}
				if got := payload.Amount(); got != tt.wantAmount {
					t.Errorf("QR amount = %q, want %q", got, tt.wantAmount)
				}
				if !strings.Contains(qrString, str(pi, "uuid")) {
					t.Errorf("QR payload does not carry the payin's uuid %s", str(pi, "uuid"))
				}
			})
		}
	})
}
