package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints on SQLite. In WAL mode a commit appends the pages it changed
// to the log, and a checkpoint copies them back into the database file and
// flushes it. By default the connection that commits runs one whenever the
// log passes 1,000 pages: payd's one writer would stop to copy and flush
// some 4 MB, and every request queued behind it would wait. A payin's
// creation changes about ten pages, so under load that would be several
// times a second, in the tail of every request's latency.
//
// So a connection of its own, the checkpointer, copies the log every
// checkpointEvery, PASSIVE: it neither waits for nor holds up the writer or
// a reader, and flushes as the writer's synchronous setting says. Once it
// has copied the whole log, the writer's next commit starts the log over.
// The writer keeps a threshold of its own, writerCheckpointPages, far
// above what the checkpointer lets the log reach: should it fall behind,
// the log stays bounded all the same.

// writerCheckpointPages is the writer's own checkpoint threshold: 80 MiB
// of log at SQLite's 4 KiB pages.
const writerCheckpointPages = 20000

// checkpointEvery is how often the checkpointer copies the log.
var checkpointEvery atomic.Int64 // nanoseconds; 250 ms unless a test shortens it

func init() { checkpointEvery.Store(int64(250 * time.Millisecond)) }

// checkpointer copies SQLite's log into the database in the background.
type checkpointer struct {
	conn    *sql.DB
	stop    chan struct{}
	closing sync.Once
	done    chan struct{}
	// logged and copied are what the last checkpoint found: the pages in
	// the log, and those of them in the database file now. failed counts
	// the checkpoints that returned an error (the next one tries again).
	logged, copied, failed atomic.Int64
	// lastErr is the last failed checkpoint's error text.
	lastErr atomic.Value
}

// startCheckpointer starts checkpointing on conn, a handle on the database
// of its own.
func startCheckpointer(conn *sql.DB) *checkpointer {
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxIdleTime(0)
	c := &checkpointer{conn: conn, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// run checkpoints every checkpointEvery until close.
func (c *checkpointer) run() {
	defer close(c.done)
	tick := time.NewTicker(time.Duration(checkpointEvery.Load()))
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			if err := c.once(context.Background()); err != nil {
				c.failed.Add(1)
				c.lastErr.Store(err.Error())
			}
		}
	}
}

// once runs one passive checkpoint.
func (c *checkpointer) once(ctx context.Context) error {
	var busy, logged, copied int64
	if err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.logged.Store(logged)
	c.copied.Store(copied)
	return nil
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	c.closing.Do(func() { close(c.stop) })
	<-c.done
	return c.conn.Close()
}
