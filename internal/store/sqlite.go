package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQLite, the embedded database (pure Go). It has one writer: payd gives
// it one connection, whose transactions all go through one lane and are
// group-committed (batch.go), and a pool of read-only connections that WAL
// lets read beside it (Reader). A Go-side queue is cheaper than lock
// retries. Its driver parses every statement anew each time it runs, and
// payd runs the same few dozen statements over and over, so both paths keep
// their statements prepared.

// sqliteDriver is the driver of a SQLite database.
type sqliteDriver struct {
	write *sql.DB
	// stmts are the writer's prepared statements.
	stmts stmtCache
	// reads is the read pool with its prepared statements.
	reads *sqliteReads
	// ckpt copies SQLite's log into the database file (sqlite_checkpoint.go).
	ckpt *checkpointer
	// wal flushes the log after each commit (sqlite_walsync.go); nil when
	// SQLite's synchronous setting was given, which then does or does not.
	wal *walSync
}

func openSQLite(ctx context.Context, path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty file name")
	}
	if opt.MustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: sqlite:%s does not exist", ErrNoDatabase, path)
		}
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	// By default SQLite leaves the log unflushed at commit and payd flushes
	// it (sqlite_walsync.go).
	sync, wal := opt.SQLiteSynchronous, (*walSync)(nil)
	if sync == "" {
		sync, wal = "NORMAL", newWALSync(path)
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
	// written on most batches. In memory it is bounded by the batch, which
	// is bounded (maxBatch).
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
	drv := &sqliteDriver{write: write, stmts: stmtCache{stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}},
		reads: &sqliteReads{pool: read, stmts: map[string]*sql.Stmt{}}, ckpt: startCheckpointer(ckpt), wal: wal}
	db := newDB(SQLite, drv, write, read, opt)
	if err := db.ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
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

func (d *sqliteDriver) begin(ctx context.Context) (conn, error) {
	tx, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &sqliteConn{drv: d, tx: tx}, nil
}

// lane: every write goes through one lane, SQLite having one writer anyway.
func (d *sqliteDriver) lane(context.Context) (string, bool) { return "sqlite", true }

// betweenBatches prepares the statements that ran unprepared, now that the
// write connection is free.
func (d *sqliteDriver) betweenBatches(ctx context.Context) { d.stmts.prepareMissed(ctx, d.write) }

func (d *sqliteDriver) oneWriter() bool { return true }

// bound does nothing: SQLite has no wire to stop answering.
func (d *sqliteDriver) bound(time.Duration) {}

// readTimeout is none, for the same reason.
func (d *sqliteDriver) readTimeout(time.Duration) time.Duration { return 0 }
func (d *sqliteDriver) distributed() bool                       { return false }

// rowLock is empty: SQLite has no row locks, its one writer serialises.
func (d *sqliteDriver) rowLock(string, bool) string { return "" }
func (d *sqliteDriver) claimAcross(string) string   { return "" }
func (d *sqliteDriver) recheckAcross(string) string { return "" }

func (d *sqliteDriver) readPool() querier { return d.reads }

// SQLite reclaims a deleted row's page on the next insert, and its planner
// needs no statistics for payd's lookups: there is nothing to advise or
// analyze.
func (d *sqliteDriver) vacuumAdvice(context.Context) (string, error)        { return "", nil }
func (d *sqliteDriver) analyzeStale(context.Context, *DB) ([]string, error) { return nil, nil }
func (d *sqliteDriver) selfAnalyze(context.Context) (bool, error)           { return false, nil }

// signal sends nothing: the one process serving a SQLite database heard
// its own events already.
func (d *sqliteDriver) signal(context.Context, string, []string) error { return nil }

// listen hears nothing (signal).
func (d *sqliteDriver) listen(ctx context.Context, _ string, _ Listener) { <-ctx.Done() }

func (d *sqliteDriver) close() error {
	d.stmts.close()
	d.reads.close()
	if d.wal != nil {
		defer d.wal.close()
	}
	return d.ckpt.close()
}

// lockMigrations takes nothing: SQLite has no lock to wait for; a process
// that waited out the busy timeout behind another one's migration tries
// again (migrateAgain).
func (d *sqliteDriver) lockMigrations(context.Context, *sql.Conn, func()) (func(), error) {
	return func() {}, nil
}

// migrateAgain reports whether err is SQLite's "database is locked".
func (d *sqliteDriver) migrateAgain(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked"))
}

func (d *sqliteDriver) citusOn(context.Context, *sql.Conn) (bool, error) { return false, nil }

func (d *sqliteDriver) migrated(ctx context.Context) (bool, error) {
	var n int
	err := d.readPool().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n)
	return n > 0, err
}

// sqliteConn is a write transaction on SQLite: its statements run one after
// another on the one write connection, each an exchange of its own (there
// is no server to save a round trip to).
type sqliteConn struct {
	drv *sqliteDriver
	tx  *sql.Tx
}

