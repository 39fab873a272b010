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
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is one write transaction. Work that must happen only once the transaction
// is durable (waking a worker, say) is registered with AfterCommit.
type Tx struct {
	db *DB
	// sqlTx is the transaction on SQLite; sess the connection and statement
	// queue on PostgreSQL, where payd sends BEGIN and COMMIT itself so that
	// they travel with other statements (see Pipelining).
	sqlTx       *sql.Tx
	sess        *session
	afterCommit []func()
	// failed is the error of a queued statement (Send), which fails the transaction.
	failed error
	// statements and roundTrips count what this transaction (this caller's,
	// in a group commit) has run, and in how many exchanges with the
	// server, for tests that bound them.
	statements, roundTrips int
	// shared marks one caller's part of a group commit (share).
	shared bool
	// ended marks a transaction whose connection went back to the pool (end).
	ended bool
}

// Statements reports how many statements this transaction has run so far.
func (tx *Tx) Statements() int { return tx.statements }

// RoundTrips reports how many exchanges with the server this transaction's
// statements took so far (on SQLite, one a statement).
func (tx *Tx) RoundTrips() int { return tx.roundTrips }

// outcome is how fn's work ended: a queued statement's failure (Send)
// explains whatever error fn made of it.
func (tx *Tx) outcome(err error) error {
	if tx.failed != nil {
		return tx.failed
	}
	return err
}

// DB returns the database this transaction belongs to (for its dialect helpers).
func (tx *Tx) DB() *DB { return tx.db }

// AfterCommit runs f after a successful commit. It is not run on rollback.
func (tx *Tx) AfterCommit(f func()) { tx.afterCommit = append(tx.afterCommit, f) }

// RelaxCommit lets tx's commit return before its record reaches disk (and
// a synchronous standby): PostgreSQL's synchronous_commit = off, for this
// transaction only. It is for a transaction whose loss in a crash only
// makes work be done again that is safe to do again, such as a lease: a
// claim is one commit on the dispatcher's serial path, and waiting for the
// disk there bounded webhook delivery. Commits stay in order: the next
// transaction that waits for the disk makes this one durable too. On SQLite,
// and in a group commit (whose other callers' writes must wait), it does
// nothing.
func (tx *Tx) RelaxCommit(ctx context.Context) error {
	if tx.sess == nil || tx.shared {
		return nil
	}
	return tx.control(ctx, "SET LOCAL synchronous_commit = off")
}

// PlanEachTime has PostgreSQL plan each statement of tx with its values,
// every time (plan_cache_mode = force_custom_plan, for this transaction
// only), never with the generic plan it may otherwise keep for a prepared
// statement after five runs. It is for statements on a table whose size
// swings fast, such as a queue: a generic plan chosen while the table was
// small (a sequential scan and a sort, say) is kept on its connection, and
// with nothing to analyze the table in between, it walked a backlog of
// 20,000 webhook events on every claim (100 ms a claim, deliveries down to
// 100/s). On SQLite it does nothing.
func (tx *Tx) PlanEachTime(ctx context.Context) error {
	if tx.sess == nil {
		return nil
	}
	return tx.control(ctx, "SET LOCAL plan_cache_mode = force_custom_plan")
}

// PlanAsUsual ends PlanEachTime for the rest of tx: its statements may again
// run on the generic plans their connection keeps. A job's claim plans
// afresh, but the jobs it runs in the same transaction are the domain's
// statements, whose planning each time was a tenth of PostgreSQL's work
// settling payouts. On SQLite it does nothing.
func (tx *Tx) PlanAsUsual(ctx context.Context) error {
	if tx.sess == nil {
		return nil
	}
	return tx.control(ctx, "SET LOCAL plan_cache_mode = DEFAULT")
}

// maxAttempts bounds the retries of a transaction that PostgreSQL aborted for
// a serialization failure, a deadlock or an id drawn twice (InsertDrawn);
// the function is pure with respect to the database, so
// running it again is safe.
const maxAttempts = 4

// Do runs fn in one write transaction and commits it, running fn again
// (up to maxAttempts) when PostgreSQL aborts it for a serialization
// failure, a deadlock or an id drawn twice. Whatever must be one
// atomic fact with fn's writes (an idempotency claim, say) is written by fn
// itself, in tx.
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
	tx, err := db.begin(ctx)
	if err != nil {
		return zero, err
	}
	defer tx.end()
	// A panic in fn must not leak the transaction: on SQLite it holds the
	// only write connection, on PostgreSQL its row locks.
	defer func() {
		if p := recover(); p != nil {
			tx.rollback()
			panic(p)
		}
	}()
	v, err := fn(tx)
	if err = tx.outcome(err); err != nil {
		tx.rollback()
		return zero, err
	}
	if err := tx.commit(ctx); err != nil {
		return zero, err
	}
	// The connection goes back to the pool before the after-commit work,
	// which may wait (merchant.Service.principalChanged) or start a
	// transaction of its own, as in a group commit (submit).
	tx.end()
	for _, f := range tx.afterCommit {
		f()
	}
	return v, nil
}

