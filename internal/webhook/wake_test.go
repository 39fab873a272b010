package webhook

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

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
