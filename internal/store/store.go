// Package store owns the database handle: opening SQLite or PostgreSQL, the
// embedded migrations, transactions, and the few places where the two SQL
// dialects differ. Every other package writes plain SQL with $N placeholders,
// which both drivers accept.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names the SQL database behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is payd's database: one write path and one read path. On SQLite the write
// path is a single connection (SQLite has one writer; a Go-side queue is cheaper
// than lock retries) and reads use a separate pool that never blocks it (WAL).
// On PostgreSQL both paths are the same pool.
type DB struct {
	dialect Dialect
	write   *sql.DB
	read    *sql.DB
	reader  *Reader
	lanes   lanes
	stmts   stmtCache
	citus   bool // a Citus coordinator (store/citus.go)
	// migrationWait is Options.MigrationWait.
	migrationWait func()
	// ckpt copies SQLite's log into the database file (checkpoint.go).
	ckpt *checkpointer
}

// Options tunes Open. The zero value is what payd serve uses.
type Options struct {
	// MaxConns bounds the PostgreSQL pool (default 16) and the SQLite read
	// pool (default 4).
	MaxConns int
	// SQLiteSynchronous overrides PRAGMA synchronous. The default, FULL, makes
	// every acknowledged commit survive power loss; tests may pass NORMAL.
	SQLiteSynchronous string
	// MigrationWait, when set, is called once when Migrate finds another
	// process migrating the database (PostgreSQL), before it waits for it:
	// so that a start that waits says why.
	MigrationWait func()
}

// Open connects to dsn: "sqlite:FILE" (or a path ending in .db) for the
// embedded store, "postgres://…" or "postgresql://…" for PostgreSQL.
func Open(ctx context.Context, dsn string, opt Options) (*DB, error) {
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(dsn, opt)
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"), opt)
	default:
		return nil, fmt.Errorf("database %q: want sqlite:FILE or postgres://…", redact(dsn))
	}
	if err != nil {
		return nil, err
	}
	db.reader = &Reader{db: db, pool: db.read, stmts: map[string]*sql.Stmt{}}
	db.migrationWait = opt.MigrationWait
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.write.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", redact(dsn), err)
	}
	if db.dialect == Postgres {
		if db.citus, err = isCitus(pingCtx, db.write); err != nil {
			db.Close()
			return nil, fmt.Errorf("connect to %s: %w", redact(dsn), err)
		}
	}
	return db, nil
}

func openPostgres(dsn string, opt Options) (*DB, error) {
	pool, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	n := opt.MaxConns
	if n <= 0 {
		n = 16
	}
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	return &DB{dialect: Postgres, write: pool, read: pool, lanes: lanes{queue: map[string]*lane{}}, stmts: stmtCache{stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}}}, nil
}

func openSQLite(path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty file name")
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	sync := opt.SQLiteSynchronous
	if sync == "" {
		sync = "FULL"
	}
	params := url.Values{}
	params.Add("_pragma", "busy_timeout(10000)")
	params.Add("_pragma", "journal_mode(WAL)")
	params.Add("_pragma", "synchronous("+sync+")")
	params.Add("_pragma", "foreign_keys(1)")
	writeParams := cloneValues(params)
	writeParams.Set("_txlock", "immediate")
	// A group commit runs each item in a savepoint, whose sub-journal SQLite
	// spills to a temporary file past 64 KiB: a file created, unlinked and
	// written on most batches (7 % of payd's CPU creating payins). In memory
	// it is bounded by the batch, which is bounded (maxBatch).
	writeParams.Add("_pragma", "temp_store(MEMORY)")
	writeParams.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
	write, err := sql.Open("sqlite", sqliteURI(path, writeParams))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	readParams := cloneValues(params)
	readParams.Add("_pragma", "query_only(1)")
	read, err := sql.Open("sqlite", sqliteURI(path, readParams))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	n := opt.MaxConns
	if n <= 0 {
		n = max(4, runtime.GOMAXPROCS(0))
	}
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	ckpt, err := sql.Open("sqlite", sqliteURI(path, params))
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return &DB{dialect: SQLite, write: write, read: read, ckpt: startCheckpointer(ckpt), lanes: lanes{queue: map[string]*lane{}}, stmts: stmtCache{stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}}}, nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// uriPath escapes what a SQLite URI filename would read otherwise: "?"
// starts its parameters, "#" a fragment and "%" an escape, so a file
// named with them would silently be another file.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// sqliteURI is the file: URI of path with the connection's parameters.
func sqliteURI(path string, params url.Values) string {
	return "file:" + uriPath.Replace(path) + "?" + params.Encode()
}

// dsnPassword is the password of a postgres://user:password@… DSN.
var dsnPassword = regexp.MustCompile(`^(postgres(?:ql)?://[^:/@]*:)[^@]*@`)

// redact hides a password in a connection string before it is logged.
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
func (db *DB) Citus() bool { return db.citus }

// Read returns the handle for reads outside a transaction.
func (db *DB) Read() *Reader { return db.reader }

// Ping checks that the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	return db.write.PingContext(ctx)
}

// Close releases every connection.
func (db *DB) Close() error {
	db.stmts.mu.Lock()
	for _, st := range db.stmts.stmts {
		st.Close()
	}
	db.stmts.stmts = map[string]*sql.Stmt{}
	db.stmts.mu.Unlock()
	db.reader.close()
	var err error
	if db.ckpt != nil {
		err = db.ckpt.close()
	}
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// ForUpdate is the row-locking suffix for a SELECT inside a write transaction.
// SQLite has no row locks (its single writer already serialises), so it is empty there.
func (db *DB) ForUpdate() string {
	if db.dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// SkipLocked is ForUpdate for queue claims: other transactions' locked rows are skipped.
func (db *DB) SkipLocked(of string) string {
	if db.dialect == Postgres {
		return " FOR UPDATE OF " + of + " SKIP LOCKED"
	}
	return ""
}

// Querier is what both the read pool (*Reader) and *Tx offer, so read
// helpers take either.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) Row
}