// begin starts a write transaction: on SQLite through database/sql; on
// PostgreSQL on a connection of the pool, its BEGIN queued to go to the
// server with its first statement. end hands the connection back.
func (db *DB) begin(ctx context.Context) (*Tx, error) {
	if db.dialect != Postgres {
		sqlTx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		return &Tx{db: db, sqlTx: sqlTx}, nil
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	tx := &Tx{db: db, sess: &session{conn: conn}}
	tx.sess.queue = append(tx.sess.queue, queued{sql: "BEGIN"})
	return tx, nil
}

// share returns a Tx for one more caller's work in tx's transaction (an item
// of a group commit), with its own hooks and counts.
func (tx *Tx) share() *Tx { return &Tx{db: tx.db, sqlTx: tx.sqlTx, sess: tx.sess, shared: true} }

// Savepoint runs fn inside a savepoint of tx, on a Tx of fn's own that
// shares tx's connection: if fn fails, or a statement it queued does
// (Send), what fn did is undone, its AfterCommit hooks dropped and its
// error returned as fnErr, and tx goes on. On PostgreSQL the SAVEPOINT goes
// to the server with fn's first statement and the RELEASE with what fn
// left queued, so fn costs one round trip more than its own reads at most;
// everything fn sent has run when Savepoint returns. err is set only when
// tx itself cannot go on (the savepoint could not be rolled back to).
func (tx *Tx) Savepoint(ctx context.Context, name string, fn func(tx *Tx) error) (fnErr, err error) {
	sub := tx.share()
	fnErr, err = tx.inSavepoint(ctx, name, sub, func() error { return fn(sub) })
	tx.statements += sub.statements
	tx.roundTrips += sub.roundTrips
	if fnErr == nil && err == nil {
		tx.afterCommit = append(tx.afterCommit, sub.afterCommit...)
	}
	return fnErr, err
}

// inSavepoint is Savepoint for sub, a share of tx, running run: a group
// commit runs each caller's work so (commitBatch).
func (tx *Tx) inSavepoint(ctx context.Context, name string, sub *Tx, run func() error) (runErr, err error) {
	sess := tx.sess
	mark, sent := sess.mark()
	if err := sub.control(ctx, "SAVEPOINT "+name); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	if runErr = run(); runErr == nil {
		runErr = sub.flushReads(ctx)
	}
	if runErr == nil {
		if runErr = sub.control(ctx, "RELEASE SAVEPOINT "+name); runErr == nil {
			runErr = sub.flush(ctx)
		}
	}
	if runErr = sub.outcome(runErr); runErr == nil {
		return nil, nil
	}
	if sess != nil && sess.sent() == sent {
		// Nothing of sub's reached the server, its savepoint neither.
		sess.queue = sess.queue[:mark]
		return runErr, nil
	}
	// The savepoint is on the server: roll back to it, at once (an aborted
	// transaction takes nothing else, not even a statement to prepare),
	// dropping what sub queued after its failure.
	if err := tx.controlNow(ctx, "ROLLBACK TO SAVEPOINT "+name); err != nil {
		return runErr, fmt.Errorf("rollback to savepoint: %w", err)
	}
	if err := tx.controlNow(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		return runErr, fmt.Errorf("release savepoint: %w", err)
	}
	return runErr, nil
}

// commit commits the transaction, on PostgreSQL with the statements still queued.
func (tx *Tx) commit(ctx context.Context) error {
	if tx.sess == nil {
		if err := tx.sqlTx.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}
	if tx.sess.sent() == 0 && len(tx.sess.queue) == 1 {
		tx.sess.queue = nil // nothing but the BEGIN: nothing to commit
		return nil
	}
	if err := tx.flushReads(ctx); err != nil {
		tx.rollback()
		return fmt.Errorf("commit: %w", tx.outcome(err))
	}
	tag, err := tx.send(ctx, &queued{sql: "COMMIT"}, nil)
	if err == nil && tag.String() == "ROLLBACK" {
		// A statement failed earlier and its caller went on: the server
		// rolled the transaction back instead.
		err = errors.New("the transaction was rolled back: one of its statements had failed")
	}
	if err != nil {
		tx.rollback()
		return fmt.Errorf("commit: %w", tx.outcome(err))
	}
	return nil
}

// rollback rolls the transaction back (on PostgreSQL, if any of it reached the server).
func (tx *Tx) rollback() {
	if tx.sess == nil {
		_ = tx.sqlTx.Rollback()
		return
	}
	s := tx.sess
	s.queue = nil
	if s.sent() == 0 {
		return
	}
	// Even when the caller's context is done: the connection goes back to
	// the pool, and one still in a transaction is discarded by the driver.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = s.conn.ExecContext(ctx, "ROLLBACK")
}

// end hands a PostgreSQL transaction's connection back to the pool once
// the transaction is over (the driver discards a connection still in one).
func (tx *Tx) end() {
	if tx.sess != nil && !tx.ended {
		tx.sess.conn.Close()
	}
	tx.ended = true
}

func retryable(err error) bool {
	return errors.Is(err, ErrDrawnTwice) || HasSQLState(err, "40001") || HasSQLState(err, "40P01")
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

// HasSQLState reports whether err is PostgreSQL's error of SQLSTATE code,
// such as one a payd function raises.
func HasSQLState(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
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
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}
