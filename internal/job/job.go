package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// Job is a claimed job as its handler sees it.
type Job struct {
	ID   int64
	Kind string
	// ClockOf is the merchant the job belongs to and whose clock it runs
	// on ("" for none).
	ClockOf string
	Payload json.RawMessage
	// Attempt counts from 1.
	Attempt int
	// ClockOffset is the test-clock offset of ClockOf's merchant when the
	// job was claimed (zero without ClockOf, and in production): its
	// handler reads the merchant's time as clock.At(ClockOffset), as a
	// request does from its principal, without another query.
	ClockOffset time.Duration
}

// Handler does a job's work inside tx: a kind's Work with the job's payload
// decoded (Register). Returning an error rolls the work back and retries the
// job later with a growing delay.
type Handler func(ctx context.Context, tx *store.Tx, j Job) error

// Observer hears how each run ended (outcomeDone, outcomeRetry,
// outcomeFailed: "done", "retry", "failed"), for metrics.
type Observer func(kind, outcome string, took time.Duration)

// The outcomes of a run an Observer hears.
const (
	outcomeDone   = "done"
	outcomeRetry  = "retry"
	outcomeFailed = "failed"
)

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

// Queue enqueues and runs jobs.
type Queue struct {
	db       *store.DB
	clock    clock.Clock
	log      *slog.Logger
	observe  Observer
	mu       sync.RWMutex
	handlers map[string]Handler
	wake     chan struct{}
	// laneMu guards laneCtx and laneRuns: laneCtx is the context of Run
	// while it works the queue (nil otherwise), under which jobs enqueued
	// with a Lane run at once after their commit.
	laneMu   sync.Mutex
	laneCtx  context.Context
	laneRuns sync.WaitGroup
	// hintMu guards hinted, the merchants of due jobs this process has
	// enqueued (not on SQLite, see runAny), and polledAt, when a worker last
	// asked which merchants have due jobs (on Citus, every shard).
	hintMu   sync.Mutex
	hinted   map[string]bool
	polledAt time.Time
	// PollInterval is how often idle workers look for jobs enqueued by other
	// processes or that became due (a local enqueue wakes them at once).
	PollInterval time.Duration
}

// New returns a queue on db.
func New(db *store.DB, clk clock.Clock, log *slog.Logger, observe Observer) *Queue {
	if observe == nil {
		observe = func(string, string, time.Duration) {}
	}
	return &Queue{db: db, clock: clk, log: log, observe: observe, handlers: map[string]Handler{},
		wake: make(chan struct{}, 1), hinted: map[string]bool{}, PollInterval: 250 * time.Millisecond}
}

// register makes h the handler of kind (Register); it panics when kind has
// one already.
func (q *Queue) register(kind string, h Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.handlers[kind]; ok {
		panic(fmt.Sprintf("job: kind %q registered twice", kind))
	}
	q.handlers[kind] = h
}

// Handler returns the handler registered for kind (Register), which decodes
// the job's payload and does its work, for a test that runs a job's work in
// a transaction of its own.
func (q *Queue) Handler(kind string) (Handler, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	h, ok := q.handlers[kind]
	return h, ok
}

// Wrap replaces the handler registered for kind by wrap of it, for a test
// that measures a job's work (its round trips) as the queue runs it. It
// panics when kind has no handler: there is nothing to wrap.
func (q *Queue) Wrap(kind string, wrap func(Handler) Handler) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h, ok := q.handlers[kind]
	if !ok {
		panic(fmt.Sprintf("job: no handler of kind %q to wrap", kind))
	}
	q.handlers[kind] = wrap(h)
}

