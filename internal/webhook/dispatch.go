package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
)

// DefaultSchedule is the delay before each retry (CONTRACT §3): about three
// days in all, after which the event is marked failed.
var DefaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Status of an event's delivery.
type Status string

const (
	Pending   Status = "pending"
	Delivered Status = "delivered"
	Failed    Status = "failed"
)

// Dispatcher delivers events from the outbox.
type Dispatcher struct {
	db      *store.DB
	clock   clock.Clock
	log     *slog.Logger
	policy  Policy
	client  *http.Client
	observe func(outcome string, latency time.Duration)
	poller  *job.Poller

	// Schedule is the delay before each retry; its length bounds the retries.
	Schedule []time.Duration
	// Timeout bounds one attempt (15 s).
	Timeout time.Duration
	// MaxInFlight bounds concurrent attempts of this process, and
	// MaxPerEndpoint those to one endpoint, so that one slow receiver cannot
	// take every slot.
	MaxInFlight    int
	MaxPerEndpoint int
	// PollInterval is how often an idle dispatcher looks for due events
	// (retries that became due, events committed by other processes).
	PollInterval time.Duration
	// Lease is how long a claimed event is reserved for this process: longer
	// than an attempt can take (Timeout), short enough that an event held by a
	// process that crashed is retried soon after by another.
	Lease time.Duration

	mu       sync.Mutex
	inFlight int
	busy     map[string]int
	// hinted are endpoints that may have due events: true for one this
	// process just committed an event for that was not handed over at
	// birth, or one an attempt just finished on while it had a backlog;
	// false for one whose events were just recorded, which the claim
	// probes first (an event of the same record may have waited). They are
	// claimed for one endpoint at a time, which an index keeps cheap
	// whatever the backlog; the claim over every endpoint (which must skip
	// a saturated endpoint's backlog) runs only on the poll tick and on
	// Wake.
	hinted map[string]bool
	// full asks the next round for a claim over every endpoint.
	full bool
	// claims counts claim transactions (the tests read it).
	claims atomic.Int64
	// backlog are endpoints that may have events only a claim finds (not
	// handed over at birth): an attempt finishing there hints them.
	backlog map[string]bool
	// running is set while Run runs: events emitted here are handed over
	// at birth (handoff.go), and wait in ready for their slots.
	running bool
	ready   map[string][]handed
	waiting int // events in ready
}

// maxHinted bounds the hinted endpoints; past it they are dropped and
// the next round claims over every endpoint instead.
const maxHinted = 1024

// NewDispatcher returns a dispatcher. observe hears each attempt's outcome
// ("delivered", "retry", "failed") and latency, for metrics.
func NewDispatcher(db *store.DB, clk clock.Clock, log *slog.Logger, policy Policy, observe func(string, time.Duration)) *Dispatcher {
	if observe == nil {
		observe = func(string, time.Duration) {}
	}
	d := &Dispatcher{db: db, clock: clk, log: log, policy: policy, observe: observe, poller: job.NewPoller(),
		Schedule: DefaultSchedule, Timeout: 15 * time.Second, MaxInFlight: 64, MaxPerEndpoint: 16,
		PollInterval: 250 * time.Millisecond, Lease: 20 * time.Second, busy: map[string]int{}, hinted: map[string]bool{},
		backlog: map[string]bool{}, ready: map[string][]handed{}}
	d.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, Control: d.checkDial}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
			// As many kept-alive connections per receiver as attempts run
			// there at once: with fewer, every attempt past them opened a
			// connection (and in production a TLS session) and closed it.
			MaxIdleConnsPerHost: d.MaxPerEndpoint,
			IdleConnTimeout:     90 * time.Second,
		},
		// Redirects are not followed: a 3xx is an answer like any other non-2xx.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// checkDial runs on the address actually dialled, after DNS: in production a
