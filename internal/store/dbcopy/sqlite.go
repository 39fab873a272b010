package dbcopy

import (
	"context"
	"database/sql"
)

// sqliteSide is a SQLite database's side in a copy. Its transactions
// always see one state of the whole database; it keeps booleans as
// integers and numbers its rows without sequences.
type sqliteSide struct{ db *sql.DB }

func (s sqliteSide) pool() *sql.DB { return s.db }

func (s sqliteSide) tables(ctx context.Context) ([]table, map[string][]string, error) {
	return catalog(ctx, s.db,
		`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1`,
		`SELECT name, lower(type) FROM pragma_table_xinfo($1) WHERE hidden = 0 ORDER BY cid`,
		`SELECT "table" FROM pragma_foreign_key_list($1)`)
}

func (s sqliteSide) snapshot(ctx context.Context) (*sql.Tx, error) { return s.db.BeginTx(ctx, nil) }

// fill defers the foreign keys to the commit: rows arrive parents first,
// but a table may point at itself.
func (s sqliteSide) fill(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// value turns booleans into SQLite's integers and text where a blob
// column keeps bytes (and back).
func (s sqliteSide) value(v any, kind string) any {
	if b, ok := v.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return bytesOrText(v, kind)
}

func (s sqliteSide) renumber(context.Context, *sql.Tx) error { return nil }

// bytesOrText hands bytes to a bytea or blob column and text to any other:
// SQLite hands text where PostgreSQL would hand bytes.
func bytesOrText(v any, kind string) any {
	switch x := v.(type) {
	case string:
		if kind == "bytea" || kind == "blob" {
			return []byte(x)
		}
	case []byte:
		if kind != "bytea" && kind != "blob" {
			return string(x)
		}
	}
	return v
}