// Options places a job in time.
type Options struct {
	// RunAt is when the job becomes due; zero means now.
	RunAt time.Time
	// ClockOf names the merchant whose (sandbox test) clock RunAt is read on,
	// and whose rows hold the job; empty means the real clock.
	ClockOf string
	// UniqueKey, when set, makes a second enqueue with the same key a no-op.
	UniqueKey string
	// MaxAttempts bounds retries (default 25).
	MaxAttempts int
	// Lane, for a job due now, runs it right after the enqueuing transaction
	// commits, in that store lane (store.WithLane) on PostgreSQL: work on the
	// same rows as the enqueuer (a receipt's clearing, on the merchant's
	// balance) is group-committed with it instead of alternating with
	// unlaned job batches. The job is held for that run (state held, which
	// no worker of any process claims) and stays in the queue until it
	// commits; should it not run (a failure, a crash), the job is released
	// to the workers, at once or after maxLaneHold (5 s).
	Lane string
}

const defaultMaxAttempts = 25

// enqueue adds a job of kind with payload's JSON in tx (Enqueue); it exists
// only if tx commits.
func (q *Queue) enqueue(ctx context.Context, tx *store.Tx, kind string, payload any, opt Options) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	runAt := opt.RunAt
	if runAt.IsZero() {
		runAt = q.clock.Now()
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = defaultMaxAttempts
	}
	const insert = insertJob + availableSQL + `, $6, $7)` + onKeyTaken
	args := []any{kind, opt.ClockOf, string(body), runAt.UnixMilli(), opt.MaxAttempts, nullable(opt.UniqueKey), q.clock.Now().UnixMilli()}
	if opt.Lane == "" || tx.DB().OneWriter() {
		if err := tx.Send(ctx, insert, args...); err != nil {
			return fmt.Errorf("enqueue %s: %w", kind, err)
		}
		tx.AfterCommit(func() { q.wakeFor(opt.ClockOf, runAt) })
		return nil
	}
	// Held in its row, so that no worker claims it between its commit and
	// its lane run, which finds it by its unique key: nothing needs to come
	// back before the commit. (Held in this process's memory by its id, read
	// back for that before the commit, a receipt took a round trip more, and
	// other processes' workers took held jobs.)
	key, insertHeld := opt.UniqueKey, insertHeldUnique
	if key == "" {
		// Drawn, not given: a clash, were there one, fails the transaction
		// rather than drop the job.
		key, insertHeld = laneKeyPrefix+store.RandomID(laneKeyLen), insertHeldDrawn
		args[5] = key
	}
	if err := tx.Send(ctx, insertHeld, args...); err != nil {
		return fmt.Errorf("enqueue %s: %w", kind, err)
	}
	tx.AfterCommit(func() { q.runInLane(opt.Lane, opt.ClockOf, key) })
	return nil
}

// laneKeyPrefix begins the unique key a lane job without one is given, by
// which its lane run finds it, and laneKeyLen is the length of its random
// part (103 bits).
const (
	laneKeyPrefix = "lane:"
	laneKeyLen    = 20
)

// insertJob is a job's insert up to its state; onKeyTaken makes a second
// enqueue with the same unique key do nothing.
const (
	insertJob = `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
		VALUES ($1, $2, $3, $4, $5, `
	onKeyTaken = ` ON CONFLICT (merchant_id, unique_key) DO NOTHING`
)

// The inserts of a job held for its lane run, under a key drawn for it or
// the one it was given.
const (
	insertHeldDrawn  = insertJob + heldSQL + `, $6, $7)`
	insertHeldUnique = insertHeldDrawn + onKeyTaken
)

// maxLaneHold bounds how long a job stays held for its lane run: a process
// that enqueued one and stopped (crashed) before running it leaves it held,
// and any process's queue releases it after this (releaseStale). A lane run
// comes milliseconds after its commit; one that comes after the release
// finds the job gone, and the worker that took it ran it once all the same.
const maxLaneHold = 5 * time.Second

// staleSweepEvery is how often a queue releases jobs held past maxLaneHold.
const staleSweepEvery = time.Second

