package job_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestHandlerErrorRetries fails a job with max_attempts 3 three times: each
// failure rolls back the handler's writes, counts the attempt and reschedules
// the job after a backoff; the third marks it failed for good.
func TestHandlerErrorRetries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		createRuns(t, db)
		clk := clock.NewManual(t0)
		q, obs := newQueue(db, clk)
		var attempts []int
		handle(q, "flaky", func(ctx context.Context, tx *store.Tx, j job.Job) error {
			attempts = append(attempts, j.Attempt)
			if err := recordRun(ctx, tx, j, fmt.Sprint(j.Attempt)); err != nil {
				return err
			}
			return fmt.Errorf("upstream said no (attempt %d)", j.Attempt)
		})
		enqueue(t, q, db, "flaky", "p", job.Options{MaxAttempts: 3})

		steps := []struct {
			name      string
			advance   time.Duration
			wantRan   bool
			wantState job.State
			wantTries int
			wantError string
			wantLater bool // run_at is after the clock's now
		}{
			{"first run fails", 0, true, job.Available, 1, "upstream said no (attempt 1)", true},
			{"not due again at once", 0, false, job.Available, 1, "upstream said no (attempt 1)", true},
			{"not due before the shortest backoff", 799 * time.Millisecond, false, job.Available, 1, "upstream said no (attempt 1)", true},
			{"second run fails", time.Hour, true, job.Available, 2, "upstream said no (attempt 2)", true},
			{"third run fails for good", time.Hour, true, job.Failed, 3, "upstream said no (attempt 3)", true},
			{"a failed job never runs again", 24 * time.Hour, false, job.Failed, 3, "upstream said no (attempt 3)", false},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				now := clk.Advance(st.advance)
				ran, err := q.RunOne(ctx, "")
				if ran != st.wantRan || err != nil {
					t.Errorf("RunOne = %v, %v; want %v, nil", ran, err, st.wantRan)
				}
				got := jobOf(t, db, "flaky")
				if got.State != st.wantState || got.Attempts != st.wantTries || got.LastError != st.wantError {
					t.Errorf("job = %+v, want state %s, %d attempts, last error %q", got, st.wantState, st.wantTries, st.wantError)
				}
				if later := got.RunAt > now.UnixMilli(); later != st.wantLater {
					t.Errorf("run_at %d after now %d = %v, want %v", got.RunAt, now.UnixMilli(), later, st.wantLater)
				}
			})
		}
		if n := count(t, db, `SELECT count(*) FROM job_runs`); n != 0 {
			t.Errorf("%d handler writes committed, want every failed run rolled back", n)
		}
		if !slices.Equal(attempts, []int{1, 2, 3}) {
			t.Errorf("handler saw attempts %v, want [1 2 3]", attempts)
		}
		if o := obs.list(); !slices.Equal(o, []string{"flaky retry", "flaky retry", "flaky failed"}) {
			t.Errorf("observed %v, want [flaky retry flaky retry flaky failed]", o)
		}
	})
}

// TestRetryBackoff checks the first retry's run_at: one second ±10 % after the failure.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewManual(t0)
		q, _ := newQueue(db, clk)
		handle(q, "fail", func(context.Context, *store.Tx, job.Job) error { return errors.New("no") })
		enqueue(t, q, db, "fail", nil, job.Options{})
		if ran, err := q.RunOne(context.Background(), ""); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v", ran, err)
		}
		got := time.Duration(jobOf(t, db, "fail").RunAt-t0.UnixMilli()) * time.Millisecond
		if got < 900*time.Millisecond || got > 1100*time.Millisecond {
			t.Errorf("retry scheduled %v after the failure, want 0.9s..1.1s", got)
		}
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		attempt := rapid.IntRange(1, 200).Draw(t, "attempt")
		base := min(time.Second<<min(attempt-1, 30), time.Hour)
		got := job.Backoff(attempt)
		if got < base*9/10 || got > base*11/10 {
			t.Fatalf("Backoff(%d) = %v, want %v ± 10 %%", attempt, got, base)
		}
	})
}

func TestBackoffGrows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 900 * time.Millisecond, 1100 * time.Millisecond},
		{2, 1800 * time.Millisecond, 2200 * time.Millisecond},
		{5, 14400 * time.Millisecond, 17600 * time.Millisecond},
		{12, 2048 * 900 * time.Millisecond, 2048 * 1100 * time.Millisecond},
		{13, 54 * time.Minute, 66 * time.Minute},
		{1000, 54 * time.Minute, 66 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			if got := job.Backoff(tt.attempt); got < tt.min || got > tt.max {
				t.Errorf("Backoff(%d) = %v, want %v..%v", tt.attempt, got, tt.min, tt.max)
			}
		})
	}
}

