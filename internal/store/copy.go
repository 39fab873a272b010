package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Copy copies every row of src into dst, a database of the same schema
// version that holds nothing yet: how an installation moves from SQLite to
// PostgreSQL (or Citus), or back (payd copy). It reads src in one snapshot
// and writes dst in one transaction, so a copy that fails leaves dst empty;
// rows written to src after the snapshot are not copied, so the servers on
// src are stopped first. Integer ids are kept, and on PostgreSQL the
// sequences that number them are moved past them.
func Copy(ctx context.Context, src, dst *DB, opt CopyOptions) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("copy: %w", err)
		}
	}()
	srcVersions, err := versions(ctx, src.write)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	dstVersions, err := versions(ctx, dst.write)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	if !slices.Equal(srcVersions, dstVersions) {
		return fmt.Errorf("the source has migrations %v and the target %v; migrate both with this build first (payd migrate)", srcVersions, dstVersions)
	}
	tables, err := dst.copyTables(ctx)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	srcTables, err := src.copyTables(ctx)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	srcColumns := map[string][]column{}
	for _, t := range srcTables {
		srcColumns[t.name] = t.columns
	}
	for _, t := range tables {
		have, ok := srcColumns[t.name]
		if !ok {
			return fmt.Errorf("the source has no table %s", t.name)
		}
		for _, c := range t.columns {
			if !slices.ContainsFunc(have, func(h column) bool { return h.name == c.name }) {
				return fmt.Errorf("the source's %s has no column %s", t.name, c.name)
			}
		}
	}

	in, err := src.write.BeginTx(ctx, &sql.TxOptions{ReadOnly: src.dialect == Postgres, Isolation: snapshot(src.dialect)})
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer in.Rollback()
	out, err := dst.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer func() {
		if err != nil {
			out.Rollback()
		}
	}()
	switch {
	case dst.Citus():
		err = citusTx(ctx, out)
	case dst.dialect == SQLite:
		_, err = out.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`)
	}
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	for _, t := range tables {
		var n int
		if err := out.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM %q LIMIT 1) x`, t.name)).Scan(&n); err != nil {
			return fmt.Errorf("target: %s: %w", t.name, err)
		}
		if n > 0 {
			return fmt.Errorf("the target's %s holds rows; copy into a database that holds nothing yet", t.name)
		}
	}
	for _, t := range tables {
		rows, err := copyTable(ctx, in, out, t, dst.dialect)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if opt.Progress != nil {
			opt.Progress(t.name, rows)
		}
	}
	if dst.dialect == Postgres {
		if err := advanceSequences(ctx, out); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	if opt.Finish != nil {
		if err := opt.Finish(ctx, out, dst); err != nil {
			return err
		}
	}
	return out.Commit()
}

// CopyOptions are Copy's hooks.
type CopyOptions struct {
	// Progress, if set, hears each table copied and its row count.
	Progress func(table string, rows int64)
	// Finish, if set, runs in the target's transaction after the rows are
	// in: where the two dialects keep the same data in different rows, the
	// package whose rule that is fits them to the target (ledger.FitCopy).
	Finish func(ctx context.Context, tx *sql.Tx, dst *DB) error
}

