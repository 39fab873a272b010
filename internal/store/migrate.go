package store

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
var migrations embed.FS

// MigrationLockID is the PostgreSQL advisory lock that serialises migrations
// when several payd processes start at once. The tests' schema changes take
// it too (storetest): on Citus two at once in one database break each other.
const MigrationLockID = 7_201_118_406

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations of a dialect in order.
func Migrations(d Dialect) ([]Migration, error) {
	dir := path.Join("migrations", string(d))
	entries, err := fs.ReadDir(migrations, dir)
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
		body, err := fs.ReadFile(migrations, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Migrate applies every embedded migration not yet applied, each in its own
// transaction. It is safe to call from several processes at once.
func (db *DB) Migrate(ctx context.Context) (applied []string, err error) {
	// On PostgreSQL an advisory lock makes the other processes wait. SQLite
	// has none: a process that waited out the busy timeout behind another
	// one's migration (rebuilding every table can take longer, 0021 does)
	// tries again, and finds done what the other one did.
	deadline := time.Now().Add(migrateWait)
	all, err := Migrations(db.dialect)
	if err != nil {
		return nil, err
	}
	for {
		more, err := db.migrate(ctx, all)
		applied = append(applied, more...)
		if err == nil || db.dialect != SQLite || !isBusy(err) || time.Now().After(deadline) {
			return applied, err
		}
		select {
		case <-ctx.Done():
			return applied, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// migrateWait bounds how long Migrate waits for another process's migration.
const migrateWait = 5 * time.Minute

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked"))
}

// lockMigrations takes the migration lock on conn, waiting for the process
// that holds it, if one does, to finish its migration: on Citus one
// migration of any schema in the database at a time (see
// MigrationLockID), which can take tens of seconds. Before it waits it says
// so (Options.MigrationWait).
func (db *DB) lockMigrations(ctx context.Context, conn *sql.Conn) error {
	var locked bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", MigrationLockID).Scan(&locked); err != nil || locked {
		return err
	}
	if db.migrationWait != nil {
		db.migrationWait()
	}
	_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", MigrationLockID)
	return err
}

// migrate applies those of all not yet applied.
func (db *DB) migrate(ctx context.Context, all []Migration) (applied []string, err error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if db.dialect == Postgres {
		if err := db.lockMigrations(ctx, conn); err != nil {
			return nil, fmt.Errorf("migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", MigrationLockID)
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	recorded, err := QueryColumn[int](ctx, conn, "SELECT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	done := map[int]bool{}
	for _, v := range recorded {
		done[v] = true
	}
	citus := false
	if db.dialect == Postgres {
		if citus, err = isCitus(ctx, conn); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	}
	for _, m := range all {
		if done[m.Version] {
			continue
		}
		ok, err := applyMigration(ctx, conn, m, citus)
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

// distributeAll distributes, in a transaction of its own, what the
// migrations left undistributed: the whole schema, the first time.
func distributeAll(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("distribute on citus: %w", err)
	}
	if err := citusTx(ctx, tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("distribute on citus: %w", err)
	}
	if err := distribute(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("distribute on citus: %w", err)
	}
	return nil
}

// applyMigration applies m and reports whether it did: false when another
// process applied it first.
func applyMigration(ctx context.Context, conn *sql.Conn, m Migration, citus bool) (bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if citus {
		if err := citusTx(ctx, tx); err != nil {
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
	// On Citus the statements run one at a time (SplitSQL says why), and
	// the tables created before the migration's distribute line are
	// distributed there (store/citus.go); elsewhere the line is a comment.
	steps := []string{m.SQL}
	if citus {
		steps = nil
		for i, part := range strings.Split(m.SQL, distributeMarker) {
			if i > 0 {
				steps = append(steps, distributeMarker)
			}
			steps = append(steps, SplitSQL(part)...)
		}
	}
	for _, step := range steps {
		var err error
		if step == distributeMarker {
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