// runInLane runs merchant's job held under key at once, in lane, if the
// queue is being worked (Run); otherwise, or if it fails, it releases the
// job to the workers.
func (q *Queue) runInLane(lane, merchant, key string) {
	q.laneMu.Lock()
	running := q.laneCtx != nil
	if running {
		ctx := store.WithLane(q.laneCtx, lane)
		q.laneRuns.Go(func() {
			if !q.runLaned(ctx, lane, merchant, key) {
				q.release(merchant, key)
			}
		})
	}
	q.laneMu.Unlock()
	if !running {
		q.release(merchant, key)
	}
}

// runLaned runs merchant's job held under key in the transaction that
// claims it, and reports whether it is done with: it ran and committed, or
// it had been released already (releaseStale). It is the common case made
// short: the claim deletes the job, and the handler runs without a
// savepoint of its own. If the handler fails, the whole transaction rolls
// back, so the job is held again as it was; released, a worker runs it, in
// a savepoint that records the failure and its retry (runClaimed).
func (q *Queue) runLaned(ctx context.Context, lane, merchant, key string) bool {
	var j Job
	started := q.clock.Now()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		jobs, err := q.claimHeld(ctx, tx, merchant, key)
		if err != nil || len(jobs) == 0 {
			j = Job{}
			return err
		}
		j = jobs[0]
		return q.run(ctx, tx, j)
	})
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil && j.ID == 0:
		q.log.Error("job queue", "job_key", key, "lane", lane, "err", err)
		return false
	case err != nil:
		q.log.Info("job run in its lane failed; a worker retries it", "job_id", j.ID, "kind", j.Kind, "err", err.Error())
		return false
	case j.ID == 0:
		return true
	}
	q.observe(j.Kind, outcomeDone, q.clock.Now().Sub(started))
	return true
}

