package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

func createKV(t *testing.T, db *store.DB) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), `CREATE TABLE kv_test (k TEXT PRIMARY KEY, v BIGINT NOT NULL)`)
		return err
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
}

// committedRows counts the rows with key k that another connection can see.
func committedRows(t *testing.T, db *store.DB, k string) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(`SELECT count(*) FROM kv_test WHERE k = $1`, k).Scan(&n); err != nil {
		t.Fatalf("count rows: %v", err)
	}
	return n
}

func TestDo(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createKV(t, db)
		errBoom := errors.New("boom")
		serialization := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
		deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
		duplicate := &pgconn.PgError{Code: "23505", Message: "duplicate key"}
		// failFirst returns errs[i] on attempt i+1 and nil once they run out.
		failFirst := func(errs ...error) func(attempt int) error {
			return func(attempt int) error {
				if attempt <= len(errs) {
					return errs[attempt-1]
				}
				return nil
			}
		}
		tests := []struct {
			name         string
			outcome      func(attempt int) error
			wantErr      error
			wantValue    int
			wantAttempts int
			wantRows     int // rows fn wrote that are committed after Do
			wantHooks    int // AfterCommit hooks run
		}{
			{"success commits", failFirst(), nil, 42, 1, 1, 1},
			{"error rolls back", failFirst(errBoom), errBoom, 0, 1, 0, 0},
			{"wrapped error rolls back", failFirst(fmt.Errorf("step: %w", errBoom)), errBoom, 0, 1, 0, 0},
			{"serialization failure is retried", failFirst(serialization), nil, 42, 2, 1, 1},
			{"deadlock is retried", failFirst(deadlock, serialization, deadlock), nil, 42, 4, 1, 1},
			{"retries are bounded", failFirst(serialization, serialization, serialization, serialization, nil), serialization, 0, 4, 0, 0},
			{"other postgres error is not retried", failFirst(duplicate), duplicate, 0, 1, 0, 0},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := fmt.Sprintf("do-%d", i)
				attempts, hooks := 0, 0
				var visibleInHook []int
				got, err := store.Do(ctx, db, func(tx *store.Tx) (int, error) {
					attempts++
					if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, $2)`, key, attempts); err != nil {
						return 0, err
					}
					tx.AfterCommit(func() {
						hooks++
						// A hook runs after the commit: another connection sees the row.
						visibleInHook = append(visibleInHook, committedRows(t, db, key))
					})
					if err := tt.outcome(attempts); err != nil {
						return 0, err
					}
					return 42, nil
				})
				if !errors.Is(err, tt.wantErr) || got != tt.wantValue {
					t.Errorf("Do = %d, %v; want %d, %v", got, err, tt.wantValue, tt.wantErr)
				}
				if attempts != tt.wantAttempts {
					t.Errorf("fn ran %d times, want %d", attempts, tt.wantAttempts)
				}
				if n := committedRows(t, db, key); n != tt.wantRows {
					t.Errorf("%d committed rows, want %d", n, tt.wantRows)
				}
				if hooks != tt.wantHooks {
					t.Errorf("AfterCommit hooks ran %d times, want %d", hooks, tt.wantHooks)
				}
				for _, n := range visibleInHook {
					if n != 1 {
						t.Errorf("hook saw %d committed rows, want 1 (hooks must run after the commit)", n)
					}
				}
			})
		}
	})
}

// TestDoHookOrder checks that a transaction's hooks run in the order they
// were registered, once each.
func TestDoHookOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var got []int
		err := db.Exec(context.Background(), func(tx *store.Tx) error {
			for i := range 3 {
				tx.AfterCommit(func() { got = append(got, i) })
			}
			if len(got) != 0 {
				t.Errorf("hooks ran before the commit: %v", got)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Exec: %v", err)
		}
		if fmt.Sprint(got) != "[0 1 2]" {
			t.Errorf("hooks ran as %v, want [0 1 2]", got)
		}
	})
}

// TestDoRollsBackFailedStatement checks a failed statement rolls back the
// statements before it in the same transaction, on both databases.
func TestDoRollsBackFailedStatement(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createKV(t, db)
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('dup', 1)`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('dup', 2)`)
			return err
		})
		if !store.IsUniqueViolation(err) {
			t.Errorf("Exec = %v, want a unique violation", err)
		}
		if n := committedRows(t, db, "dup"); n != 0 {
			t.Errorf("%d rows committed, want 0", n)
		}
	})
}

func TestExecContextCanceled(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		err := db.Exec(ctx, func(tx *store.Tx) error { ran = true; return nil })
		if err == nil || ran {
			t.Errorf("Exec on a canceled context = %v, fn ran %v; want an error and fn not run", err, ran)
		}
	})
}

func TestTxDB(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var got *store.DB
		if err := db.Exec(context.Background(), func(tx *store.Tx) error { got = tx.DB(); return nil }); err != nil {
			t.Fatal(err)
		}
		if got != db {
			t.Errorf("tx.DB() = %p, want %p", got, db)
		}
	})
}

// TestDoPanicReleasesTransaction panics inside fn: the panic must reach the
// caller, the transaction's write must not commit, and its locks and
// connection must be released at once (on SQLite a leaked transaction would
// hold the only write connection for good). The next write takes the same key,
// so a leaked transaction blocks it on both databases.
func TestDoPanicReleasesTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createKV(t, db)
		// Ending panicCtx rolls back a leaked transaction, so a regression
		// fails this test instead of hanging the cleanup.
		panicCtx, release := context.WithCancel(ctx)
		defer release()
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Errorf("recovered %v, want the panic boom", p)
				}
			}()
			db.Exec(panicCtx, func(tx *store.Tx) error {
				if _, err := tx.ExecContext(panicCtx, `INSERT INTO kv_test (k, v) VALUES ('k', 1)`); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := db.Exec(wctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(wctx, `INSERT INTO kv_test (k, v) VALUES ('k', 2)`)
			return err
		})
		if err != nil {
			t.Fatalf("write after the panic: %v", err)
		}
		var v int64
		if err := db.Read().QueryRow(`SELECT v FROM kv_test WHERE k = 'k'`).Scan(&v); err != nil || v != 2 {
			t.Errorf("k = %d, %v; want 2 (only the write after the panic committed)", v, err)
		}
	})
}

// TestLaneChurnNeverStrandsATransaction: lanes come and go as they fall
// idle; a transaction submitted just as its lane is retiring must still run.
func TestLaneChurnNeverStrandsATransaction(t *testing.T) {
	t.Parallel()
	defer store.SetLaneIdle(time.Microsecond)()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := store.WithLane(context.Background(), "churn")
		done := make(chan error, 1)
		go func() {
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 200 {
						if i%(g+2) == 0 {
							time.Sleep(time.Duration(i%3) * 50 * time.Microsecond)
						}
						if err := db.Exec(ctx, func(tx *store.Tx) error {
							_, err := tx.ExecContext(ctx, `SELECT 1`)
							return err
						}); err != nil {
							t.Errorf("Exec: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			done <- nil
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("a transaction was stranded: 1,600 lane transactions did not finish in 60 s")
		}
	})
}

// TestLaneBatchFailingItemFailsAlone: transactions group-committed on one
// lane succeed or fail each on their own: a failing one's writes are rolled
// back, the others' are committed and their hooks run, in every batch.
func TestLaneBatchFailingItemFailsAlone(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := store.WithLane(context.Background(), "batch-fail")
		errBoom := errors.New("boom")
		hold := make(chan struct{})
		holding := make(chan struct{})
		var wg sync.WaitGroup
		// The first transaction holds the lane while the others queue up
		// behind it, so that they are committed as one batch.
		wg.Go(func() {
			if err := db.Exec(ctx, func(tx *store.Tx) error {
				close(holding)
				<-hold
				_, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('first', 0)`)
				return err
			}); err != nil {
				t.Errorf("first: %v", err)
			}
		})
		<-holding
		const n = 18
		errs := make([]error, n)
		hooks := make([]int, n)
		draws := make([][]string, n)
		for i := range n {
			draws[i] = []string{fmt.Sprintf("item-%d", i), fmt.Sprintf("drawn-%d", i)}
		}
		for i := range n {
			wg.Go(func() {
				errs[i] = db.Exec(ctx, func(tx *store.Tx) error {
					// Sent: on PostgreSQL it reaches the server with the
					// item's next statement, or its release.
					if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, $2)`, fmt.Sprintf("item-%d", i), i); err != nil {
						return err
					}
					tx.AfterCommit(func() { hooks[i]++ })
					switch i % 6 {
					case 1: // fails after writing (nothing reached the server yet)
						return errBoom
					case 2: // a failing statement
						_, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, 0)`, fmt.Sprintf("item-%d", i))
						return err
					case 3: // a failing statement sent, whose error only the release sees
						return tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, 0)`, fmt.Sprintf("item-%d", i))
					case 4: // an id drawn twice: on PostgreSQL the item runs again
						_, err := store.InsertUnique(ctx, func() string { d := draws[i][0]; draws[i] = draws[i][1:]; return d },
							func(k string) (bool, error) {
								return tx.InsertDrawn(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, 0)`, k)
							})
						return err
					case 5: // a sent query whose reading fails, which only the release carries
						_, err := store.SendValue[int](ctx, tx, `SELECT v FROM kv_test WHERE k = 'none'`)
						return err
					}
					return nil
				})
			})
		}
		for deadline := time.Now().Add(10 * time.Second); db.Queued(ctx) < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d transactions queued on the lane", db.Queued(ctx), n)
			}
		}
		close(hold)
		wg.Wait()
		for i := range n {
			want := 1
			switch i % 6 {
			case 1:
				want = 0
				if !errors.Is(errs[i], errBoom) {
					t.Errorf("item %d: %v, want boom", i, errs[i])
				}
			case 2, 3:
				want = 0
				if !store.IsUniqueViolation(errs[i]) {
					t.Errorf("item %d: %v, want a unique violation", i, errs[i])
				}
			case 5:
				want = 0
				if !errors.Is(errs[i], sql.ErrNoRows) {
					t.Errorf("item %d: %v, want no rows", i, errs[i])
				}
			default:
				if errs[i] != nil {
					t.Errorf("item %d: %v", i, errs[i])
				}
			}
			if got := committedRows(t, db, fmt.Sprintf("item-%d", i)); got != want {
				t.Errorf("item %d: %d committed rows, want %d", i, got, want)
			}
			if i%6 == 4 {
				if got := committedRows(t, db, fmt.Sprintf("drawn-%d", i)); got != 1 {
					t.Errorf("item %d: its second draw has %d committed rows, want 1", i, got)
				}
			}
			if hooks[i] != want {
				t.Errorf("item %d: hooks ran %d times, want %d", i, hooks[i], want)
			}
		}
	})
}