// name that resolves (now) to a private address is refused here.
func (d *Dispatcher) checkDial(network, address string, _ syscall.RawConn) error {
	if d.policy.AllowPrivate {
		return nil
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !publicAddr(ip) {
		return fmt.Errorf("refused to connect to %s: not a public address", host)
	}
	return nil
}

// Wake makes an idle dispatcher look for work on every endpoint now.
func (d *Dispatcher) Wake() {
	d.mu.Lock()
	d.full = true
	d.mu.Unlock()
	d.signal()
}

// wakeFor makes an idle dispatcher look for work on endpoint now.
func (d *Dispatcher) wakeFor(endpoint string) {
	d.mu.Lock()
	d.hint(endpoint)
	d.mu.Unlock()
	d.signal()
}

// hint notes that endpoint has due events a claim finds; d.mu is held.
func (d *Dispatcher) hint(endpoint string) {
	if d.tooManyHints() {
		return
	}
	d.hinted[endpoint] = true
	d.backlog[endpoint] = true
}

// mayHave notes that endpoint may have due events, which its claim first
// probes for (endpointProbe); d.mu is held.
func (d *Dispatcher) mayHave(endpoint string) {
	if _, ok := d.hinted[endpoint]; ok || d.tooManyHints() {
		return
	}
	d.hinted[endpoint] = false
}

// tooManyHints reports whether the hinted endpoints (or those with a
// backlog) reached maxHinted, and then drops them all for a claim over
// every endpoint; d.mu is held.
func (d *Dispatcher) tooManyHints() bool {
	if len(d.hinted) < maxHinted && len(d.backlog) < maxHinted {
		return false
	}
	clear(d.hinted)
	clear(d.backlog)
	d.full = true
	return true
}

// claimedAll notes that a claim for endpoint found fewer events than it
// could take: until something hints it again, an attempt finishing there
// need not claim.
func (d *Dispatcher) claimedAll(endpoint string) {
	d.mu.Lock()
	delete(d.backlog, endpoint)
	d.mu.Unlock()
}

// signal makes an idle dispatcher run its next round now.
func (d *Dispatcher) signal() { d.poller.Wake() }

// claimed is an event reserved for one attempt.
type claimed struct {
	id, merchantID, eventType, endpoint, auth, secret string
	body                                              []byte
	attempts                                          int
	// clockOffsetMS is the merchant's test-clock offset when the event
	// was claimed (read with its secret): the attempt is logged at its
	// start on the merchant's clock.
	clockOffsetMS int64
}

// Run delivers events until ctx is done; attempts in flight are then
// abandoned and their events released for the next process.
func (d *Dispatcher) Run(ctx context.Context) {
	records := make(chan recording, recordQueue)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.recorder(context.WithoutCancel(ctx), records)
	}()
	var wg sync.WaitGroup
	defer func() {
		d.stopHandOffs(context.WithoutCancel(ctx))
		wg.Wait()
		close(records)
		<-recorded
	}()
	d.mu.Lock()
	d.full = true // the first round looks everywhere
	d.running = true
	d.mu.Unlock()
	launch := func(evs []claimed) {
		for _, ev := range evs {
			d.start(ev.endpoint)
			wg.Go(func() {
				defer d.finish(ev.endpoint)
				d.attempt(ctx, ev, records)
			})
		}
	}
	d.poller.Loop(ctx, d.PollInterval, func(polled bool) bool {
		if polled {
			d.mu.Lock()
			d.full = true // a poll looks everywhere
			d.mu.Unlock()
		}
		return d.round(ctx, launch)
	})
}

// round starts the events handed over at birth that have slots, claims
// over every endpoint when asked (the first round, Wake, a poll), then for
// the hinted endpoints, and reports whether a claim was full: there may be
// more to claim at once.
func (d *Dispatcher) round(ctx context.Context, launch func([]claimed)) bool {
	ready, stale := d.takeReady()
	launch(ready)
	d.release(ctx, stale)
	more := d.takeFull() && d.claimEverywhere(ctx, launch)
	return d.claimHinted(ctx, launch) || more
}

// claimEverywhere claims due events over every endpoint, as many as there
// are free slots, and reports whether it took that many.
func (d *Dispatcher) claimEverywhere(ctx context.Context, launch func([]claimed)) bool {
	free, busy, saturated := d.capacity()
	if free <= 0 {
		return false
	}
	evs, err := d.claim(ctx, free, busy, saturated)
	if err != nil && ctx.Err() == nil {
		d.log.Error("webhook claim", "err", err)
	}
	launch(evs)
	d.mu.Lock()
	for _, ev := range evs {
		d.backlog[ev.endpoint] = true // it may have more
	}
	d.mu.Unlock()
	return len(evs) > 0 && len(evs) == free
}

