package job_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// ranLog collects the payloads of the jobs a handler ran, in order.
type ranLog struct {
	mu  sync.Mutex
	ran []string
}

func (l *ranLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ran = append(l.ran, s)
}

// take returns what ran since the last take, sorted.
func (l *ranLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ran
	l.ran = nil
	slices.Sort(out)
	return out
}

// TestRunDue runs one merchant's due jobs, and the jobs they enqueue, and
// nothing else; moving the merchant's test clock (clock_offset_ms) makes its
// later jobs due.
func TestRunDue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := newMerchant(t, db), newMerchant(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		var log ranLog
		handle(q, "note", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			name := string(j.Payload)
			log.add(name)
			// The parent enqueues a child on the same clock, due at once.
			if name == `"a-parent"` {
				return enqueueIn(ctx, tx, q, "note", "a-child", job.Options{ClockOf: j.ClockOf})
			}
			return nil
		})
		for _, j := range []struct {
			payload string
			opt     job.Options
		}{
			{"a-due", job.Options{ClockOf: a}},
			{"a-parent", job.Options{ClockOf: a, RunAt: t0.Add(-time.Minute)}},
			{"a-later", job.Options{ClockOf: a, RunAt: t0.Add(time.Hour)}},
			{"a-much-later", job.Options{ClockOf: a, RunAt: t0.Add(48 * time.Hour)}},
			{"b-due", job.Options{ClockOf: b}},
			{"real-clock-due", job.Options{}},
		} {
			enqueue(t, q, db, "note", j.payload, j.opt)
		}
		steps := []struct {
			name     string
			offset   time.Duration // merchant a's test clock offset
			merchant string
			want     []string
		}{
			{"a's due jobs and what they enqueue", 0, a, []string{`"a-child"`, `"a-due"`, `"a-parent"`}},
			{"nothing more is due for a", 0, a, nil},
			{"a's clock moved an hour", time.Hour, a, []string{`"a-later"`}},
			{"b's clock did not move", time.Hour, b, []string{`"b-due"`}},
			{"a's clock moved two days", 48 * time.Hour, a, []string{`"a-much-later"`}},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				exec(t, db, `UPDATE merchants SET clock_offset_ms = $1 WHERE id = $2`, st.offset.Milliseconds(), a)
				if err := q.RunDue(ctx, st.merchant); err != nil {
					t.Fatalf("RunDue: %v", err)
				}
				if got := log.take(); !slices.Equal(got, st.want) {
					t.Errorf("ran %v, want %v", got, st.want)
				}
			})
		}
		// The real-clock job belongs to no merchant: only RunOne without a merchant takes it.
		if n := count(t, db, `SELECT count(*) FROM jobs`); n != 1 {
			t.Errorf("%d jobs left, want only the real-clock one", n)
		}
		if ran, err := q.RunOne(ctx, ""); !ran || err != nil {
			t.Errorf("RunOne = %v, %v; want true, nil", ran, err)
		}
		if got := log.take(); !slices.Equal(got, []string{`"real-clock-due"`}) {
			t.Errorf("ran %v, want the real-clock job", got)
		}
	})
}

// TestTestClock schedules a job an hour ahead on a merchant's clock: it is
// due only once the merchant's clock_offset_ms reaches an hour, whoever looks.
func TestTestClock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant := newMerchant(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		runs := 0
		handle(q, "expire", func(context.Context, *store.Tx, job.Job) error { runs++; return nil })
		enqueue(t, q, db, "expire", nil, job.Options{ClockOf: merchant, RunAt: t0.Add(time.Hour)})
		steps := []struct {
			name     string
			offset   time.Duration
			clockOf  string // which merchant RunOne is asked about; "" is any
			wantRuns int
		}{
			{"clock not moved", 0, merchant, 0},
			{"not moved, any merchant", 0, "", 0},
			{"a millisecond short", time.Hour - time.Millisecond, merchant, 0},
			{"a millisecond short, any merchant", time.Hour - time.Millisecond, "", 0},
			{"moved an hour", time.Hour, merchant, 1},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				exec(t, db, `UPDATE merchants SET clock_offset_ms = $1 WHERE id = $2`, st.offset.Milliseconds(), merchant)
				if _, err := q.RunOne(ctx, st.clockOf); err != nil {
					t.Fatalf("RunOne: %v", err)
				}
				if runs != st.wantRuns {
					t.Errorf("job ran %d times, want %d", runs, st.wantRuns)
				}
			})
		}
	})
}

// TestRunDueWaitsForRunningJob starts a due job on another worker and holds
// it: RunDue for its merchant must not return until that job has finished.
func TestRunDueWaitsForRunningJob(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant := newMerchant(t, db)
		q, _ := newQueue(db, clock.NewManual(t0))
		started, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		handle(q, "slow", func(context.Context, *store.Tx, job.Job) error {
			close(started)
			<-release
			finished.Store(true)
			return nil
		})
		enqueue(t, q, db, "slow", nil, job.Options{ClockOf: merchant})

		worker := make(chan error, 1)
		go func() { _, err := q.RunOne(ctx, merchant); worker <- err }()
		<-started
		runDue := make(chan error, 1)
		go func() { runDue <- q.RunDue(ctx, merchant) }()
		select {
		case err := <-runDue:
			t.Fatalf("RunDue returned (%v) while a due job was still running", err)
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := <-runDue; err != nil {
			t.Errorf("RunDue: %v", err)
		}
		if !finished.Load() {
			t.Error("RunDue returned before the running job finished")
		}
		if err := <-worker; err != nil {
			t.Errorf("worker RunOne: %v", err)
		}
		if n := count(t, db, `SELECT count(*) FROM jobs`); n != 0 {
			t.Errorf("%d jobs left, want 0", n)
		}
	})
}

// TestRunDueStopsWithContext checks RunDue gives up when its context ends.
func TestRunDueStopsWithContext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		q, _ := newQueue(db, clock.NewManual(t0))
		if err := q.RunDue(ctx, newMerchant(t, db)); err == nil {
			t.Error("RunDue on a canceled context = nil, want the context's error")
		}
	})
}
