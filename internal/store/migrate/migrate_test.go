package migrate_test

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"payd/internal/store"
	"payd/internal/store/migrate"
	"payd/internal/store/storetest"
)

func migrationNames(t *testing.T, d store.Dialect) []string {
	t.Helper()
	ms, err := migrate.Migrations(string(d))
	if err != nil {
		t.Fatalf("Migrations(%s): %v", d, err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

func TestMigrationSetsMatch(t *testing.T) {
	t.Parallel()
	sqlite, err := migrate.Migrations("sqlite")
	if err != nil {
		t.Fatalf("Migrations(sqlite): %v", err)
	}
	postgres, err := migrate.Migrations("postgres")
	if err != nil {
		t.Fatalf("Migrations(postgres): %v", err)
	}
	if len(sqlite) == 0 {
		t.Fatal("no sqlite migrations embedded")
	}
	type step struct {
		Version int
		Name    string
	}
	steps := func(ms []migrate.Migration) []step {
		var out []step
		for _, m := range ms {
			out = append(out, step{m.Version, m.Name})
		}
		return out
	}
	if got, want := steps(postgres), steps(sqlite); !slices.Equal(got, want) {
		t.Errorf("postgres migrations %v, sqlite migrations %v: want the same versions and names", got, want)
	}
	// Versions run 1, 2, 3, … without gaps (Migrate would apply a late
	// arrival, but a gap on main means a lost migration).
	for _, ms := range [][]migrate.Migration{sqlite, postgres} {
		for i, m := range ms {
			if m.Version != i+1 || m.SQL == "" {
				t.Errorf("migration %d is %s (version %d, %d bytes of SQL), want version %d with SQL", i, m.Name, m.Version, len(m.SQL), i+1)
			}
		}
	}
}

func TestMigrationsUnknownDialect(t *testing.T) {
	t.Parallel()
	if ms, err := migrate.Migrations("oracle"); err == nil {
		t.Errorf("Migrations(oracle) = %d migrations, nil error; want an error", len(ms))
	}
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	storetest.EachUnmigratedDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db, err := store.Open(ctx, dsn, store.Options{SQLiteSynchronous: "NORMAL"})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer db.Close()
		first, err := db.Migrate(ctx)
		if err != nil {
			t.Fatalf("first Migrate: %v", err)
		}
		second, err := db.Migrate(ctx)
		if err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		want := migrationNames(t, db.Dialect())
		if !slices.Equal(first, want) {
			t.Errorf("first Migrate applied %v, want %v", first, want)
		}
		if len(second) != 0 {
			t.Errorf("second Migrate applied %v, want nothing", second)
		}
		if got := appliedVersions(t, db); len(got) != len(want) {
			t.Errorf("schema_migrations holds versions %v, want %d rows", got, len(want))
		}
	})
}

func appliedVersions(t *testing.T, db *store.DB) []int {
	t.Helper()
	rows, err := db.Read().Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateConcurrent starts several "processes" (separate DB handles) on
// one empty database at once: every migration must be applied exactly once
// and none of them may fail.
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	storetest.EachUnmigratedDSN(t, func(t *testing.T, dsn string) {
		const processes = 6
		ctx := context.Background()
		dbs := make([]*store.DB, processes)
		for i := range dbs {
			db, err := store.Open(ctx, dsn, store.Options{SQLiteSynchronous: "NORMAL"})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer db.Close()
			dbs[i] = db
		}
		applied := make([][]string, processes)
		errs := make([]error, processes)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, db := range dbs {
			wg.Go(func() {
				<-start
				applied[i], errs[i] = db.Migrate(ctx)
			})
		}
		close(start)
		wg.Wait()
		var all []string
		for i := range dbs {
			if errs[i] != nil {
				t.Errorf("process %d: Migrate: %v", i, errs[i])
			}
			all = append(all, applied[i]...)
		}
		slices.Sort(all)
		if want := migrationNames(t, dbs[0].Dialect()); !slices.Equal(all, want) {
			t.Errorf("migrations applied across processes %v, want each of %v once", all, want)
		}
		if got, want := len(appliedVersions(t, dbs[0])), len(migrationNames(t, dbs[0].Dialect())); got != want {
			t.Errorf("schema_migrations has %d rows, want %d", got, want)
		}
	})
}

// TestMigrateSaysWhenItWaits: a process that finds another one migrating
// says so (Options.MigrationWait) before it waits, once, and migrates when
// the lock is free (PostgreSQL; SQLite has no such lock).
func TestMigrateSaysWhenItWaits(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		var mu sync.Mutex
		waits := 0
		waiting := make(chan struct{})
		db, err := store.Open(ctx, dsn, store.Options{MigrationWait: func() {
			mu.Lock()
			defer mu.Unlock()
			if waits++; waits == 1 {
				close(waiting)
			}
		}})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer db.Close()
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite has no migration lock")
		}
		holder, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		conn, err := holder.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Another process migrating: it holds the lock (after any other
		// test's schema change that holds it now).
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrate.LockID); err != nil {
			t.Fatal(err)
		}
		migrated := make(chan error, 1)
		go func() {
			_, err := db.Migrate(ctx)
			migrated <- err
		}()
		select {
		case <-waiting:
		case err := <-migrated:
			t.Fatalf("Migrate returned (%v) while another process held the lock", err)
		case <-time.After(time.Minute):
			t.Fatal("Migrate did not say it waits within a minute")
		}
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", migrate.LockID); err != nil {
			t.Fatal(err)
		}
		if err := <-migrated; err != nil {
			t.Errorf("Migrate after the lock was freed: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if waits != 1 {
			t.Errorf("MigrationWait called %d times, want once", waits)
		}
	})
}
