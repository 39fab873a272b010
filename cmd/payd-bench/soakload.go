package main

import (
	"context"
	"math"
	"sync"
	"time"
)

// soakSample is one request of the soak: its kind and its latency.
type soakSample struct {
	micros uint32
	op     soakOp
}

// soakSecond is the requests sent in one second of a phase.
type soakSecond struct {
	samples []soakSample
	errors  int
}

// maxSoakErrors bounds the error messages a recorder keeps.
const maxSoakErrors = 5

// soakRecorder keeps every request of a phase by the second it was sent in,
// so that any window's percentiles can be read: a minute's, the verdict's
// first and last. Eight bytes a request: a 30-minute soak at 500/s holds
// 7 MiB. Requests sent after the last second count in it.
type soakRecorder struct {
	mu      sync.Mutex
	start   time.Time
	seconds []soakSecond
	byOp    [soakOps]struct{ requests, errors int64 }
	errors  []string
}

func newSoakRecorder(d time.Duration) *soakRecorder {
	return &soakRecorder{start: time.Now(), seconds: make([]soakSecond, int(math.Ceil(d.Seconds()))+1)}
}

func (r *soakRecorder) add(sent time.Time, op soakOp, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(max(0, int(sent.Sub(r.start)/time.Second)), len(r.seconds)-1)
	sec := &r.seconds[i]
	sec.samples = append(sec.samples, soakSample{micros: uint32(min(took.Microseconds(), math.MaxUint32)), op: op})
	r.byOp[op].requests++
	if err == nil {
		return
	}
	sec.errors++
	r.byOp[op].errors++
	if len(r.errors) < maxSoakErrors {
		r.errors = append(r.errors, op.String()+": "+err.Error())
	}
}

// windowStats are the figures of the requests sent in a window. The
// percentiles are of the API requests a merchant sends; the clock's moves
// are counted apart, since each waits 100 ms by design (CONTRACT §3) and
// runs the work that became due.
type windowStats struct {
	requests, errors, clockMoves int
	perSecond                    float64
	p50, p99, p999               float64 // milliseconds
}

// window is the figures of the requests sent from from to to, offsets
// into the phase.
func (r *soakRecorder) window(from, to time.Duration) windowStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var st windowStats
	var lat []time.Duration
	for i := max(0, int(from/time.Second)); i < min(len(r.seconds), int(math.Ceil(to.Seconds()))); i++ {
		st.errors += r.seconds[i].errors
		for _, s := range r.seconds[i].samples {
			if s.op == opClock {
				st.clockMoves++
				continue
			}
			lat = append(lat, time.Duration(s.micros)*time.Microsecond)
		}
	}
	st.requests = len(lat)
	if to > from {
		st.perSecond = float64(st.requests) / (to - from).Seconds()
	}
	st.p50, st.p99, st.p999 = percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 0.999)
	return st
}

// opStats are one kind's figures over the whole phase.
func (r *soakRecorder) opStats(op soakOp) (requests, errors int64, p50, p99 float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lat []time.Duration
	for _, sec := range r.seconds {
		for _, s := range sec.samples {
			if s.op == op {
				lat = append(lat, time.Duration(s.micros)*time.Microsecond)
			}
		}
	}
	return r.byOp[op].requests, r.byOp[op].errors, percentile(lat, 0.50), percentile(lat, 0.99)
}

// totalErrors and firstErrors are the phase's failed requests.
func (r *soakRecorder) totalErrors() (n int64, first []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.byOp {
		n += o.errors
	}
	return n, append([]string(nil), r.errors...)
}

// drive sends x's requests from clients until d has passed, paced at rate
// a second (0: as fast as they go), into rec. A request under way when d
// ends runs to its answer and counts: the soak stops sending, it does not
// cut requests off, which would leave writes payd may have made unanswered.
func (x *soakMix) drive(ctx context.Context, clients int, d time.Duration, rate float64, rec *soakRecorder) {
	sending, stop := context.WithTimeout(ctx, d)
	defer stop()
	pace := pacer(sending, clients, rate)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for sending.Err() == nil {
				if pace != nil {
					select {
					case <-pace:
					case <-sending.Done():
						return
					}
				}
				sent := time.Now()
				op, err := x.run(ctx)
				rec.add(sent, op, time.Since(sent), err)
			}
		})
	}
	wg.Wait()
}

// The sandbox clock during the soak: each merchant's moves clockStep once
// every clockRound, one merchant at a time, so that a simulated day (its
// 09:00 reports, its midnight settlements, expiries, payout outcomes)
// passes every two minutes of the soak.
const (
	clockStep  = 3 * time.Hour
	clockRound = 15 * time.Second
)

// moveClocks moves the merchants' clocks in turn into rec until the
// returned stop is called, which waits for a move under way.
func (x *soakMix) moveClocks(ctx context.Context, rec *soakRecorder) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(clockRound / time.Duration(len(x.merchants)))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sent := time.Now()
			_, err := moveClock(ctx, x.merchants[i%len(x.merchants)], clockStep)
			rec.add(sent, opClock, time.Since(sent), err)
		}
	}()
	return func() { close(done); <-stopped }
}

// rssSampleEvery is how often the soak reads payd's RSS for the verdict.
const rssSampleEvery = 5 * time.Second

// sampleRSS reads pid's RSS every rssSampleEvery until the returned stop
// is called, which returns the samples.
func sampleRSS(pid int) (stop func() []rssSample) {
	done, stopped := make(chan struct{}), make(chan []rssSample)
	go func() {
		start := time.Now()
		samples := []rssSample{{0, currentRSS(pid)}}
		tick := time.NewTicker(rssSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				stopped <- append(samples, rssSample{time.Since(start), currentRSS(pid)})
				return
			case <-tick.C:
				samples = append(samples, rssSample{time.Since(start), currentRSS(pid)})
			}
		}
	}()
	return func() []rssSample { close(done); return <-stopped }
}
