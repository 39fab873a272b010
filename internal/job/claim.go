package job

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"payd/internal/store"
)

// ClockOffsetOf is the test-clock offset, in milliseconds, of the merchant
// whose id is in column (zero for none), as SQL: the one spelling of it for
// queries that read a merchant's time on the database (a job's due time, a
// message's sent_at).
func ClockOffsetOf(column string) string {
	return `COALESCE((SELECT m.clock_offset_ms FROM merchants m WHERE m.id = ` + column + `), 0)`
}

// dueWhere selects due jobs: run_at is read on the clock of the job's
// merchant. $1 is the real time; $2 is the real time plus the largest
// merchant clock offset, a bound that lets the (state, run_at) index stop
// the scan at the due jobs instead of reading every waiting one (payins,
// payouts, checkouts and PayID requests wait with expiry jobs).
var dueWhere = `j.state = ` + availableSQL + ` AND j.run_at <= $2
	AND j.run_at <= $1 + ` + ClockOffsetOf("j.merchant_id")

// scope is whose jobs a claim takes: every merchant's (and those of no
// merchant) when all is set, otherwise merchant's alone ("" for those of no
// merchant).
type scope struct {
	all      bool
	merchant string
}

// filter appends the scope's condition on jobs j to a query's args, and
// returns the condition.
func (sc scope) filter(args []any) (string, []any) {
	if sc.all {
		return "", args
	}
	args = append(args, sc.merchant)
	return " AND j.merchant_id = $" + strconv.Itoa(len(args)), args
}

// dueBound is the real time plus the largest merchant clock offset (zero
// in production).
func (q *Queue) dueBound(ctx context.Context, now int64) (int64, error) {
	var offset int64
	err := q.db.Read().QueryRowContext(ctx, `SELECT COALESCE(MAX(clock_offset_ms), 0) FROM merchants`).Scan(&offset)
	return now + max(0, offset), err
}

// RunOne claims one due job (of merchant clockOf only, when given), runs
// it, and reports whether there was one.
func (q *Queue) RunOne(ctx context.Context, clockOf string) (bool, error) {
	n, err := q.runBatch(ctx, scope{all: clockOf == "", merchant: clockOf}, 1)
	return n > 0, err
}

// runBatch claims up to limit due jobs of sc, runs them in one transaction,
// and returns how many it claimed.
func (q *Queue) runBatch(ctx context.Context, sc scope, limit int) (int, error) {
	now := q.clock.Now().UnixMilli()
	bound, err := q.dueBound(ctx, now)
	if err != nil {
		return 0, err
	}
	if sc.all && q.db.Distributed() {
		merchants, err := q.dueMerchants(ctx, now, bound)
		if err != nil {
			return 0, err
		}
		// runAcross takes up to limit jobs of each merchant.
		return q.runAcross(ctx, now, bound, merchants[:min(len(merchants), limit)], limit)
	}
	// A cheap look on the read path first: idle polling must not take
	// SQLite's write lock. Of every merchant, it spans merchants (not on
	// Citus: runAcross), as the claim does.
	where, args := sc.filter([]any{now, bound})
	if due, err := Probe(ctx, q.db.Read(), `jobs j WHERE `+dueWhere+where, args...); err != nil || !due {
		return 0, err
	}
	return q.runJobs(ctx, func(tx *store.Tx) ([]Job, error) { return q.claim(ctx, tx, now, bound, sc, limit) })
}