// TestSentStatementsGoWithTheNext checks the pipeline: statements sent
// (Send) reach PostgreSQL with the next statement in one round trip, in
// order; on SQLite each runs at once.
func TestSentStatementsGoWithTheNext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		var sum, trips int
		err := db.Exec(ctx, func(tx *store.Tx) error {
			for i := range 3 {
				if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, $2)`, fmt.Sprintf("sent-%d", i), i+1); err != nil {
					return err
				}
			}
			if err := tx.QueryRowContext(ctx, `SELECT SUM(v) FROM kv_test WHERE k LIKE 'sent-%'`).Scan(&sum); err != nil {
				return err
			}
			trips = tx.RoundTrips()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum != 6 {
			t.Errorf("the query saw a sum of %d, want 6 (all three sent rows)", sum)
		}
		want := 1
		if db.Dialect() == store.SQLite {
			want = 4
		}
		if trips != want {
			t.Errorf("%d round trips, want %d", trips, want)
		}
	})
}

// TestSentStatementFailureFailsTheTransaction checks that a sent statement
// that fails rolls the whole transaction back and is the error it returns,
// whatever its caller made of the errors that followed (the transaction is
// aborted on PostgreSQL, so every later statement fails).
func TestSentStatementFailureFailsTheTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('once', 1)`); err != nil {
				return err
			}
			if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('once', 2)`); err != nil {
				return errors.New("the caller's own words")
			}
			var v int
			if err := tx.QueryRowContext(ctx, `SELECT v FROM kv_test WHERE k = 'once'`).Scan(&v); err != nil {
				return errors.New("the caller's own words")
			}
			return nil
		})
		if !store.IsUniqueViolation(err) {
			t.Errorf("Exec = %v, want the sent statement's unique violation", err)
		}
		if got := committedRows(t, db, "once"); got != 0 {
			t.Errorf("%d committed rows, want 0", got)
		}
	})
}

// TestSentQueriesAreReadWithTheNext: a sent query's rows are read when it
// goes to the server, with the next statement or the commit, in one round
// trip on PostgreSQL; SendRow of no row fails the transaction.
func TestSentQueriesAreReadWithTheNext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		var keys []string
		var one, sum, trips int
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('a', 1), ('b', 2)`); err != nil {
				return err
			}
			sentKeys, err := store.SendQuery(ctx, tx, `SELECT k FROM kv_test ORDER BY k`, nil, func(row store.Row) (string, error) {
				var k string
				err := row.Scan(&k)
				return k, err
			})
			if err != nil {
				return err
			}
			sentOne, err := store.SendValue[int](ctx, tx, `SELECT v FROM kv_test WHERE k = 'a'`)
			if err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT SUM(v) FROM kv_test`).Scan(&sum); err != nil {
				return err
			}
			trips = tx.RoundTrips()
			if keys, err = sentKeys.Get(); err != nil {
				return err
			}
			one, err = sentOne.Get()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys, []string{"a", "b"}) || one != 1 || sum != 3 {
			t.Errorf("read keys %v, one %d, sum %d; want [a b], 1, 3", keys, one, sum)
		}
		if want := 1; db.Dialect() == store.Postgres && trips != want {
			t.Errorf("%d round trips, want %d", trips, want)
		}

		// Read with the commit.
		var v int
		var last *store.Pending[int]
		err = db.Exec(ctx, func(tx *store.Tx) error {
			var err error
			last, err = store.SendValue[int](ctx, tx, `SELECT v FROM kv_test WHERE k = 'b'`)
			return err
		})
		if err == nil {
			v, err = last.Get()
		}
		if err != nil || v != 2 {
			t.Errorf("a row sent last read %d (%v), want 2", v, err)
		}

		err = db.Exec(ctx, func(tx *store.Tx) error {
			if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('c', 3)`); err != nil {
				return err
			}
			_, err := store.SendValue[int](ctx, tx, `SELECT v FROM kv_test WHERE k = 'none'`)
			return err
		})
		if !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("SendRow of no row: %v, want sql.ErrNoRows", err)
		}
		var n int
		db.Read().QueryRow(`SELECT count(*) FROM kv_test WHERE k = 'c'`).Scan(&n)
		if n != 0 {
			t.Error("the transaction whose SendRow found no row committed")
		}
	})
}

