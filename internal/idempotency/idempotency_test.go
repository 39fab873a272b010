package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// effect runs one keyed request the way the HTTP layer does: claim first in
// the effect's transaction, the effect, the response stored last; the
// response is what was stored or replayed.
func effect(ctx context.Context, db *store.DB, k *Keeper, r Request, body string) (*Stored, error) {
	claim, err := k.Begin(r)
	if err != nil {
		return nil, err
	}
	claim.Status = 201
	claim.Render = func(any) ([]byte, error) { return []byte(body), nil }
	_, err = Do(ctx, db, claim, func(tx *store.Tx) (any, error) { return nil, insertEffect(ctx, tx, body) })
	if errors.Is(err, ErrReplay) {
		claim.release()
		return claim.Replayed, nil
	}
	claim.Finish(ctx, 0, nil)
	if err != nil {
		return nil, err
	}
	return &Stored{Status: 201, Body: []byte(body)}, nil
}

func insertEffect(ctx context.Context, tx *store.Tx, note string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO effects (note) VALUES ($1)`, note)
	return err
}

func open(t *testing.T, db *store.DB) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `CREATE TABLE effects (note TEXT NOT NULL)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func effects(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT count(*) FROM effects`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReplayAndReuse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		open(t, db)
		k := NewKeeper(db, clock.Real{})
		r := Request{MerchantID: merchantID(t), Key: "k1", Hash: Fingerprint("POST", "/v2/payins", "application/json", []byte(`{"a":1}`))}
		first, err := effect(ctx, db, k, r, "first")
		if err != nil {
			t.Fatal(err)
		}
		again, err := effect(ctx, db, k, r, "second")
		if err != nil || again.Status != first.Status || string(again.Body) != "first" {
			t.Errorf("replay = %+v, %v; want the first response again", again, err)
		}
		other := r
		other.Hash = Fingerprint("POST", "/v2/payins", "application/json", []byte(`{"a":2}`))
		if _, err := effect(ctx, db, k, other, "third"); !errors.Is(err, errReused) {
			t.Errorf("same key, other body: error = %v, want %s", err, CodeKeyReused)
		}
		elsewhere := r
		elsewhere.MerchantID = merchantID(t) + "-2"
		if got, err := effect(ctx, db, k, elsewhere, "m2's"); err != nil || string(got.Body) != "m2's" {
			t.Errorf("another merchant's same key = %+v, %v; want its own effect", got, err)
		}
		if n := effects(t, db); n != 2 {
			t.Errorf("%d effects, want 2 (one per merchant)", n)
		}
	})
}

// TestRolledBackLeavesKeyFree checks that a claim counts only once its
// transaction commits: a failed attempt can be retried under the same key.
func TestRolledBackLeavesKeyFree(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		open(t, db)
		k := NewKeeper(db, clock.Real{})
		r := Request{MerchantID: merchantID(t), Key: "k1", Hash: "h"}
		claim, err := k.Begin(r)
		if err != nil {
			t.Fatal(err)
		}
		claim.Status = 201
		claim.Render = func(any) ([]byte, error) { return []byte("lost"), nil }
		boom := errors.New("boom")
		_, err = Do(ctx, db, claim, func(tx *store.Tx) (any, error) {
			if err := insertEffect(ctx, tx, "lost"); err != nil {
				return nil, err
			}
			return nil, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("transaction error = %v, want boom", err)
		}
		claim.Finish(ctx, 500, []byte("internal"))
		got, err := effect(ctx, db, k, r, "retried")
		if err != nil || string(got.Body) != "retried" {
			t.Errorf("retry after rollback and a 500 = %+v, %v; want a fresh effect", got, err)
		}
	})
}

// TestOneEffectAcrossKeepers races the same keyed request through many
// goroutines and two keepers (two payd processes on one database): exactly
// one effect, and every other answer is that effect's response or an
// in-flight refusal.
func TestOneEffectAcrossKeepers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		open(t, db)
		keepers := []*Keeper{NewKeeper(db, clock.Real{}), NewKeeper(db, clock.Real{})}
		r := Request{MerchantID: merchantID(t), Key: "race", Hash: "h"}
		var wg sync.WaitGroup
		results := make([]string, 16)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := effect(ctx, db, keepers[i%2], r, fmt.Sprint("effect-", i))
				switch {
				case errors.Is(err, errInFlight):
					results[i] = "in flight"
				case err != nil:
					results[i] = "error: " + err.Error()
				default:
					results[i] = string(got.Body)
				}
			}()
		}
		wg.Wait()
		if n := effects(t, db); n != 1 {
			t.Fatalf("%d effects, want 1", n)
		}
		var note string
		db.Read().QueryRow(`SELECT note FROM effects`).Scan(&note)
		for i, got := range results {
			if got != note && got != "in flight" {
				t.Errorf("request %d got %q, want %q or in flight", i, got, note)
			}
		}
	})
}

func TestFinishStoresRefusalsNotServerErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		k := NewKeeper(db, clock.Real{})
		for _, tt := range []struct {
			key    string
			status int
			stored bool
		}{{"refused", 422, true}, {"crashed", 500, false}} {
			r := Request{MerchantID: merchantID(t), Key: tt.key, Hash: "h"}
			claim, err := k.Begin(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := claim.Finish(ctx, tt.status, []byte("answer")); err != nil {
				t.Fatal(err)
			}
			stored, err := lookup(ctx, db.Read(), r)
			if got := stored != nil; got != tt.stored || err != nil {
				t.Errorf("%d answer: stored = %v (%v), want %v", tt.status, got, err, tt.stored)
			}
		}
	})
}

// TestFinishStoresAnAnswerWithoutBody: an answer with no body (a 204, say)
// is stored like any other, with an empty body.
func TestFinishStoresAnAnswerWithoutBody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := Request{MerchantID: merchantID(t), Key: "empty", Hash: "h"}
		claim, err := NewKeeper(db, clock.Real{}).Begin(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := claim.Finish(ctx, 204, nil); err != nil {
			t.Fatal(err)
		}
		stored, err := lookup(ctx, db.Read(), r)
		if err != nil || stored == nil || stored.Status != 204 || len(stored.Body) != 0 {
			t.Errorf("stored = %+v, %v; want the 204 with an empty body", stored, err)
		}
	})
}

func TestPurgeKeepsRetention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		k := NewKeeper(db, clk)
		for _, key := range []string{"old", "new"} {
			claim, err := k.Begin(Request{MerchantID: merchantID(t), Key: key, Hash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			if err := claim.Finish(ctx, 422, []byte("refused")); err != nil {
				t.Fatal(err)
			}
			clk.Advance(24 * time.Hour)
		}
		purge := func(now time.Time) int64 {
			n, err := store.Do(ctx, db, func(tx *store.Tx) (int64, error) { return Purge(ctx, tx, now) })
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n := purge(start.Add(Retention)); n != 0 {
			t.Errorf("purge at exactly the retention: %d deleted, want 0", n)
		}
		if n := purge(start.Add(Retention + time.Hour)); n != 1 {
			t.Errorf("purge an hour later: %d deleted, want the old one", n)
		}
		if stored, _ := lookup(ctx, db.Read(), Request{MerchantID: merchantID(t), Key: "new", Hash: "h"}); stored == nil {
			t.Error("the response within retention was purged")
		}
	})
}

// TestHeldKeyIsInFlight: on PostgreSQL a key whose transaction another
// process holds open is refused as in flight (409), whatever the effect
// made of it, which is rolled back; and the key's lock and check cost no
// round trip of their own: they go with the effect's first read.
func TestHeldKeyIsInFlight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite runs one writer: a second transaction waits, there is no key to find held")
		}
		ctx := context.Background()
		open(t, db)
		r := Request{MerchantID: merchantID(t), Key: "held", Hash: "h"}
		first, err := NewKeeper(db, clock.Real{}).Begin(r)
		if err != nil {
			t.Fatal(err)
		}
		held, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := Do(ctx, db, first, func(tx *store.Tx) (any, error) {
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
				if trips := tx.RoundTrips(); trips != 1 {
					t.Errorf("an effect of one read took %d round trips under the claim, want 1", trips)
				}
				close(held)
				<-release
				return nil, err
			})
			done <- err
		}()
		select {
		case <-held:
		case err := <-done:
			t.Fatalf("first transaction ended before holding the key: %v", err)
		}
		second, err := NewKeeper(db, clock.Real{}).Begin(r) // another process's keeper
		if err != nil {
			t.Fatal(err)
		}
		_, err = Do(ctx, db, second, func(tx *store.Tx) (any, error) { return nil, insertEffect(ctx, tx, "second") })
		close(release)
		if !errors.Is(err, errInFlight) {
			t.Errorf("second request = %v, want in flight", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := effects(t, db); n != 0 {
			t.Errorf("%d effects committed, want none: the second's was refused", n)
		}
	})
}

// TestTakenKeyOutranksTheEffect: a key that another process's request took
// after this request began is replayed, whatever
// this request's own effect made of it (a refusal, or a statement of its
// that failed, as one can when the duplicate took what it inserts), and
// that effect is rolled back.
func TestTakenKeyOutranksTheEffect(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	for name, outcome := range map[string]func(ctx context.Context, tx *store.Tx) error{
		"refusal": func(context.Context, *store.Tx) error { return refused },
		"failed statement": func(ctx context.Context, tx *store.Tx) error {
			if err := tx.Send(ctx, `INSERT INTO effects (note) VALUES (NULL)`); err != nil {
				return err
			}
			var one int
			return tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				open(t, db)
				r := Request{MerchantID: merchantID(t), Key: "k1", Hash: "h"}
				late, err := NewKeeper(db, clock.Real{}).Begin(r)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := effect(ctx, db, NewKeeper(db, clock.Real{}), r, "first"); err != nil {
					t.Fatal(err)
				}
				_, err = Do(ctx, db, late, func(tx *store.Tx) (any, error) {
					if err := insertEffect(ctx, tx, "late"); err != nil {
						return nil, err
					}
					return nil, outcome(ctx, tx)
				})
				if !errors.Is(err, ErrReplay) || late.Replayed == nil || string(late.Replayed.Body) != "first" {
					t.Errorf("late request = %v, replayed %+v; want a replay of the first response", err, late.Replayed)
				}
				if n := effects(t, db); n != 1 {
					t.Errorf("%d effects committed, want the first's only", n)
				}
			})
		})
	}
}

// TestPendingAnswerIsStoredByFinish: a transaction whose answer is written
// only after it (Render unset: the answer depends on more than its result)
// claims the key all the same, so a replay before the answer is stored is
// told to wait (409) and never makes the effect again; Finish then stores
// the answer written, which later replays get.
func TestPendingAnswerIsStoredByFinish(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		open(t, db)
		k := NewKeeper(db, clock.Real{})
		r := Request{MerchantID: merchantID(t), Key: "pending", Hash: "h"}
		first, err := k.Begin(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Do(ctx, db, first, func(tx *store.Tx) (any, error) { return nil, insertEffect(ctx, tx, "first") }); err != nil {
			t.Fatal(err)
		}
		other := NewKeeper(db, clock.Real{}) // another process's keeper, before Finish
		if _, err := effect(ctx, db, other, r, "again"); !errors.Is(err, errInFlight) {
			t.Errorf("replay before the answer is stored = %v, want in flight", err)
		}
		if err := first.Finish(ctx, 200, []byte("written")); err != nil {
			t.Fatal(err)
		}
		if got, err := effect(ctx, db, other, r, "later"); err != nil || string(got.Body) != "written" {
			t.Errorf("replay after Finish = %+v, %v; want the answer written", got, err)
		}
		if n := effects(t, db); n != 1 {
			t.Errorf("%d effects, want 1", n)
		}
	})
}

// TestAnswerIsStoredWithTheEffect: an answer that depends on the result
// (Answer: a refusal that commits its effect) is stored in the effect's
// transaction, so a replay gets it even when the request never stored it
// afterwards (its commit's answer lost, no Finish).
func TestAnswerIsStoredWithTheEffect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		open(t, db)
		k := NewKeeper(db, clock.Real{})
		r := Request{MerchantID: merchantID(t), Key: "answered", Hash: "h"}
		first, err := k.Begin(r)
		if err != nil {
			t.Fatal(err)
		}
		first.Answer = func(result any) (int, []byte, error) { return 400, []byte(result.(string)), nil }
		if _, err := Do(ctx, db, first, func(tx *store.Tx) (any, error) { return "wrong code", insertEffect(ctx, tx, "attempt") }); err != nil {
			t.Fatal(err)
		}
		first.release() // no Finish: the request's process died after the commit
		got, err := effect(ctx, db, NewKeeper(db, clock.Real{}), r, "again")
		if err != nil || got.Status != 400 || string(got.Body) != "wrong code" {
			t.Errorf("replay = %+v, %v; want the 400 stored with the effect", got, err)
		}
		if n := effects(t, db); n != 1 {
			t.Errorf("%d effects, want 1", n)
		}
	})
}

// TestKeyCostsNoRoundTrip: on PostgreSQL a keyed write that reads nothing
// sends nothing before its COMMIT: the key's lock and its stored answer go
// with it.
func TestKeyCostsNoRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite has no round trips to the server")
		}
		ctx := context.Background()
		open(t, db)
		claim, err := NewKeeper(db, clock.Real{}).Begin(Request{MerchantID: merchantID(t), Key: "k", Hash: "h"})
		if err != nil {
			t.Fatal(err)
		}
		claim.Status = 201
		claim.Render = func(any) ([]byte, error) { return []byte("done"), nil }
		trips := -1
		_, err = Do(ctx, db, claim, func(tx *store.Tx) (any, error) {
			err := tx.Send(ctx, `INSERT INTO effects (note) VALUES ('sent')`)
			tx.AfterCommit(func() { trips = tx.RoundTrips() })
			return nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if trips != 1 {
			t.Errorf("a keyed write of one insert took %d round trips, want 1 (its COMMIT)", trips)
		}
	})
}

// merchantID names the test's merchant after the test: a key's advisory lock
// is one per database, and the tests of other schemas there run at once.
func merchantID(t *testing.T) string { return "m-" + t.Name() }

// TestLostConnectionIsUnavailable: when the database goes away under a
// keyed write (a server restart, a failover), the answer says so
// (store.IsUnavailable: a 503 the client retries), though the key's check,
// which goes with the effect's first statement, was never read. (A CI run of
// the failover test once answered "idempotency check: its row was not
// read", a 500: store's TestClosedConnectionFailsTheTransaction has that
// case, a connection database/sql had closed.)
func TestLostConnectionIsUnavailable(t *testing.T) {
	t.Parallel()
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := target.DSN(t)
			db, err := store.Open(ctx, dsn, store.Options{MaxConns: 1}) // every transaction on one connection
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			killer := storetest.Open(t, dsn)
			open(t, db)
			pid, err := store.Do(ctx, db, func(tx *store.Tx) (int, error) {
				var pid int
				err := tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
				return pid, err
			})
			if err != nil {
				t.Fatal(err)
			}
			claim, err := NewKeeper(db, clock.Real{}).Begin(Request{MerchantID: merchantID(t), Key: "lost", Hash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			defer claim.release()
			_, err = Do(ctx, db, claim, func(tx *store.Tx) (any, error) {
				// The connection dies before the effect's first statement,
				// which carries the transaction's BEGIN and the key's lock.
				var gone bool
				if err := killer.Read().QueryRowContext(ctx, `SELECT pg_terminate_backend($1::int, 10000::bigint)`, pid).Scan(&gone); err != nil || !gone {
					return nil, fmt.Errorf("terminate the write connection: %v, %v", gone, err)
				}
				return nil, insertEffect(ctx, tx, "lost")
			})
			if !store.IsUnavailable(err) {
				t.Errorf("a keyed write whose connection died = %v, want an error saying the database is unavailable", err)
			}
		})
	}
}