// snapshot is the isolation level under which a read transaction sees one
// state of the whole database: SQLite's transactions always do.
func snapshot(d Dialect) sql.IsolationLevel {
	if d == Postgres {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault
}

// copyBatchValues bounds the values of one multi-row INSERT (SQLite takes
// 32,766 parameters, PostgreSQL 65,535).
const copyBatchValues = 30_000

// copyBatchRows bounds its rows, so that a table of large values (KYC
// documents, reports) is not held in memory whole.
const copyBatchRows = 200

// copyTable copies t's rows from in to out and returns how many.
func copyTable(ctx context.Context, in, out *sql.Tx, t table, dst Dialect) (int64, error) {
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = fmt.Sprintf("%q", c.name)
	}
	list := strings.Join(names, ", ")
	rows, err := in.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM %q`, list, t.name))
	if err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	defer rows.Close()
	perBatch := min(copyBatchRows, copyBatchValues/len(names))
	var (
		args  []any
		count int64
	)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, `INSERT INTO %q (%s) VALUES `, t.name, list)
		for r := 0; r < len(args)/len(names); r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := range names {
				if c > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", r*len(names)+c+1)
			}
			b.WriteByte(')')
		}
		_, err := out.ExecContext(ctx, b.String(), args...)
		args = args[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return count, fmt.Errorf("read: %w", err)
		}
		for i, c := range t.columns {
			v, err := convertValue(vals[i], c.kind, dst)
			if err != nil {
				return count, fmt.Errorf("column %s: %w", c.name, err)
			}
			args = append(args, v)
		}
		count++
		if len(args) >= perBatch*len(names) {
			if err := flush(); err != nil {
				return count, fmt.Errorf("write: %w", err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return count, fmt.Errorf("read: %w", err)
	}
	if err := flush(); err != nil {
		return count, fmt.Errorf("write: %w", err)
	}
	return count, nil
}

// convertValue turns a value read from one dialect into what the other's
// column of kind takes: SQLite keeps booleans as integers and hands text
// where PostgreSQL would hand bytes.
func convertValue(v any, kind string, dst Dialect) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if dst == SQLite {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case int64:
		if kind == "boolean" {
			return x != 0, nil
		}
	case string:
		if kind == "bytea" || kind == "blob" {
			return []byte(x), nil
		}
	case []byte:
		if kind != "bytea" && kind != "blob" {
			return string(x), nil
		}
	}
	return v, nil
}

// advanceSequences moves every sequence that numbers a column past the
// column's largest value, so that rows the target numbers itself do not
// take the copied ids.
func advanceSequences(ctx context.Context, tx *sql.Tx) error {
	type col struct{ table, column string }
	cols, err := queryAll(ctx, tx, `SELECT t.relname, a.attname FROM pg_class s
		JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
		JOIN pg_class t ON t.oid = d.refobjid
		JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		WHERE s.relkind = 'S' AND s.relnamespace = current_schema()::regnamespace ORDER BY 1, 2`, func(r *sql.Rows, c *col) error { return r.Scan(&c.table, &c.column) })
	if err != nil {
		return err
	}
	for _, c := range cols {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(%q) AS m FROM %q) x WHERE m IS NOT NULL`, c.column, c.table), c.table, c.column); err != nil {
			return fmt.Errorf("sequence of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// versions lists the migrations applied to a database.
func versions(ctx context.Context, db *sql.DB) ([]int, error) {
	return QueryColumn[int](ctx, db, `SELECT version FROM schema_migrations ORDER BY version`)
}

// table is one table Copy copies, with its columns.
type table struct {
	name    string
	columns []column
}

type column struct {
	name string
	kind string // its declared type, lower case: "boolean", "bytea", "blob", …
}

// copyTables lists db's tables but schema_migrations, parents before the
// tables whose foreign keys point at them.
func (db *DB) copyTables(ctx context.Context) ([]table, error) {
	var listTables, listColumns, listKeys string
	if db.dialect == Postgres {
		listTables = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
		listColumns = `SELECT column_name, lower(data_type) FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`
		listKeys = `SELECT p.relname FROM pg_constraint k JOIN pg_class p ON p.oid = k.confrelid
			WHERE k.contype = 'f' AND k.conrelid = to_regclass($1)`
	} else {
		listTables = `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1`
		listColumns = `SELECT name, lower(type) FROM pragma_table_xinfo($1) WHERE hidden = 0 ORDER BY cid`
		listKeys = `SELECT "table" FROM pragma_foreign_key_list($1)`
	}
	names, err := QueryColumn[string](ctx, db.write, listTables)
	if err != nil {
		return nil, err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "schema_migrations" })
	byName := map[string]table{}
	parents := map[string][]string{}
	for _, n := range names {
		columns, err := queryAll(ctx, db.write, listColumns, func(r *sql.Rows, c *column) error { return r.Scan(&c.name, &c.kind) }, n)
		if err != nil {
			return nil, err
		}
		t := table{name: n, columns: columns}
		byName[n] = t
		if parents[n], err = QueryColumn[string](ctx, db.write, listKeys, n); err != nil {
			return nil, err
		}
	}
	var out []table
	for _, n := range parentsFirst(names, parents) {
		out = append(out, byName[n])
	}
	return out, nil
}
