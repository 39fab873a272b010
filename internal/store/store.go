package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dialect names the SQL database behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is payd's database: one write path and one read path, and the driver
// of its dialect (driver.go), which every difference between the databases
// is asked of.
type DB struct {
	dialect Dialect
	drv     driver
	write   *sql.DB
	read    *sql.DB
	reader  *Reader
	lanes   lanes
	// migrationWait is Options.MigrationWait.
	migrationWait func()
}

// Options tunes Open. The zero value is what payd serve uses.
type Options struct {
	// MaxConns bounds the PostgreSQL pool (default 16) and the SQLite read
	// pool (default 4).
	MaxConns int
	// SQLiteSynchronous overrides PRAGMA synchronous. By default every
	// acknowledged commit survives power loss: SQLite runs NORMAL and payd
	// flushes the log after each commit (sqlite_walsync.go). FULL has SQLite
	// flush it; tests may pass NORMAL, which leaves it unflushed.
	SQLiteSynchronous string
	// MustExist refuses a SQLite file that does not exist yet (ErrNoDatabase)
	// rather than create it: operator commands never create a database.
	MustExist bool
	// MigrationWait, when set, is called once when Migrate finds another
	// process migrating the database (PostgreSQL), before it waits for it:
	// so that a start that waits says why.
	MigrationWait func()
	// Timeout, when set, bounds on PostgreSQL each write transaction, from
	// its start to its commit's answer, and each one-row read outside a
	// transaction (Reader.QueryRowContext, ExecContext): one whose
	// connection stops answering (a network partition that never ends in
	// a reset, whose wait TCP would end only after many minutes) fails
	// with an error IsUnavailable reports, its connection closed, instead
	// of holding up its callers and its lane. Reads of many rows (a list,
	// an export streamed to a slow client) are bounded by their callers.
	// SQLite has no wire.
	Timeout time.Duration
}

// Open connects to dsn: "sqlite:FILE" for the embedded store,
// "postgres://…" or "postgresql://…" for PostgreSQL.
func Open(ctx context.Context, dsn string, opt Options) (*DB, error) {
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn, opt)
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), opt)
	default:
		return nil, fmt.Errorf("database %q: want sqlite:FILE or postgres://…", redact(dsn))
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(dsn), err)
	}
	return db, nil
}

// newDB is the DB of a driver, its write path and its read path.
func newDB(d Dialect, drv driver, write, read *sql.DB, opt Options) *DB {
	db := &DB{dialect: d, drv: drv, write: write, read: read, lanes: lanes{queue: map[string]*lane{}}, migrationWait: opt.MigrationWait}
	drv.bound(opt.Timeout)
	db.reader = &Reader{pool: drv.readPool(), timeout: drv.readTimeout(opt.Timeout)}
	return db
}

// ping checks, within a bound, that a database just opened answers.
func (db *DB) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return db.write.PingContext(ctx)
}

// dsnPassword is the password of a postgres://user:password@… DSN.
var dsnPassword = regexp.MustCompile(`^(postgres(?:ql)?://[^:/@]*:)[^@]*@`)

// redact hides a password in a connection string before it is logged.
// Redact is dsn with any password in it replaced, for messages.
func Redact(dsn string) string { return redact(dsn) }

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		// A multi-host DSN (host1:5432,host2:5432) is no URL to net/url.
		return dsnPassword.ReplaceAllString(dsn, "${1}xxxxx@")
	}
	if u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Dialect reports which database this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// Citus reports whether db is the coordinator of a Citus cluster: PostgreSQL
// whose merchant-owned tables are distributed by merchant (store/citus.go).
func (db *DB) Citus() bool { return db.drv.distributed() }

// Pool is the write path's pool itself, for the work beside payd's
// transactions that needs database/sql as it is: copying a whole database
// (store/dbcopy). Every write of payd's goes through Do.
func (db *DB) Pool() *sql.DB { return db.write }

// Read returns the handle for reads outside a transaction.
func (db *DB) Read() *Reader { return db.reader }

// OpenConnections is how many connections the write and read pools hold
// open now, in use or idle (on PostgreSQL both are one pool): the count an
// operator watches for a leak, and the only one there is of SQLite's, which
// no server lists. The connections beside the pools (a PostgreSQL listening
// connection, SQLite's checkpointer) are not in it.
func (db *DB) OpenConnections() int {
	n := db.write.Stats().OpenConnections
	if db.read != db.write {
		n += db.read.Stats().OpenConnections
	}
	return n
}

// Ping checks that the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	return db.write.PingContext(ctx)
}

