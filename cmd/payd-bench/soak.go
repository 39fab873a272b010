package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The soak (issue 55, payd-bench --soak DURATION): payd under a steady
// mixed load for a long time, to show what ten-second scenarios cannot:
// latency that creeps up, memory, goroutines or connections that leak, a
// database that grows out of proportion, a job that stops running, a write
// acknowledged and then lost. On a fresh database and payd, over
// soakMerchants merchants: the mix of soakPlan offered at half the peak the
// same mix reaches flat out (measured first, for peakWindow), the sandbox
// clock moving each merchant's day on (moveClocks), webhooks to a local
// receiver; a line of figures each minute; then the checks and the verdict
// (soakverdict.go).

const (
	soakMerchants   = spreadMerchants
	settleMerchants = 10 // the last ones settle at the end of each day
	maxSoak         = 24 * time.Hour
	// soakRequestTimeout bounds each request: one that takes longer is
	// an error, not a hang.
	soakRequestTimeout = 30 * time.Second
	// hookWait bounds the wait for acknowledged test events after the load.
	hookWait = 60 * time.Second
	// soakSenders is how many senders per client the paced load has: at
	// half the peak the clients of the peak would each have to answer in
	// twice their mean time, and a tail request would make the pacer drop
	// the requests due meanwhile, offering less than half.
	soakSenders = 2
)

// peakWindow is how long the mix runs flat out to find its peak: a
// twentieth of the soak, from 10 to 30 s.
func peakWindow(d time.Duration) time.Duration { return min(max(d/20, 10*time.Second), 30*time.Second) }

// runSoak soaks each database of s for d and prints the figures and the
// verdicts to w; it reports whether every verdict passed.
func runSoak(ctx context.Context, s settings, d time.Duration, w io.Writer) (bool, error) {
	bin, cleanup, err := buildPayd()
	if err != nil {
		return false, err
	}
	defer cleanup()
	passed := true
	for _, db := range s.dbs {
		o, err := soakDatabase(ctx, s, bin, db, d, w)
		if err != nil {
			return false, fmt.Errorf("soak on %s: %w", db, err)
		}
		o.print(w, db)
		passed = passed && o.passed()
	}
	return passed, nil
}

// soakDatabase runs the soak on a fresh database of kind db.
func soakDatabase(ctx context.Context, s settings, bin, db string, d time.Duration, w io.Writer) (soakOutcome, error) {
	t, cleanup, err := newSoakTarget(s, db)
	if err != nil {
		return soakOutcome{}, err
	}
	defer cleanup()
	pprofAddr := ""
	if s.profileDir != "" {
		pprofAddr = "127.0.0.1:16061"
	}
	p, err := startPayd(ctx, bin, t.dsn, pprofAddr)
	if err != nil {
		return soakOutcome{}, err
	}
	p.pprofAddr = pprofAddr
	defer p.stop()
	rcv, deliveries, err := startPingReceiver()
	if err != nil {
		return soakOutcome{}, err
	}
	defer rcv.close()
	fmt.Fprintf(w, "soak on %s: %s, %d clients, %d merchants (%d settling at the end of each day), payd pid %d\n",
		db, d, s.clients, soakMerchants, settleMerchants, p.cmd.Process.Pid)
	started := time.Now()
	x, err := newSoakMix(ctx, bin, t.dsn, p.base, rcv, s.clients)
	if err != nil {
		return soakOutcome{}, err
	}
	fmt.Fprintf(w, "merchants set up in %.0f s\n", time.Since(started).Seconds())
	o, err := x.soak(ctx, s, d, t, p, w)
	if err != nil {
		return o, err
	}
	hooks := x.acked.hookIDs()
	o.hooksMissing, _ = rcv.await(hooks, hookWait)
	fmt.Fprintf(w, "webhook deliveries received: %d (%d acknowledged test events, %d never arrived)\n", deliveries.Load(), len(hooks), o.hooksMissing)
	x.check(ctx, s.clients, &o, w)
	p.stop()
	o.ledgerOK, o.ledgerSays = verifyLedger(ctx, bin, t.dsn)
	return o, nil
}

