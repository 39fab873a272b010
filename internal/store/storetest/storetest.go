// Package storetest opens throwaway databases for tests: a SQLite file always,
// a fresh PostgreSQL schema whenever PAYD_TEST_POSTGRES_DSN is set, and a
// fresh schema on a Citus coordinator whenever PAYD_TEST_CITUS_DSN is set.
package storetest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

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
	// DSN opens a fresh, migrated, empty database each call.
	DSN func(t testing.TB) string
}

// Targets returns SQLite, plus PostgreSQL when PAYD_TEST_POSTGRES_DSN is
// set, plus Citus when PAYD_TEST_CITUS_DSN is.
func Targets() []Target {
	out := []Target{{Name: "sqlite", DSN: SQLiteDSN}}
	if os.Getenv(DSNEnv) != "" {
		out = append(out, Target{Name: "postgres", DSN: PostgresDSN})
	}
	if os.Getenv(CitusDSNEnv) != "" {
		out = append(out, Target{Name: "citus", DSN: CitusDSN})
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

// SQLiteDSN returns the DSN of a new SQLite file in the test's temporary directory.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + t.TempDir() + "/payd.db"
}

// PostgresDSN creates an empty schema on the test server, points a DSN's
// search_path at it, and drops it when the test ends.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return schemaDSN(t, DSNEnv, nil)
}

// CitusDSN is PostgresDSN on the Citus coordinator. Its tables are split
// into 4 shards each (Citus makes 32 by default), which is enough to spread
// merchants over both workers and keeps a test's migration short.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return schemaDSN(t, CitusDSNEnv, map[string]string{"options": "-c citus.shard_count=4"})
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
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
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
