package store

import (
	"context"
	"os"
	"time"
)

// SetLogSync replaces how payd flushes SQLite's log after a commit.
func SetLogSync(f func(*os.File) error) func() {
	old := syncLog
	syncLog = f
	return func() { syncLog = old }
}

// MaxIDTries exposes the retry bound of InsertUnique to the external tests.
const MaxIDTries = maxIDTries

// SetLaneIdle shortens how long an idle lane lives, for tests of lane churn.
func SetLaneIdle(d time.Duration) func() {
	old := laneIdle.Swap(int64(d))
	return func() { laneIdle.Store(old) }
}

// Queued reports how many transactions wait on the lane ctx goes through.
func (db *DB) Queued(ctx context.Context) int {
	name, ok := db.drv.lane(ctx)
	if !ok {
		return 0
	}
	db.lanes.mu.Lock()
	defer db.lanes.mu.Unlock()
	if l, ok := db.lanes.queue[name]; ok {
		return len(l.q)
	}
	return 0
}

// CloseConn closes the connection under a PostgreSQL transaction, as
// database/sql does with one that broke.
func (tx *Tx) CloseConn() { tx.sess.conn.(*postgresConn).conn.Close() }

// SetCheckpointEvery changes how often the SQLite checkpointer of a DB
// opened afterwards copies the log.
func SetCheckpointEvery(d time.Duration) func() {
	old := checkpointEvery.Swap(int64(d))
	return func() { checkpointEvery.Store(old) }
}

// Checkpointed reports what the SQLite checkpointer's last checkpoint found:
// the pages in the log and those copied into the database file, and how
// many checkpoints failed, the last of them with lastErr.
func (db *DB) Checkpointed() (logged, copied, failed int64, lastErr string) {
	ckpt := db.drv.(*sqliteDriver).ckpt
	lastErr, _ = ckpt.lastErr.Load().(string)
	return ckpt.logged.Load(), ckpt.copied.Load(), ckpt.failed.Load(), lastErr
}