// TestLateRowGoesWithTheCommit: on PostgreSQL a row sent by SendRowLate as
// a transaction's last statement goes to the server with the COMMIT, one
// round trip in all, and is there once the transaction has committed; a
// row that cannot be scanned only says so, and the transaction commits;
// a statement that fails fails the transaction.
func TestLateRowGoesWithTheCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		var read bool
		var v, trips int
		scanInt := func(row store.Row) (int, error) {
			var n int
			err := row.Scan(&n)
			return n, err
		}
		err := db.Exec(ctx, func(tx *store.Tx) error {
			late, err := store.SendRowLate(ctx, tx, `INSERT INTO kv_test (k, v) VALUES ('late', 7) RETURNING v`, nil, scanInt)
			tx.AfterCommit(func() {
				trips = tx.RoundTrips()
				var err error
				v, err = late.Get()
				read = err == nil
			})
			return err
		})
		if err != nil || !read || v != 7 {
			t.Errorf("the late row: read %v, v %d (%v); want read, 7", read, v, err)
		}
		if db.Dialect() == store.Postgres && trips != 1 {
			t.Errorf("%d round trips with the commit, want 1", trips)
		}

		err = db.Exec(ctx, func(tx *store.Tx) error {
			late, err := store.SendRowLate(ctx, tx, `INSERT INTO kv_test (k, v) VALUES ('text', 8) RETURNING k`, nil, scanInt)
			tx.AfterCommit(func() {
				_, err := late.Get()
				read = err == nil
			})
			return err
		})
		if err != nil || read {
			t.Errorf("a row that cannot be scanned: read %v (%v); want not read and committed", read, err)
		}
		if db.Dialect() == store.Postgres && committedRows(t, db, "text") != 1 {
			t.Error("the transaction whose late row could not be scanned did not commit")
		}

		err = db.Exec(ctx, func(tx *store.Tx) error {
			if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('before', 1)`); err != nil {
				return err
			}
			_, err := store.SendRowLate(ctx, tx, `INSERT INTO kv_test (k, v) VALUES ('late', 9) RETURNING v`, nil, scanInt)
			return err
		})
		if !store.IsUniqueViolation(err) {
			t.Errorf("a late row's failing statement: %v, want a unique violation", err)
		}
		if committedRows(t, db, "before") != 0 {
			t.Error("the transaction whose late statement failed committed")
		}
	})
}

// settingIn reads a server setting inside a transaction (on lane, when not
// empty) after prepare, if any, has run in it.
func settingIn(t *testing.T, db *store.DB, lane, name string, prepare func(*store.Tx, context.Context) error) string {
	t.Helper()
	ctx := context.Background()
	if lane != "" {
		ctx = store.WithLane(ctx, lane)
	}
	var got string
	err := db.Exec(ctx, func(tx *store.Tx) error {
		if prepare != nil {
			if err := prepare(tx, ctx); err != nil {
				return err
			}
		}
		return tx.QueryRowContext(ctx, `SELECT current_setting($1)`, name).Scan(&got)
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRelaxCommit: on PostgreSQL a relaxed transaction commits without
// waiting for the disk, and only it: the setting does not outlive it, and
// a group commit's item cannot relax the others' commit.
func TestRelaxCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite has no per-transaction durability setting; RelaxCommit does nothing there")
		}
		relax := (*store.Tx).RelaxCommit
		if got := settingIn(t, db, "", "synchronous_commit", relax); got != "off" {
			t.Errorf("relaxed transaction: synchronous_commit %q, want off", got)
		}
		for range 4 { // the pool's connections: none keeps the setting
			if got := settingIn(t, db, "", "synchronous_commit", nil); got == "off" {
				t.Error("a later transaction inherited synchronous_commit off")
			}
		}
		if got := settingIn(t, db, "relax-test", "synchronous_commit", relax); got == "off" {
			t.Error("an item of a group commit relaxed the whole commit")
		}
	})
}

// TestPlanEachTime: on PostgreSQL the setting holds in its transaction
// and does not outlive it.
func TestPlanEachTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite prepares no generic plans; PlanEachTime does nothing there")
		}
		if got := settingIn(t, db, "", "plan_cache_mode", (*store.Tx).PlanEachTime); got != "force_custom_plan" {
			t.Errorf("plan_cache_mode %q in the transaction, want force_custom_plan", got)
		}
		for range 4 {
			if got := settingIn(t, db, "", "plan_cache_mode", nil); got == "force_custom_plan" {
				t.Error("a later transaction inherited force_custom_plan")
			}
		}
	})
}

// TestClosedConnectionFailsTheTransaction: a transaction whose connection
// database/sql has closed (it broke) fails as unavailable, and so do the
// statements it had queued, which never reached the server: a reader of
// their rows learns why they are missing (ReadSent), and the request is
// answered 503, not 500. Queued statements once vanished silently there, and
// a keyed write during a failover was answered "idempotency check: its row
// was not read".
func TestClosedConnectionFailsTheTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite runs in-process: there is no connection to lose")
		}
		ctx := context.Background()
		var queued bool
		var readErr, sentErr, getErr error
		err := db.Exec(ctx, func(tx *store.Tx) error {
			sent, err := store.SendValue[bool](ctx, tx, `SELECT true`)
			if err != nil {
				return err
			}
			tx.CloseConn()
			var one int
			readErr = tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
			sentErr = tx.ReadSent(ctx)
			queued, getErr = sent.Get()
			return readErr
		})
		if !store.IsUnavailable(readErr) || !store.IsUnavailable(err) {
			t.Errorf("a statement on a closed connection = %v, its transaction %v; want errors saying the database is unavailable", readErr, err)
		}
		if queued || !store.IsUnavailable(sentErr) || !store.IsUnavailable(getErr) {
			t.Errorf("the queued row: read %v (%v), ReadSent = %v; want unread, and errors saying the database is unavailable", queued, getErr, sentErr)
		}
	})
}

// TestSavepoint: work run in a savepoint that fails, by its own error or by
// a statement it sent (Send), is undone alone, its hooks dropped, and the
// transaction goes on and commits; work that succeeds keeps its writes and
// hooks. On PostgreSQL the SAVEPOINT and RELEASE travel with the work's own
// statements: work that only sends costs one round trip.
func TestSavepoint(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		var hooks []string
		var sentErr, ownErr, okErr error
		var okTrips int
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('sp-taken', 1)`); err != nil {
				return err
			}
			var err error
			if sentErr, err = tx.Savepoint(ctx, "sp_a", func(tx *store.Tx) error {
				tx.AfterCommit(func() { hooks = append(hooks, "sent") })
				if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('sp-undone', 1)`); err != nil {
					return err
				}
				return tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('sp-taken', 2)`)
			}); err != nil {
				return err
			}
			if ownErr, err = tx.Savepoint(ctx, "sp_b", func(tx *store.Tx) error {
				tx.AfterCommit(func() { hooks = append(hooks, "own") })
				if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('sp-undone-too', 1)`); err != nil {
					return err
				}
				return errors.New("the work's own failure")
			}); err != nil {
				return err
			}
			before := tx.RoundTrips()
			if okErr, err = tx.Savepoint(ctx, "sp_c", func(tx *store.Tx) error {
				tx.AfterCommit(func() { hooks = append(hooks, "ok") })
				for _, k := range []string{"sp-kept", "sp-kept-too"} {
					if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ($1, 1)`, k); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
			okTrips = tx.RoundTrips() - before
			return nil
		})
		if err != nil {
			t.Fatalf("Exec = %v, want the transaction committed", err)
		}
		if !store.IsUniqueViolation(sentErr) {
			t.Errorf("work whose sent insert failed: %v, want its unique violation", sentErr)
		}
		if ownErr == nil || ownErr.Error() != "the work's own failure" {
			t.Errorf("work that failed: %v, want its own error", ownErr)
		}
		if okErr != nil {
			t.Errorf("work that succeeded: %v", okErr)
		}
		for k, want := range map[string]int{"sp-taken": 1, "sp-undone": 0, "sp-undone-too": 0, "sp-kept": 1, "sp-kept-too": 1} {
			if got := committedRows(t, db, k); got != want {
				t.Errorf("%d committed rows %q, want %d", got, k, want)
			}
		}
		if !slices.Equal(hooks, []string{"ok"}) {
			t.Errorf("hooks run after the commit: %v, want only the successful work's", hooks)
		}
		if db.Dialect() == store.Postgres && okTrips != 1 {
			t.Errorf("the work that only sent took %d round trips, want 1 (the SAVEPOINT, its inserts and the RELEASE)", okTrips)
		}
	})
}

