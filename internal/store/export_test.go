package store

import (
	"context"
	"time"
)

// MaxIDTries exposes the retry bound of InsertUnique to the external tests.
const MaxIDTries = maxIDTries

// SetLaneIdle shortens how long an idle lane lives, for tests of lane churn.
func SetLaneIdle(d time.Duration) func() {
	old := laneIdle.Swap(int64(d))
	return func() { laneIdle.Store(old) }
}

// LaneFor exposes the lane a transaction under ctx goes through.
func LaneFor(db *DB, ctx context.Context) (string, bool) { return db.laneFor(ctx) }