// newSoakMix makes the soak's merchants and sets each up: a paying one
// gets a float for its refunds and payouts, a settling one its end-of-day
// config; then its clock runs once (the deposit clears, the report chains
// begin) and its time is noted.
func newSoakMix(ctx context.Context, bin, dsn, base string, rcv *hookReceiver, clients int) (*soakMix, error) {
	apps, err := createMerchants(ctx, bin, dsn, soakMerchants)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: soakRequestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: clients * soakSenders}}
	x := &soakMix{hookURL: rcv.url, acked: newAckLog()}
	for i, a := range apps {
		m := &soakMerchant{c: &client{base: base, app: a, http: hc}, settles: i >= len(apps)-settleMerchants}
		x.merchants = append(x.merchants, m)
		if !m.settles {
			x.payers = append(x.payers, m)
		}
	}
	var mu sync.Mutex
	var errs []error
	forEachMerchant(x.merchants, 4, func(m *soakMerchant) {
		if err := x.setUp(ctx, m); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("set up %d merchants: %w", len(errs), errs[0])
	}
	return x, nil
}

func (x *soakMix) setUp(ctx context.Context, m *soakMerchant) error {
	var status int
	var body []byte
	var err error
	if m.settles {
		status, body, err = m.c.do(ctx, "PUT", "/v2/settlements/config", map[string]any{"frequency": "end_of_day",
			"external_bank_account": map[string]any{"swift_code": "BMRIIDJA", "account_number": "1234567890", "account_name": "Soak Merchant"},
			"webhook_notification":  map[string]any{"endpoint_url": x.hookURL}}, nil)
		err = expectStatus(status, 200, body, err)
	} else {
		status, body, err = m.c.do(ctx, "POST", "/v1/simulate_deposit", map[string]any{"account_number": m.c.app.account, "amount": soakDepositIDR}, nil)
		err = expectStatus(status, 201, body, err)
	}
	if err != nil {
		return err
	}
	m.clockAt, err = moveClock(ctx, m, 0)
	return err
}

// soak measures the peak, runs the load at half of it with the clock
// moving, prints a line each minute, and returns the verdict's figures of
// the load. With --profile, payd's heap profiles at the end of warm-up and
// of the load go to the profile directory (go tool pprof -base warm end
// shows what the growth the verdict judges is made of).
func (x *soakMix) soak(ctx context.Context, s settings, d time.Duration, t *soakTarget, p *paydProcess, w io.Writer) (soakOutcome, error) {
	pid, clients := p.cmd.Process.Pid, s.clients
	pw := peakWindow(d)
	peakRec := newSoakRecorder(pw)
	x.drive(ctx, clients, pw, 0, peakRec)
	peak := peakRec.window(0, pw)
	rate, offered := peak.perSecond/2, "half that peak"
	if s.soakRate > 0 {
		rate, offered = s.soakRate, "--soak-rate"
	}
	fmt.Fprintf(w, "peak: the mix flat out for %s from %d clients (clock still): %.0f req/s, p99 %.2f ms, %d errors\n", pw, clients, peak.perSecond, peak.p99, peak.errors)
	window := soakWindow(d)
	fmt.Fprintf(w, "soak: the mix offered at %.0f req/s (%s) from %d senders for %s, each merchant's clock moved %s every %s; verdict windows: the first and last %s (5 of 30 minutes, scaled), warm-up: the first\n\n",
		rate, offered, soakSenders*clients, d, clockStep, clockRound, window)
	if rate <= 0 {
		return soakOutcome{}, fmt.Errorf("the peak measured no requests")
	}
	fmt.Fprintln(w, soakHeader)
	rec := newSoakRecorder(d)
	stopClock := x.moveClocks(ctx, rec)
	stopRSS := sampleRSS(pid)
	lines := x.printMinutes(ctx, rec, d, t, p, w)
	warm := time.AfterFunc(window, func() { p.heapProfileAs(s, t.kind+"-soak-heap-warm") })
	x.drive(ctx, soakSenders*clients, d, rate, rec)
	stopClock()
	warm.Stop()
	p.heapProfileAs(s, t.kind+"-soak-heap-end")
	<-lines
	samples := stopRSS()
	printOps(w, rec)
	return x.outcome(rec, peakRec, samples, d), nil
}

