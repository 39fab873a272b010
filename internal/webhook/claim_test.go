package webhook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

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
