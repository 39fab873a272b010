package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"payd/internal/store/migrate"
)

// PostgreSQL, the database several payd processes share. Both paths are
// one pool; a write transaction takes a connection of it and sends its
// statements in pgx batches (Pipelining, pipeline.go): payd sends BEGIN
// and COMMIT itself so that they travel with other statements. pgx keeps
// its own statement cache per connection. Citus is PostgreSQL distributed
// by merchant (store/migrate/citus.go): the same driver, which says so
// (distributed).

// postgresDriver is the driver of a PostgreSQL database (or a Citus
// coordinator).
type postgresDriver struct {
	pool  *sql.DB
	citus bool
	// dsn is what the pool connects to, for the listening connection
	// (postgres_signal.go), and scope the channels' suffix, set once known.
	dsn   string
	scope channelScope
	// writeTimeout bounds each write transaction (Options.Timeout).
	writeTimeout time.Duration
}

func openPostgres(ctx context.Context, dsn string, opt Options) (*DB, error) {
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
	drv := &postgresDriver{pool: pool, dsn: dsn}
	db := newDB(Postgres, drv, pool, pool, opt)
	if err := db.ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if drv.citus, err = isCitus(ctx, pool); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (d *postgresDriver) begin(ctx context.Context) (conn, error) {
	var deadline time.Time
	if d.writeTimeout > 0 {
		deadline = time.Now().Add(d.writeTimeout)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &postgresConn{conn: c, deadline: deadline}, nil
}

// bound sets the bound of each write transaction (Options.Timeout).
func (d *postgresDriver) bound(timeout time.Duration) { d.writeTimeout = timeout }

// readTimeout: the Reader's one-row reads are bounded as the writes are.
func (d *postgresDriver) readTimeout(timeout time.Duration) time.Duration { return timeout }

// lane: transactions run side by side on the pool, unless their context
// names a lane (WithLane).
func (d *postgresDriver) lane(ctx context.Context) (string, bool) {
	lane := LaneOf(ctx)
	return lane, lane != ""
}

func (d *postgresDriver) betweenBatches(context.Context) {}
func (d *postgresDriver) oneWriter() bool                { return false }
func (d *postgresDriver) distributed() bool              { return d.citus }

func (d *postgresDriver) rowLock(of string, skip bool) string {
	s := " FOR UPDATE"
	if of != "" {
		s += " OF " + of
	}
	if skip {
		s += " SKIP LOCKED"
	}
	return s
}

// claimAcross locks nothing on Citus, which cannot lock the rows of a
// query that spans nodes: the claim's update rechecks (recheckAcross).
func (d *postgresDriver) claimAcross(of string) string {
	if d.citus {
		return ""
	}
	return d.rowLock(of, true)
}

func (d *postgresDriver) recheckAcross(cond string) string {
	if d.citus {
		return cond
	}
	return ""
}

func (d *postgresDriver) readPool() querier { return d.pool }
func (d *postgresDriver) close() error      { return nil }

// lockMigrations takes the migration lock (migrate.LockID) on conn,
// waiting for the process that holds it, if one does, to finish its
// migration: on Citus one migration of any schema in the database at a
// time, which can take tens of seconds. Before it waits it says so (wait).
func (d *postgresDriver) lockMigrations(ctx context.Context, conn *sql.Conn, wait func()) (func(), error) {
	release := func() {
		conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrate.LockID)
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", migrate.LockID).Scan(&locked); err != nil {
		return nil, err
	}
	if locked {
		return release, nil
	}
	if wait != nil {
		wait()
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrate.LockID); err != nil {
		return nil, err
	}
	return release, nil
}

// migrateAgain is false: other processes' migrations are waited for (lockMigrations).
func (d *postgresDriver) migrateAgain(error) bool { return false }

func (d *postgresDriver) citusOn(ctx context.Context, conn *sql.Conn) (bool, error) {
	return isCitus(ctx, conn)
}

// migrated looks for schema_migrations on the search path.
func (d *postgresDriver) migrated(ctx context.Context) (bool, error) {
	var found bool
	err := d.readPool().QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&found)
	return found, err
}

