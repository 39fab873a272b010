package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"payd/internal/store"
)

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

// outcome is how one attempt ended.
type outcome struct {
	statusCode int
	latency    time.Duration
	err        string
	retryAfter time.Duration
	// final ends the event without a retry: its webhook endpoint is
	// disabled or gone.
	final bool
}

func (o outcome) delivered() bool { return o.err == "" && o.statusCode >= 200 && o.statusCode < 300 }

// maxRetryAfter bounds a receiver's Retry-After.
const maxRetryAfter = 24 * time.Hour

func (d *Dispatcher) attempt(ctx context.Context, ev claimed, records chan<- recording) {
	started := d.clock.Now()
	var o outcome
	if ev, o = d.keysOf(ctx, ev); !o.final && o.err == "" {
		o = d.send(ctx, ev, started)
	}
	if ctx.Err() != nil {
		// Shutting down: the attempt did not finish; release the event untouched.
		ctx := context.WithoutCancel(ctx)
		_ = d.db.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE webhook_events SET locked_until = NULL WHERE merchant_id = $1 AND id = $2`, ev.merchantID, ev.id)
			return err
		})
		return
	}
	d.logFailure(ev, o)
	// The attempt's slot is free once the receiver has answered; the event
	// stays leased to this process until the recorder has written the
	// outcome, so no other attempt of it starts before.
	records <- recording{ev: ev, started: started, o: o}
}

// keysOf reads the signing secrets of a delivery to a webhook endpoint
// into ev (a record's endpoint_url is signed with the merchant's, read
// with the claim); a delivery whose endpoint is disabled or gone is final.
func (d *Dispatcher) keysOf(ctx context.Context, ev claimed) (claimed, outcome) {
	if ev.endpointID == "" {
		return ev, outcome{}
	}
	secret, previous, ok, err := d.signingKeys(ctx, ev.merchantID, ev.endpointID)
	switch {
	case err != nil:
		return ev, outcome{err: "read the webhook endpoint's secret: " + err.Error()}
	case !ok:
		return ev, outcome{err: "the webhook endpoint is disabled or deleted: not sent", final: true}
	}
	ev.secret, ev.previous = secret, previous
	return ev, outcome{}
}

// signature is the webhook-signature of one attempt: the signature with
// the current secret, and, for a day after a rotation, the one with the
// previous secret beside it (Standard Webhooks: space-separated).
func signature(ev claimed, at time.Time) (string, error) {
	sig, err := Sign(ev.secret, ev.eventID, at, ev.body)
	if err != nil || ev.previous == "" {
		return sig, err
	}
	old, err := Sign(ev.previous, ev.eventID, at, ev.body)
	return sig + " " + old, err
}

func (d *Dispatcher) send(ctx context.Context, ev claimed, at time.Time) outcome {
	if ev.eventID == "" {
		ev.eventID = ev.id
	}
	sig, err := signature(ev, at)
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
	req.Header.Set("webhook-id", ev.eventID)
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
