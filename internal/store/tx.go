package store

import (
	"context"
	"fmt"
	"hash/fnv"
)

// Tx is one write transaction, the same on every database: the statements
// it sends go through its session's conn, the dialect's side (driver.go).
// Work that must happen only once the transaction is durable (waking a
// worker, say) is registered with AfterCommit.
type Tx struct {
	db   *DB
	sess *session
	// afterCommit are the hooks to run once the transaction has committed.
	afterCommit []func()
	// failed is the error of a queued statement (Send), which fails the transaction.
	failed error
	// statements and roundTrips count what this transaction (this caller's,
	// in a group commit) has run, and in how many exchanges with the
	// server, for tests that bound them.
	statements, roundTrips int
	// shared marks one caller's part of a group commit (share).
	shared bool
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
	if tx.shared {
		return nil
	}
	return tx.sess.conn.setLocal(ctx, tx, "synchronous_commit", "off")
}

// PlanEachTime has PostgreSQL plan each statement of tx with its values,
// every time (plan_cache_mode = force_custom_plan, for this transaction
// only), never with the generic plan it may otherwise keep for a prepared
// statement after five runs. It is for statements on a table whose size
// swings fast, such as a queue: a generic plan chosen while the table was
// small (a sequential scan and a sort, say) is kept on its connection, and
// with nothing to analyze the table in between, it walks the whole backlog
// on every claim. On SQLite it does nothing.
func (tx *Tx) PlanEachTime(ctx context.Context) error {
	return tx.sess.conn.setLocal(ctx, tx, "plan_cache_mode", "force_custom_plan")
}

// PlanAsUsual ends PlanEachTime for the rest of tx: its statements may again
// run on the generic plans their connection keeps. A job's claim plans
// afresh, but the jobs it runs in the same transaction are the domain's
// statements, which need no planning each time. On SQLite it does nothing.
func (tx *Tx) PlanAsUsual(ctx context.Context) error {
	return tx.sess.conn.setLocal(ctx, tx, "plan_cache_mode", "DEFAULT")
}

// LockKey takes tx's lock on key of namespace ns (a lock of the
// transaction, released by its commit or rollback), waiting while another
// transaction holds it: for a rule that no row can lock, such as "one
// payout per external id", checked by a read and then kept by a write.
// The lock is sent with the next statement (Send), which runs only once
// tx holds it. On SQLite, whose one writer runs one transaction at a
// time, it takes nothing.
func (tx *Tx) LockKey(ctx context.Context, ns, key string) error {
	return tx.sess.conn.lockKey(ctx, tx, keyHash(ns, key), false)
}

// TryLockKey is LockKey for a key that another transaction holding is an
// answer, not a wait: the transaction fails with an error IsKeyLocked
// reports, from the next statement that goes to the server or the commit.
func (tx *Tx) TryLockKey(ctx context.Context, ns, key string) error {
	return tx.sess.conn.lockKey(ctx, tx, keyHash(ns, key), true)
}

// keyHash is the 64-bit lock of key in namespace ns.
func keyHash(ns, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(ns + "\x00" + key))
	return int64(h.Sum64())
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
// itself, in tx. fn must not start another transaction of db's in its
// lane (on SQLite, any): that one would wait for the writer fn holds, and
// Do refuses it (ErrNested).
func Do[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var zero T
	for attempt := 1; ; attempt++ {
		var v T
		var err error
		if lane, ok := db.drv.lane(ctx); ok {
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

// begin starts a write transaction on the dialect's connection (driver.begin).
func (db *DB) begin(ctx context.Context) (*Tx, error) {
	c, err := db.drv.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &Tx{db: db, sess: &session{conn: c}}, nil
}

// share returns a Tx for one more caller's work in tx's transaction (an item
// of a group commit), with its own hooks and counts.
func (tx *Tx) share() *Tx { return &Tx{db: tx.db, sess: tx.sess, shared: true} }

// Savepoint runs fn inside a savepoint of tx, on a Tx of fn's own that
// shares tx's connection: if fn fails, or a statement it queued does
// (Send), what fn did is undone, its AfterCommit hooks dropped and its
// error returned as fnErr, and tx goes on. The SAVEPOINT goes to the
// server with fn's first statement and the RELEASE with what fn left
// queued, so fn costs one round trip more than its own reads at most;
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
	if sess.flushN == sent {
		// Nothing of sub's reached the server, its savepoint neither.
		sess.drop(mark, runErr)
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

// commit commits the transaction with the statements still queued: the
// reads among them first, so that their errors keep it from committing.
func (tx *Tx) commit(ctx context.Context) error {
	err := tx.flushReads(ctx)
	if err == nil {
		err = tx.sess.conn.commit(ctx, tx)
	}
	if err != nil {
		tx.rollback()
		return fmt.Errorf("commit: %w", tx.outcome(err))
	}
	return nil
}

// errRolledBack settles the reads still queued when their transaction is
// rolled back.
var errRolledBack = fmt.Errorf("%w: the transaction was rolled back", errDropped)

// rollback rolls the transaction back, dropping what is queued.
func (tx *Tx) rollback() {
	tx.sess.drop(0, errRolledBack)
	tx.sess.conn.rollback()
}

// end hands the transaction's connection back once the transaction is over.
func (tx *Tx) end() {
	if !tx.sess.ended {
		tx.sess.conn.close()
	}
	tx.sess.ended = true
}
