package job

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"payd/internal/store"
)

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
func (q *Queue) Wake() { q.poller.Wake() }

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

// worker runs batches of due jobs while it finds some, then waits for a
// Wake or its next poll (runAny asks what became due on time by itself).
func (q *Queue) worker(ctx context.Context) {
	q.poller.Loop(ctx, q.PollInterval, func(bool) bool {
		ran, err := q.runAny(ctx)
		if err != nil && ctx.Err() == nil {
			q.log.Error("job queue", "err", err)
		}
		return ran > 0
	})
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