// claimHinted claims for each hinted endpoint that has a batch of free
// slots (claimable), and reports whether a claim took as many as it asked
// for: that endpoint is hinted again.
func (d *Dispatcher) claimHinted(ctx context.Context, launch func([]claimed)) bool {
	more := false
	for _, want := range d.claimable() {
		evs, err := d.claimFor(ctx, want.endpoint, want.n, want.probe)
		if err != nil && ctx.Err() == nil {
			d.log.Error("webhook claim", "endpoint", want.endpoint, "err", err)
		}
		launch(evs)
		if len(evs) == want.n {
			d.wakeFor(want.endpoint) // there may be more
			more = true
		} else if err == nil {
			d.claimedAll(want.endpoint)
		}
	}
	return more
}

// takeFull reports whether this round claims over every endpoint.
func (d *Dispatcher) takeFull() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	full := d.full
	d.full = false
	return full
}

// endpointClaim is how many events to claim for one endpoint, and whether
// to probe for them first.
type endpointClaim struct {
	endpoint string
	n        int
	probe    bool
}

// claimable takes the hinted endpoints with a claim batch of free slots
// (a quarter of MaxPerEndpoint, so that a busy endpoint is claimed for
// several events at a time), within the process's free slots. A hinted
// endpoint with fewer free slots stays hinted: an attempt finishing there
// frees them.
func (d *Dispatcher) claimable() []endpointClaim {
	d.mu.Lock()
	defer d.mu.Unlock()
	free := d.MaxInFlight - d.inFlight
	batch := max(d.MaxPerEndpoint/4, 1)
	var out []endpointClaim
	for ep, sure := range d.hinted {
		slots := d.MaxPerEndpoint - d.busy[ep]
		n := min(slots, free)
		if slots < batch || n <= 0 {
			continue
		}
		delete(d.hinted, ep)
		out = append(out, endpointClaim{ep, n, !sure})
		free -= n
	}
	return out
}

// capacity is how many attempts may start, the attempts in flight per
// endpoint, and the endpoints not to claim for now: those with fewer than
// a claim batch of free slots. Waiting for a batch's worth (a quarter of
// MaxPerEndpoint) means a busy endpoint's events are claimed several at a
// time, not one claim transaction per finished attempt.
func (d *Dispatcher) capacity() (int, map[string]int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	batch := max(d.MaxPerEndpoint/4, 1)
	busy := make(map[string]int, len(d.busy))
	var saturated []string
	for ep, n := range d.busy {
		busy[ep] = n
		if n > d.MaxPerEndpoint-batch {
			saturated = append(saturated, ep)
		}
	}
	return d.MaxInFlight - d.inFlight, busy, saturated
}

func (d *Dispatcher) start(endpoint string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight++
	d.busy[endpoint]++
}

func (d *Dispatcher) finish(endpoint string) {
	d.mu.Lock()
	d.inFlight--
	if d.busy[endpoint]--; d.busy[endpoint] <= 0 {
		delete(d.busy, endpoint)
	}
	if d.backlog[endpoint] {
		d.hint(endpoint)
	}
	d.mu.Unlock()
	d.signal()
}

// dueEvents are the events due and free at $1, which a claim over every
// endpoint probes for (job.Probe) before a write transaction is spent on
// claiming.
const dueEvents = `webhook_events
	WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until < $1)`

