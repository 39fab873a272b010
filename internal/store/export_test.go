package store

import "time"

// MaxIDTries exposes the retry bound of InsertUnique to the external tests.
const MaxIDTries = maxIDTries

// SetLaneIdle shortens how long an idle lane lives, for tests of lane churn.
func SetLaneIdle(d time.Duration) func() {
	old := laneIdle.Swap(int64(d))
	return func() { laneIdle.Store(old) }
}