// printMinutes prints a line for each minute of the soak once it has
// passed (and its requests have answered), and one for a last part minute;
// the channel closes after the last line.
func (x *soakMix) printMinutes(ctx context.Context, rec *soakRecorder, d time.Duration, t *soakTarget, p *paydProcess, w io.Writer) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for from := time.Duration(0); from < d; from += time.Minute {
			to := min(from+time.Minute, d)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(rec.start.Add(to + 2*time.Second))):
			}
			label := fmt.Sprint(int(to / time.Minute))
			if to%time.Minute != 0 {
				label = fmt.Sprintf("%.0fs", to.Seconds())
			}
			fmt.Fprintln(w, minuteLine(label, rec.window(from, to), t.gauges(ctx, p.cmd.Process.Pid, p.base)))
		}
	}()
	return done
}

// outcome is the verdict's figures of the load, and a table of each kind.
func (x *soakMix) outcome(rec, peakRec *soakRecorder, samples []rssSample, d time.Duration) soakOutcome {
	window := soakWindow(d)
	o := soakOutcome{window: window, firstP99: rec.window(0, window).p99, lastP99: rec.window(d-window, d).p99}
	o.rssBase, o.rssLast, o.rssGrowth, o.rssKnown = rssGrowth(samples, window, d-window)
	peakErrs, peakFirst := peakRec.totalErrors()
	o.errors, o.firstErrors = rec.totalErrors()
	o.errors += peakErrs
	o.firstErrors = append(peakFirst, o.firstErrors...)
	return o
}

// printOps prints each kind's figures over the soak.
func printOps(w io.Writer, rec *soakRecorder) {
	fmt.Fprintf(w, "\n%-20s %9s %7s %8s %8s\n", "request", "count", "errors", "p50 ms", "p99 ms")
	for op := range soakOps {
		n, errs, p50, p99 := rec.opStats(op)
		fmt.Fprintf(w, "%-20s %9d %7d %8.2f %8.2f\n", op, n, errs, p50, p99)
	}
}

// check reads back the acknowledged writes and counts the clock's jobs
// into o.
func (x *soakMix) check(ctx context.Context, clients int, o *soakOutcome, w io.Writer) {
	started := time.Now()
	o.checked, o.missing, o.firstMissing = x.readBack(ctx, clients)
	o.untracked = x.acked.untracked
	fmt.Fprintf(w, "read back %d acknowledged payins and payouts in %.0f s: %d absent or changed\n", o.checked, time.Since(started).Seconds(), o.missing)
	jobs, err := x.checkJobs(ctx)
	o.jobsShort = jobs.short
	o.jobsDetail = fmt.Sprintf("%d daily reports (%d by the 09:00s the clocks passed), %d end-of-day settlements (%d by the midnights), %d failed; %d merchants short",
		jobs.reports, jobs.wantReports, jobs.settlements, jobs.wantSettlements, jobs.failedSettlements, jobs.short)
	if err != nil {
		o.jobsShort = max(o.jobsShort, 1)
		o.jobsDetail += "; " + err.Error()
	}
}

// startPingReceiver is a webhook receiver that notes the arrival of ping
// events alone (the soak's test events, which it checks by id) and counts
// every delivery: the payins' and settlements' events too, which it need
// not keep.
func startPingReceiver() (*hookReceiver, *atomic.Int64, error) {
	n := &atomic.Int64{}
	rcv, err := startReceiverBy(nil, func(r *http.Request, _ []byte) string {
		n.Add(1)
		if r.Header.Get("X-Event-Type") != "ping" {
			return ""
		}
		return r.Header.Get("webhook-id")
	})
	return rcv, n, err
}