// release hands merchant's job held under key to the workers, and wakes
// them. Should it fail, releaseStale does it after maxLaneHold.
func (q *Queue) release(merchant, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), maxLaneHold)
	defer cancel()
	err := q.db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = `+availableSQL+` WHERE merchant_id = $1 AND unique_key = $2 AND state = `+heldSQL, merchant, key)
		return err
	})
	if err != nil {
		q.log.Error("job queue: release a held job", "job_key", key, "err", err)
		return
	}
	q.wakeFor(merchant, time.Time{})
}

// releaseStale releases, at once and every staleSweepEvery until ctx
// ends, the jobs held longer than maxLaneHold: their lane run will not come
// (their process stopped before it).
func (q *Queue) releaseStale(ctx context.Context) {
	ticker := time.NewTicker(staleSweepEvery)
	defer ticker.Stop()
	for {
		var merchants []string
		err := q.db.Exec(ctx, func(tx *store.Tx) error {
			merchants = nil
			return tx.Query(ctx, `UPDATE jobs SET state = `+availableSQL+` WHERE state = `+heldSQL+` AND created_at <= $1 RETURNING merchant_id`,
				[]any{q.clock.Now().Add(-maxLaneHold).UnixMilli()}, func(row store.Row) error {
					var m string
					err := row.Scan(&m)
					merchants = append(merchants, m)
					return err
				})
		})
		n := len(merchants)
		switch {
		case err != nil && ctx.Err() == nil:
			q.log.Error("job queue: release stale held jobs", "err", err)
		case n > 0:
			q.log.Info("job queue: released jobs held for a lane run that did not come", "jobs", n)
			q.hint(merchants...) // workers run hinted merchants' jobs first
			q.Wake()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// ClockOffsetOf is the test-clock offset, in milliseconds, of the merchant
// whose id is in column (zero for none), as SQL: the one spelling of it for
// queries that read a merchant's time on the database (a job's due time, a
// message's sent_at).
func ClockOffsetOf(column string) string {
	return `COALESCE((SELECT m.clock_offset_ms FROM merchants m WHERE m.id = ` + column + `), 0)`
}

// claimHeld deletes merchant's job held under key for its lane run,
// returning it, if it is still held (not released to the workers); the
// deletion commits with the job's work. Held jobs are claimed by no one
// else, so there is no lock to skip.
func (q *Queue) claimHeld(ctx context.Context, tx *store.Tx, merchant, key string) ([]Job, error) {
	var jobs []Job
	err := tx.Query(ctx, `DELETE FROM jobs j WHERE j.merchant_id = $2 AND j.unique_key = $1 AND j.state = `+heldSQL+`
		RETURNING j.id, j.kind, j.merchant_id, j.payload, j.attempts, `+ClockOffsetOf("j.merchant_id"),
		[]any{key, merchant}, func(row store.Row) error {
			j, err := scanJob(row)
			jobs = append(jobs, j)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("claim job %s: %w", key, err)
	}
	return jobs, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// wakeFor tells the workers of a job of merchant enqueued by this process,
// due at runAt on the merchant's clock. One due later is left to their
// polls: they would find nothing now.
func (q *Queue) wakeFor(merchant string, runAt time.Time) {
	if runAt.After(q.clock.Now()) {
		return
	}
	q.hint(merchant)
	q.Wake()
}

// Wake makes idle workers look for work now.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run works the queue with n workers until ctx is done. A job that is running
// when ctx ends is rolled back and stays in the queue for the next process.
func (q *Queue) Run(ctx context.Context, n int) {
	q.laneMu.Lock()
	q.laneCtx = ctx
	q.laneMu.Unlock()
	var wg sync.WaitGroup
	for range max(1, n) {
		wg.Go(func() { q.worker(ctx) })
	}
	if !q.db.OneWriter() { // a lane run held jobs for (Enqueue)
		wg.Go(func() { q.releaseStale(ctx) })
	}
	wg.Wait()
	q.laneMu.Lock()
	q.laneCtx = nil
	q.laneMu.Unlock()
	q.laneRuns.Wait()
}

func (q *Queue) worker(ctx context.Context) {
	ticker := time.NewTicker(q.PollInterval)
	defer ticker.Stop()
	for ctx.Err() == nil {
		ran, err := q.runAny(ctx)
		if err != nil && ctx.Err() == nil {
			q.log.Error("job queue", "err", err)
		}
		if ran > 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-q.wake:
		case <-ticker.C:
		}
	}
}

// runAny runs a batch of due jobs of any merchant, for a worker. On SQLite,
// where every write goes through one lane anyway, it claims across
// merchants. On PostgreSQL and Citus, where learning which merchants have due
// jobs reads every due job (on Citus, asks every shard), it asks at most once
// a PollInterval across the process's workers, and hints the merchants it
// learns of; it runs the hinted merchants' jobs (those this process has
// enqueued, or learned of), a batch each, in its merchant's lane
// (runAcross). The question is asked on time even while hints keep coming,
// so jobs that become due with time, or that other processes enqueue, are
// not left behind a busy process's own.
func (q *Queue) runAny(ctx context.Context) (int, error) {
	if q.db.OneWriter() {
		return q.runBatch(ctx, scope{all: true}, claimBatch)
	}
	q.hintMu.Lock()
	poll := q.clock.Now().Sub(q.polledAt) >= q.PollInterval
	if poll {
		q.polledAt = q.clock.Now()
	}
	idle := !poll && len(q.hinted) == 0
	q.hintMu.Unlock()
	if idle {
		return 0, nil
	}
	now := q.clock.Now().UnixMilli()
	bound, err := q.dueBound(ctx, now)
	if err != nil {
		return 0, err
	}
	if poll {
		merchants, err := q.dueMerchants(ctx, now, bound)
		if err != nil {
			return 0, err
		}
		q.hint(merchants...)
	}
	return q.runAcross(ctx, now, bound, q.takeHinted(), claimBatch)
}

// hint records merchants with jobs due, for runAny (not on SQLite).
func (q *Queue) hint(merchants ...string) {
	if q.db.OneWriter() || len(merchants) == 0 {
		return
	}
	q.hintMu.Lock()
	defer q.hintMu.Unlock()
	for _, m := range merchants {
		q.hinted[m] = true
	}
}

// takeHinted returns the hinted merchants, in a random order, and forgets them.
func (q *Queue) takeHinted() []string {
	q.hintMu.Lock()
	defer q.hintMu.Unlock()
	out := make([]string, 0, len(q.hinted))
	for m := range q.hinted {
		out = append(out, m)
	}
	clear(q.hinted)
	return out
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
	var probe int
	where, args := sc.filter([]any{now, bound})
	err = q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM jobs j WHERE `+dueWhere+where+` LIMIT 1) d`, args...).Scan(&probe)
	if err != nil || probe == 0 {
		return 0, err
	}
	return q.runJobs(ctx, func(tx *store.Tx) ([]Job, error) { return q.claim(ctx, tx, now, bound, sc, limit) })
}

