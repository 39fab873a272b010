// Package storetest opens throwaway databases for tests: a SQLite file always,
// a PostgreSQL schema of the test's own whenever PAYD_TEST_POSTGRES_DSN is
// set, and one on a Citus coordinator whenever PAYD_TEST_CITUS_DSN is set.
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/migrate"
)

// DSNEnv names the variable that points the tests at a PostgreSQL server.
const DSNEnv = "PAYD_TEST_POSTGRES_DSN"

// CitusDSNEnv names the variable that points the tests at the coordinator of
// a Citus cluster (.ci/citus-up starts one on local ports).
const CitusDSNEnv = "PAYD_TEST_CITUS_DSN"

// Target is one database a test runs against.
type Target struct {
	Name string
	// DSN names a database of the test's own each call, migrated and
	// holding no rows (the caller may migrate it again, which does nothing).
	DSN func(t testing.TB) string
	// Unmigrated names a fresh database that no migration has touched, for
	// the tests of migrating.
	Unmigrated func(t testing.TB) string
}

// Targets returns SQLite, plus PostgreSQL when PAYD_TEST_POSTGRES_DSN is
// set, plus Citus when PAYD_TEST_CITUS_DSN is.
func Targets() []Target {
	out := []Target{{Name: "sqlite", DSN: SQLiteDSN, Unmigrated: SQLiteUnmigratedDSN}}
	if os.Getenv(DSNEnv) != "" {
		out = append(out, Target{Name: "postgres", DSN: PostgresDSN, Unmigrated: PostgresUnmigratedDSN})
	}
	if os.Getenv(CitusDSNEnv) != "" {
		out = append(out, Target{Name: "citus", DSN: CitusDSN, Unmigrated: CitusUnmigratedDSN})
	}
	return out
}

// PostgresTargets is Targets without SQLite: the servers that several payd
// processes can share.
func PostgresTargets() []Target { return Targets()[1:] }

// Each runs fn once per target as a subtest, with a freshly migrated database.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, target := range Targets() {
		t.Run(target.Name, func(t *testing.T) {
			fn(t, Open(t, target.DSN(t)))
		})
	}
}

// EachDSN is Each for tests that open the database themselves (a started payd).
func EachDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, target := range Targets() {
		t.Run(target.Name, func(t *testing.T) { fn(t, target.DSN(t)) })
	}
}

// EachUnmigratedDSN is EachDSN with databases no migration has touched.
func EachUnmigratedDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, target := range Targets() {
		t.Run(target.Name, func(t *testing.T) { fn(t, target.Unmigrated(t)) })
	}
}

// Open opens and migrates dsn and closes it when the test ends.
func Open(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{SQLiteSynchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// SQLiteDSN returns the DSN of a new, migrated SQLite file in the test's
// temporary directory: a copy of one migrated database. Migrating SQLite
// takes seconds under the race detector (the engine is Go code, every
// statement of the migrations run instrumented), which hundreds of tests
// would spend again and again.
func SQLiteDSN(t testing.TB) string {
	t.Helper()
	template, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "payd.db")
	if err := copyFile(template, path); err != nil {
		t.Fatalf("copy the migrated SQLite template: %v", err)
	}
	return "sqlite:" + path
}

// SQLiteUnmigratedDSN returns the DSN of a SQLite file that does not exist yet.
func SQLiteUnmigratedDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "payd.db")
}

// migrationsHash names a build of a dialect's migrations: a hash of them.
func migrationsHash(d store.Dialect) (string, error) {
	ms, err := migrate.Migrations(string(d))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s %d\n%s", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

var template struct {
	once sync.Once
	path string
	err  error
}

// sqliteTemplate returns the path of a SQLite database migrated by this
// build's migrations, made once and shared by the test processes: it is
// named by a hash of the migrations, and made under another name and then
// renamed, so a process never sees one half made.
func sqliteTemplate() (string, error) {
	template.once.Do(func() {
		build, err := migrationsHash(store.SQLite)
		if err != nil {
			template.err = err
			return
		}
		path := filepath.Join(os.TempDir(), "payd-test-sqlite-"+build+".db")
		if _, err := os.Stat(path); err == nil {
			// Marked as in use, for removeStaleTemplates of other builds.
			now := time.Now()
			os.Chtimes(path, now, now)
			template.path = path
			return
		}
		dir, err := os.MkdirTemp("", "payd-test-sqlite-*")
		if err != nil {
			template.err = err
			return
		}
		defer os.RemoveAll(dir)
		made := filepath.Join(dir, "payd.db")
		ctx := context.Background()
		db, err := store.Open(ctx, "sqlite:"+made, store.Options{SQLiteSynchronous: "NORMAL"})
		if err != nil {
			template.err = err
			return
		}
		if _, err := db.Migrate(ctx); err != nil {
			db.Close()
			template.err = err
			return
		}
		// The last connection's close checkpoints the log into the file and
		// removes it; a log left behind would mean the file is not whole.
		db.Close()
		if _, err := os.Stat(made + "-wal"); err == nil {
			template.err = fmt.Errorf("%s-wal is left after closing", made)
			return
		}
		if template.err = os.Rename(made, path); template.err == nil {
			template.path = path
			removeStaleTemplates(path)
		}
	})
	return template.path, template.err
}

// removeStaleTemplates removes the templates of other builds of the
// migrations that no test process has begun to use for an hour.
func removeStaleTemplates(current string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(current), "payd-test-sqlite-*.db"))
	for _, p := range old {
		if info, err := os.Stat(p); err == nil && p != current && time.Since(info.ModTime()) > time.Hour {
			os.Remove(p)
		}
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// PostgresDSN returns a DSN whose search_path is a schema on the test
// server that is migrated and holds no rows, taken from the test processes'
// pool (pool.go) and given back when the test ends.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return serverPool(t, DSNEnv).take(t)
}

// PostgresUnmigratedDSN returns a DSN whose search_path is a new, empty
// schema on the test server, dropped when the test ends.
func PostgresUnmigratedDSN(t testing.TB) string {
	t.Helper()
	return serverPool(t, DSNEnv).fresh(t)
}

// CitusDSN is PostgresDSN on the Citus coordinator.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return serverPool(t, CitusDSNEnv).take(t)
}

// CitusUnmigratedDSN is PostgresUnmigratedDSN on the Citus coordinator.
func CitusUnmigratedDSN(t testing.TB) string {
	t.Helper()
	return serverPool(t, CitusDSNEnv).fresh(t)
}

// Write runs a service's write method (ctx, tx, caller, request) in a
// transaction of its own, as the HTTP layer runs one request, and returns
// what it returned (nothing is committed when it fails).
func Write[P, Req, Res any](ctx context.Context, db *store.DB, call func(context.Context, *store.Tx, P, Req) (Res, error), p P, req Req) (Res, error) {
	return store.Do(ctx, db, func(tx *store.Tx) (Res, error) { return call(ctx, tx, p, req) })
}

// RoundTrips runs call in a transaction of its own and returns the round
// trips to the server it took before the commit (store.Tx.RoundTrips).
func RoundTrips(t testing.TB, db *store.DB, call func(ctx context.Context, tx *store.Tx) error) int {
	t.Helper()
	ctx := context.Background()
	var trips int
	err := db.Exec(ctx, func(tx *store.Tx) error {
		before := tx.RoundTrips()
		err := call(ctx, tx)
		trips = tx.RoundTrips() - before
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return trips
}