// TestRetryOnTestClock fails a job of a merchant whose test clock is far
// ahead: the retry must be scheduled on that clock, a backoff after the
// merchant's now, not at once.
func TestRetryOnTestClock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant := newMerchant(t, db)
		exec(t, db, `UPDATE merchants SET clock_offset_ms = $1 WHERE id = $2`, (10 * time.Hour).Milliseconds(), merchant)
		clk := clock.NewManual(t0)
		q, _ := newQueue(db, clk)
		runs := 0
		handle(q, "flaky", func(_ context.Context, _ *store.Tx, j job.Job) error {
			runs++
			if j.Attempt == 1 {
				return errors.New("transient")
			}
			return nil
		})
		enqueue(t, q, db, "flaky", nil, job.Options{ClockOf: merchant})
		steps := []struct {
			name     string
			advance  time.Duration
			wantRuns int
		}{
			{"first run fails", 0, 1},
			{"retry waits for the backoff", 0, 1},
			{"retry runs after it", 2 * time.Second, 2},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				clk.Advance(st.advance)
				if err := q.RunDue(ctx, merchant); err != nil {
					t.Fatalf("RunDue: %v", err)
				}
				if runs != st.wantRuns {
					t.Errorf("job ran %d times, want %d", runs, st.wantRuns)
				}
			})
		}
		if n := count(t, db, `SELECT count(*) FROM jobs`); n != 0 {
			t.Errorf("%d jobs left, want 0", n)
		}
	})
}

func TestJitter(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(0, int64(24*time.Hour)).Draw(t, "d"))
		spread := d / 10
		if got := job.Jitter(d); got < d-spread || got > d+spread {
			t.Fatalf("Jitter(%v) = %v, want %v ± 10 %%", d, got, d)
		}
	})
}

// TestJitterSpreads: the retries of many failures that came together do not
// come back together.
func TestJitterSpreads(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for range 100 {
		seen[job.Jitter(time.Minute)] = true
	}
	if len(seen) < 50 {
		t.Errorf("100 jitters of a minute gave %d distinct delays, want them spread", len(seen))
	}
	if got := job.Jitter(9 * time.Nanosecond); got != 9*time.Nanosecond {
		t.Errorf("Jitter(9ns) = %v, want 9ns (nothing to spread)", got)
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		msg      string
		maxBytes int
		want     string
	}{
		{"short", "boom", 10, "boom"},
		{"exactly the bound", "boom", 4, "boom"},
		{"ASCII cut at the bound", "upstream said no", 8, "upstream"},
		{"a two-byte character across the bound", "ab\u00e9cd", 3, "ab"},
		{"a two-byte character just inside", "ab\u00e9cd", 4, "ab\u00e9"},
		{"a three-byte character across the bound", "a\u20ac", 3, "a"},
		{"a four-byte character across the bound", "ok \U0001F600!", 6, "ok "},
		{"an invalid sequence is replaced", "bad \xff byte", 100, "bad \uFFFD byte"},
		{"a replaced sequence is not cut either", "ab\xff", 4, "ab"},
		{"no room", "\u00e9", 1, ""},
		{"empty", "", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := job.ErrorText(tt.msg, tt.maxBytes)
			if got != tt.want || !utf8.ValidString(got) || len(got) > tt.maxBytes {
				t.Errorf("ErrorText(%q, %d) = %q, want %q (valid UTF-8, at most %d bytes)", tt.msg, tt.maxBytes, got, tt.want, tt.maxBytes)
			}
		})
	}
}

// TestLongErrorIsKept: a failure whose reason is longer than a job keeps is
// recorded, cut before a character: cut inside one, PostgreSQL refused the
// write that records the failure, and the whole batch with it.
func TestLongErrorIsKept(t *testing.T) {
	t.Parallel()
	long := "a" + strings.Repeat("\u00e9", 1500) // 3,001 bytes; byte 2,000 is inside an é
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		q, obs := newQueue(db, clock.NewManual(t0))
		handle(q, "long", func(context.Context, *store.Tx, job.Job) error { return errors.New(long) })
		enqueue(t, q, db, "long", nil, job.Options{})
		if ran, err := q.RunOne(context.Background(), ""); !ran || err != nil {
			t.Fatalf("RunOne = %v, %v; want true, nil", ran, err)
		}
		got := jobOf(t, db, "long")
		if want := long[:1999]; got.State != job.Available || got.Attempts != 1 || got.LastError != want {
			t.Errorf("job = %s after %d attempts with a %d-byte last error, want available after 1 with the first 1,999 bytes", got.State, got.Attempts, len(got.LastError))
		}
		if o := obs.list(); !slices.Equal(o, []string{"long retry"}) {
			t.Errorf("observed %v, want [long retry]", o)
		}
	})
}
