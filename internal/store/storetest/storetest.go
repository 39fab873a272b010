// Package storetest opens throwaway databases for tests: a SQLite file always,
// a fresh PostgreSQL schema whenever PAYD_TEST_POSTGRES_DSN is set, and a
// fresh schema on a Citus coordinator whenever PAYD_TEST_CITUS_DSN is set.
package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/store"
)

// DSNEnv names the variable that points the tests at a PostgreSQL server.
const DSNEnv = "PAYD_TEST_POSTGRES_DSN"

// CitusDSNEnv names the variable that points the tests at the coordinator of
// a Citus cluster (.ci/citus-up starts one on local ports).
const CitusDSNEnv = "PAYD_TEST_CITUS_DSN"

// Target is one database a test runs against.
type Target struct {
	Name string
	// DSN names a fresh database each call, which holds no rows: migrated
	// already (SQLite) or not yet (PostgreSQL), so the caller migrates it.
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
		out = append(out, Target{Name: "postgres", DSN: PostgresDSN, Unmigrated: PostgresDSN})
	}
	if os.Getenv(CitusDSNEnv) != "" {
		out = append(out, Target{Name: "citus", DSN: CitusDSN, Unmigrated: CitusDSN})
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
		ms, err := store.Migrations(store.SQLite)
		if err != nil {
			template.err = err
			return
		}
		h := sha256.New()
		for _, m := range ms {
			fmt.Fprintf(h, "%d %s %d\n%s", m.Version, m.Name, len(m.SQL), m.SQL)
		}
		path := filepath.Join(os.TempDir(), "payd-test-sqlite-"+hex.EncodeToString(h.Sum(nil))[:16]+".db")
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

// PostgresDSN creates an empty schema on the test server, points a DSN's
// search_path at it, and drops it when the test ends.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return schemaDSN(t, DSNEnv, nil)
}

// CitusDSN is PostgresDSN on the Citus coordinator. Its tables are split
// into 2 shards each (Citus makes 32 by default), one on each worker, which
// spreads merchants over both and keeps a test's migration short: every
// test migrates a schema of its own, one at a time in the database, and a
// migration took 3.2 s with 4 shards, 2.4-2.6 s with 2.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return schemaDSN(t, CitusDSNEnv, map[string]string{"options": "-c citus.shard_count=2"})
}

// schemaDSN creates an empty schema on the server env points at, and
// returns a DSN whose search_path is that schema, with extra parameters.
func schemaDSN(t testing.TB, env string, extra map[string]string) string {
	t.Helper()
	base := os.Getenv(env)
	if base == "" {
		t.Skip(env + " not set")
	}
	schema := "t_" + strings.ToLower(store.RandomID(12))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		// On Citus two schemas dropped at once can deadlock on the
		// metadata they share; the one cancelled tries again, after a
		// pause that grows, so that the other drop is over by then (tried
		// at once, it met the next drop again: a CI run left 20 schemas).
		for try := 1; try <= 5; try++ {
			if _, err = admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err == nil {
				return
			}
			time.Sleep(time.Duration(try) * 250 * time.Millisecond)
		}
		t.Logf("schema %s is left behind: %v", schema, err)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	for k, v := range extra {
		q.Set(k, v)
	}
	// A space as %20: pgx reads a "+" in the query as itself.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// Write runs a service's write method (ctx, tx, caller, request) in a
// transaction of its own, as the HTTP layer runs one request, and returns
// what it returned (nothing is committed when it fails).
func Write[P, Req, Res any](ctx context.Context, db *store.DB, call func(context.Context, *store.Tx, P, Req) (Res, error), p P, req Req) (Res, error) {
	return store.Do(ctx, db, func(tx *store.Tx) (Res, error) { return call(ctx, tx, p, req) })
}