// claim reserves up to n due events (skipping saturated endpoints, and
// none past an endpoint's MaxPerEndpoint with those already busy) for Lease.
func (d *Dispatcher) claim(ctx context.Context, n int, busy map[string]int, saturated []string) ([]claimed, error) {
	now := d.clock.Now().UnixMilli()
	if due, err := job.Probe(ctx, d.db.Read(), dueEvents, now); err != nil || !due {
		return nil, err
	}
	args := []any{now}
	var exclude []string
	for _, ep := range saturated {
		exclude = append(exclude, arg(&args, ep))
	}
	d.claims.Add(1)
	return store.Do(ctx, d.db, func(tx *store.Tx) ([]claimed, error) {
		if err := leaseTx(ctx, tx); err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, d.claimQuery(n, exclude), args...)
		if err != nil {
			return nil, fmt.Errorf("claim webhook events: %w", err)
		}
		var out []claimed
		perEndpoint := maps.Clone(busy)
		for rows.Next() {
			var c claimed
			if err := rows.Scan(&c.id, &c.merchantID, &c.eventType, &c.endpoint, &c.auth, &c.body, &c.attempts, &c.secret, &c.clockOffsetMS); err != nil {
				rows.Close()
				return nil, err
			}
			if perEndpoint[c.endpoint] >= d.MaxPerEndpoint {
				continue
			}
			perEndpoint[c.endpoint]++
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, nil
		}
		keys := make([]eventKey, len(out))
		for i, c := range out {
			keys[i] = eventKey{c.merchantID, c.id}
		}
		which, lease := byKeys([]any{now + d.Lease.Milliseconds(), now}, keys)
		leased := map[string]bool{}
		err = tx.Query(ctx, `UPDATE webhook_events SET locked_until = $1
			WHERE `+which+` AND status = 'pending' AND (locked_until IS NULL OR locked_until < $2)
			RETURNING id`, lease, func(row store.Row) error {
			var id string
			err := row.Scan(&id)
			leased[id] = true
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("claim webhook events: %w", err)
		}
		return slices.DeleteFunc(out, func(c claimed) bool { return !leased[c.id] }), nil
	})
}

// claimQuery is claim's statement for up to n events: $1 now, and exclude
// the placeholders of the endpoints to skip.
func (d *Dispatcher) claimQuery(n int, exclude []string) string {
	skip := ""
	if len(exclude) > 0 {
		skip = " AND e.endpoint_url NOT IN (" + strings.Join(exclude, ", ") + ")"
	}
	return `SELECT e.id, e.merchant_id, e.event_type, e.endpoint_url, e.authorization_header, e.body, e.attempts, m.webhook_secret, m.clock_offset_ms
		FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id
		WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND (e.locked_until IS NULL OR e.locked_until < $1)` + skip + inRecordOrder("e") + `
		ORDER BY e.next_attempt_at` + store.Limit(n) + d.skipLocked("e")
}

// stillFree is the lease's condition on Citus (see skipLocked); on
// PostgreSQL the claim's locks already keep the events free.
func (d *Dispatcher) stillFree() string {
	return d.db.RecheckAcross(` AND status = 'pending' AND (locked_until IS NULL OR locked_until < $3)`)
}

// skipLocked is the claims' row-locking suffix. Citus cannot lock the rows
// of a query that spans shards, so there a claim reads without locking,
// and its lease, an update on the condition that the event is still free,
// is what one dispatcher alone wins (the others' updates, which wait for
// its commit, then find the event leased and skip it).
func (d *Dispatcher) skipLocked(alias string) string {
	return d.db.SkipLockedAcross(alias)
}