// TestSendOne: a sent statement that must return a row fails the
// transaction with the caller's error when it returns none, however the
// caller words what follows; one that returns its row changes nothing else.
func TestSendOne(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		none := errors.New("the row is not there")
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('one', 1)`); err != nil {
				return err
			}
			return tx.SendOne(ctx, `UPDATE kv_test SET v = 2 WHERE k = 'one' AND v = 1 RETURNING k`, nil, none)
		})
		if err != nil {
			t.Fatalf("Exec with the row there = %v, want nil", err)
		}
		err = db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('undone', 1)`); err != nil {
				return err
			}
			if err := tx.SendOne(ctx, `UPDATE kv_test SET v = 3 WHERE k = 'one' AND v = 1 RETURNING k`, nil, none); err != nil && !errors.Is(err, none) {
				return err
			}
			var v int
			if err := tx.QueryRowContext(ctx, `SELECT v FROM kv_test WHERE k = 'one'`).Scan(&v); err != nil {
				return errors.New("the caller's own words")
			}
			return nil
		})
		if !errors.Is(err, none) {
			t.Errorf("Exec with the row gone = %v, want %v", err, none)
		}
		if got := committedRows(t, db, "undone"); got != 0 {
			t.Errorf("%d committed rows of the failed transaction, want 0", got)
		}
		var v int
		if err := db.Read().QueryRow(`SELECT v FROM kv_test WHERE k = 'one'`).Scan(&v); err != nil || v != 2 {
			t.Errorf("v = %d, %v; want 2 (the first update only)", v, err)
		}
	})
}

