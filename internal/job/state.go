package job

import "context"

// State is where a job is in the queue: the jobs table's state column. A
// job that ran and committed is gone from the table.
type State string

const (
	// Available is a job waiting for its run_at, or due: workers claim it.
	Available State = "available"
	// Held is a job enqueued for its lane run (Options.Lane), which no
	// worker of any process claims until it is released (Available).
	Held State = "held"
	// Failed is a job that used its attempts: it never runs again, and
	// stays in the table with its last error for an operator to see.
	Failed State = "failed"
)

// The states as SQL literals, for the statements that name them: a literal,
// not a parameter, so that the planner sees which jobs a statement reads.
const (
	availableSQL = `'` + string(Available) + `'`
	heldSQL      = `'` + string(Held) + `'`
	failedSQL    = `'` + string(Failed) + `'`
)

// Queued counts the jobs waiting or due, those held for their lane run too
// (not those that failed), for a gauge of the queue's depth.
func (q *Queue) Queued(ctx context.Context) (int64, error) {
	var n int64
	err := q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state IN (`+availableSQL+`, `+heldSQL+`)`).Scan(&n)
	return n, err
}
