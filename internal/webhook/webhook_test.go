package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/internal/clock"
	"payd/internal/job"
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

// TestManyEventsFlakyReceiver: 1,000 events to a receiver that answers 500
// to a random 30 % of attempts are all delivered; duplicates are counted.
func TestManyEventsFlakyReceiver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		const n = 1000
		var mu sync.Mutex
		got := map[string]int{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rand.IntN(100) < 30 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			mu.Lock()
			got[r.Header.Get("webhook-id")]++
			mu.Unlock()
		}))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.Schedule = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond,
			time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond}
		d.MaxPerEndpoint = 16
		ids := make([]string, 0, n)
		err := db.Exec(context.Background(), func(tx *store.Tx) error {
			for i := range n {
				id, err := d.Emit(context.Background(), tx, Event{MerchantID: merchantID, Type: "bulk", RecordUUID: fmt.Sprintf("R%d", i), Target: Target{EndpointURL: srv.URL}, Payload: i})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		run(t, d)
		waitFor(t, "every event delivered", 120*time.Second, func() bool {
			var pending int
			db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE status <> 'delivered'`).Scan(&pending)
			return pending == 0
		})
		mu.Lock()
		defer mu.Unlock()
		duplicates := 0
		for _, id := range ids {
			if got[id] == 0 {
				t.Errorf("event %s never reached the receiver", id)
			}
			duplicates += max(0, got[id]-1)
		}
		t.Logf("%d events delivered, %d duplicate deliveries", len(ids), duplicates)
	})
}

// TestSlowEndpointDoesNotStarveOthers: one receiver that hangs holds at most
// MaxPerEndpoint attempts; events for another receiver keep flowing.
func TestSlowEndpointDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		release := make(chan struct{})
		var slowNow, slowMax atomic.Int64
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := slowNow.Add(1)
			defer slowNow.Add(-1)
			for {
				m := slowMax.Load()
				if n <= m || slowMax.CompareAndSwap(m, n) {
					break
				}
			}
			<-release
		}))
		defer slow.Close()
		defer close(release)
		var fastHits atomic.Int64
		fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fastHits.Add(1) }))
		defer fast.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxInFlight, d.MaxPerEndpoint = 8, 3
		for i := range 20 {
			emit(t, db, d, merchantID, fmt.Sprintf("S%d", i), Target{EndpointURL: slow.URL}, i)
		}
		run(t, d)
		for i := range 10 {
			emit(t, db, d, merchantID, fmt.Sprintf("F%d", i), Target{EndpointURL: fast.URL}, i)
		}
		waitFor(t, "fast receiver served", 10*time.Second, func() bool { return fastHits.Load() == 10 })
		if m := slowMax.Load(); m > 3 {
			t.Errorf("slow receiver had %d concurrent attempts, want at most 3", m)
		}
	})
}

// TestCommittedEventIsClaimedAtOnce: an event committed in this process is
// claimed for its endpoint at once, not at the next poll, even while
// another endpoint is saturated with a backlog the claim must not walk.
func TestCommittedEventIsClaimedAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		release := make(chan struct{})
		held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer held.Close()
		defer close(release)
		var hits atomic.Int64
		fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer fast.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxInFlight, d.MaxPerEndpoint = 16, 4
		d.PollInterval = time.Hour // only the first round looks everywhere
		for i := range 100 {
			emit(t, db, d, merchantID, fmt.Sprintf("H%d", i), Target{EndpointURL: held.URL}, i)
		}
		run(t, d)
		waitFor(t, "the held endpoint saturated", 10*time.Second, func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.busy[held.URL] == 4
		})
		for i := range 20 {
			emit(t, db, d, merchantID, fmt.Sprintf("F%d", i), Target{EndpointURL: fast.URL}, i)
			waitFor(t, "the new event delivered", 10*time.Second, func() bool { return hits.Load() == int64(i+1) })
		}
	})
}

// TestEndpointConcurrencyIsBounded: a receiver that answers while more of
// its events wait never has more than MaxPerEndpoint attempts at once,
// counting those already in flight when the dispatcher claims again.
func TestEndpointConcurrencyIsBounded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var now, most, served atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := now.Add(1)
			defer now.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Duration(1+served.Add(1)%5) * time.Millisecond) // uneven, so attempts finish one by one
		}))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxInFlight, d.MaxPerEndpoint = 32, 4
		const n = 120
		for i := range n {
			emit(t, db, d, merchantID, fmt.Sprintf("C%d", i), Target{EndpointURL: srv.URL}, i)
		}
		run(t, d)
		waitFor(t, "every event delivered", 60*time.Second, func() bool { return served.Load() >= n })
		if m := most.Load(); m > 4 {
			t.Errorf("the receiver had %d concurrent attempts, want at most MaxPerEndpoint (4)", m)
		}
	})
}

// TestTwoDispatchersShareTheOutbox: two processes on one database deliver
// every event, and never attempt one event at the same time.
func TestTwoDispatchersShareTheOutbox(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var mu sync.Mutex
		inFlight := map[string]bool{}
		delivered := map[string]int{}
		var overlaps atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("webhook-id")
			mu.Lock()
			if inFlight[id] {
				overlaps.Add(1)
			}
			inFlight[id] = true
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inFlight[id] = false
			delivered[id]++
			mu.Unlock()
		}))
		defer srv.Close()
		a, b := newDispatcher(db, Policy{AllowPrivate: true}), newDispatcher(db, Policy{AllowPrivate: true})
		a.MaxPerEndpoint, b.MaxPerEndpoint = 8, 8
		const n = 200
		for i := range n {
			emit(t, db, a, merchantID, fmt.Sprintf("R%d", i), Target{EndpointURL: srv.URL}, i)
		}
		run(t, a)
		run(t, b)
		waitFor(t, "every event delivered", 60*time.Second, func() bool {
			var pending int
			db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE status <> 'delivered'`).Scan(&pending)
			return pending == 0
		})
		mu.Lock()
		defer mu.Unlock()
		if len(delivered) != n || overlaps.Load() != 0 {
			t.Errorf("delivered %d distinct events (want %d), %d overlapping attempts (want 0)", len(delivered), n, overlaps.Load())
		}
	})
}

