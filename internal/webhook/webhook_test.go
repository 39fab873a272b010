package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/internal/clock"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// fastSchedule keeps retries within a test's patience.
var fastSchedule = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}

func newMerchant(t *testing.T, db *store.DB) string {
	t.Helper()
	id := store.RandomID(store.UUIDLen)
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at)
			VALUES ($1, 'M', 'AU', 'Australia/Sydney', $2, 0)`, id, testSecret)
		return err
	})
	if err != nil {
		t.Fatalf("insert merchant: %v", err)
	}
	return id
}

func newDispatcher(db *store.DB, policy Policy) *Dispatcher {
	d := NewDispatcher(db, clock.Real{}, slog.New(slog.DiscardHandler), policy, nil)
	d.Schedule = fastSchedule
	d.PollInterval = 5 * time.Millisecond
	return d
}

// run starts d until the test ends.
func run(t *testing.T, d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func emit(t *testing.T, db *store.DB, d *Dispatcher, merchantID, uuid string, target Target, payload any) string {
	t.Helper()
	id, err := store.Do(context.Background(), db, func(tx *store.Tx) (string, error) {
		return d.Emit(context.Background(), tx, Event{MerchantID: merchantID, Type: "test.event", RecordUUID: uuid, Target: target, Payload: payload})
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return id
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func status(t *testing.T, d *Dispatcher, merchantID, id string) Delivery {
	t.Helper()
	dl, err := d.Delivery(context.Background(), d.db.Read(), merchantID, id)
	if err != nil {
		t.Fatalf("delivery %s: %v", id, err)
	}
	return dl
}

func TestSignVerifiesWithStandardWebhooks(t *testing.T) {
	t.Parallel()
	at := time.Now()
	body := []byte(`{"uuid":"ABCD1234","status":"received"}`)
	sig, err := Sign(testSecret, "msg_1", at, body)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "msg_1")
	h.Set("webhook-timestamp", jsonInt(at.Unix()))
	h.Set("webhook-signature", sig)
	if err := wh.Verify(body, h); err != nil {
		t.Errorf("Verify = %v, want nil", err)
	}
	if err := wh.Verify(append(body, ' '), h); err == nil {
		t.Errorf("Verify of an altered body = nil, want an error")
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  Policy
		target  Target
		wantErr bool
	}{
		{"empty target is allowed (nothing is sent)", Policy{}, Target{}, false},
		{"auth without endpoint", Policy{}, Target{AuthorizationHeader: "x"}, true},
		{"production https public", Policy{}, Target{EndpointURL: "https://hooks.example.com/payd"}, false},
		{"production http", Policy{}, Target{EndpointURL: "http://hooks.example.com/payd"}, true},
		{"production loopback ip", Policy{}, Target{EndpointURL: "https://127.0.0.1:8443/x"}, true},
		{"production localhost", Policy{}, Target{EndpointURL: "https://localhost/x"}, true},
		{"production private ip", Policy{}, Target{EndpointURL: "https://10.1.2.3/x"}, true},
		{"production link-local ip", Policy{}, Target{EndpointURL: "https://169.254.169.254/latest"}, true},
		{"production ipv6 loopback", Policy{}, Target{EndpointURL: "https://[::1]/x"}, true},
		{"production cgnat", Policy{}, Target{EndpointURL: "https://100.64.1.1/x"}, true},
		{"sandbox http loopback", Policy{AllowPrivate: true}, Target{EndpointURL: "http://127.0.0.1:9000/hook"}, false},
		{"not a url", Policy{AllowPrivate: true}, Target{EndpointURL: "hooks"}, true},
		{"ftp", Policy{AllowPrivate: true}, Target{EndpointURL: "ftp://example.com/"}, true},
		{"credentials in url", Policy{AllowPrivate: true}, Target{EndpointURL: "https://u:p@example.com/"}, true},
		{"header injection", Policy{AllowPrivate: true}, Target{EndpointURL: "https://example.com/", AuthorizationHeader: "a\r\nX-Evil: 1"}, true},
		{"too long", Policy{AllowPrivate: true}, Target{EndpointURL: "https://example.com/" + strings.Repeat("a", 3000)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate("webhook_notification", tt.target)
			if got := err != nil; got != tt.wantErr {
				t.Errorf("Validate(%+v) = %v, want error %v", tt.target, err, tt.wantErr)
			}
		})
	}
}

// TestRolledBackEventIsNeverSent: an event emitted in a transaction that
// rolls back leaves nothing behind.
func TestRolledBackEventIsNeverSent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		errRollback := errors.New("state change failed")
		err := db.Exec(context.Background(), func(tx *store.Tx) error {
			if _, err := d.Emit(context.Background(), tx, Event{MerchantID: merchantID, Type: "x", RecordUUID: "R1", Target: Target{EndpointURL: srv.URL}, Payload: 1}); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("Exec = %v", err)
		}
		// A committed event after it proves the dispatcher is running and would have sent the first.
		run(t, d)
		id := emit(t, db, d, merchantID, "R2", Target{EndpointURL: srv.URL}, 2)
		waitFor(t, "delivery", 10*time.Second, func() bool { return status(t, d, merchantID, id).Status == Delivered })
		var n int
		db.Read().QueryRow(`SELECT count(*) FROM webhook_events`).Scan(&n)
		if n != 1 || hits.Load() != 1 {
			t.Errorf("events stored %d, receiver hits %d; want 1 and 1", n, hits.Load())
		}
	})
}

// TestSendPingAnswersAsRead: a ping's answer is built from the event as it
// is written, without reading it back, so it must be what the delivery log
// reads once the transaction commits, on the merchant's test clock; on
// PostgreSQL it costs no round trip before the commit.
func TestSendPingAnswersAsRead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		setClockOffset(t, db, merchantID, testClockAhead)
		d := newDispatcher(db, Policy{AllowPrivate: true})
		ctx := context.Background()
		var trips int
		sent, err := store.Do(ctx, db, func(tx *store.Tx) (Delivery, error) {
			before := tx.RoundTrips()
			dl, err := d.SendPing(ctx, tx, merchantID, Target{EndpointURL: "http://127.0.0.1:9/hooks", AuthorizationHeader: "Basic eA=="}, testClockAhead)
			trips = tx.RoundTrips() - before
			return dl, err
		})
		if err != nil {
			t.Fatal(err)
		}
		read := status(t, d, merchantID, sent.ID)
		if got, want := mustJSON(t, sent), mustJSON(t, read); got != want {
			t.Errorf("SendPing answered\n%s\nthe log reads\n%s", got, want)
		}
		if db.Dialect() == store.Postgres && trips > 0 {
			t.Errorf("SendPing took %d round trips before the commit, want none", trips)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