// acrossMerchants bounds how many merchants with due jobs dueMerchants reads.
const acrossMerchants = 16

// dueMerchants lists the merchants whose due jobs have waited longest (up to
// acrossMerchants, in a random order, so that workers spread over them), for
// runAcross: with more merchants due than that, a busy merchant's jobs do
// not keep the others' waiting.
func (q *Queue) dueMerchants(ctx context.Context, now, bound int64) ([]string, error) {
	// It spans merchants: a multi-shard read, without locks.
	merchants, err := store.QueryColumn[string](ctx, q.db.Read(),
		`SELECT j.merchant_id FROM jobs j WHERE `+dueWhere+`
		GROUP BY j.merchant_id ORDER BY min(j.run_at)`+store.Limit(acrossMerchants), now, bound)
	if err != nil {
		return nil, fmt.Errorf("find due jobs: %w", err)
	}
	rand.Shuffle(len(merchants), func(i, j int) { merchants[i], merchants[j] = merchants[j], merchants[i] })
	return merchants, nil
}

// runAcross claims and runs up to limit jobs of each of merchants due at
// now (bound as in dueWhere), one transaction per merchant (on its shard, on
// Citus), in the merchant's lane, up to acrossAtOnce merchants at once (their
// commits, apart, would otherwise follow one another), and returns how many
// it claimed. A merchant whose batch was full may have more: it is hinted
// again.
func (q *Queue) runAcross(ctx context.Context, now, bound int64, merchants []string, limit int) (int, error) {
	var (
		mu   sync.Mutex
		ran  int
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, acrossAtOnce)
	)
	for _, m := range merchants {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			lane := ctx
			if m != "" {
				lane = store.WithLane(ctx, store.MerchantLane(m))
			}
			n, err := q.runJobs(lane, func(tx *store.Tx) ([]Job, error) {
				return q.claim(ctx, tx, now, bound, scope{merchant: m}, limit)
			})
			mu.Lock()
			defer mu.Unlock()
			ran += n
			if err != nil {
				errs = append(errs, err)
			}
			if err != nil || n == limit {
				q.hint(m)
			}
		})
	}
	wg.Wait()
	return ran, errors.Join(errs...)
}

// acrossAtOnce bounds how many merchants' batches one worker runs at once.
const acrossAtOnce = 4

