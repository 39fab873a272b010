package store

import (
	"context"
	"database/sql"
)

// queryer is what the reads below run on: a *sql.DB, *sql.Conn, *sql.Tx or
// a Reader.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryAll runs query and returns one T per row, each filled by scan.
func queryAll[T any](ctx context.Context, q queryer, query string, scan func(*sql.Rows, *T) error, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// QueryColumn runs a query of one column and returns its values.
func QueryColumn[T any](ctx context.Context, q queryer, query string, args ...any) ([]T, error) {
	return queryAll(ctx, q, query, func(r *sql.Rows, v *T) error { return r.Scan(v) }, args...)
}