// Close releases every connection.
func (db *DB) Close() error {
	err := db.drv.close()
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// VacuumAdvice says what keeps PostgreSQL's autovacuum from looking after
// payd's busiest tables (autovacuum off on the server, or disabled on one
// of them), or "" when nothing does. SQLite needs none: a deleted row's
// page is reused by the next insert.
func (db *DB) VacuumAdvice(ctx context.Context) (string, error) { return db.drv.vacuumAdvice(ctx) }

// AnalyzeStale does for payd's schema what PostgreSQL's autovacuum would do
// for the planner when it is off: it runs ANALYZE on the tables whose rows
// changed since their last analysis beyond autovacuum's default threshold
// (50 rows and a tenth of the table), at most once a minute each, and
// returns their names. Without it the planner never learns a table's
// statistics, and a prepared statement planned while its table was still
// empty keeps an index scan that reads every row of the merchant: an
// ANALYZE also makes the server plan those statements anew. It analyzes
// nothing while another process's round holds the lock, nor on SQLite
// (whose planner needs no statistics for payd's lookups) or Citus.
func (db *DB) AnalyzeStale(ctx context.Context) ([]string, error) {
	return db.drv.analyzeStale(ctx, db)
}

// SelfAnalyze reports whether payd must keep its tables analyzed itself
// (AnalyzeStale): on a PostgreSQL server that runs without autovacuum;
// never on SQLite or Citus, where AnalyzeStale analyzes nothing.
func (db *DB) SelfAnalyze(ctx context.Context) (bool, error) { return db.drv.selfAnalyze(ctx) }

// The named operations below are the dialects' differences that other
// packages' statements and strategies need, each named for what it means
// rather than for the database that has it.

// ForUpdate is the row-locking suffix for a SELECT inside a write transaction.
// SQLite has no row locks (its single writer already serialises), so it is empty there.
func (db *DB) ForUpdate() string { return db.drv.rowLock("", false) }

// ForUpdateOf is ForUpdate for the rows of one table of the query (its
// alias of).
func (db *DB) ForUpdateOf(of string) string { return db.drv.rowLock(of, false) }

// SkipLocked is ForUpdateOf for queue claims: other transactions' locked rows are skipped.
func (db *DB) SkipLocked(of string) string { return db.drv.rowLock(of, true) }

// OneWriter reports whether every write runs on one connection, one
// transaction at a time, in one lane (SQLite). What contends elsewhere
// cannot there: there is nothing to spread over slots, no lane to choose,
// and no other process whose work to take over; and a value drawn from the
// table (the largest plus one) is taken by no one else before the commit.
func (db *DB) OneWriter() bool { return db.drv.oneWriter() }

// Distributed reports whether merchant-owned rows are spread over nodes by
// merchant (Citus, citus.go). A statement is routed to one merchant's node
// only when every table it names is filtered by that merchant and no CTE of
// it writes; one that spans merchants asks every node, and cannot lock the
// rows it reads (SkipLockedAcross).
func (db *DB) Distributed() bool { return db.drv.distributed() }

// SkipLockedAcross is SkipLocked for a claim that spans merchants. A
// distributed database cannot lock the rows of a query that spans nodes:
// there it is empty, and the claim's update must check again that each row
// is still free (RecheckAcross), so that of several claimers one wins.
func (db *DB) SkipLockedAcross(of string) string { return db.drv.claimAcross(of) }

// RecheckAcross is cond where SkipLockedAcross locks nothing (see there),
// and empty where the claim's locks already keep the rows free.
func (db *DB) RecheckAcross(cond string) string { return db.drv.recheckAcross(cond) }

// Querier is what both the read pool (*Reader) and *Tx offer, so read
// helpers take either.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) Row
}

// In is the list of an IN (...) condition on values, numbered from
// $first, and its arguments. The list is padded to a power of two by
// repeating the last value, which matches nothing more: so a statement
// that takes lists of any length up to n has log2(n) spellings, not n, each
// prepared and cached by every PostgreSQL connection.
func In[T any](first int, values []T) (string, []any) {
	n := 1
	for n < len(values) {
		n *= 2
	}
	args := make([]any, n)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
		args[i] = values[min(i, len(values)-1)]
	}
	return b.String(), args
}

// ValueRows is the VALUES list of a multi-row statement: n rows of width
// parameters each, numbered from $1 row by row.
func ValueRows(n, width int) string {
	var b strings.Builder
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range width {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(r*width+c+1))
		}
		b.WriteByte(')')
	}
	return b.String()
}
