// Package dbcopy copies a whole payd database into another that holds
// nothing yet, of the same schema version: how an installation moves from
// SQLite to PostgreSQL (or Citus), or back (payd copy). What differs
// between the dialects in reading and filling a database (their catalogs,
// their snapshots, booleans kept as integers, sequences) is each dialect's
// side, in sqlite.go and postgres.go.
package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"payd/internal/store"
	"payd/internal/store/migrate"
)

// Options are Copy's hooks.
type Options struct {
	// Progress, if set, hears each table copied and its row count.
	Progress func(table string, rows int64)
	// Finish, if set, runs in the target's transaction after the rows are
	// in: where the dialects keep the same data in different rows, the
	// package whose rule that is fits them to the target (ledger.FitCopy).
	Finish func(ctx context.Context, tx *sql.Tx, dst *store.DB) error
}

// Copy copies every row of src into dst, a database of the same schema
// version that holds nothing yet. It reads src in one snapshot and writes
// dst in one transaction, so a copy that fails leaves dst empty; rows
// written to src after the snapshot are not copied, so the servers on src
// are stopped first. Integer ids are kept, and the sequences that number
// them on the target are moved past them.
func Copy(ctx context.Context, src, dst *store.DB, opt Options) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("copy: %w", err)
		}
	}()
	from, to := sideOf(src), sideOf(dst)
	tables, err := matchingSchemas(ctx, from, to)
	if err != nil {
		return err
	}
	in, err := from.snapshot(ctx)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer in.Rollback()
	out, err := to.fill(ctx)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer func() {
		if err != nil {
			out.Rollback()
		}
	}()
	if err := holdsNothing(ctx, out, tables); err != nil {
		return err
	}
	for _, t := range tables {
		rows, err := copyTable(ctx, in, out, t, to)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if opt.Progress != nil {
			opt.Progress(t.name, rows)
		}
	}
	if err := to.renumber(ctx, out); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	if opt.Finish != nil {
		if err := opt.Finish(ctx, out, dst); err != nil {
			return err
		}
	}
	return out.Commit()
}

// side is one database's part in a copy: what differs between the
// dialects in reading one and filling one.
type side interface {
	// pool is the database's write path.
	pool() *sql.DB
	// tables lists the database's tables and their columns, with the
	// tables each one's foreign keys point at.
	tables(ctx context.Context) ([]table, map[string][]string, error)
	// snapshot begins a transaction that reads one state of the whole
	// database.
	snapshot(ctx context.Context) (*sql.Tx, error)
	// fill begins the transaction that writes the copy, ready for rows
	// that arrive parents first but whose keys may point anywhere.
	fill(ctx context.Context) (*sql.Tx, error)
	// value turns a value read from any database into what this one's
	// column of kind takes.
	value(v any, kind string) any
	// renumber moves the sequences that number the copied columns past
	// the rows copied.
	renumber(ctx context.Context, tx *sql.Tx) error
}

// sideOf is db's side in a copy.
func sideOf(db *store.DB) side {
	if db.Dialect() == store.SQLite {
		return sqliteSide{db.Pool()}
	}
	return postgresSide{db.Pool(), db.Distributed()}
}

// matchingSchemas checks that src and dst are migrated alike and that src
// has every column dst has, and returns dst's tables, parents first.
func matchingSchemas(ctx context.Context, src, dst side) ([]table, error) {
	srcVersions, err := migrate.Applied(ctx, src.pool())
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	dstVersions, err := migrate.Applied(ctx, dst.pool())
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if !slices.Equal(srcVersions, dstVersions) {
		return nil, fmt.Errorf("the source has migrations %v and the target %v; migrate both with this build first (payd migrate)", srcVersions, dstVersions)
	}
	tables, err := inOrder(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	srcTables, err := inOrder(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	srcColumns := map[string][]column{}
	for _, t := range srcTables {
		srcColumns[t.name] = t.columns
	}
	for _, t := range tables {
		have, ok := srcColumns[t.name]
		if !ok {
			return nil, fmt.Errorf("the source has no table %s", t.name)
		}
		for _, c := range t.columns {
			if !slices.ContainsFunc(have, func(h column) bool { return h.name == c.name }) {
				return nil, fmt.Errorf("the source's %s has no column %s", t.name, c.name)
			}
		}
	}
	return tables, nil
}

// holdsNothing checks that the target's tables are empty.
func holdsNothing(ctx context.Context, out *sql.Tx, tables []table) error {
	for _, t := range tables {
		var n int
		if err := out.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM %q LIMIT 1) x`, t.name)).Scan(&n); err != nil {
			return fmt.Errorf("target: %s: %w", t.name, err)
		}
		if n > 0 {
			return fmt.Errorf("the target's %s holds rows; copy into a database that holds nothing yet", t.name)
		}
	}
	return nil
}

// copyBatchValues bounds the values of one multi-row INSERT (SQLite takes
// 32,766 parameters, PostgreSQL 65,535).
const copyBatchValues = 30_000

// copyBatchRows bounds its rows, so that a table of large values (KYC
// documents, reports) is not held in memory whole.
const copyBatchRows = 200

// copyTable copies t's rows from in to out and returns how many.
func copyTable(ctx context.Context, in, out *sql.Tx, t table, dst side) (int64, error) {
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
		_, err := out.ExecContext(ctx, insertRows(t.name, list, len(names), len(args)/len(names)), args...)
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
			args = append(args, dst.value(vals[i], c.kind))
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

// insertRows is the INSERT of n rows of columns (list, width of them)
// into table.
func insertRows(table, list string, width, n int) string {
	return fmt.Sprintf(`INSERT INTO %q (%s) VALUES `, table, list) + store.ValueRows(n, width)
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

// inOrder lists a side's tables but schema_migrations, parents before the
// tables whose foreign keys point at them.
func inOrder(ctx context.Context, s side) ([]table, error) {
	tables, parents, err := s.tables(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]table{}
	var names []string
	for _, t := range tables {
		if t.name == "schema_migrations" {
			continue
		}
		byName[t.name] = t
		names = append(names, t.name)
	}
	var out []table
	for _, n := range migrate.ParentsFirst(names, parents) {
		out = append(out, byName[n])
	}
	return out, nil
}

// catalog reads a side's tables with its dialect's three catalog queries:
// the tables, a table's columns ($1) and the tables its keys point at ($1).
func catalog(ctx context.Context, pool *sql.DB, listTables, listColumns, listKeys string) ([]table, map[string][]string, error) {
	names, err := store.QueryColumn[string](ctx, pool, listTables)
	if err != nil {
		return nil, nil, err
	}
	var tables []table
	parents := map[string][]string{}
	for _, n := range names {
		rows, err := pool.QueryContext(ctx, listColumns, n)
		if err != nil {
			return nil, nil, err
		}
		t := table{name: n}
		for rows.Next() {
			var c column
			if err := rows.Scan(&c.name, &c.kind); err != nil {
				rows.Close()
				return nil, nil, err
			}
			t.columns = append(t.columns, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		tables = append(tables, t)
		if parents[n], err = store.QueryColumn[string](ctx, pool, listKeys, n); err != nil {
			return nil, nil, err
		}
	}
	return tables, parents, nil
}
