package storetest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"testing"
)

// servers are the variables of the servers the tests pool schemas on.
func servers(t *testing.T) []string {
	var out []string
	for _, env := range []string{DSNEnv, CitusDSNEnv} {
		if os.Getenv(env) != "" {
			out = append(out, env)
		}
	}
	if len(out) == 0 {
		t.Skip("no PostgreSQL server to pool schemas on")
	}
	return out
}

// schemaOf returns the schema a DSN's search_path names.
func schemaOf(t *testing.T, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

// TestEmptiedSchemaIsAsNew: a pooled schema, emptied for the next test,
// holds no rows, those of the append-only tables too, and numbers rows
// from 1 again, while its record of migrations stays.
func TestEmptiedSchemaIsAsNew(t *testing.T) {
	t.Parallel()
	for _, env := range servers(t) {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := serverPool(t, env)
			d := p.take(t)
			db, err := sql.Open("pgx", d)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var migrations int
			if err := db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&migrations); err != nil || migrations == 0 {
				t.Fatalf("%d migrations recorded (%v)", migrations, err)
			}
			for _, s := range []string{
				`INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at) VALUES ('m1', 'M', 'AU', 'UTC', 's', 0)`,
				`INSERT INTO audit_log (merchant_id, actor, action, subject, detail, client, at) VALUES ('m1', 'a', 'b', 'c', 'd', 'e', 0)`,
				`INSERT INTO audit_log (merchant_id, actor, action, subject, detail, client, at) VALUES ('m1', 'a', 'b', 'c', 'd', 'e', 0)`,
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			if err := p.empty(ctx, schemaOf(t, d)); err != nil {
				t.Fatalf("empty: %v", err)
			}
			for _, table := range []string{"merchants", "audit_log"} {
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %d rows (%v) after emptying", table, n, err)
				}
			}
			var again int
			if err := db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&again); err != nil || again != migrations {
				t.Errorf("%d migrations recorded after emptying (%v), want %d", again, err, migrations)
			}
			var id int64
			if _, err := db.Exec(`INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at) VALUES ('m1', 'M', 'AU', 'UTC', 's', 0)`); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`INSERT INTO audit_log (merchant_id, actor, action, subject, detail, client, at) VALUES ('m1', 'a', 'b', 'c', 'd', 'e', 0) RETURNING id`).Scan(&id); err != nil || id != 1 {
				t.Errorf("first audit_log row after emptying: id %d (%v), want 1", id, err)
			}
		})
	}
}

// TestChangedSchemaIsDropped: a schema whose tables a test changed is not
// given to another test; it is dropped when the test ends.
func TestChangedSchemaIsDropped(t *testing.T) {
	t.Parallel()
	for _, env := range servers(t) {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			p := serverPool(t, env)
			var changed, kept string
			t.Run("test", func(t *testing.T) {
				d := p.take(t)
				changed, kept = schemaOf(t, d), schemaOf(t, p.take(t))
				db, err := sql.Open("pgx", d)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if _, err := db.Exec(`ALTER TABLE merchants ADD COLUMN only_here TEXT`); err != nil {
					t.Fatal(err)
				}
			})
			var exists bool
			if err := p.admin.QueryRow(`SELECT count(*) > 0 FROM pg_namespace WHERE nspname = $1`, changed).Scan(&exists); err != nil || exists {
				t.Errorf("the changed schema %s exists after its test (%v)", changed, err)
			}
			var pooled bool
			if err := p.admin.QueryRow(`SELECT count(*) > 0 FROM `+poolTable+` WHERE name = $1`, kept).Scan(&pooled); err != nil || !pooled {
				t.Errorf("the unchanged schema %s left the pool after its test (%v)", kept, err)
			}
		})
	}
}