// claimFor reserves up to n due events of one endpoint for Lease, in one
// statement (the index on status, endpoint and due time finds them without
// walking other endpoints' backlog); with probe, only if endpointDue
// finds one.
func (d *Dispatcher) claimFor(ctx context.Context, endpoint string, n int, probe bool) ([]claimed, error) {
	now := d.clock.Now().UnixMilli()
	if probe {
		if due, err := job.Probe(ctx, d.db.Read(), endpointDue, endpoint, now); err != nil || !due {
			return nil, err
		}
	}
	var sent *store.Pending[[]claimed]
	// On PostgreSQL the claim goes with its BEGIN (one round trip, its
	// COMMIT another), and its commit does not wait for the disk: a lease
	// lost in a crash only lets the event be claimed again. It is on the
	// dispatcher's serial path, so each wait there bounds delivery.
	d.claims.Add(1)
	err := d.db.Exec(ctx, func(tx *store.Tx) error {
		if err := leaseTx(ctx, tx); err != nil {
			return err
		}
		var err error
		sent, err = store.SendQuery(ctx, tx, d.claimForQuery(n), []any{now + d.Lease.Milliseconds(), endpoint, now}, func(row store.Row) (claimed, error) {
			var c claimed
			err := row.Scan(&c.id, &c.merchantID, &c.eventType, &c.endpoint, &c.auth, &c.body, &c.attempts, &c.secret, &c.clockOffsetMS)
			return c, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook events: %w", err)
	}
	out, err := sent.Get()
	if err != nil {
		return nil, fmt.Errorf("claim webhook events: %w", err)
	}
	return out, nil
}

// leaseTx readies a claim's transaction: its commit need not wait for the
// disk (a lease lost in a crash only lets the event be claimed again), and
// its statements are planned with their values each time, since the
// outbox's backlog swings from nothing to thousands of events within
// seconds (store.Tx.PlanEachTime).
func leaseTx(ctx context.Context, tx *store.Tx) error {
	if err := tx.RelaxCommit(ctx); err != nil {
		return err
	}
	return tx.PlanEachTime(ctx)
}

// inRecordOrder keeps the claim (of webhook_events as alias) to events no
// earlier event of the same record is still waiting for: one record's
// events are delivered in the order they were emitted (seq), the next only
// once the one before is delivered or has failed for good.
func inRecordOrder(alias string) string {
	return strings.ReplaceAll(` AND NOT EXISTS (SELECT 1 FROM webhook_events p WHERE p.merchant_id = E.merchant_id AND p.record_uuid = E.record_uuid
		AND p.status = 'pending' AND p.seq < E.seq)`, "E.", alias+".")
}

// endpointDue are the events of endpoint $1 due and free at $2, in record
// order (claimFor's statement without its lease), which claimFor probes for
// (job.Probe) before a write transaction is spent on claiming after
// attempts were recorded: an event of the same record may have waited for
// them, but most of the events this process emits are handed over at birth
// (handoff.go), and then there is nothing to claim.
var endpointDue = `webhook_events w
	WHERE w.status = 'pending' AND w.endpoint_url = $1 AND w.next_attempt_at <= $2 AND (w.locked_until IS NULL OR w.locked_until < $2)` +
	inRecordOrder("w")

// claimForQuery is claimFor's statement for up to n events: $1 the lease's
// end, $2 the endpoint, $3 now.
func (d *Dispatcher) claimForQuery(n int) string {
	return `UPDATE webhook_events SET locked_until = $1
		WHERE (merchant_id, id) IN (SELECT w.merchant_id, w.id FROM webhook_events w
			WHERE w.status = 'pending' AND w.endpoint_url = $2 AND w.next_attempt_at <= $3 AND (w.locked_until IS NULL OR w.locked_until < $3)` +
		inRecordOrder("w") + `
			ORDER BY w.next_attempt_at` + store.Limit(n) + d.skipLocked("w") + `)` + d.stillFree() + `
		RETURNING id, merchant_id, event_type, endpoint_url, authorization_header, body, attempts,
			(SELECT m.webhook_secret FROM merchants m WHERE m.id = webhook_events.merchant_id),
			(SELECT m.clock_offset_ms FROM merchants m WHERE m.id = webhook_events.merchant_id)`
}

// outcome is how one attempt ended.
type outcome struct {
	statusCode int
	latency    time.Duration
	err        string
	retryAfter time.Duration
}

func (o outcome) delivered() bool { return o.err == "" && o.statusCode >= 200 && o.statusCode < 300 }

// maxRetryAfter bounds a receiver's Retry-After.
const maxRetryAfter = 24 * time.Hour

func (d *Dispatcher) attempt(ctx context.Context, ev claimed, records chan<- recording) {
	started := d.clock.Now()
	o := d.send(ctx, ev, started)
	if ctx.Err() != nil {
		// Shutting down: the attempt did not finish; release the event untouched.
		ctx := context.WithoutCancel(ctx)
		_ = d.db.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET locked_until = NULL WHERE merchant_id = $1 AND id = $2`, ev.merchantID, ev.id)
			return err
		})
		return
	}
	// The attempt's slot is free once the receiver has answered; the event
	// stays leased to this process until the recorder has written the
	// outcome, so no other attempt of it starts before.
	records <- recording{ev: ev, started: started, o: o}
}

// recording is an attempt's outcome on its way to the database.
type recording struct {
	ev      claimed
	started time.Time
	o       outcome
}

// recordQueue bounds the outcomes waiting to be written; past it, attempts
// wait (back pressure on a database that falls behind).
const recordQueue = 1024

// maxRecordBatch bounds how many attempts one transaction records.
const maxRecordBatch = 256

// recorder writes attempts as they finish, all those waiting in one
// transaction: a commit per batch rather than per attempt keeps the
// deliveries' bookkeeping off the critical path when many are in flight.
// A batch that fails is written again one attempt at a time, so that one
// bad record cannot hold back the others; an attempt that cannot be
// recorded is retried when its lease ends.
func (d *Dispatcher) recorder(ctx context.Context, in <-chan recording) {
	for first := range in {
		batch := []recording{first}
	fill:
		for len(batch) < maxRecordBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		if results, err := d.record(ctx, batch); err == nil {
			d.observeAll(batch, results)
			d.recorded(batch)
			continue
		}
		for _, r := range batch {
			one := []recording{r}
			results, err := d.record(ctx, one)
			if err != nil {
				d.log.Error("record webhook attempt", "event_id", r.ev.id, "err", err)
				continue
			}
			d.observeAll(one, results)
			d.recorded(one)
		}
	}
}

// recorded hints the endpoints of recorded attempts: an event of the same
// record may have been waiting for the one just delivered (inRecordOrder).
func (d *Dispatcher) recorded(batch []recording) {
	d.mu.Lock()
	for _, r := range batch {
		d.mayHave(r.ev.endpoint)
	}
	d.mu.Unlock()
	d.signal()
}

func (d *Dispatcher) observeAll(batch []recording, results []string) {
	for i, r := range batch {
		d.observe(results[i], r.o.latency)
	}
}

func (d *Dispatcher) send(ctx context.Context, ev claimed, at time.Time) outcome {
	sig, err := Sign(ev.secret, ev.id, at, ev.body)
	if err != nil {
		return outcome{err: err.Error()}
	}
	reqCtx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, ev.endpoint, strings.NewReader(string(ev.body)))
	if err != nil {
		return outcome{err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payd-webhooks/1")
	if ev.auth != "" {
		req.Header.Set("Authorization", ev.auth)
	}
	req.Header.Set("X-Event-Type", ev.eventType)
	req.Header.Set("webhook-id", ev.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	t0 := d.clock.Now()
	res, err := d.client.Do(req)
	latency := d.clock.Now().Sub(t0)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", d.Timeout)
		}
		return outcome{latency: latency, err: msg}
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	o := outcome{statusCode: res.StatusCode, latency: latency}
	if !o.delivered() {
		o.retryAfter = parseRetryAfter(res.Header.Get("Retry-After"), d.clock.Now())
	}
	return o
}

// parseRetryAfter reads seconds or an HTTP date; zero when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// attemptsPerStatement bounds the rows of one statement (and so its parameters).
const attemptsPerStatement = 100

// record writes each attempt to the log and its event's next state, in one
// transaction, and returns the outcomes' names. The attempts go in
// multi-row inserts, the deliveries (the common outcome) in one update.
func (d *Dispatcher) record(ctx context.Context, batch []recording) ([]string, error) {
	now := d.clock.Now()
	rows := make([]attemptRow, len(batch))
	results := make([]string, len(batch))
	var delivered []eventKey
	for i, r := range batch {
		rows[i], results[i] = d.next(r, now)
		if rows[i].status == Delivered {
			delivered = append(delivered, eventKey{rows[i].merchantID, rows[i].eventID})
		}
	}
	err := d.db.Exec(ctx, func(tx *store.Tx) error {
		if err := tx.PlanEachTime(ctx); err != nil { // the outbox swings (leaseTx)
			return err
		}
		for chunk := range slices.Chunk(rows, attemptsPerStatement) {
			values := make([]string, len(chunk))
			args := make([]any, 0, 6*len(chunk))
			for i, a := range chunk {
				n := len(args)
				values[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
				args = append(args, a.eventID, a.merchantID, a.attempt, a.started, a.code, a.latencyMS, a.errText)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (event_id, merchant_id, attempt, started_at, status_code, latency_ms, error)
				VALUES `+strings.Join(values, ", "), args...); err != nil {
				return err
			}
		}
		for chunk := range slices.Chunk(delivered, attemptsPerStatement) {
			which, args := byKeys([]any{now.UnixMilli()}, chunk)
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = 'delivered', attempts = attempts + 1, next_attempt_at = NULL,
				locked_until = NULL, last_error = NULL, delivered_at = $1 + `+merchantOffset+`, updated_at = $1 WHERE `+which, args...); err != nil {
				return err
			}
		}
		for _, a := range rows {
			if a.status == Delivered {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, attempts = attempts + 1, next_attempt_at = $2,
				locked_until = NULL, last_error = $3, updated_at = $4 WHERE merchant_id = $5 AND id = $6`,
				string(a.status), a.next, a.errText, now.UnixMilli(), a.merchantID, a.eventID); err != nil {
				return err
			}
		}
		return nil
	})
	return results, err
}