// isCitus reports whether the database has the citus extension.
func isCitus(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM pg_extension WHERE extname = 'citus'`).Scan(&n)
	return n > 0, err
}

// postgresConn is a write transaction on PostgreSQL: a connection of the
// pool, on which the transaction's BEGIN goes with its first batch.
type postgresConn struct {
	conn *sql.Conn
	// begun is set once the BEGIN was sent: from then on the connection is
	// in a transaction, which must end.
	begun bool
	// deadline, when set, is when the transaction must have ended
	// (Options.Timeout): every exchange of it is bounded by it
	// (bounded), and cancels holds the bounds' cancel functions, called
	// when the connection goes back to the pool.
	deadline time.Time
	cancels  []context.CancelFunc
}

// bounded is ctx bounded by the transaction's deadline, if it has one: an
// exchange still waiting for the server then fails, and pgx closes the
// connection, which the pool drops.
func (c *postgresConn) bounded(ctx context.Context) context.Context {
	if c.deadline.IsZero() {
		return ctx
	}
	ctx, cancel := context.WithDeadline(ctx, c.deadline)
	c.cancels = append(c.cancels, cancel)
	return ctx
}

// run sends b in one pgx batch on the transaction's connection, after the
// BEGIN when none was sent yet.
func (c *postgresConn) run(ctx context.Context, b *batch) (sql.Result, error) {
	ctx = c.bounded(ctx)
	b.trips++
	var res sql.Result
	err := c.conn.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: driver connection is %T, not pgx", dc)
		}
		pb := &pgx.Batch{}
		begin := !c.begun
		if begin {
			pb.Queue("BEGIN")
		}
		for _, q := range b.queue {
			pb.Queue(q.sql, q.args...)
		}
		if b.last != nil {
			pb.Queue(b.last.sql, b.last.args...)
		}
		c.begun = true
		br := pc.Conn().SendBatch(ctx, pb)
		if begin {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		for _, q := range b.queue {
			var err error
			if q.read != nil {
				err = readAll(br, q.read, q.late)
			} else {
				_, err = br.Exec()
			}
			if err != nil {
				br.Close()
				return err
			}
			b.ran++
		}
		var err error
		switch {
		case b.last != nil && b.read != nil:
			var rows pgx.Rows
			if rows, err = br.Query(); err == nil {
				err = b.read(rows)
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
		case b.last != nil:
			var tag pgconn.CommandTag
			tag, err = br.Exec()
			res = result{tag}
		}
		if err != nil {
			br.Close()
			return err
		}
		return br.Close()
	})
	return res, err
}

// readAll reads the rows of the batch's next statement through read; a
// late read's rows fail only that read when they cannot be scanned
// (quietRows).
func readAll(br pgx.BatchResults, read func(rowSet) error, late bool) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	var rs rowSet = rows
	if late {
		rs = quietRows{rows}
	}
	if err := read(rs); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// quietRows are the rows of a late read (SendRowLate), which may be read
// after the COMMIT was sent: a scan error of pgx's would fail the rest of
// the batch, the COMMIT's answer too, though the server committed. Their
// Scan fails the read alone; only the statement's own failure, which keeps
// the server from committing, fails the transaction.
type quietRows struct{ pgx.Rows }

func (r quietRows) Scan(dest ...any) error {
	fields, raw := r.FieldDescriptions(), r.RawValues()
	if len(fields) != len(dest) || len(raw) != len(dest) {
		return fmt.Errorf("scan %d columns into %d values", len(fields), len(dest))
	}
	types := r.Conn().TypeMap()
	for i, f := range fields {
		if err := types.Scan(f.DataTypeOID, f.Format, raw[i], dest[i]); err != nil {
			return err
		}
	}
	return nil
}

// result is what ExecContext returns for a statement sent through the pipeline.
type result struct{ tag pgconn.CommandTag }

func (r result) LastInsertId() (int64, error) {
	return 0, fmt.Errorf("LastInsertId is not supported on PostgreSQL")
}
func (r result) RowsAffected() (int64, error) { return r.tag.RowsAffected(), nil }

// rows runs a query on the connection through database/sql, the BEGIN
// first if it was not sent yet.
func (c *postgresConn) rows(ctx context.Context, tx *Tx, query string, args []any) (*sql.Rows, error) {
	ctx = c.bounded(ctx)
	if !c.begun {
		c.begun = true
		tx.roundTrips++
		if _, err := c.conn.ExecContext(ctx, "BEGIN"); err != nil {
			return nil, err
		}
	}
	return c.conn.QueryContext(ctx, query, args...)
}

func (c *postgresConn) exec(ctx context.Context, query string) error {
	_, err := c.conn.ExecContext(c.bounded(ctx), query)
	return err
}

// insertDrawn sends the insert: a taken id fails the transaction with
// ErrDrawnTwice (send), and Do runs it again.
func (c *postgresConn) insertDrawn(ctx context.Context, tx *Tx, q queued) (bool, error) {
	tx.statements++
	return true, tx.enqueue(ctx, q)
}

// setLocal queues SET LOCAL: it goes with the transaction's next batch.
func (c *postgresConn) setLocal(ctx context.Context, tx *Tx, name, value string) error {
	return tx.control(ctx, "SET LOCAL "+name+" = "+value)
}

// lockKey sends an advisory lock of the transaction's: pg_advisory_xact_lock
// waits for it; idempotency_lock (migration 0026, named for its first
// user) raises keyLocked when another transaction holds it.
func (c *postgresConn) lockKey(ctx context.Context, tx *Tx, key int64, try bool) error {
	if try {
		return tx.Send(ctx, `SELECT idempotency_lock($1)`, key)
	}
	return tx.Send(ctx, `SELECT pg_advisory_xact_lock($1)`, key)
}

// commit sends the queue with the COMMIT, in one batch; a transaction
// that sent nothing and has nothing queued has nothing to commit.
func (c *postgresConn) commit(ctx context.Context, tx *Tx) error {
	if !c.begun && len(tx.sess.queue) == 0 {
		return nil
	}
	res, err := tx.send(ctx, &queued{sql: "COMMIT"}, nil)
	if err == nil && res.(result).tag.String() == "ROLLBACK" {
		// A statement failed earlier and its caller went on: the server
		// rolled the transaction back instead.
		err = errors.New("the transaction was rolled back: one of its statements had failed")
	}
	return err
}

// rollback sends ROLLBACK if the transaction reached the server, even
// when the caller's context is done: the connection goes back to the pool,
// and one still in a transaction is discarded by the driver.
func (c *postgresConn) rollback() {
	if !c.begun {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.conn.ExecContext(ctx, "ROLLBACK")
}

// close hands the connection back to the pool.
func (c *postgresConn) close() {
	c.conn.Close()
	for _, cancel := range c.cancels {
		cancel()
	}
}
