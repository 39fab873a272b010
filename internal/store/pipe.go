package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipelining. On PostgreSQL every statement is a round trip to the server,
// and in a merchant's lane round trips are what bound the throughput: the
// lane runs one transaction's statements after another. A statement whose
// result its caller does not read (an insert, a status update, a savepoint)
// need not wait for its answer: Send queues it, and it goes to the server in
// one round trip (a pgx batch) with the next statement the transaction runs
// through QueryRowContext or Query, or when the transaction ends.
// Statements still run in the order they were written. A queued statement's
// error is returned by the call that carried it to the server (and by the
// transaction, which fails), so Send is for statements whose failure is not
// an answer the caller handles: a statement whose unique violation means
// "exists already" runs with ExecContext (or InsertDrawn, below).
//
// On SQLite there is no round trip to save: Send runs the statement at once.

// maxQueued bounds the statements a transaction queues before they are sent.
const maxQueued = 64

type queued struct {
	sql  string
	args []any
	// drawn marks an insert of an id drawn at random (InsertDrawn): its
	// unique violation is ErrDrawnTwice.
	drawn bool
	// read, when set, reads the statement's rows (SendQuery, SendRow).
	read func(pgx.Rows) error
	// late marks a read that may go with the COMMIT (SendRowLate).
	late bool
}

// session is the connection a PostgreSQL transaction runs on, shared by the
// transactions of one group commit, with the statements queued for it.
type session struct {
	conn   *sql.Conn
	queue  []queued
	flushN int // how many times the queue went to the server
	// reading is set while a Query's rows are read: a statement run from
	// inside its callback would wait for the connection that callback holds.
	reading bool
}

// Row is one row of a result: *sql.Row, or a row read through a pipeline.
type Row interface {
	Scan(dest ...any) error
}

// Send runs a statement whose result is not read, on PostgreSQL with the
// next statement that goes to the server (see Pipelining above).
func (tx *Tx) Send(ctx context.Context, query string, args ...any) error {
	tx.statements++
	if tx.sess == nil {
		tx.roundTrips++
		_, err := tx.execNow(ctx, query, args...)
		return tx.failWith(err)
	}
	return tx.queue(ctx, query, args...)
}

// SendQuery runs a query whose rows are not needed before the next
// statement that goes to the server: on PostgreSQL it is queued (Send), and
// each is called for its rows, in order, when the queue goes, with the next
// statement that reads, or just before the COMMIT (not with it: an error of
// each must keep the transaction from committing). So what each collects
// is there only once a later QueryRowContext, Query or ExecContext of tx,
// or the commit, has returned. Statements still run in order, each on its own
// snapshot: a query sent after another sees what committed before it ran.
// On SQLite it runs at once. An error of each, like any error of a queued
// statement, fails the transaction.
func (tx *Tx) SendQuery(ctx context.Context, query string, args []any, each func(Row) error) error {
	if tx.sess == nil {
		return tx.failWith(tx.Query(ctx, query, args, each))
	}
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args, read: func(rows pgx.Rows) error {
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}})
}

// SendRow is SendQuery for a query that returns exactly one row, scanned
// into dest; no row fails the transaction (sql.ErrNoRows).
func (tx *Tx) SendRow(ctx context.Context, query string, args []any, dest ...any) error {
	if tx.sess == nil {
		return tx.failWith(tx.QueryRowContext(ctx, query, args...).Scan(dest...))
	}
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args, read: func(rows pgx.Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		return rows.Scan(dest...)
	}})
}

// SendOne is Send for a statement that must return a row (an UPDATE …
// RETURNING, say, whose WHERE checks the row's state): if it returns none,
// the transaction fails with none, which its caller returns from the
// statement that carried it to the server, or from the commit. On SQLite
// it runs at once and returns none itself.
func (tx *Tx) SendOne(ctx context.Context, query string, args []any, none error) error {
	read := func(rows interface{ Next() bool }, err func() error) error {
		if rows.Next() {
			return nil
		}
		if err := err(); err != nil {
			return err
		}
		return none
	}
	if tx.sess == nil {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return tx.failWith(err)
		}
		defer rows.Close()
		return tx.failWith(read(rows, rows.Err))
	}
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args, read: func(rows pgx.Rows) error {
		return read(rows, rows.Err)
	}})
}