// TestEarlyReadFails: a read sent ahead is not there before its statement
// has run, on every database: Get fails with ErrNotRun, never a zero value
// that reads as data, and so does the transaction, which commits nothing
// even when its function goes on; after the next statement that goes to
// the server the value is there.
func TestEarlyReadFails(t *testing.T) {
	t.Parallel()
	scanInt := func(row store.Row) (int, error) {
		var n int
		err := row.Scan(&n)
		return n, err
	}
	type getter func() (int, error)
	tests := []struct {
		name string
		send func(ctx context.Context, tx *store.Tx) (getter, error)
	}{
		{"SendValue", func(ctx context.Context, tx *store.Tx) (getter, error) {
			p, err := store.SendValue[int](ctx, tx, `SELECT v FROM kv_test WHERE k = 'early'`)
			return func() (int, error) { return p.Get() }, err
		}},
		{"SendRow", func(ctx context.Context, tx *store.Tx) (getter, error) {
			p, err := store.SendRow(ctx, tx, `SELECT v FROM kv_test WHERE k = 'early'`, nil, scanInt)
			return func() (int, error) { return p.Get() }, err
		}},
		{"SendQuery", func(ctx context.Context, tx *store.Tx) (getter, error) {
			p, err := store.SendQuery(ctx, tx, `SELECT v FROM kv_test WHERE k = 'early'`, nil, scanInt)
			return func() (int, error) {
				vs, err := p.Get()
				if len(vs) != 1 {
					return 0, err
				}
				return vs[0], err
			}, err
		}},
		{"SendRowLate", func(ctx context.Context, tx *store.Tx) (getter, error) {
			p, err := store.SendRowLate(ctx, tx, `SELECT v FROM kv_test WHERE k = 'early'`, nil, scanInt)
			return func() (int, error) { return p.Get() }, err
		}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var early, after int
				var earlyErr, afterErr error
				err := db.Exec(ctx, func(tx *store.Tx) error {
					if err := tx.Send(ctx, `INSERT INTO kv_test (k, v) VALUES ('early', 5)`); err != nil {
						return err
					}
					get, err := tt.send(ctx, tx)
					if err != nil {
						return err
					}
					early, earlyErr = get()
					var one int
					if err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
						return err
					}
					after, afterErr = get()
					return nil // as if the early read's error were dropped
				})
				if !errors.Is(earlyErr, store.ErrNotRun) || early != 0 {
					t.Errorf("Get before the statement ran = %d, %v; want 0, ErrNotRun", early, earlyErr)
				}
				if afterErr != nil || after != 5 {
					t.Errorf("Get after the next statement = %d, %v; want 5", after, afterErr)
				}
				if !errors.Is(err, store.ErrNotRun) {
					t.Errorf("the transaction that read early = %v, want ErrNotRun", err)
				}
				if got := committedRows(t, db, "early"); got != 0 {
					t.Errorf("%d committed rows of the transaction that read early, want 0", got)
				}
			})
		}
	})
}

