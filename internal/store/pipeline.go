package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Pipelining. On PostgreSQL every statement is a round trip to the server,
// and in a merchant's lane round trips are what bound the throughput: the
// lane runs one transaction's statements after another. A statement whose
// result its caller does not need at once (an insert, a status update, a
// savepoint, a read whose value is used later) need not wait for its
// answer: Send queues it, and it goes to the server in one exchange with
// the next statement the transaction runs through QueryRowContext, Query or
// ExecContext, or when the transaction ends. Statements still run in the
// order they were written. A queued statement's error is returned by the
// call that carried it to the server (and by the transaction, which fails),
// so Send is for statements whose failure is not an answer the caller
// handles: a statement whose unique violation means "exists already" runs
// with ExecContext.
//
// SQLite queues the same way, though a statement there costs no round
// trip: a read sent ahead (SendRow) is there at the same point on both
// databases, and read before it (Pending.Get) fails on both, so code that
// reads too early fails in every test run, not only in PostgreSQL's.

// maxQueued bounds the statements a transaction queues before they are sent.
const maxQueued = 64

// queued is one statement waiting in a transaction's queue.
type queued struct {
	sql  string
	args []any
	// drawn marks an insert of an id drawn at random (InsertDrawn): its
	// unique violation is ErrDrawnTwice.
	drawn bool
	// read, when set, reads the statement's rows (SendRow, SendQuery,
	// SendOne); an error it returns is the statement's failure.
	read func(rowSet) error
	// late marks a read that may go with the COMMIT (SendRowLate): the
	// conn hands it rows whose Scan fails that read alone.
	late bool
	// settle, when set, hears why the statement has no result: it failed,
	// a statement before it did, or it was dropped unsent.
	settle func(error)
}

// session is what one transaction's statements go through: its conn and
// the statements queued for it. The transactions of a group commit share
// one.
type session struct {
	conn   conn
	queue  []queued
	flushN int // how many times the queue went to the server
	// reading is set while a Query's rows are read: a statement run from
	// inside its callback would wait for the connection that callback holds.
	reading bool
	ended   bool
}

// batch is one exchange of a transaction with the server: the queued
// statements, then last, whose rows go to read or, with read nil, whose
// result run returns. run counts in ran the queued statements that
// succeeded (the first failure stops the batch: the server skips the
// rest) and in trips the exchanges it took.
type batch struct {
	queue []queued
	last  *queued
	read  func(rowSet) error
	ran   int
	trips int
}

// errDropped settles a statement that never went to the server because
// its transaction, or the savepoint it was sent in, failed first.
var errDropped = errors.New("the statement was not run: its transaction failed before it was sent")

// drop removes the queue from position from on, telling each statement why
// it will not run.
func (s *session) drop(from int, why error) {
	for _, q := range s.queue[from:] {
		if q.settle != nil {
			q.settle(why)
		}
	}
	s.queue = s.queue[:from]
}

// mark is where the queue ends now and how often it was sent so far.
func (s *session) mark() (int, int) { return len(s.queue), s.flushN }

// Row is one row of a result: *sql.Row, or a row read through a pipeline.
// It is an alias, so that a package's scan function of any row
// (func(interface{ Scan(...any) error }) (T, error)) reads sent rows too.
type Row = interface {
	Scan(dest ...any) error
}

// Send runs a statement whose result is not read, with the next statement
// that goes to the server (see Pipelining above).
func (tx *Tx) Send(ctx context.Context, query string, args ...any) error {
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args})
}

// SendOne is Send for a statement that must return a row (an UPDATE …
// RETURNING, say, whose WHERE checks the row's state): if it returns none,
// the transaction fails with none, which its caller returns from the
// statement that carried it to the server, or from the commit.
func (tx *Tx) SendOne(ctx context.Context, query string, args []any, none error) error {
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args, read: func(rows rowSet) error {
		if rows.Next() {
			return nil
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return none
	}})
}

// ErrDrawnTwice is the failure of a transaction whose InsertDrawn met an id
// taken already; Do runs it again, drawing anew.
var ErrDrawnTwice = errors.New("an id drawn at random was taken already")

// InsertDrawn runs an insert of an id drawn at random (a plain INSERT, no ON
// CONFLICT, into a table whose only unique key the id is: any unique
// violation is taken for the id's), for ids from a space so large that a
// draw taken already is a one-in-billions event, and reports whether the id
// was free. On PostgreSQL the insert is sent (Send), a round trip fewer than
// waiting for its answer: it reports true, and a taken id fails the
// transaction with ErrDrawnTwice, which Do runs again. On SQLite, where a
// statement costs no round trip, it runs at once and a taken id reports
// false, for the caller to draw again (InsertUnique).
func (tx *Tx) InsertDrawn(ctx context.Context, query string, args ...any) (bool, error) {
	return tx.sess.conn.insertDrawn(ctx, tx, queued{sql: query, args: args, drawn: true})
}

// ExecContext runs a statement in the transaction, in one exchange with the
// queued ones (Send).
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx.statements++
	return tx.send(ctx, &queued{sql: query, args: args}, nil)
}

