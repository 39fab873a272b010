package store

import (
	"context"
	"database/sql"
	"time"
)

// driver is what differs between the databases payd runs on, at the level
// of the whole database: one implementation a dialect, each in its own file
// (sqlite.go, postgres.go), as River's riverdriver.Driver. DB holds one and
// asks it; no other file of the package branches on the dialect.
type driver interface {
	// begin starts a write transaction on the write path.
	begin(ctx context.Context) (conn, error)
	// lane is the lane a transaction under ctx goes through (batch.go), or
	// false for a transaction that runs alone.
	lane(ctx context.Context) (string, bool)
	// betweenBatches runs on a lane's goroutine after each group commit,
	// while no transaction holds the write path.
	betweenBatches(ctx context.Context)
	// oneWriter reports whether every write runs on one connection, one
	// transaction at a time.
	oneWriter() bool
	// bound bounds each write transaction by timeout (Options.Timeout),
	// where a wire can stop answering.
	bound(timeout time.Duration)
	// readTimeout is the bound of the Reader's one-row reads for
	// Options.Timeout: it, where a wire can stop answering, else none.
	readTimeout(timeout time.Duration) time.Duration
	// distributed reports whether merchant-owned rows are spread over
	// several nodes by merchant.
	distributed() bool
	// rowLock is the suffix of a SELECT in a write transaction that locks
	// the rows it reads (of names the table, "" every table of the query);
	// skip has it pass over rows another transaction holds.
	rowLock(of string, skip bool) string
	// claimAcross is rowLock(of, true) for a claim that spans merchants,
	// and recheckAcross the condition its update then needs (see
	// DB.SkipLockedAcross).
	claimAcross(of string) string
	recheckAcross(cond string) string
	// readPool is what the read path (Reader) runs on.
	readPool() querier
	// lockMigrations, migrateAgain and citusOn answer migrate.Database
	// (migrate.go): the lock other processes' migrations wait for, whether
	// a round that met another's runs again, and whether conn's database is
	// Citus.
	lockMigrations(ctx context.Context, conn *sql.Conn, wait func()) (release func(), err error)
	migrateAgain(err error) bool
	citusOn(ctx context.Context, conn *sql.Conn) (bool, error)
	// migrated reports whether the database has payd's record of
	// migrations (schema_migrations): whether payd ever migrated it.
	migrated(ctx context.Context) (bool, error)
	// vacuumAdvice, analyzeStale and selfAnalyze are DB.VacuumAdvice,
	// AnalyzeStale and SelfAnalyze (postgres_vacuum.go).
	vacuumAdvice(ctx context.Context) (string, error)
	analyzeStale(ctx context.Context, db *DB) ([]string, error)
	selfAnalyze(ctx context.Context) (bool, error)
	// signal and listen are DB.Signal and DB.Listen (signal.go).
	signal(ctx context.Context, channel string, payloads []string) error
	listen(ctx context.Context, channel string, l Listener)
	// close releases what the driver holds besides the pools.
	close() error
}

// conn is one dialect's side of a write transaction: how the statements a
// Tx sends reach the database (River's riverdriver.Executor). The queue,
// the pending reads and the group commit above it (tx.go, pipeline.go,
// batch.go) are the same on every dialect.
type conn interface {
	// run runs b's queued statements in order, then b.last if set, in as
	// few exchanges with the server as the dialect allows; see batch.
	run(ctx context.Context, b *batch) (sql.Result, error)
	// rows runs a query at once (the queue has gone before it) and returns
	// its rows; an exchange it needs besides the query's own is counted in
	// tx.
	rows(ctx context.Context, tx *Tx, query string, args []any) (*sql.Rows, error)
	// exec runs a statement of the transaction's own (a savepoint's
	// rollback) at once, outside the queue.
	exec(ctx context.Context, query string) error
	// insertDrawn runs an insert of a random id (Tx.InsertDrawn): sent,
	// reporting true, where a round trip is dear; at once elsewhere,
	// reporting false when the id is taken.
	insertDrawn(ctx context.Context, tx *Tx, q queued) (bool, error)
	// setLocal sets a server setting for the rest of the transaction, or
	// does nothing where the dialect has no such setting.
	setLocal(ctx context.Context, tx *Tx, name, value string) error
	// lockKey takes the transaction's lock on key (a hash), waiting for
	// another transaction that holds it, or, with try, failing the
	// transaction with ErrKeyLocked instead (sent, as Send); one writer
	// needs no locks.
	lockKey(ctx context.Context, tx *Tx, key int64, try bool) error
	// commit commits the transaction with what tx still has queued.
	commit(ctx context.Context, tx *Tx) error
	// rollback rolls the transaction back (the queue is dropped already).
	rollback()
	// close hands the connection back once the transaction is over.
	close()
}

// querier is what the read path runs on: a pool, or a pool with a cache of
// prepared statements in front of it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// rowSet is the rows of one statement as a conn hands them to a reader:
// *sql.Rows on SQLite, pgx's rows on PostgreSQL.
type rowSet interface {
	Row
	Next() bool
	Err() error
}
