package main

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// result of one scenario.
type result struct {
	Name      string  `json:"name"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	PerSecond float64 `json:"per_second"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	PaydCPU   float64 `json:"payd_cpu_percent" doc:"payd's CPU use during the scenario, in percent of one core."`
	BenchCPU  float64 `json:"bench_cpu_percent" doc:"The load generator's CPU use, in percent of one core."`
	// MachineCPU counts every process of the machine: payd, the load
	// generator and, when it runs here, the database server.
	MachineCPU float64 `json:"machine_cpu_percent" doc:"The whole machine's CPU use during the scenario, in percent of one core (at most 100 × cpus)."`
	// CPUPerRequest is what one request cost the machine, payd and database
	// together: on a saturated machine the rate is the CPUs over this, and
	// it varies less from run to run than the rate does.
	CPUPerRequest float64 `json:"machine_cpu_ms_per_request" doc:"Machine CPU time per request (or per event delivered), in milliseconds."`
	// StealCPU is CPU the hypervisor took from the machine's virtual cores
	// for others: not counted in MachineCPU, but a run with much of it
	// measured a machine slower than it is.
	StealCPU float64 `json:"machine_steal_percent" doc:"CPU time the hypervisor gave to other guests during the scenario, in percent of one core (not in machine_cpu_percent)."`
	// Seconds and PeakRSSMiB are a one-shot row's (the bank-file cut-off,
	// the bank-feed import): how long the one operation took and the most
	// memory it held; Items names what its Requests count.
	Seconds    float64 `json:"seconds,omitempty"`
	Items      string  `json:"items,omitempty"`
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	Reference  string  `json:"reference,omitempty"`
	RatioToRef float64 `json:"ratio_to_reference,omitempty" doc:"per_second over the reference's."`
	// P99RatioToRef is p99_ms over the reference's, for a row whose
	// reference was offered the same rate (the half-peak row).
	P99RatioToRef float64 `json:"p99_ratio_to_reference,omitempty"`
	Description   string  `json:"description"`
}

// drive runs op from n clients until d has passed (or op reports it is
// exhausted) and measures it. op gets the client number and the count of
// operations that client has done.
func drive(ctx context.Context, name string, n int, d time.Duration, pid int, op func(ctx context.Context, client, i int) (done bool, err error)) result {
	return drivePaced(ctx, name, n, d, pid, 0, op)
}

// drivePaced is drive at a fixed offered rate (requests per second, spread
// over the clients); 0 means as fast as the clients go. Latency is measured
// from each request's send, so it shows the server's answer time at that load.
func drivePaced(ctx context.Context, name string, n int, d time.Duration, pid int, rate float64, op func(ctx context.Context, client, i int) (done bool, err error)) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	pace := pacer(ctx, n, rate)
	var (
		mu        sync.Mutex
		latencies []time.Duration
		requests  atomic.Int64
		errs      atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
	)
	cpu := startCPU(pid)
	started := time.Now()
	for c := range n {
		wg.Go(func() {
			var mine []time.Duration
			for i := 0; ctx.Err() == nil; i++ {
				if pace != nil {
					select {
					case <-pace:
					case <-ctx.Done():
						continue
					}
				}
				t0 := time.Now()
				done, err := op(ctx, c, i)
				if ctx.Err() != nil {
					break
				}
				if done {
					break
				}
				mine = append(mine, time.Since(t0))
				requests.Add(1)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(started)
	r := result{Name: name, Requests: requests.Load(), Errors: errs.Load(), PerSecond: float64(requests.Load()) / elapsed.Seconds()}
	r.P50ms, r.P99ms = percentile(latencies, 0.50), percentile(latencies, 0.99)
	cpu.stop(&r, elapsed)
	if v := firstErr.Load(); v != nil {
		r.FirstError = v.(string)
	}
	return r
}

// pacer releases rate requests a second (spread over n clients, each
// taking one from the channel before it sends) until ctx ends; at rate 0 it
// is nil, which drive reads as "as fast as the clients go". A release that
// finds every client busy is dropped, not queued: the offered rate is then
// not reached, and the achieved rate says so, where a queue would turn
// the overload into latency the server never caused.
func pacer(ctx context.Context, n int, rate float64) <-chan struct{} {
	if rate <= 0 {
		return nil
	}
	pace := make(chan struct{}, n)
	go func() {
		// Each tick releases every request due by now, so a late tick
		// (a busy machine) does not lower the offered rate.
		tick := time.NewTicker(max(time.Duration(float64(time.Second)/rate), time.Millisecond))
		defer tick.Stop()
		began, released := time.Now(), int64(0)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				due := int64(now.Sub(began).Seconds() * rate)
				for ; released < due; released++ {
					select {
					case pace <- struct{}{}:
					default: // every client is busy: the offered rate is not reached
					}
				}
			}
		}
	}()
	return pace
}

// cpuMeter measures the CPU a scenario uses: payd's, the load generator's
// and the whole machine's.
type cpuMeter struct {
	pid        int
	payd, self time.Duration
	machine    machineTime
}

func startCPU(pid int) cpuMeter {
	return cpuMeter{pid: pid, payd: cpuTime(pid), self: selfCPU(), machine: machineCPU()}
}

// stop sets r's CPU figures for the elapsed time since start, per request
// by r.Requests.
func (m cpuMeter) stop(r *result, elapsed time.Duration) {
	if elapsed <= 0 {
		return
	}
	r.PaydCPU, r.BenchCPU = percentOf(cpuTime(m.pid)-m.payd, elapsed), percentOf(selfCPU()-m.self, elapsed)
	setMachineCPU(r, machineCPU().since(m.machine), elapsed, float64(r.Requests))
}

// setMachineCPU sets r's machine figures from the machine's time used
// over elapsed, in which requests were served.
func setMachineCPU(r *result, used machineTime, elapsed time.Duration, requests float64) {
	r.MachineCPU, r.StealCPU = percentOf(used.busy, elapsed), percentOf(used.steal, elapsed)
	if requests > 0 {
		r.CPUPerRequest = float64(used.busy.Microseconds()) / 1000 / requests
	}
}

// percentOf is CPU time used over elapsed, in percent of one core.
func percentOf(used, elapsed time.Duration) float64 { return 100 * float64(used) / float64(elapsed) }

// percentile returns the q-th latency in milliseconds.
func percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	i := int(q * float64(len(ds)-1))
	return float64(ds[i].Microseconds()) / 1000
}
