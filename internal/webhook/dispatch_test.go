package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

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
