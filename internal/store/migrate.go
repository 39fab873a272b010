package store

import (
	"context"
	"database/sql"

	"payd/internal/store/migrate"
)

// Migrate applies every embedded migration not yet applied (package
// migrate), each in its own transaction. It is safe to call from several
// processes at once.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	all, err := migrate.Migrations(string(db.dialect))
	if err != nil {
		return nil, err
	}
	return db.MigrateWith(ctx, all)
}

// MigrateWith applies those of ms not yet applied, as Migrate applies the
// embedded migrations: for the tests of migrating.
func (db *DB) MigrateWith(ctx context.Context, ms []migrate.Migration) ([]string, error) {
	return migrate.Apply(ctx, migrator{db}, ms, db.migrationWait)
}

// Unapplied lists the embedded migrations (their file names) not applied
// to db: every one on a database payd never migrated. Operator commands
// refuse a database that has any (they never migrate: payd serve and payd
// migrate do).
func (db *DB) Unapplied(ctx context.Context) ([]string, error) {
	all, err := migrate.Migrations(string(db.dialect))
	if err != nil {
		return nil, err
	}
	done := map[int]bool{}
	migrated, err := db.drv.migrated(ctx)
	if err != nil {
		return nil, err
	}
	if migrated {
		applied, err := migrate.Applied(ctx, db.Read())
		if err != nil {
			return nil, err
		}
		for _, v := range applied {
			done[v] = true
		}
	}
	var out []string
	for _, m := range all {
		if !done[m.Version] {
			out = append(out, m.Name)
		}
	}
	return out, nil
}

// migrator is what migrating asks of db (migrate.Database), answered by its
// dialect's driver.
type migrator struct{ db *DB }

func (m migrator) Conn(ctx context.Context) (*sql.Conn, error) { return m.db.write.Conn(ctx) }

func (m migrator) Lock(ctx context.Context, conn *sql.Conn, wait func()) (func(), error) {
	return m.db.drv.lockMigrations(ctx, conn, wait)
}

func (m migrator) Again(err error) bool { return m.db.drv.migrateAgain(err) }

func (m migrator) Citus(ctx context.Context, conn *sql.Conn) (bool, error) {
	return m.db.drv.citusOn(ctx, conn)
}