// TestDispatcherQueriesUseIndexes: the dispatcher's hot reads find their
// rows through an index, so their cost does not grow with the events
// already delivered or with another endpoint's backlog. On PostgreSQL the
// plan is asked for with sequential scans discouraged, so that it shows
// whether an index can serve the query, whatever the table's size.
func TestDispatcherQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Citus() {
			t.Skip("on Citus each shard plans the query alone (the postgres run checks that plan), and EXPLAIN shows one shard, maybe an empty one")
		}
		d := newDispatcher(db, Policy{AllowPrivate: true})
		// An outbox of events delivered long ago and a backlog, each event
		// its own record, most of it another endpoint's, then fresh
		// statistics: on an empty table every plan costs the same, and the
		// planner's choice says nothing about a real outbox.
		merchantID := newMerchant(t, db)
		ctx := context.Background()
		if err := db.Exec(ctx, func(tx *store.Tx) error {
			for i := range 4000 {
				endpoint := "https://other.example.com/hook"
				if i%40 == 0 {
					endpoint = "https://example.com/hook"
				}
				if _, err := d.Emit(ctx, tx, Event{MerchantID: merchantID, Type: "test.event", RecordUUID: fmt.Sprintf("BACKLOG%d", i),
					Target: Target{EndpointURL: endpoint}, Payload: i}); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = 'delivered', next_attempt_at = NULL, delivered_at = created_at
				WHERE merchant_id = $1 AND endpoint_url <> $2 AND seq % 2 = 0`, merchantID, "https://example.com/hook"); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `ANALYZE webhook_events`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// Every event is due at now: the claim must then choose between
		// walking the whole backlog and the endpoint's part of it.
		now := time.Now().Add(time.Hour).UnixMilli()
		queries := []struct {
			name  string
			query string
			args  []any
			index []string // the plan must use one of these indexes
			also  string   // and this one, if set
		}{
			{"due probe", job.ProbeQuery(dueEvents), []any{now}, []string{"webhook_events_due", "webhook_events_endpoint_due"}, ""},
			{"claim over every endpoint", d.claimQuery(4, []string{"$2"}), []any{now, "https://saturated.example.com/hook"},
				[]string{"webhook_events_due", "webhook_events_endpoint_due"}, "webhook_events_record"},
			// The record-order check (inRecordOrder) looks up the record's
			// earlier events by the record index.
			// The webhook log reads a merchant's latest events without
			// sorting every event it ever had.
			{"webhook log", recentQuery, []any{merchantID, "", 50}, []string{"webhook_events_recent"}, ""},
			{"probe of one endpoint", job.ProbeQuery(endpointDue), []any{"https://example.com/hook", now}, []string{"webhook_events_endpoint_due"}, "webhook_events_record"},
			{"claim for one endpoint", d.claimForQuery(4), []any{now + 1, "https://example.com/hook", now}, []string{"webhook_events_endpoint_due"}, "webhook_events_record"},
		}
		for _, q := range queries {
			plan := strings.Join(explain(t, db, q.query, q.args...), "\n")
			if !slices.ContainsFunc(q.index, func(ix string) bool { return strings.Contains(plan, ix) }) {
				t.Errorf("%s uses none of %v:\n%s", q.name, q.index, plan)
			}
			if q.also != "" && !strings.Contains(plan, q.also) {
				t.Errorf("%s does not use %s:\n%s", q.name, q.also, plan)
			}
			for _, line := range strings.Split(plan, "\n") {
				line = strings.TrimLeft(line, "|-` ")
				if strings.Contains(line, "Seq Scan on webhook_events") || strings.HasPrefix(line, "SCAN webhook_events") || strings.HasPrefix(line, "SCAN w") || strings.HasPrefix(line, "SCAN p") || strings.HasPrefix(line, "SCAN e ") || line == "SCAN e" {
					t.Errorf("%s scans webhook_events:\n%s", q.name, plan)
				}
			}
		}
	})
}