// SendRowLate is SendRow for a row its caller can do without, read once
// the transaction has committed (in an AfterCommit hook): on PostgreSQL it
// may go to the server with the COMMIT, so it costs no round trip of its
// own even as a transaction's last statement. *read tells whether dest was
// filled. The statement's failure fails the transaction as any other's;
// a row that is missing or cannot be scanned into dest only leaves *read
// false. On SQLite it runs at once.
func (tx *Tx) SendRowLate(ctx context.Context, query string, args []any, read *bool, dest ...any) error {
	*read = false
	if tx.sess == nil {
		return tx.failWith(tx.Query(ctx, query, args, func(row Row) error {
			*read = row.Scan(dest...) == nil
			return nil
		}))
	}
	tx.statements++
	return tx.enqueue(ctx, queued{sql: query, args: args, late: true, read: func(rows pgx.Rows) error {
		if rows.Next() {
			*read = scanQuietly(rows, dest)
		}
		return rows.Err()
	}})
}

// scanQuietly scans the current row into dest without failing the rows:
// it may be read after the COMMIT was sent, and a scan error of pgx's
// would fail the rest of the batch, the COMMIT's answer too, though the
// server committed. Only the statement's own failure, which keeps the
// server from committing, fails the transaction.
func scanQuietly(rows pgx.Rows, dest []any) bool {
	fields, raw := rows.FieldDescriptions(), rows.RawValues()
	if len(fields) != len(dest) || len(raw) != len(dest) {
		return false
	}
	types := rows.Conn().TypeMap()
	for i, f := range fields {
		if types.Scan(f.DataTypeOID, f.Format, raw[i], dest[i]) != nil {
			return false
		}
	}
	return true
}

// failWith records err, if any, as the transaction's failure and returns it.
func (tx *Tx) failWith(err error) error {
	if err != nil && tx.failed == nil {
		tx.failed = err
	}
	return err
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
	if tx.sess == nil {
		_, err := tx.ExecContext(ctx, query, args...)
		if IsUniqueViolation(err) {
			return false, nil
		}
		return err == nil, err
	}
	tx.statements++
	return true, tx.enqueue(ctx, queued{sql: query, args: args, drawn: true})
}

// queue adds a statement to the session's queue (enqueue).
func (tx *Tx) queue(ctx context.Context, query string, args ...any) error {
	return tx.enqueue(ctx, queued{sql: query, args: args})
}

// enqueue adds q to the session's queue, sending the queue when it is full.
func (tx *Tx) enqueue(ctx context.Context, q queued) error {
	tx.sess.queue = append(tx.sess.queue, q)
	if len(tx.sess.queue) >= maxQueued {
		return tx.flush(ctx)
	}
	return nil
}

type pipedRow struct {
	tx  *Tx
	ctx context.Context
	q   queued
}

