package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// Reader runs reads outside a transaction: on SQLite on the read pool,
// whose statements it keeps prepared; on PostgreSQL on the pool.
type Reader struct {
	pool querier
	// timeout, when set, bounds each one-row read and each statement
	// (Options.Timeout).
	timeout time.Duration
}

// bounded is ctx bounded by the reader's timeout, if it has one.
func (r *Reader) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, r.timeout)
}

// QueryContext runs a query.
func (r *Reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row, bounded by
// the reader's timeout until the row is scanned.
func (r *Reader) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	ctx, cancel := r.bounded(ctx)
	return boundedRow{r.pool.QueryRowContext(ctx, query, args...), cancel}
}

// boundedRow is a row whose read's bound ends once it is scanned.
type boundedRow struct {
	Row
	cancel context.CancelFunc
}

func (b boundedRow) Scan(dest ...any) error {
	defer b.cancel()
	return b.Row.Scan(dest...)
}

// ExecContext runs a statement (on SQLite's read pool, only reads
// succeed), bounded by the reader's timeout.
func (r *Reader) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, cancel := r.bounded(ctx)
	defer cancel()
	return r.pool.ExecContext(ctx, query, args...)
}

// Query, QueryRow and Exec are the context-free forms, for tests and tools.
func (r *Reader) Query(query string, args ...any) (*sql.Rows, error) {
	return r.QueryContext(context.Background(), query, args...)
}

// QueryRow is QueryRowContext without a context.
func (r *Reader) QueryRow(query string, args ...any) Row {
	return r.QueryRowContext(context.Background(), query, args...)
}

// Exec is ExecContext without a context.
func (r *Reader) Exec(query string, args ...any) (sql.Result, error) {
	return r.ExecContext(context.Background(), query, args...)
}

// Limit is a LIMIT clause of n rows, written into the statement rather than
// bound as a parameter. SQLite reads a bound LIMIT's value when it prepares
// the statement, and prepares it anew each time that parameter is bound
// again: a claim run hundreds of times a second would spend its time (on
// the writer) parsing itself. A statement per distinct n is cached
// instead, and claims take few distinct values.
func Limit(n int) string { return " LIMIT " + strconv.Itoa(n) }
