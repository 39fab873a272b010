package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is one write transaction. Work that must happen only once the transaction
// is durable (waking a worker, say) is registered with AfterCommit.
type Tx struct {
	*sql.Tx
	db          *DB
	afterCommit []func()
}

// DB returns the database this transaction belongs to (for its dialect helpers).
func (tx *Tx) DB() *DB { return tx.db }

// AfterCommit runs f after a successful commit. It is not run on rollback.
func (tx *Tx) AfterCommit(f func()) { tx.afterCommit = append(tx.afterCommit, f) }

// ClaimHook lets a request-scoped claim (an Idempotency-Key) take part in the
// transaction that carries the request's effect: Acquire runs first, Complete
// runs last with the transaction's result, both inside the transaction.
type ClaimHook interface {
	Acquire(ctx context.Context, tx *Tx) error
	Complete(ctx context.Context, tx *Tx, result any) error
}

type claimKey struct{}

// WithClaim attaches a claim to ctx; the next transaction run with Do under
// that ctx takes part in it.
func WithClaim(ctx context.Context, c ClaimHook) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// WithoutClaim detaches ctx from any claim, for work done on behalf of a
// request that is not the request's own effect (jobs run by the test clock).
func WithoutClaim(ctx context.Context) context.Context {
	return context.WithValue(ctx, claimKey{}, nil)
}

func claimFrom(ctx context.Context) ClaimHook {
	c, _ := ctx.Value(claimKey{}).(ClaimHook)
	return c
}

// maxAttempts bounds the retries of a transaction that PostgreSQL aborted for
// a serialization failure or a deadlock; the function is pure with respect to
// the database, so running it again is safe.
const maxAttempts = 4

// Do runs fn in one write transaction and commits it. A claim attached to ctx
// (WithClaim) is acquired at the start and completed with fn's result before
// the commit, so the claim and the effect are one atomic fact.
func Do[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	claim := claimFrom(ctx)
	for attempt := 1; ; attempt++ {
		var v T
		var err error
		if lane, ok := db.laneFor(ctx); ok {
			err = db.submit(ctx, lane, func(tx *Tx) error {
				var err error
				v, err = work(ctx, tx, claim, fn)
				return err
			})
		} else {
			v, err = runTx(ctx, db, claim, fn)
		}
		if err == nil {
			return v, nil
		}
		if attempt >= maxAttempts || !retryable(err) {
			return zero, err
		}
	}
}

// work is one transaction's work: the claim, fn, and the claim's completion.
func work[T any](ctx context.Context, tx *Tx, claim ClaimHook, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	if claim != nil {
		if err := claim.Acquire(ctx, tx); err != nil {
			return zero, err
		}
	}
	v, err := fn(tx)
	if err == nil && claim != nil {
		err = claim.Complete(ctx, tx, v)
	}
	if err != nil {
		return zero, err
	}
	return v, nil
}

// Exec is Do for work without a result.
func (db *DB) Exec(ctx context.Context, fn func(tx *Tx) error) error {
	_, err := Do(ctx, db, func(tx *Tx) (struct{}, error) { return struct{}{}, fn(tx) })
	return err
}

func runTx[T any](ctx context.Context, db *DB, claim ClaimHook, fn func(tx *Tx) (T, error)) (T, error) {
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
	v, err := work(ctx, tx, claim, fn)
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

// IsUniqueViolation reports whether err is a unique-constraint failure on either database.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
