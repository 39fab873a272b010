// Package migrate is payd's schema: the numbered migrations embedded for
// each dialect (migrations/sqlite, migrations/postgres), and Apply, which
// applies those not yet applied, once each, however many processes start
// at once. On Citus it distributes the schema by merchant as it goes
// (citus.go), running each migration's statements one at a time (SplitSQL).
//
// Package store runs it (store.DB.Migrate) and answers, through its
// dialects' drivers, what differs in migrating (Database): how other
// processes are kept waiting, and whether a round that failed for another
// process's migration runs again.
package migrate

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var files embed.FS

// LockID is the PostgreSQL advisory lock that serialises migrations when
// several payd processes start at once. The tests' schema changes take it
// too (storetest): on Citus two at once in one database break each other.
const LockID = 7_201_118_406

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations of a dialect ("sqlite",
// "postgres") in order.
func Migrations(dialect string) ([]Migration, error) {
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and _", name)
		}
		body, err := fs.ReadFile(files, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Database is what migrating needs of a database, which each of store's
// dialects answers.
type Database interface {
	// Conn is a connection of the write path, held for one round.
	Conn(ctx context.Context) (*sql.Conn, error)
	// Lock, on conn, makes other processes that migrate wait until
	// release, calling wait once first when it has to wait for one itself.
	// SQLite has no such lock (Again).
	Lock(ctx context.Context, conn *sql.Conn, wait func()) (release func(), err error)
	// Again reports whether a round that failed with err runs again: it
	// waited out the busy timeout behind another process's migration.
	Again(err error) bool
	// Citus reports whether the database on conn has the citus extension.
	Citus(ctx context.Context, conn *sql.Conn) (bool, error)
}

// maxWait bounds how long Apply waits for another process's migration.
const maxWait = 5 * time.Minute

// Apply applies those of ms not yet applied to db, each in its own
// transaction, and returns their names. It is safe to call from several
// processes at once: they wait for each other (Database.Lock), or a round
// that met another one's migration runs again and finds done what the
// other did (Database.Again; rebuilding every table can take longer than a
// busy timeout, 0021 does). wait, if set, is called once when db has to
// wait for another process, so that a start that waits says why.
func Apply(ctx context.Context, db Database, ms []Migration, wait func()) (applied []string, err error) {
	deadline := time.Now().Add(maxWait)
	for {
		more, err := round(ctx, db, ms, wait)
		applied = append(applied, more...)
		if err == nil || !db.Again(err) || time.Now().After(deadline) {
			return applied, err
		}
		select {
		case <-ctx.Done():
			return applied, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// round applies those of ms not yet applied, on one connection.
func round(ctx context.Context, db Database, ms []Migration, wait func()) (applied []string, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	release, err := db.Lock(ctx, conn, wait)
	if err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", err)
	}
	defer release()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	recorded, err := Applied(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	done := map[int]bool{}
	for _, v := range recorded {
		done[v] = true
	}
	citus, err := db.Citus(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		ok, err := apply(ctx, conn, m, citus)
		if err != nil {
			return applied, err
		}
		if ok {
			applied = append(applied, m.Name)
		}
	}
	if citus {
		return applied, distributeAll(ctx, conn)
	}
	return applied, nil
}

// Applied lists the versions of the migrations applied to the database
// q reads, in order.
func Applied(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// apply applies m and reports whether it did: false when another process
// applied it first.
func apply(ctx context.Context, conn *sql.Conn, m Migration, citus bool) (bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if citus {
		if err := PrepareCitus(ctx, tx); err != nil {
			tx.Rollback()
			return false, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	// Another process may have applied it between our read and our lock.
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = $1", m.Version).Scan(&n); err != nil || n > 0 {
		tx.Rollback()
		if err != nil {
			return false, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		return false, nil
	}
	for _, step := range steps(m, citus) {
		var err error
		if step == DistributeMarker {
			err = distribute(ctx, tx)
		} else {
			_, err = tx.ExecContext(ctx, step)
		}
		if err != nil {
			tx.Rollback()
			return false, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		tx.Rollback()
		return false, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	return true, nil
}

// steps is what applying m runs: its whole script; on Citus its statements
// one at a time (SplitSQL says why), with DistributeMarker where the tables
// created before it are distributed (citus.go). Elsewhere the marker is a
// comment.
func steps(m Migration, citus bool) []string {
	if !citus {
		return []string{m.SQL}
	}
	var out []string
	for i, part := range strings.Split(m.SQL, DistributeMarker) {
		if i > 0 {
			out = append(out, DistributeMarker)
		}
		out = append(out, SplitSQL(part)...)
	}
	return out
}
