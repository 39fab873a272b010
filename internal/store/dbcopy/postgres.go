package dbcopy

import (
	"context"
	"database/sql"
	"fmt"

	"payd/internal/store/migrate"
)

// postgresSide is a PostgreSQL (or Citus) database's side in a copy.
type postgresSide struct {
	db    *sql.DB
	citus bool
}

func (s postgresSide) pool() *sql.DB { return s.db }

func (s postgresSide) tables(ctx context.Context) ([]table, map[string][]string, error) {
	return catalog(ctx, s.db,
		`SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
		`SELECT column_name, lower(data_type) FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
		`SELECT p.relname FROM pg_constraint k JOIN pg_class p ON p.oid = k.confrelid
			WHERE k.contype = 'f' AND k.conrelid = to_regclass($1)`)
}

// snapshot reads at REPEATABLE READ, PostgreSQL's one snapshot of the
// whole database for the transaction.
func (s postgresSide) snapshot(ctx context.Context) (*sql.Tx, error) {
	return s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
}

// fill prepares the transaction for distributed tables on Citus
// (migrate.PrepareCitus).
func (s postgresSide) fill(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil || !s.citus {
		return tx, err
	}
	if err := migrate.PrepareCitus(ctx, tx); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// value turns SQLite's integer booleans into booleans.
func (s postgresSide) value(v any, kind string) any {
	if n, ok := v.(int64); ok && kind == "boolean" {
		return n != 0
	}
	return bytesOrText(v, kind)
}

// renumber moves every sequence that numbers a column past the column's
// largest value, so that rows the target numbers itself do not take the
// copied ids.
func (s postgresSide) renumber(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT t.relname, a.attname FROM pg_class s
		JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
		JOIN pg_class t ON t.oid = d.refobjid
		JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		WHERE s.relkind = 'S' AND s.relnamespace = current_schema()::regnamespace ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	type col struct{ table, column string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.column); err != nil {
			rows.Close()
			return err
		}
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range cols {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(%q) AS m FROM %q) x WHERE m IS NOT NULL`, c.column, c.table), c.table, c.column); err != nil {
			return fmt.Errorf("sequence of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}