// explain returns the lines of query's plan.
func explain(t *testing.T, db *store.DB, query string, args ...any) []string {
	t.Helper()
	ctx := context.Background()
	lines, err := store.Do(ctx, db, func(tx *store.Tx) ([]string, error) {
		prefix := "EXPLAIN QUERY PLAN "
		if db.Dialect() == store.Postgres {
			prefix = "EXPLAIN "
			if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return nil, err
			}
		}
		rows, err := tx.QueryContext(ctx, prefix+query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			out = append(out, strings.TrimSpace(fmt.Sprint(vals[len(vals)-1])))
		}
		return out, rows.Err()
	})
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return lines
}

// TestRecordEventsArriveInOrder: one record's events reach the receiver in
// the order they were emitted, even when the first needs a retry and the
// endpoint has slots for all of them at once.
func TestRecordEventsArriveInOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		var mu sync.Mutex
		var got []string
		failedOnce := false
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			if !failedOnce {
				failedOnce = true
				mu.Unlock()
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			got = append(got, string(body))
			mu.Unlock()
		}))
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxPerEndpoint = 8
		run(t, d)
		const n = 6
		var want []string
		for i := range n {
			emit(t, db, d, merchantID, "ORDERED1", Target{EndpointURL: srv.URL}, i)
			want = append(want, jsonInt(int64(i)))
		}
		waitFor(t, "every event delivered", 20*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) >= n
		})
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("arrived %v, want %v", got, want)
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