// QueryContext runs a query in the transaction, after the queued ones (Send).
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	tx.statements++
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	tx.roundTrips++
	return tx.sess.conn.rows(ctx, tx, query, args)
}

// QueryRowContext runs a query that returns at most one row in the
// transaction, after the queued ones (Send): the query goes to the server
// with them, in one exchange, when its row's Scan is called; if they fail,
// so does the query (the transaction is aborted), and the transaction
// reports their error. As with *sql.Row, no row is sql.ErrNoRows, from
// Scan.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	tx.statements++
	return pipedRow{tx: tx, ctx: ctx, q: queued{sql: query, args: args}}
}

// pipedRow is the row of QueryRowContext, run when it is scanned.
type pipedRow struct {
	tx  *Tx
	ctx context.Context
	q   queued
}

func (r pipedRow) Scan(dest ...any) error {
	_, err := r.tx.send(r.ctx, &r.q, func(rows rowSet) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		return rows.Scan(dest...)
	})
	return err
}

// Query runs a query and calls each for every row, in order, carrying the
// queued statements with it in one exchange. An error from each stops the
// reading and is returned. each must not run statements of tx (the
// connection is busy reading): collect the rows, then act on them.
func (tx *Tx) Query(ctx context.Context, query string, args []any, each func(Row) error) error {
	tx.statements++
	_, err := tx.send(ctx, &queued{sql: query, args: args}, func(rows rowSet) error {
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return err
}

// ReadSent makes sure what the reads sent ahead (SendRow, SendQuery)
// collect is there: it sends the queue if a read in it has rows still to
// read. It returns the transaction's failure, if any (a queued statement's,
// which may have kept a read from running).
func (tx *Tx) ReadSent(ctx context.Context) error {
	if err := tx.flushReads(ctx); err != nil {
		return tx.outcome(err)
	}
	return tx.failed
}

// flushReads sends the queue if a statement in it has rows to read: they
// are read by the client, so an error in reading them must be known before
// a COMMIT or a RELEASE is sent, not with it. A late read (SendRowLate) has
// no such error, and goes with the COMMIT.
func (tx *Tx) flushReads(ctx context.Context) error {
	if !slices.ContainsFunc(tx.sess.queue, func(q queued) bool { return q.read != nil && !q.late }) {
		return nil
	}
	return tx.flush(ctx)
}

// flush sends the queued statements, if any.
func (tx *Tx) flush(ctx context.Context) error {
	if len(tx.sess.queue) == 0 {
		return nil
	}
	_, err := tx.send(ctx, nil, nil)
	return err
}

// control queues a statement of the transaction's own (a savepoint), not
// counted among its caller's statements.
func (tx *Tx) control(ctx context.Context, query string) error {
	return tx.enqueue(ctx, queued{sql: query})
}

// controlNow runs a statement of the transaction's own at once, dropping
// what is queued (what a failed item queued after its failure).
func (tx *Tx) controlNow(ctx context.Context, query string) error {
	tx.sess.drop(0, errDropped)
	return tx.sess.conn.exec(ctx, query)
}

// enqueue adds q to the session's queue, sending the queue when it is full.
func (tx *Tx) enqueue(ctx context.Context, q queued) error {
	tx.sess.queue = append(tx.sess.queue, q)
	if len(tx.sess.queue) >= maxQueued {
		return tx.flush(ctx)
	}
	return nil
}

// send sends the queued statements and then last, if not nil, in one batch:
// last's rows go to read, or, with read nil, send returns last's result.
// The first error stops the batch (the server skips the rest); a queued
// statement's error is remembered as the transaction's failure, which the
// transaction reports however its caller words the errors that follow, and
// settles the reads of the statements it kept from running.
func (tx *Tx) send(ctx context.Context, last *queued, read func(rowSet) error) (sql.Result, error) {
	s := tx.sess
	if s.reading {
		return nil, errors.New("a statement was run while another's rows were being read")
	}
	b := &batch{queue: s.queue, last: last}
	if read != nil {
		b.read = func(rows rowSet) error {
			s.reading = true
			defer func() { s.reading = false }()
			return read(rows)
		}
	}
	s.queue = nil
	s.flushN++
	res, err := s.conn.run(ctx, b)
	tx.roundTrips += b.trips
	if b.ran < len(b.queue) {
		// A queued statement failed, or the connection was gone before
		// anything was sent (database/sql closes one that broke): the
		// statements from it on are lost, and so is the transaction.
		failed := err
		if b.queue[b.ran].drawn && IsUniqueViolation(err) {
			failed = fmt.Errorf("%w: %w", ErrDrawnTwice, err)
		}
		tx.failWith(failed)
		for _, q := range b.queue[b.ran:] {
			if q.settle != nil {
				q.settle(failed)
			}
		}
	}
	return res, err
}

// failWith records err, if any, as the transaction's failure and returns it.
func (tx *Tx) failWith(err error) error {
	if err != nil && tx.failed == nil {
		tx.failed = err
	}
	return err
}
