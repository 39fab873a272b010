package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"payd/internal/clock"
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
	wake    chan struct{}

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
}

// NewDispatcher returns a dispatcher. observe hears each attempt's outcome
// ("delivered", "retry", "failed") and latency, for metrics.
func NewDispatcher(db *store.DB, clk clock.Clock, log *slog.Logger, policy Policy, observe func(string, time.Duration)) *Dispatcher {
	if observe == nil {
		observe = func(string, time.Duration) {}
	}
	d := &Dispatcher{db: db, clock: clk, log: log, policy: policy, observe: observe, wake: make(chan struct{}, 1),
		Schedule: DefaultSchedule, Timeout: 15 * time.Second, MaxInFlight: 64, MaxPerEndpoint: 16,
		PollInterval: 250 * time.Millisecond, Lease: 20 * time.Second, busy: map[string]int{}}
	d.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, Control: d.checkDial}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 15 * time.Second,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
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

// Wake makes an idle dispatcher look for work now.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// claimed is an event reserved for one attempt.
type claimed struct {
	id, merchantID, eventType, endpoint, auth, secret string
	body                                              []byte
	attempts                                          int
}

// Run delivers events until ctx is done; attempts in flight are then
// abandoned and their events released for the next process.
func (d *Dispatcher) Run(ctx context.Context) {
	ticker := time.NewTicker(d.PollInterval)
	defer ticker.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		free, saturated := d.capacity()
		var evs []claimed
		if free > 0 {
			var err error
			evs, err = d.claim(ctx, free, saturated)
			if err != nil && ctx.Err() == nil {
				d.log.Error("webhook claim", "err", err)
			}
		}
		for _, ev := range evs {
			d.start(ev.endpoint)
			wg.Go(func() {
				defer d.finish(ev.endpoint)
				d.attempt(ctx, ev)
			})
		}
		if len(evs) > 0 && len(evs) == free {
			continue
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-ticker.C:
		}
	}
}

func (d *Dispatcher) capacity() (int, []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var saturated []string
	for ep, n := range d.busy {
		if n >= d.MaxPerEndpoint {
			saturated = append(saturated, ep)
		}
	}
	return d.MaxInFlight - d.inFlight, saturated
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
	d.mu.Unlock()
	d.Wake()
}

// claim reserves up to n due events (skipping saturated endpoints) for Lease.
func (d *Dispatcher) claim(ctx context.Context, n int, saturated []string) ([]claimed, error) {
	now := d.clock.Now().UnixMilli()
	var probe int
	if err := d.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM webhook_events
		WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until < $1) LIMIT 1) d`, now).Scan(&probe); err != nil || probe == 0 {
		return nil, err
	}
	args := []any{now, n}
	exclude := ""
	if len(saturated) > 0 {
		marks := make([]string, len(saturated))
		for i, ep := range saturated {
			args = append(args, ep)
			marks[i] = "$" + strconv.Itoa(len(args))
		}
		exclude = " AND e.endpoint_url NOT IN (" + strings.Join(marks, ", ") + ")"
	}
	return store.Do(ctx, d.db, func(tx *store.Tx) ([]claimed, error) {
		rows, err := tx.QueryContext(ctx, `SELECT e.id, e.merchant_id, e.event_type, e.endpoint_url, e.authorization_header, e.body, e.attempts, m.webhook_secret
			FROM webhook_events e JOIN merchants m ON m.id = e.merchant_id
			WHERE e.status = 'pending' AND e.next_attempt_at <= $1 AND (e.locked_until IS NULL OR e.locked_until < $1)`+exclude+`
			ORDER BY e.next_attempt_at LIMIT $2`+d.db.SkipLocked("e"), args...)
		if err != nil {
			return nil, fmt.Errorf("claim webhook events: %w", err)
		}
		var out []claimed
		perEndpoint := map[string]int{}
		for rows.Next() {
			var c claimed
			if err := rows.Scan(&c.id, &c.merchantID, &c.eventType, &c.endpoint, &c.auth, &c.body, &c.attempts, &c.secret); err != nil {
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
		for _, c := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET locked_until = $1 WHERE id = $2`, now+d.Lease.Milliseconds(), c.id); err != nil {
				return nil, fmt.Errorf("claim webhook event: %w", err)
			}
		}
		return out, nil
	})
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

func (d *Dispatcher) attempt(ctx context.Context, ev claimed) {
	started := d.clock.Now()
	o := d.send(ctx, ev, started)
	if ctx.Err() != nil {
		// Shutting down: the attempt did not finish; release the event untouched.
		_ = d.db.Exec(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET locked_until = NULL WHERE id = $1`, ev.id)
			return err
		})
		return
	}
	result, err := d.record(context.WithoutCancel(ctx), ev, started, o)
	if err != nil {
		d.log.Error("record webhook attempt", "event_id", ev.id, "err", err)
		return
	}
	d.observe(result, o.latency)
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

// record writes the attempt to the log and the event's next state, and
// returns the outcome's name.
func (d *Dispatcher) record(ctx context.Context, ev claimed, started time.Time, o outcome) (string, error) {
	result := "retry"
	var next any
	status := Pending
	lastErr := o.err
	switch {
	case o.delivered():
		result, status = "delivered", Delivered
	case o.statusCode == http.StatusGone:
		result, status, lastErr = "failed", Failed, "the receiver answered 410 Gone: no more attempts"
	case ev.attempts+1 > len(d.Schedule):
		result, status = "failed", Failed
	default:
		delay := jitter(d.Schedule[ev.attempts])
		if o.retryAfter > 0 {
			delay = o.retryAfter
		}
		next = d.clock.Now().Add(delay).UnixMilli()
	}
	if lastErr == "" && !o.delivered() {
		lastErr = "the receiver answered " + strconv.Itoa(o.statusCode)
	}
	var code any
	if o.statusCode != 0 {
		code = o.statusCode
	}
	var errText any
	if !o.delivered() {
		errText = truncate(lastErr, 500)
	}
	now := d.clock.Now().UnixMilli()
	var deliveredAt any
	if status == Delivered {
		deliveredAt = now
	}
	err := d.db.Exec(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms, error)
			VALUES ($1, (SELECT count(*) + 1 FROM webhook_attempts WHERE event_id = $1), $2, $3, $4, $5)`,
			ev.id, started.UnixMilli(), code, o.latency.Milliseconds(), errText); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET status = $1, attempts = attempts + 1, next_attempt_at = $2,
			locked_until = NULL, last_error = $3, delivered_at = COALESCE($4, delivered_at), updated_at = $5 WHERE id = $6`,
			string(status), next, errText, deliveredAt, now, ev.id)
		return err
	})
	return result, err
}

// jitter spreads a delay by ±10 % so retries of many events do not arrive together.
func jitter(d time.Duration) time.Duration {
	spread := int64(d) / 10
	if spread <= 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(2*spread+1)-spread)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
