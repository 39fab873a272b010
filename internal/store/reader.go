package store

import (
	"context"
	"database/sql"
	"strconv"
)

// Reader runs reads outside a transaction: on SQLite on the read pool,
// whose statements it keeps prepared; on PostgreSQL on the pool.
type Reader struct {
	pool querier
}

// QueryContext runs a query.
func (r *Reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row.
func (r *Reader) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	return r.pool.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement (on SQLite's read pool, only reads succeed).
func (r *Reader) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
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
