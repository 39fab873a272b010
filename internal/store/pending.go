package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrNotRun is the error of Pending.Get before its statement has run: the
// read was sent ahead (SendRow) and has not gone to the server yet. Read it
// after a later statement that goes there (QueryRowContext, Query,
// ExecContext), ReadSent, or the commit. Reading it earlier is a mistake
// of the code, not of the data, so it also fails the transaction: it can
// never commit on a value that was not read.
var ErrNotRun = errors.New("a sent read was used before its statement ran")

// Pending is the result of a read sent ahead (SendRow, SendValue,
// SendQuery, SendRowLate): its value is there once the statement has run,
// with the next statement that goes to the server. Get before then fails
// with ErrNotRun, on every database (pipeline.go).
type Pending[T any] struct {
	tx    *Tx
	query string
	done  bool
	v     T
	err   error
}

// Get returns the statement's result, or why there is none: its own
// failure, the failure of a statement sent before it (the transaction's),
// or ErrNotRun when it has not run yet.
func (p *Pending[T]) Get() (T, error) {
	var zero T
	if !p.done {
		return zero, p.tx.failWith(fmt.Errorf("%w: %s", ErrNotRun, oneLine(p.query)))
	}
	if p.err != nil {
		return zero, p.err
	}
	return p.v, nil
}

// set records the statement's result.
func (p *Pending[T]) set(v T) { p.v, p.err, p.done = v, nil, true }

// settle records why the statement has no result.
func (p *Pending[T]) settle(err error) {
	var zero T
	p.v, p.err, p.done = zero, err, true
}

// SendRow sends a query that returns exactly one row, read by scan, with
// the next statement that goes to the server (Pipelining): the row is in
// the Pending once that statement has returned. No row fails the
// transaction (sql.ErrNoRows), as any error of a sent statement does.
func SendRow[T any](ctx context.Context, tx *Tx, query string, args []any, scan func(Row) (T, error)) (*Pending[T], error) {
	p := &Pending[T]{tx: tx, query: query}
	tx.statements++
	return p, tx.enqueue(ctx, queued{sql: query, args: args, settle: p.settle, read: func(rows rowSet) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		v, err := scan(rows)
		if err != nil {
			return err
		}
		p.set(v)
		return nil
	}})
}

// SendValue is SendRow for a query of one row of one column.
func SendValue[T any](ctx context.Context, tx *Tx, query string, args ...any) (*Pending[T], error) {
	return SendRow(ctx, tx, query, args, scanValue[T])
}

// scanValue reads a row of one column.
func scanValue[T any](row Row) (T, error) {
	var v T
	err := row.Scan(&v)
	return v, err
}

// SendQuery is SendRow for a query of any number of rows, each read by
// scan, in order: a statement whose rows the transaction needs only after
// a later statement has gone to the server. Statements still run in
// order, each on its own snapshot: a query sent after another sees what
// committed before it ran.
func SendQuery[T any](ctx context.Context, tx *Tx, query string, args []any, scan func(Row) (T, error)) (*Pending[[]T], error) {
	p := &Pending[[]T]{tx: tx, query: query}
	tx.statements++
	return p, tx.enqueue(ctx, queued{sql: query, args: args, settle: p.settle, read: func(rows rowSet) error {
		var out []T
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		p.set(out)
		return nil
	}})
}

// SendRowLate is SendRow for a row its caller can do without, read once
// the transaction has committed (in an AfterCommit hook): it may go to the
// server with the COMMIT, so it costs no round trip of its own even as a
// transaction's last statement. The statement's failure fails the
// transaction as any other's; a row that is missing or cannot be scanned
// fails only Get.
func SendRowLate[T any](ctx context.Context, tx *Tx, query string, args []any, scan func(Row) (T, error)) (*Pending[T], error) {
	p := &Pending[T]{tx: tx, query: query}
	tx.statements++
	return p, tx.enqueue(ctx, queued{sql: query, args: args, late: true, settle: p.settle, read: func(rows rowSet) error {
		if !rows.Next() {
			p.settle(sql.ErrNoRows)
			return rows.Err()
		}
		if v, err := scan(rows); err != nil {
			p.settle(err)
		} else {
			p.set(v)
		}
		return rows.Err()
	}})
}

// oneLine is a statement's text on one line, cut short, for an error.
func oneLine(query string) string {
	s := strings.Join(strings.Fields(query), " ")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
