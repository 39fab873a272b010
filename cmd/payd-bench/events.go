package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"payd/internal/ratelimit"
)

// The events rows (issue 51), on a merchant of their own: the lag from a
// commit to its event on an open stream (GET /v2/events/stream), in the
// same payd and, on PostgreSQL, in a second payd sharing the database; the
// events listed per second (GET /v2/events pages); and the deliveries per
// second when every event goes to five webhook endpoints.

// Row names of the events group.
const (
	streamLagRowName   = "stream lag"
	streamAcrossName   = "stream lag across processes"
	eventsListRowName  = "events listed"
	fanOutRowName      = "fan-out to 5 endpoints"
	drainRowName       = "webhook backlog drain"
	streamRate         = 1000 // events a second the stream rows offer (issue 51: p99 ≤ 50 ms at 1,000/s)
	fanOutEndpoints    = 5
	fanOutEventsPerSec = 400 // the fan-out row's events, per second of --duration
	eventsPage         = 100 // the list row's page size, the most a page may be
)

// measureEvents runs the events rows on a merchant of its own.
func measureEvents(ctx context.Context, s settings, p *paydProcess, bin, dsn, db string, profile func(string) func(), rep *dbReport) error {
	id, a, err := createMerchant(ctx, bin, dsn, "Events Merchant")
	if err != nil {
		return err
	}
	if err := setLimits(ctx, bin, dsn, id, ratelimit.MaxRate); err != nil {
		return err
	}
	pid := p.cmd.Process.Pid
	c := &client{base: p.base, app: a, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients * 2}}}
	same, err := measureStreamLag(ctx, s, c, p.base, pid, streamLagRowName, "open on the same payd", profile)
	if err != nil {
		return fmt.Errorf("%s: %w", streamLagRowName, err)
	}
	rep.Results = append(rep.Results, same)
	if db != "sqlite" {
		b, err := startBeside(ctx, bin, dsn)
		if err != nil {
			return fmt.Errorf("a second payd: %w", err)
		}
		across, err := measureStreamLag(ctx, s, c, b.base, pid, streamAcrossName, "open on a second payd serving the same database", profile)
		b.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", streamAcrossName, err)
		}
		rep.Results = append(rep.Results, across)
	}
	rep.Results = append(rep.Results, measureEventList(ctx, s, c, pid, profile))
	fan, err := measureFanOut(ctx, s, c, pid, profile)
	if err != nil {
		return fmt.Errorf("%s: %w", fanOutRowName, err)
	}
	for _, r := range rep.Results {
		if r.Name == drainRowName && r.PerSecond > 0 {
			fan.Reference, fan.RatioToRef = drainRowName, fan.PerSecond/r.PerSecond
		}
	}
	rep.Results = append(rep.Results, fan)
	return nil
}

// pendingPayins creates n pending payins of c's account (or as many as
// twice the scenario's duration allows) and returns their uuids.
func pendingPayins(ctx context.Context, s settings, c *client, n int, prefix string) []string {
	var (
		mu    sync.Mutex
		uuids []string
		made  atomic.Int64
	)
	drive(ctx, prefix+" payins", s.clients, 2*s.duration, 0, func(ctx context.Context, cl, i int) (bool, error) {
		if made.Add(1) > int64(n) {
			return true, nil
		}
		uuid, err := c.createPayin(ctx, fmt.Sprintf("%s-%d-%d", prefix, cl, i), false)
		if err != nil {
			return false, err
		}
		mu.Lock()
		uuids = append(uuids, uuid)
		mu.Unlock()
		return false, nil
	})
	return uuids
}

