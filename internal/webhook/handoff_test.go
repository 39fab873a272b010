package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// counter is a receiver that counts each event's attempts.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	hold  time.Duration
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(c.hold)
	c.mu.Lock()
	c.calls[r.Header.Get("webhook-id")]++
	c.mu.Unlock()
}

// delivered reports whether every one of ids has arrived, and whether one
// arrived twice.
func (c *counter) delivered(ids []string) (all, twice bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	all = true
	for _, id := range ids {
		all = all && c.calls[id] > 0
		twice = twice || c.calls[id] > 1
	}
	return all, twice
}

// emitTogether emits n events of distinct records to endpoint in one
// transaction, so that the dispatcher hands them all over at birth: none
// finds the endpoint's slots busy yet.
func emitTogether(t *testing.T, db *store.DB, d *Dispatcher, merchantID, prefix, endpoint string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids, err := store.Do(ctx, db, func(tx *store.Tx) ([]string, error) {
		var ids []string
		for i := range n {
			id, err := d.Emit(ctx, tx, Event{MerchantID: merchantID, Type: "test.event", RecordUUID: fmt.Sprintf("%s%d", prefix, i),
				Target: Target{EndpointURL: endpoint}, Payload: i})
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return ids
}

func running(d *Dispatcher) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}

// TestEventsAreHandedOverAtBirth: events emitted while this process's
// dispatcher runs reach their receiver without a claim transaction; on
// Citus, whose INSERT cannot check the record's order, the claim finds them.
func TestEventsAreHandedOverAtBirth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		rcv := &counter{calls: map[string]int{}}
		srv := httptest.NewServer(rcv)
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.PollInterval = time.Hour // only the first round looks everywhere
		run(t, d)
		waitFor(t, "the dispatcher running", 10*time.Second, func() bool { return running(d) })
		var ids []string
		for i := range 40 {
			ids = append(ids, emit(t, db, d, merchantID, fmt.Sprintf("BIRTH%d", i), Target{EndpointURL: srv.URL}, i))
			if i%10 == 9 { // now and then, an event once the others have gone
				waitFor(t, "the events delivered", 10*time.Second, func() bool { all, _ := rcv.delivered(ids); return all })
			}
		}
		waitFor(t, "every event recorded as delivered", 20*time.Second, func() bool {
			var pending int
			db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND status <> 'delivered'`, merchantID).Scan(&pending)
			return pending == 0
		})
		if all, twice := rcv.delivered(ids); !all || twice {
			t.Errorf("every event arrived: %v; one arrived twice: %v", all, twice)
		}
		claims := d.claims.Load()
		if db.Citus() {
			if claims == 0 {
				t.Errorf("on Citus the events were delivered without a claim")
			}
			return
		}
		if claims != 0 {
			t.Errorf("%d claim transactions, want none: the events were not handed over at birth", claims)
		}
	})
}

// TestHandedOverEventsWaitingTooLongAreClaimed: an event handed over at
// birth that waits for a slot until its lease could end during its attempt
// is not attempted from memory; once its lease has ended a claim finds it,
// and each event arrives once.
func TestHandedOverEventsWaitingTooLongAreClaimed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID := newMerchant(t, db)
		rcv := &counter{calls: map[string]int{}, hold: 200 * time.Millisecond}
		srv := httptest.NewServer(rcv)
		defer srv.Close()
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxPerEndpoint = 1
		d.Lease, d.Timeout = 2*time.Second, 1700*time.Millisecond // a wait over 300 ms is too long
		run(t, d)
		waitFor(t, "the dispatcher running", 10*time.Second, func() bool { return running(d) })
		ids := emitTogether(t, db, d, merchantID, "WAIT", srv.URL, 6)
		waitFor(t, "every event delivered", 30*time.Second, func() bool { all, _ := rcv.delivered(ids); return all })
		if _, twice := rcv.delivered(ids); twice {
			t.Errorf("an event arrived twice")
		}
		if !db.Citus() && d.claims.Load() == 0 {
			t.Errorf("no claim ran: the events that waited were attempted from memory past their lease's margin")
		}
	})
}

// TestStoppedDispatcherReleasesHandedOverEvents: events handed over at
// birth and still waiting for a slot when the dispatcher stops are
// released at once, for the next process to claim without waiting for
// their leases to end.
func TestStoppedDispatcherReleasesHandedOverEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Citus() {
			t.Skip("nothing is handed over on Citus")
		}
		merchantID := newMerchant(t, db)
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		defer srv.Close()
		defer close(release)
		d := newDispatcher(db, Policy{AllowPrivate: true})
		d.MaxPerEndpoint = 1
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		waitFor(t, "the dispatcher running", 10*time.Second, func() bool { return running(d) })
		state := func(inFlight, waiting int) func() bool {
			return func() bool {
				d.mu.Lock()
				defer d.mu.Unlock()
				return d.inFlight == inFlight && len(d.ready[srv.URL]) == waiting
			}
		}
		emitTogether(t, db, d, merchantID, "STOP", srv.URL, 2)
		waitFor(t, "one attempt in flight and one event waiting for its slot", 10*time.Second, state(1, 1))
		cancel()
		<-done
		var leased int
		if err := db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND locked_until IS NOT NULL`, merchantID).Scan(&leased); err != nil {
			t.Fatal(err)
		}
		if leased != 0 {
			t.Errorf("%d events still leased after the dispatcher stopped, want 0", leased)
		}
	})
}