// eventKey is an event's primary key.
type eventKey struct{ merchantID, id string }

// byKeys appends the merchants and ids of keys to args and returns the
// condition that finds those events through the primary key, merchant
// first: "merchant_id IN ($3) AND id IN ($4, $5)". An event id is random
// (store.RandomID, 20 characters), so no other merchant of the list has one
// of the ids, and the condition finds exactly the keys' events.
func byKeys(args []any, keys []eventKey) (string, []any) {
	merchants := map[string]bool{}
	var m, ids []string
	for _, k := range keys {
		if !merchants[k.merchantID] {
			merchants[k.merchantID] = true
			m = append(m, arg(&args, k.merchantID))
		}
	}
	for _, k := range keys {
		ids = append(ids, arg(&args, k.id))
	}
	return "merchant_id IN (" + strings.Join(m, ", ") + ") AND id IN (" + strings.Join(ids, ", ") + ")", args
}

// arg appends v to *args and returns its placeholder.
func arg(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}

// attemptRow is what recording one attempt writes.
type attemptRow struct {
	eventID, merchantID string
	attempt             int // the event's attempts before it, and 1
	// started is when the attempt started on the merchant's clock, where
	// the log shows it; next, when the retry is due, is on the real
	// clock, where the dispatcher looks for it.
	started, latencyMS int64
	code, errText      any
	status             Status
	next               any
}