// failPayins is an operation of drive that fails the next payin of pool by
// the sandbox (one status change and its payin.failed event, no ledger
// entry) and notes in committed when the answer came: the commit.
func failPayins(c *client, pool []string, committed *arrivals) func(ctx context.Context, cl, i int) (bool, error) {
	var next atomic.Int64
	return func(ctx context.Context, cl, i int) (bool, error) {
		n := next.Add(1) - 1
		if int(n) >= len(pool) {
			return true, nil
		}
		status, body, err := c.do(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": pool[n], "status": "failed"}, nil)
		at := time.Now()
		if err := expectStatus(status, 200, body, err); err != nil {
			return false, err
		}
		committed.note(pool[n], at)
		return false, nil
	}
}

// measureStreamLag fails payins at streamRate a second by c while a stream
// of payin.failed events is open on streamBase, and measures the lag from
// each answer to its event's arrival on the stream.
func measureStreamLag(ctx context.Context, s settings, c *client, streamBase string, pid int, name, where string, profile func(string) func()) (result, error) {
	pool := pendingPayins(ctx, s, c, int(streamRate*s.duration.Seconds()), "lag")
	w, err := watchStream(ctx, streamBase, c.app, "payin.failed")
	if err != nil {
		return result{}, err
	}
	defer w.close()
	committed := newArrivals()
	stopProfile := profile(name)
	sent := drivePaced(ctx, name, s.clients, s.duration, pid, streamRate, failPayins(c, pool, committed))
	stopProfile()
	ids := committed.all()
	awaitAll(ids, 30*time.Second, w.seen.at)
	r := arrivalRow(name, ids, w.seen.at, sent)
	r.Description = fmt.Sprintf("POST /v2/payins/simulate (failed) offered at %d/s, its payin.failed event read on a stream %s; latency = commit (the answer) to the event's arrival", streamRate, where)
	return r, nil
}

// measureEventList pages through the merchant's events, newest first, by
// next_cursor (back to the first page after the last), eventsPage a page.
// Its rate and CPU are per event listed, its latency per page.
func measureEventList(ctx context.Context, s settings, c *client, pid int, profile func(string) func()) result {
	var listed, pages atomic.Int64
	cursors := make([]string, s.clients)
	stopProfile := profile(eventsListRowName)
	r := drive(ctx, eventsListRowName, s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		path := fmt.Sprintf("/v2/events?size=%d", eventsPage)
		if cursors[cl] != "" {
			path += "&cursor=" + url.QueryEscape(cursors[cl])
		}
		cursors[cl] = ""
		status, body, err := c.do(ctx, "GET", path, nil, nil)
		if err := expectStatus(status, 200, body, err); err != nil {
			return false, err
		}
		var page struct {
			Records    []json.RawMessage `json:"records"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return false, fmt.Errorf("read a page of events: %w", err)
		}
		if page.NextCursor != nil {
			cursors[cl] = *page.NextCursor
		}
		listed.Add(int64(len(page.Records)))
		pages.Add(1)
		return false, nil
	})
	stopProfile()
	if n := listed.Load(); n > 0 {
		perPage := float64(n) / float64(pages.Load())
		r.PerSecond *= perPage
		r.CPUPerRequest /= perPage
		r.Requests = n
	}
	r.Description = fmt.Sprintf("GET /v2/events?size=%d by next_cursor, newest first, of one merchant's events: per s and CPU per event listed, latency per page (%d pages)", eventsPage, pages.Load())
	return r
}

// measureFanOut gives the merchant fanOutEndpoints webhook endpoints that
// want payin.*, each a local receiver of its own, fails a pool of payins
// as fast as the clients go, and measures every event's delivery to each
// endpoint: deliveries per second from the first commit to the last
// receipt, and their lag.
func measureFanOut(ctx context.Context, s settings, c *client, pid int, profile func(string) func()) (result, error) {
	byRecord := func(_ *http.Request, body []byte) string {
		var rec struct {
			UUID string `json:"uuid"`
		}
		json.Unmarshal(body, &rec)
		return rec.UUID
	}
	var receivers []*hookReceiver
	defer func() {
		for _, rcv := range receivers {
			rcv.close()
		}
	}()
	for i := range fanOutEndpoints {
		rcv, err := startReceiverBy(nil, byRecord)
		if err != nil {
			return result{}, err
		}
		receivers = append(receivers, rcv)
		status, body, err := c.do(ctx, "POST", "/v2/webhook_endpoints", map[string]any{"url": rcv.url, "enabled_events": []string{"payin.*"},
			"description": fmt.Sprintf("payd-bench receiver %d", i)}, nil)
		if err := expectStatus(status, 201, body, err); err != nil {
			return result{}, fmt.Errorf("create endpoint %d: %w", i, err)
		}
	}
	pool := pendingPayins(ctx, s, c, int(fanOutEventsPerSec*s.duration.Seconds()), "fanout")
	committed := newArrivals()
	stopProfile := profile(fanOutRowName)
	cpu, started := startCPU(pid), time.Now()
	sent := drive(ctx, fanOutRowName, s.clients, s.duration, pid, failPayins(c, pool, committed))
	ids := committed.all()
	var lags []time.Duration
	var first, last time.Time
	missing := 0
	for _, rcv := range receivers {
		m, _ := awaitAll(ids, 120*time.Second, rcv.arrival)
		missing += m
		for id, at := range ids {
			got, ok := rcv.arrival(id)
			if !ok {
				continue
			}
			lags = append(lags, max(0, got.Sub(at)))
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if got.After(last) {
				last = got
			}
		}
	}
	stopProfile()
	r := result{Name: fanOutRowName, Requests: int64(len(lags)), Errors: int64(missing), FirstError: sent.FirstError,
		Description: fmt.Sprintf("%d payin.failed events (POST /v2/payins/simulate as fast as %d clients go), each delivered to %d endpoints of the merchant, local receivers: deliveries per second from the first commit to the last receipt; latency = commit to receipt",
			len(ids), s.clients, fanOutEndpoints)}
	if span := last.Sub(first); span > 0 {
		r.PerSecond = float64(len(lags)) / span.Seconds()
	}
	r.P50ms, r.P99ms = percentile(lags, 0.5), percentile(lags, 0.99)
	cpu.stop(&r, time.Since(started)) // per delivery, the drain included
	return r, nil
}

// arrivals are instants by id, safe for concurrent use.
type arrivals struct {
	mu sync.Mutex
	by map[string]time.Time
}

func newArrivals() *arrivals { return &arrivals{by: map[string]time.Time{}} }

// note keeps the first instant of id.
func (a *arrivals) note(id string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.by[id]; !ok {
		a.by[id] = at
	}
}

func (a *arrivals) at(id string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.by[id]
	return t, ok
}

// all is a copy of every id's instant.
func (a *arrivals) all() map[string]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]time.Time, len(a.by))
	for id, t := range a.by {
		out[id] = t
	}
	return out
}

// streamWatch reads an event stream and notes when the first event of each
// record (its data's uuid) arrived.
type streamWatch struct {
	res  *http.Response
	seen *arrivals
	done chan struct{}
}

// watchStream opens GET /v2/events/stream?type=types on base as a; once it
// returns, the stream is open (payd answered) and sees every later event.
func watchStream(ctx context.Context, base string, a app, types string) (*streamWatch, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v2/events/stream?type="+url.QueryEscape(types), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("app-id", a.id)
	req.Header.Set("secret-key", a.secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != 200 {
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		res.Body.Close()
		return nil, fmt.Errorf("open the event stream: status %d: %s", res.StatusCode, bytes.TrimSpace(b.Bytes()))
	}
	w := &streamWatch{res: res, seen: newArrivals(), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			at := time.Now()
			var rec struct {
				UUID string `json:"uuid"`
			}
			if json.Unmarshal(data, &rec) == nil && rec.UUID != "" {
				w.seen.note(rec.UUID, at)
			}
		}
	}()
	return w, nil
}

func (w *streamWatch) close() {
	w.res.Body.Close()
	<-w.done
}

// awaitAll waits, at most within, for every id of ids to have arrived, and
// returns how many did not and when the last that did arrived.
func awaitAll(ids map[string]time.Time, within time.Duration, arrival func(id string) (time.Time, bool)) (missing int, last time.Time) {
	deadline := time.Now().Add(within)
	for {
		missing, last = 0, time.Time{}
		for id := range ids {
			if at, ok := arrival(id); !ok {
				missing++
			} else if at.After(last) {
				last = at
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return missing, last
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// arrivalRow is the row of events committed at ids' instants and arriving
// at arrival's: their rate from the first commit to the last arrival, the
// lag of each, and sent's CPU figures.
func arrivalRow(name string, ids map[string]time.Time, arrival func(id string) (time.Time, bool), sent result) result {
	var lags []time.Duration
	var first, last time.Time
	for id, at := range ids {
		got, ok := arrival(id)
		if !ok {
			continue
		}
		lags = append(lags, max(0, got.Sub(at)))
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if got.After(last) {
			last = got
		}
	}
	r := result{Name: name, Requests: int64(len(lags)), Errors: int64(len(ids) - len(lags)),
		PaydCPU: sent.PaydCPU, BenchCPU: sent.BenchCPU, MachineCPU: sent.MachineCPU, StealCPU: sent.StealCPU, CPUPerRequest: sent.CPUPerRequest, FirstError: sent.FirstError}
	if span := last.Sub(first); span > 0 {
		r.PerSecond = float64(len(lags)) / span.Seconds()
	}
	r.P50ms, r.P99ms = percentile(lags, 0.5), percentile(lags, 0.99)
	return r
}