func (c *sqliteConn) run(ctx context.Context, b *batch) (sql.Result, error) {
	for _, q := range b.queue {
		b.trips++
		var err error
		if q.read != nil {
			err = c.read(ctx, q.sql, q.args, q.read)
		} else {
			_, err = c.execStmt(ctx, q.sql, q.args)
		}
		if err != nil {
			return nil, err
		}
		b.ran++
	}
	if b.last == nil {
		return nil, nil
	}
	b.trips++
	if b.read != nil {
		return nil, c.read(ctx, b.last.sql, b.last.args, b.read)
	}
	return c.execStmt(ctx, b.last.sql, b.last.args)
}

// read runs a query and hands its rows to read.
func (c *sqliteConn) read(ctx context.Context, query string, args []any, read func(rowSet) error) error {
	rows, err := c.query(ctx, query, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := read(rows); err != nil {
		return err
	}
	return rows.Err()
}

func (c *sqliteConn) rows(ctx context.Context, _ *Tx, query string, args []any) (*sql.Rows, error) {
	return c.query(ctx, query, args)
}

// query runs a query through the writer's statement cache.
func (c *sqliteConn) query(ctx context.Context, query string, args []any) (*sql.Rows, error) {
	if st, ok := c.drv.stmts.prepared(query); ok {
		return c.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, query, args...)
}

// execStmt runs a statement through the writer's statement cache.
func (c *sqliteConn) execStmt(ctx context.Context, query string, args []any) (sql.Result, error) {
	if st, ok := c.drv.stmts.prepared(query); ok {
		return c.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, query, args...)
}

func (c *sqliteConn) exec(ctx context.Context, query string) error {
	_, err := c.tx.ExecContext(ctx, query)
	return err
}

// insertDrawn runs the insert at once: a taken id reports false, and the
// caller draws again.
func (c *sqliteConn) insertDrawn(ctx context.Context, tx *Tx, q queued) (bool, error) {
	_, err := tx.ExecContext(ctx, q.sql, q.args...)
	if IsUniqueViolation(err) {
		return false, nil
	}
	return err == nil, err
}

// setLocal does nothing: SQLite has no per-transaction server settings.
func (c *sqliteConn) setLocal(context.Context, *Tx, string, string) error { return nil }

// lockKey takes nothing: the one writer runs one transaction at a time.
func (c *sqliteConn) lockKey(context.Context, *Tx, int64, bool) error { return nil }

func (c *sqliteConn) commit(ctx context.Context, tx *Tx) error {
	if err := tx.flush(ctx); err != nil {
		return err
	}
	if err := c.tx.Commit(); err != nil {
		return err
	}
	if c.drv.wal != nil {
		return c.drv.wal.flush()
	}
	return nil
}

func (c *sqliteConn) rollback() { _ = c.tx.Rollback() }

func (c *sqliteConn) close() {}

// maxCachedStatements bounds a statement cache; statements built at run
// time (a variable number of rows) beyond it run unprepared.
const maxCachedStatements = 512

// stmtCache is the write connection's prepared statements.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// missed are statements run unprepared, to prepare between transactions:
	// preparing needs the write connection, which a transaction holds.
	missed map[string]bool
}

// prepared returns the cached statement for query; a statement not yet
// cached runs unprepared this once and is prepared after the transaction.
func (c *stmtCache) prepared(query string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, true
	}
	if len(c.stmts)+len(c.missed) < maxCachedStatements {
		c.missed[query] = true
	}
	return nil, false
}

// prepareMissed prepares the statements that ran unprepared. Only the SQLite
// lane calls it, between transactions, when the write connection is free.
func (c *stmtCache) prepareMissed(ctx context.Context, write *sql.DB) {
	c.mu.Lock()
	missed := c.missed
	c.missed = map[string]bool{}
	c.mu.Unlock()
	for query := range missed {
		st, err := write.PrepareContext(ctx, query)
		if err != nil {
			continue // it runs unprepared; its error, if real, shows there
		}
		c.mu.Lock()
		c.stmts[query] = st
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = map[string]*sql.Stmt{}
}

// sqliteReads is the read pool with its prepared statements; a pool
// statement finds or prepares its own copy on whichever connection runs it.
type sqliteReads struct {
	pool  *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (r *sqliteReads) prepared(ctx context.Context, query string) *sql.Stmt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[query]; ok {
		return st
	}
	if len(r.stmts) >= maxCachedStatements {
		return nil
	}
	st, err := r.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	r.stmts[query] = st
	return st
}

func (r *sqliteReads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.pool.QueryContext(ctx, query, args...)
}

func (r *sqliteReads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.pool.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement on the read pool, where only reads succeed.
func (r *sqliteReads) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.pool.ExecContext(ctx, query, args...)
}

func (r *sqliteReads) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.stmts {
		st.Close()
	}
	r.stmts = map[string]*sql.Stmt{}
}
