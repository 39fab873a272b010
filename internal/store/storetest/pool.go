package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/migrate"
)

// A test's PostgreSQL or Citus schema comes from a pool the test processes
// share, kept in a table of the database's public schema. Migrating a
// schema takes seconds on Citus, where migrations and drops go one at a
// time in the database (two schema changes at once broke Citus: "cache
// lookup failed for index", "relation merchants is not distributed"), and
// the suites use hundreds. A test takes a free schema migrated by this
// build's migrations and empties it of the last test's rows; when the test
// ends the schema is free again, unless the test changed its tables, and
// then it is dropped. A test of migrating takes a fresh, unmigrated schema
// (Target.Unmigrated) that is dropped after it.

// poolTable lists the pooled schemas: the build whose migrations made each,
// the shape of its tables then (schemaShape), and since when a test has it
// (NULL: free).
const poolTable = "public.payd_test_schemas"

// staleClaim is how long a schema stays taken by a test process that
// stopped without freeing it before it is dropped.
const staleClaim = 3 * time.Hour

// pool is the pool of one database server.
type pool struct {
	base  url.URL // DSN of the database, with the tests' options
	admin *sql.DB // to the database, search_path as given there
	citus bool
	build string // this build's migrations and the options
}

var pools struct {
	sync.Mutex
	byEnv map[string]*pool
}

// poolOf returns the pool of the database env points at, made ready once
// per process: its table made, and schemas dropped that no test will take
// again (another build's, or taken by a process that did not free them).
func poolOf(env string) (*pool, error) {
	pools.Lock()
	defer pools.Unlock()
	if p := pools.byEnv[env]; p != nil {
		return p, nil
	}
	base, err := url.Parse(os.Getenv(env))
	if err != nil {
		return nil, err
	}
	q := base.Query()
	for k, v := range serverOptions[env] {
		q.Set(k, v)
	}
	// A space as %20: pgx reads a "+" in the query as itself.
	base.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	build, err := migrationsHash(store.Postgres)
	if err != nil {
		return nil, err
	}
	admin, err := sql.Open("pgx", os.Getenv(env))
	if err != nil {
		return nil, err
	}
	p := &pool{base: *base, admin: admin, build: build + " " + base.RawQuery}
	if err := p.prepare(); err != nil {
		admin.Close()
		return nil, err
	}
	if pools.byEnv == nil {
		pools.byEnv = map[string]*pool{}
	}
	pools.byEnv[env] = p
	return p, nil
}

// serverOptions are the connection parameters the tests' schemas on a
// server are made and used with, by the variable naming the server.
var serverOptions = map[string]map[string]string{
	// A test's Citus tables are split into 2 shards each (Citus makes 32
	// by default), one on each worker, which spreads merchants over both
	// and keeps a migration short: each shard is a table to create.
	CitusDSNEnv: {"options": "-c citus.shard_count=2"},
}