// runJobs runs the jobs that claim locks, in one transaction, and returns
// how many it claimed.
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
		for _, j := range jobs {
			outcome, runErr, err := q.runClaimed(ctx, tx, j)
			if err != nil {
				return err
			}
			results = append(results, ran{j, outcome, runErr})
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

// runClaimed runs one claimed job inside a savepoint of tx, which deletes
// it when its handler succeeds: if the handler fails, its writes are undone
// but the claim is kept, so the failure is recorded in the same transaction
// and no other worker can run the job before its backoff. The savepoint and
// the delete travel with the handler's statements (store.Tx.Savepoint).
// err is set only when tx itself cannot go on.
func (q *Queue) runClaimed(ctx context.Context, tx *store.Tx, j Job) (outcome string, runErr, err error) {
	runErr, err = tx.Savepoint(ctx, "job_run", func(tx *store.Tx) error {
		if err := q.run(ctx, tx, j); err != nil {
			return err
		}
		return tx.Send(ctx, `DELETE FROM jobs WHERE merchant_id = $1 AND id = $2`, j.ClockOf, j.ID)
	})
	switch {
	case err != nil:
		return "", runErr, err
	case runErr == nil:
		return outcomeDone, nil, nil
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

// run calls the job's handler, turning a panic into an error so one bad job
// cannot stop the worker.
func (q *Queue) run(ctx context.Context, tx *store.Tx, j Job) (err error) {
	h, ok := q.Handler(j.Kind)
	if !ok {
		return fmt.Errorf("no handler for job kind %q", j.Kind)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return h(ctx, tx, j)
}

// recordFailure records a failed run in tx: the job is retried after a
// growing delay, or marked failed once it has used its attempts. It returns
// the outcome, outcomeRetry or outcomeFailed.
func (q *Queue) recordFailure(ctx context.Context, tx *store.Tx, j Job, runErr error) (string, error) {
	msg := runErr.Error()
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	var state State
	err := tx.QueryRowContext(ctx, `UPDATE jobs SET attempts = attempts + 1, last_error = $1,
		state = CASE WHEN attempts + 1 >= max_attempts THEN `+failedSQL+` ELSE `+availableSQL+` END,
		run_at = $2 + `+ClockOffsetOf("jobs.merchant_id")+`
		WHERE merchant_id = $3 AND id = $4 RETURNING state`, msg, q.clock.Now().Add(Backoff(j.Attempt)).UnixMilli(), j.ClockOf, j.ID).Scan(&state)
	if err != nil {
		return "", fmt.Errorf("record failure of job %d: %w", j.ID, err)
	}
	if state == Failed {
		return outcomeFailed, nil
	}
	return outcomeRetry, nil
}

// Backoff is the delay before retry number attempt: exponential from one
// second, capped at one hour, with ±20 % jitter so retries do not march in step.
func Backoff(attempt int) time.Duration {
	d := time.Second << min(attempt-1, 12)
	d = min(d, time.Hour)
	jitter := time.Duration(rand.Int64N(int64(d)/5*2+1)) - d/5
	return d + jitter
}

// RunDue runs every job that is due on merchantID's clock, including jobs
// that those jobs enqueue, and waits for due jobs another worker is running.
// The sandbox test clock calls it after moving forward.
func (q *Queue) RunDue(ctx context.Context, merchantID string) error {
	for ctx.Err() == nil {
		sc := scope{merchant: merchantID}
		ran, err := q.runBatch(ctx, sc, claimBatch)
		if err != nil {
			return err
		}
		if ran > 0 {
			continue
		}
		// Nothing we could claim; a due job may still be held by another worker.
		var n int
		now := q.clock.Now().UnixMilli()
		bound, err := q.dueBound(ctx, now)
		if err != nil {
			return fmt.Errorf("run due jobs: %w", err)
		}
		where, args := sc.filter([]any{now, bound})
		// Jobs held for their lane run are due too: their run is coming.
		if err := q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM jobs j WHERE (j.state = `+heldSQL+` OR `+dueWhere+`)`+where, args...).Scan(&n); err != nil {
			return fmt.Errorf("run due jobs: %w", err)
		}
		// On Citus the merchant's jobs are on its shard with the rows they
		// change, so a job gone from the queue shows its effects there too.
		// (When the queue was on the coordinator, two-phase commits with no
		// snapshot across nodes let a job be gone before its effects showed.)
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return ctx.Err()
}

// Queued counts the jobs waiting or due, those held for their lane run too
// (not those that failed), for a gauge of the queue's depth.
func (q *Queue) Queued(ctx context.Context) (int64, error) {
	var n int64
	err := q.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state IN (`+availableSQL+`, `+heldSQL+`)`).Scan(&n)
	return n, err
}