func (r pipedRow) Scan(dest ...any) error {
	_, err := r.tx.send(r.ctx, &r.q, func(rows pgx.Rows) error {
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
// queued statements with it in one round trip on PostgreSQL. An error from
// each stops the reading and is returned. each must not run statements of
// tx (the connection is busy reading): collect the rows, then act on them.
func (tx *Tx) Query(ctx context.Context, query string, args []any, each func(Row) error) error {
	if tx.sess == nil {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	tx.statements++
	_, err := tx.send(ctx, &queued{sql: query, args: args}, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return err
}

// control sends a statement of the group commit's own (a savepoint), not
// counted among the item's statements: queued on PostgreSQL, at once on SQLite.
func (tx *Tx) control(ctx context.Context, query string) error {
	if tx.sess == nil {
		_, err := tx.sqlTx.ExecContext(ctx, query)
		return err
	}
	return tx.queue(ctx, query)
}

// controlNow runs a statement of the group commit's own at once, dropping
// what is queued (what a failed item queued after its failure).
func (tx *Tx) controlNow(ctx context.Context, query string) error {
	if tx.sess == nil {
		_, err := tx.sqlTx.ExecContext(ctx, query)
		return err
	}
	tx.sess.queue = nil
	_, err := tx.sess.conn.ExecContext(ctx, query)
	return err
}

// flushReads sends the queue if a statement in it has rows to read
// (SendQuery): they are read by the client, so an error in reading them
// must be known before a COMMIT or a RELEASE is sent, not with it. A late
// read (SendRowLate) has no such error, and goes with the COMMIT.
func (tx *Tx) flushReads(ctx context.Context) error {
	if tx.sess == nil || !slices.ContainsFunc(tx.sess.queue, func(q queued) bool { return q.read != nil && !q.late }) {
		return nil
	}
	return tx.flush(ctx)
}

// ReadSent makes sure what SendQuery and SendRow collect is there: it sends
// the queue if a query in it has rows still to read. It returns the
// transaction's failure, if any (a queued statement's, which may have kept a
// reader from running).
func (tx *Tx) ReadSent(ctx context.Context) error {
	if err := tx.flushReads(ctx); err != nil {
		return tx.outcome(err)
	}
	return tx.failed
}

// sent counts the times the queue went to the server.
func (s *session) sent() int { return s.flushN }

// mark is where the queue ends now and how often it was sent so far (nil: zeros).
func (s *session) mark() (int, int) {
	if s == nil {
		return 0, 0
	}
	return len(s.queue), s.flushN
}

// flush sends the queued statements, if any.
func (tx *Tx) flush(ctx context.Context) error {
	if tx.sess == nil || len(tx.sess.queue) == 0 {
		return nil
	}
	_, err := tx.send(ctx, nil, nil)
	return err
}

// send sends the queued statements and then last, if not nil, in one pgx
// batch on the transaction's connection: last's rows go to read, or, with
// read nil, send returns last's command tag. The first error stops the
// batch (the server skips the rest); a queued statement's error is
// remembered as the transaction's failure, which the transaction reports
// however its caller words the errors that follow.
func (tx *Tx) send(ctx context.Context, last *queued, read func(pgx.Rows) error) (pgconn.CommandTag, error) {
	s := tx.sess
	if s.reading {
		return pgconn.CommandTag{}, errors.New("a statement was run while another's rows were being read")
	}
	queue := s.queue
	s.queue = nil
	s.flushN++
	tx.roundTrips++
	var tag pgconn.CommandTag
	var queuedErr error
	ran := false
	err := s.conn.Raw(func(dc any) error {
		ran = true
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: driver connection is %T, not pgx", dc)
		}
		b := &pgx.Batch{}
		for _, q := range queue {
			b.Queue(q.sql, q.args...)
		}
		if last != nil {
			b.Queue(last.sql, last.args...)
		}
		br := c.Conn().SendBatch(ctx, b)
		for _, q := range queue {
			var err error
			if q.read != nil {
				err = readAll(br, q.read)
			} else {
				_, err = br.Exec()
			}
			if err != nil {
				br.Close()
				if q.drawn && IsUniqueViolation(err) {
					err = fmt.Errorf("%w: %w", ErrDrawnTwice, err)
				}
				queuedErr = err
				return err
			}
		}
		var err error
		switch {
		case last != nil && read != nil:
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				s.reading = true
				err = read(rows)
				s.reading = false
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
		case last != nil:
			tag, err = br.Exec()
		}
		if err != nil {
			br.Close()
			return err
		}
		return br.Close()
	})
	if err != nil && !ran && len(queue) > 0 {
		// The connection was gone before anything was sent (database/sql
		// closes one that broke): the queued statements are lost with it,
		// and so is the transaction.
		queuedErr = err
	}
	if queuedErr != nil && tx.failed == nil {
		tx.failed = queuedErr
	}
	return tag, err
}

// readAll reads the rows of the batch's next statement through read.
func readAll(br pgx.BatchResults, read func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := read(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// result is what ExecContext returns for a statement sent through the pipeline.
type result struct{ tag pgconn.CommandTag }

func (r result) LastInsertId() (int64, error) {
	return 0, fmt.Errorf("LastInsertId is not supported on PostgreSQL")
}
func (r result) RowsAffected() (int64, error) { return r.tag.RowsAffected(), nil }

// execNow runs a statement at once on SQLite, through the statement cache.
func (tx *Tx) execNow(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st, ok := tx.db.prepared(ctx, query); ok {
		return tx.sqlTx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.sqlTx.ExecContext(ctx, query, args...)
}