// TestNestedTransactionFails: a transaction started inside another of its
// lane (on SQLite, inside any: one writer) would wait for ever for the
// writer the outer one holds. Do refuses it with ErrNested instead, never
// runs it, and the outer transaction goes on and commits.
func TestNestedTransactionFails(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		createKV(t, db)
		ctx := store.WithLane(context.Background(), "nested") // on SQLite the one lane is used anyway
		innerRan := false
		var innerErr error
		done := make(chan error, 1)
		go func() {
			done <- db.Exec(ctx, func(tx *store.Tx) error {
				innerErr = db.Exec(ctx, func(tx *store.Tx) error {
					innerRan = true
					return nil
				})
				_, err := tx.ExecContext(ctx, `INSERT INTO kv_test (k, v) VALUES ('outer', 1)`)
				return err
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the outer transaction: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a transaction started inside another of its lane still waits after 30 s")
		}
		// A later transaction of the lane runs after anything still queued.
		if err := db.Exec(ctx, func(*store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(innerErr, store.ErrNested) || innerRan {
			t.Errorf("the nested transaction: %v, ran %v; want ErrNested and not run", innerErr, innerRan)
		}
		if got := committedRows(t, db, "outer"); got != 1 {
			t.Errorf("%d committed rows of the outer transaction, want 1", got)
		}
	})
}