// prepare makes the pool's table and drops the schemas no test will take.
func (p *pool) prepare() error {
	ctx := context.Background()
	if err := p.admin.QueryRowContext(ctx, `SELECT count(*) > 0 FROM pg_extension WHERE extname = 'citus'`).Scan(&p.citus); err != nil {
		return err
	}
	err := p.schemaChange(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+poolTable+` (
			name TEXT PRIMARY KEY, build TEXT NOT NULL, shape TEXT, claimed_at TIMESTAMPTZ)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("make %s: %w", poolTable, err)
	}
	stale, err := store.QueryColumn[string](ctx, p.admin, `SELECT name FROM `+poolTable+` WHERE `+staleWhere, p.build, staleClaim.Seconds())
	if err != nil {
		return err
	}
	for _, s := range stale {
		p.dropStale(s) // what is not dropped now is next time
	}
	return nil
}

// staleWhere picks the pooled schemas no test will take again: another
// build's that are free, and any taken by a process that did not free them.
const staleWhere = `(build <> $1 AND claimed_at IS NULL) OR claimed_at < now() - $2 * interval '1 second'`

// dropStale drops schema when it is still stale as the drop starts: its
// row is deleted (and so locked) under the same condition first, so that a
// process of another build that claims it meanwhile keeps it (its claim
// commits first and the condition no longer holds, or it skips the locked
// row). Builds differ when tests of two checkouts share a server.
func (p *pool) dropStale(schema string) error {
	ctx := context.Background()
	return p.schemaChange(ctx, func(tx *sql.Tx) error {
		var name string
		err := tx.QueryRowContext(ctx, `DELETE FROM `+poolTable+` WHERE name = $3 AND (`+staleWhere+`) RETURNING name`,
			p.build, staleClaim.Seconds(), schema).Scan(&name)
		if err == sql.ErrNoRows {
			return nil // taken meanwhile
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
		return err
	})
}

// schemaChange runs fn in a transaction holding the lock store.DB.Migrate
// holds, so that no two schema changes in the database run at once.
func (p *pool) schemaChange(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := p.admin.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The lock is waited for as store.DB.Migrate waits for it: a migration of
	// a whole schema holds it, on Citus under the parallel tests' load for
	// more than 30 s. Then a backend of a test that has ended may still hold
	// a lock on the schema for a moment; a change that waits longer for
	// that gives up rather than hold every other test's migration.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrate.LockID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '30s'`); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// drop drops a schema and its row in the pool, and reports why not.
func (p *pool) drop(schema string) error {
	ctx := context.Background()
	return p.schemaChange(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM `+poolTable+` WHERE name = $1`, schema)
		return err
	})
}

// take returns a pooled schema for the test: a free one emptied, or a new
// one migrated. It is freed, or dropped, when the test ends.
func (p *pool) take(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	schema, err := p.claim(ctx)
	if err != nil {
		t.Fatalf("take a pooled schema: %v", err)
	}
	if schema == "" {
		if schema, err = p.add(ctx); err != nil {
			t.Fatalf("make a pooled schema: %v", err)
		}
	}
	t.Cleanup(func() {
		if err := p.release(ctx, schema); err != nil {
			t.Logf("pooled schema %s: %v", schema, err)
		}
	})
	return p.dsn(schema)
}

// claim takes a free schema of this build and empties it; "" when none is
// free. A schema that cannot be emptied is dropped.
func (p *pool) claim(ctx context.Context) (string, error) {
	for {
		var schema string
		err := p.admin.QueryRowContext(ctx, `UPDATE `+poolTable+` SET claimed_at = now()
			WHERE name = (SELECT name FROM `+poolTable+` WHERE build = $1 AND claimed_at IS NULL
				ORDER BY name LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING name`, p.build).Scan(&schema)
		if err == sql.ErrNoRows {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if err := p.empty(ctx, schema); err == nil {
			return schema, nil
		}
		if err := p.drop(schema); err != nil {
			return "", err
		}
	}
}

// empty deletes every row of a schema but its record of migrations, and
// starts its sequences again, which leaves it as a fresh schema migrated
// (the migrations insert no rows of their own). The tables' triggers are
// off meanwhile (session_replication_role): the foreign keys' and the
// append-only tables' guards.
func (p *pool) empty(ctx context.Context, schema string) error {
	tx, err := p.admin.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	sets := []string{`SET LOCAL lock_timeout = '30s'`, `SET LOCAL search_path TO ` + schema}
	if p.citus {
		// Sent to the workers too, where the shards are.
		sets = append(sets, `SET LOCAL citus.multi_shard_modify_mode TO sequential`, `SET LOCAL citus.propagate_set_commands TO 'local'`)
	}
	sets = append(sets, `SET LOCAL session_replication_role TO replica`)
	for _, s := range sets {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	// On Citus the coordinator keeps shards of the reference tables in the
	// schema too; their table (the shell) is emptied instead.
	notShard := `true`
	if p.citus {
		notShard = `NOT pg_catalog.relation_is_a_known_shard(c.oid)`
	}
	tables, err := store.QueryColumn[string](ctx, tx, `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = $1::text::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations' AND `+notShard, schema)
	if err != nil {
		return err
	}
	for _, table := range tables {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %q`, table)); err != nil {
			return fmt.Errorf("empty %s: %w", table, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `SELECT setval(c.oid, 1, false) FROM pg_class c
		WHERE c.relnamespace = $1::text::regnamespace AND c.relkind = 'S'`, schema); err != nil {
		return err
	}
	return tx.Commit()
}

// add makes a schema, migrates it, and records it in the pool as taken.
func (p *pool) add(ctx context.Context) (string, error) {
	schema := "t_" + strings.ToLower(store.RandomID(12))
	err := p.schemaChange(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+poolTable+` (name, build, claimed_at) VALUES ($1, $2, now())`, schema, p.build)
		return err
	})
	if err != nil {
		return "", err
	}
	db, err := store.Open(ctx, p.dsn(schema), store.Options{})
	if err == nil {
		_, err = db.Migrate(ctx)
		db.Close()
	}
	if err == nil {
		_, err = p.admin.ExecContext(ctx, `UPDATE `+poolTable+` SET shape = (`+schemaShape+`) WHERE name = $1`, schema)
	}
	if err != nil {
		p.drop(schema)
		return "", err
	}
	return schema, nil
}

// release frees a schema the test had, or drops it when the test changed
// its tables or functions.
func (p *pool) release(ctx context.Context, schema string) error {
	var same bool
	err := p.admin.QueryRowContext(ctx, `SELECT coalesce(shape = (`+schemaShape+`), false) FROM `+poolTable+` WHERE name = $1`, schema).Scan(&same)
	if err != nil {
		return errors.Join(err, p.drop(schema))
	}
	if !same {
		return p.drop(schema)
	}
	_, err = p.admin.ExecContext(ctx, `UPDATE `+poolTable+` SET claimed_at = NULL WHERE name = $1`, schema)
	return err
}

// schemaShape is a digest of the schema named by $1: its relations, their
// columns, constraints and triggers, and its functions.
const schemaShape = `SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (
	SELECT 'r ' || c.relname || ' ' || c.relkind::text FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace
	UNION ALL SELECT 'a ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = $1::text::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT 'k ' || k.conname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.connamespace = $1::text::regnamespace
	UNION ALL SELECT 't ' || g.tgname || ' ' || g.tgenabled::text FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid WHERE c.relnamespace = $1::text::regnamespace
	UNION ALL SELECT 'f ' || f.proname || ' ' || md5(f.prosrc) FROM pg_proc f WHERE f.pronamespace = $1::text::regnamespace
) shape(x)`

// fresh makes an empty schema for the test and drops it when the test ends.
func (p *pool) fresh(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	schema := "t_" + strings.ToLower(store.RandomID(12))
	err := p.schemaChange(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE SCHEMA `+schema)
		return err
	})
	if err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := p.drop(schema); err != nil {
			t.Logf("schema %s is left behind: %v", schema, err)
		}
	})
	return p.dsn(schema)
}

// dsn returns the DSN of one of the pool's schemas.
func (p *pool) dsn(schema string) string {
	u := p.base
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// serverPool returns the pool of the server env points at, skipping the
// test when env is not set.
func serverPool(t testing.TB, env string) *pool {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skip(env + " not set")
	}
	p, err := poolOf(env)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return p
}