// runJobs runs the jobs that claim locks, in one transaction, and returns
// how many it claimed. Jobs of a kind with a batch handler that come
// together in the claim run as one batch (runClaimedGroup), or, should the
// batch fail, one by one.
func (q *Queue) runJobs(ctx context.Context, claim func(tx *store.Tx) ([]Job, error)) (int, error) {
	type ran struct {
		job     Job
		outcome string
		err     error
	}
	var results []ran
	claimed := 0
	started := q.clock.Now()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		results = results[:0]
		jobs, err := claim(tx)
		if err != nil {
			return err
		}
		claimed = len(jobs)
		for len(jobs) > 0 {
			group := jobs[:q.together(jobs)]
			jobs = jobs[len(group):]
			if len(group) > 1 {
				ok, err := q.runClaimedGroup(ctx, tx, group)
				if err != nil {
					return err
				}
				if ok {
					for _, j := range group {
						results = append(results, ran{j, outcomeDone, nil})
					}
					continue
				}
			}
			for _, j := range group {
				outcome, runErr, err := q.runClaimed(ctx, tx, j)
				if err != nil {
					return err
				}
				results = append(results, ran{j, outcome, runErr})
			}
		}
		return nil
	})
	if claimed == 0 || ctx.Err() != nil {
		return claimed, nil // none, or shutting down: the rollback handed them back
	}
	if err != nil {
		return claimed, fmt.Errorf("run jobs: %w", err)
	}
	took := q.clock.Now().Sub(started) / time.Duration(len(results))
	for _, r := range results {
		q.observe(r.job.Kind, r.outcome, took)
		if r.err != nil {
			q.log.Warn("job run failed", "job_id", r.job.ID, "kind", r.job.Kind, "attempt", r.job.Attempt, "outcome", r.outcome, "err", r.err.Error())
		}
	}
	return claimed, nil
}

// runClaimed runs one claimed job inside a savepoint of tx, and deletes it
// when its handler succeeds: if the handler fails, its writes are undone
// but the claim is kept, so the failure is recorded in the same transaction
// and no other worker can run the job before its backoff. The savepoint
// travels with the handler's statements (store.Tx.Savepoint), the delete
// with the transaction's next one. The delete is the claiming
// transaction's own, not the savepoint's: on PostgreSQL a row locked by a
// transaction and changed by one of its savepoints gets a multixact, whose
// lookups (every read of the row until vacuum) contend on a small shared
// cache under load.
// err is set only when tx itself cannot go on.
func (q *Queue) runClaimed(ctx context.Context, tx *store.Tx, j Job) (outcome string, runErr, err error) {
	runErr, err = tx.Savepoint(ctx, "job_run", func(tx *store.Tx) error { return q.run(ctx, tx, j) })
	switch {
	case err != nil:
		return "", runErr, err
	case runErr == nil:
		return outcomeDone, nil, tx.Send(ctx, `DELETE FROM jobs WHERE merchant_id = $1 AND id = $2`, j.ClockOf, j.ID)
	case ctx.Err() != nil:
		return "", runErr, ctx.Err() // shutting down: the rollback hands the jobs back
	}
	outcome, err = q.recordFailure(ctx, tx, j, runErr)
	return outcome, runErr, err
}

// claimBatch is how many due jobs one transaction claims and runs: their
// effects commit together, one flush for all.
const claimBatch = 16

// claim locks up to limit due jobs of sc.
func (q *Queue) claim(ctx context.Context, tx *store.Tx, now, bound int64, sc scope, limit int) ([]Job, error) {
	// The jobs table swings fast (a burst of checkouts leaves thousands of
	// expiry jobs waiting): a plan kept from when it was small would read
	// them all on every claim (store.Tx.PlanEachTime).
	if err := tx.PlanEachTime(ctx); err != nil {
		return nil, err
	}
	where, args := sc.filter([]any{now, bound})
	var jobs []Job
	err := tx.Query(ctx, `SELECT j.id, j.kind, j.merchant_id, j.payload, j.attempts, `+ClockOffsetOf("j.merchant_id")+` FROM jobs j
		WHERE `+dueWhere+where+`
		ORDER BY j.run_at, j.id`+store.Limit(limit)+q.db.SkipLocked("j"), args, func(row store.Row) error {
		j, err := scanJob(row)
		jobs = append(jobs, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	// The jobs' own statements keep their generic plans.
	if err := tx.PlanAsUsual(ctx); err != nil {
		return nil, err
	}
	return jobs, nil
}

// scanJob reads a claimed job, counting this run among its attempts.
func scanJob(row store.Row) (Job, error) {
	var j Job
	var payload string
	var offsetMillis int64
	if err := row.Scan(&j.ID, &j.Kind, &j.ClockOf, &payload, &j.Attempt, &offsetMillis); err != nil {
		return Job{}, err
	}
	j.Payload = json.RawMessage(payload)
	j.ClockOffset = time.Duration(offsetMillis) * time.Millisecond
	j.Attempt++
	return j, nil
}
