package job_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// rounds runs a poller's Loop on its own goroutine and hands over each
// round's polled to the test, which answers whether the round left more.
type rounds struct {
	polled chan bool
	more   chan bool
	done   chan struct{}
}

func loop(ctx context.Context, p *job.Poller, interval time.Duration) *rounds {
	r := &rounds{polled: make(chan bool), more: make(chan bool), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		p.Loop(ctx, interval, func(polled bool) bool {
			r.polled <- polled
			return <-r.more
		})
	}()
	return r
}

// next waits for the loop's next round and answers it with more.
func (r *rounds) next(t *testing.T, more bool) bool {
	t.Helper()
	select {
	case polled := <-r.polled:
		r.more <- more
		return polled
	case <-time.After(10 * time.Second):
		t.Fatal("no round within 10 s")
		return false
	}
}

// TestPollerWakes: a loop that never polls (an hour's interval) runs a round
// at once, again at once while a round leaves more, and after a Wake; it
// stops when its context ends.
func TestPollerWakes(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	p := job.NewPoller()
	r := loop(ctx, p, time.Hour)
	steps := []struct {
		name string
		wake bool // Wake before the round
		more bool // what the round answers
	}{
		{"the first round, at once", false, true},
		{"again at once: the round left more", false, false},
		{"after a wake", true, false},
		{"after another wake", true, false},
	}
	for _, st := range steps {
		if st.wake {
			p.Wake()
		}
		if polled := r.next(t, st.more); polled {
			t.Errorf("%s: round told it polled, want woken", st.name)
		}
	}
	stop()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Loop did not return when its context ended")
	}
}

// TestPollerPolls: without a wake, a loop runs a round each interval and
// tells it that it polls.
func TestPollerPolls(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	r := loop(ctx, job.NewPoller(), time.Millisecond)
	if polled := r.next(t, false); polled {
		t.Error("the first round was told it polled")
	}
	for i := range 3 {
		if polled := r.next(t, false); !polled {
			t.Errorf("round %d after an idle one was not told it polled", i+2)
		}
	}
	stop()
	// The loop may be in a round already: answer it, then it returns.
	for {
		select {
		case <-r.done:
			return
		case <-r.polled:
			r.more <- false
		}
	}
}

// TestProbe: the cheap look before a claim finds a row only when there is one.
func TestProbe(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q, _ := newQueue(db, clock.NewManual(t0))
		merchant := newMerchant(t, db)
		const due = `jobs WHERE merchant_id = $1 AND state = 'available'`
		if found, err := job.Probe(ctx, db.Read(), due, merchant); found || err != nil {
			t.Errorf("Probe of an empty queue = %v, %v; want false, nil", found, err)
		}
		enqueue(t, q, db, "work", 1, job.Options{ClockOf: merchant})
		enqueue(t, q, db, "work", 2, job.Options{ClockOf: merchant})
		if found, err := job.Probe(ctx, db.Read(), due, merchant); !found || err != nil {
			t.Errorf("Probe of two jobs = %v, %v; want true, nil", found, err)
		}
	})
}
