package store

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
)

// SQLite's driver parses every statement anew each time it runs, and payd
// runs the same few dozen statements over and over: on SQLite, a
// transaction's statements are prepared once and reused. (pgx keeps its own
// per-connection statement cache on PostgreSQL.)

// Limit is a LIMIT clause of n rows, written into the statement rather than
// bound as a parameter. SQLite reads a bound LIMIT's value when it prepares
// the statement, and prepares it anew each time that parameter is bound
// again: a claim run hundreds of times a second spent 6 % of payd's time
// (on the writer) parsing itself. A statement per distinct n is cached
// instead, and claims take few distinct values.
func Limit(n int) string { return " LIMIT " + strconv.Itoa(n) }

// maxCachedStatements bounds the cache; statements built at run time (a
// variable number of rows) beyond it run unprepared.
const maxCachedStatements = 512

type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// missed are statements run unprepared, to prepare between transactions:
	// preparing needs the write connection, which a transaction holds.
	missed map[string]bool
}

// prepared returns the cached statement for query; a statement not yet
// cached runs unprepared this once and is prepared after the transaction.
func (db *DB) prepared(ctx context.Context, query string) (*sql.Stmt, bool) {
	if db.dialect != SQLite {
		return nil, false
	}
	c := &db.stmts
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
func (db *DB) prepareMissed(ctx context.Context) {
	c := &db.stmts
	c.mu.Lock()
	missed := c.missed
	c.missed = map[string]bool{}
	c.mu.Unlock()
	for query := range missed {
		st, err := db.write.PrepareContext(ctx, query)
		if err != nil {
			continue // it runs unprepared; its error, if real, shows there
		}
		c.mu.Lock()
		c.stmts[query] = st
		c.mu.Unlock()
	}
}

// ExecContext runs a statement in the transaction, on PostgreSQL in one
// round trip with the queued ones (Send).
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx.statements++
	if tx.sess != nil {
		tag, err := tx.send(ctx, &queued{sql: query, args: args}, nil)
		if err != nil {
			return nil, err
		}
		return result{tag}, nil
	}
	tx.roundTrips++
	return tx.execNow(ctx, query, args...)
}

// QueryContext runs a query in the transaction, after the queued ones (Send).
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	tx.statements++
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	tx.roundTrips++
	if tx.sess != nil {
		return tx.sess.conn.QueryContext(ctx, query, args...)
	}
	if st, ok := tx.db.prepared(ctx, query); ok {
		return tx.sqlTx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.sqlTx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row in the
// transaction, after the queued ones (Send). On PostgreSQL the query goes
// to the server with them, in one round trip, when its row's Scan is
// called (Pipelining); if they fail, so does the query (the transaction is
// aborted), and the transaction reports their error. As with *sql.Row, no
// row is sql.ErrNoRows, from Scan.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	tx.statements++
	if tx.sess != nil {
		return pipedRow{tx: tx, ctx: ctx, q: queued{sql: query, args: args}}
	}
	tx.roundTrips++
	if st, ok := tx.db.prepared(ctx, query); ok {
		return tx.sqlTx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.sqlTx.QueryRowContext(ctx, query, args...)
}

// Reader runs reads outside a transaction (on SQLite, on the read pool),
// with the same statement cache.
type Reader struct {
	db   *DB
	pool *sql.DB
	mu   sync.Mutex
	// stmts are prepared on the read pool; a pool statement finds or
	// prepares its own copy on whichever connection runs it.
	stmts map[string]*sql.Stmt
}

func (r *Reader) prepared(ctx context.Context, query string) *sql.Stmt {
	if r.db.dialect != SQLite {
		return nil
	}
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

// QueryContext runs a query.
func (r *Reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.pool.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row.
func (r *Reader) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	if st := r.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.pool.QueryRowContext(ctx, query, args...)
}

// ExecContext runs a statement (on SQLite's read pool, only reads succeed).
func (r *Reader) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.pool.ExecContext(ctx, query, args...)
}

// Query, QueryRow and Exec are the context-free forms, for tests and tools.
func (r *Reader) Query(query string, args ...any) (*sql.Rows, error) {
	return r.QueryContext(context.Background(), query, args...)
}

// QueryRow is QueryRowContext without a context.
func (r *Reader) QueryRow(query string, args ...any) Row {
	return r.QueryRowContext(context.Background(), query, args...)
}

// Exec is ExecContext without a context.
func (r *Reader) Exec(query string, args ...any) (sql.Result, error) {
	return r.ExecContext(context.Background(), query, args...)
}

func (r *Reader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.stmts {
		st.Close()
	}
	r.stmts = map[string]*sql.Stmt{}
}