// next decides an attempt's consequence: delivered, failed for good, or a
// retry after the schedule's delay (or the receiver's Retry-After).
func (d *Dispatcher) next(r recording, now time.Time) (attemptRow, string) {
	ev, o := r.ev, r.o
	result := "retry"
	a := attemptRow{eventID: ev.id, merchantID: ev.merchantID, attempt: ev.attempts + 1, started: r.started.UnixMilli() + ev.clockOffsetMS,
		latencyMS: o.latency.Milliseconds(), status: Pending}
	lastErr := o.err
	switch {
	case o.delivered():
		result, a.status = "delivered", Delivered
	case o.statusCode == http.StatusGone:
		result, a.status, lastErr = "failed", Failed, "the receiver answered 410 Gone: no more attempts"
	case ev.attempts+1 > len(d.Schedule):
		result, a.status = "failed", Failed
	default:
		delay := job.Jitter(d.Schedule[ev.attempts])
		if o.retryAfter > 0 {
			delay = o.retryAfter
		}
		a.next = now.Add(delay).UnixMilli()
	}
	if lastErr == "" && !o.delivered() {
		lastErr = "the receiver answered " + strconv.Itoa(o.statusCode)
	}
	if o.statusCode != 0 {
		a.code = o.statusCode
	}
	if !o.delivered() {
		a.errText = job.ErrorText(lastErr, maxErrorBytes)
	}
	return a, result
}

// maxErrorBytes bounds the last error an event and its attempt keep.
const maxErrorBytes = 500
