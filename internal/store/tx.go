package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is one write transaction. Work that must happen only once the transaction
// is durable (waking a worker, say) is registered with AfterCommit.
type Tx struct {
	*sql.Tx
	db          *DB
	afterCommit []func()
	// statements counts the statements sent in this transaction (by this
	// caller, in a group commit), for tests that bound round trips.
	statements int
}

// Statements reports how many statements this transaction has sent so far
// through ExecContext, QueryContext and QueryRowContext.
func (tx *Tx) Statements() int { return tx.statements }

// DB returns the database this transaction belongs to (for its dialect helpers).
func (tx *Tx) DB() *DB { return tx.db }

// AfterCommit runs f after a successful commit. It is not run on rollback.
func (tx *Tx) AfterCommit(f func()) { tx.afterCommit = append(tx.afterCommit, f) }

// maxAttempts bounds the retries of a transaction that PostgreSQL aborted for
// a serialization failure or a deadlock; the function is pure with respect to
// the database, so running it again is safe.
const maxAttempts = 4

// Do runs fn in one write transaction and commits it, running fn again
// (up to maxAttempts) when PostgreSQL aborts it for a serialization failure
// or a deadlock. Whatever must be one atomic fact with fn's writes (an
// idempotency claim, say) is written by fn itself, in tx.
func Do[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	for attempt := 1; ; attempt++ {
		var v T
		var err error
		if lane, ok := db.laneFor(ctx); ok {
			err = db.submit(ctx, lane, func(tx *Tx) error {
				var err error
				v, err = fn(tx)
				return err
			})
		} else {
			v, err = runTx(ctx, db, fn)
		}
		if err == nil {
			return v, nil
		}
		if attempt >= maxAttempts || !retryable(err) {
			return zero, err
		}
	}
}

// Exec is Do for work without a result.
func (db *DB) Exec(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := Do(ctx, db, func(tx *Tx) (struct{}, error) { return struct{}{}, fn(tx) })
	return err
}

func runTx[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return zero, fmt.Errorf("begin: %w", err)
	}
	tx := &Tx{Tx: sqlTx, db: db}
	// A panic in fn must not leak the transaction: on SQLite it holds the
	// only write connection, on PostgreSQL its row locks.
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	v, err := fn(tx)
	if err != nil {
		_ = sqlTx.Rollback()
		return zero, err
	}
	if err := sqlTx.Commit(); err != nil {
		return zero, fmt.Errorf("commit: %w", err)
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return v, nil
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return false
}

// IsNoRows reports whether err says a query found no row.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// IsUniqueViolation reports whether err is a unique-constraint failure on either database.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// IsUnavailable reports whether err says the database cannot be reached
// or cannot take writes right now (a lost connection, a server shutting
// down or restarting, a standby during a failover) rather than that the
// statement was wrong: the request may be retried once it is back.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || // shutdown, crash, cannot connect now
			pgErr.Code == "25006" // read-only transaction: a standby
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}
