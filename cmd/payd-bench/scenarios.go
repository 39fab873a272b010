package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"payd/internal/ratelimit"
)

// dbReport is every measurement on one database.
type dbReport struct {
	Database   string   `json:"database"`
	Results    []result `json:"results"`
	References []result `json:"references"`
	PeakRSSMiB float64  `json:"payd_peak_rss_mib"`
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freshDSN returns an empty database of kind db and a cleanup.
func freshDSN(s settings, db string) (string, func(), error) {
	if db == "sqlite" {
		dir, err := os.MkdirTemp("", "payd-bench-db-")
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + dir + "/payd.db", func() { os.RemoveAll(dir) }, nil
	}
	server := s.pgDSN
	if db == "citus" {
		server = s.citusDSN
	}
	schema := "bench_" + randomHex(6)
	admin, err := sql.Open("pgx", server)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() { admin.Exec("DROP SCHEMA " + schema + " CASCADE"); admin.Close() }, nil
}

// client is a load client of one payd.
type client struct {
	http *http.Client
	base string
	app  app
}

func (c *client) do(ctx context.Context, method, path string, body any, headers map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("app-id", c.app.id)
	req.Header.Set("secret-key", c.app.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func expectStatus(status, want int, body []byte, err error) error {
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("status %d: %s", status, bytes.TrimSpace(body))
	}
	return nil
}

// createPayin creates a QR payin of 100,000 IDR (with an Idempotency-Key
// when idempotent) and returns its uuid.
func (c *client) createPayin(ctx context.Context, externalID string, idempotent bool) (string, error) {
	var headers map[string]string
	if idempotent {
		headers = map[string]string{"Idempotency-Key": randomHex(12)}
	}
	status, body, err := c.do(ctx, "POST", "/v2/payins", map[string]any{"currency": "IDR", "amount": 100000,
		"payin_method_name": "id_bank_qris_idr", "external_id": externalID}, headers)
	if err := expectStatus(status, 201, body, err); err != nil {
		return "", err
	}
	var out struct{ UUID string }
	err = json.Unmarshal(body, &out)
	return out.UUID, err
}

// runDatabase measures payd and the reference on one database.
func runDatabase(ctx context.Context, s settings, bin, db string) (dbReport, error) {
	dsn, cleanup, err := freshDSN(s, db)
	if err != nil {
		return dbReport{}, err
	}
	defer cleanup()
	pprofAddr := ""
	if s.profileDir != "" {
		pprofAddr = "127.0.0.1:16060"
	}
	p, err := startPayd(ctx, bin, dsn, pprofAddr)
	if err != nil {
		return dbReport{}, err
	}
	p.pprofAddr = pprofAddr
	profile := func(name string) func() { return p.profile(s, db, name) }
	defer p.stop()
	// The scenarios measure payd, not the demo merchant's request limits.
	if err := setLimits(ctx, bin, dsn, p.merchant, ratelimit.MaxRate); err != nil {
		return dbReport{}, err
	}
	pid := p.cmd.Process.Pid
	c := &client{base: p.base, app: p.apps["IDR"], http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients * 2}}}
	rep := dbReport{Database: db}

	if s.runs(db, "create") {
		if err := measureCreates(ctx, s, c, pid, profile, &rep); err != nil {
			return dbReport{}, err
		}
	}
	if s.runs(db, "webhooks") {
		hooks, err := measureWebhooks(ctx, s, c, pid, profile)
		if err != nil {
			return dbReport{}, err
		}
		rep.Results = append(rep.Results, hooks)
		drain, err := measureWebhookDrain(ctx, s, p, db, c, pid)
		if err != nil {
			return dbReport{}, err
		}
		rep.Results = append(rep.Results, drain)
	}

	// Payouts on one account: creation, then completion by the sandbox network.
	if s.runs(db, "payouts") {
		payouts, err := measurePayouts(ctx, s, p, pid, db)
		if err != nil {
			return dbReport{}, err
		}
		rep.Results = append(rep.Results, payouts...)
	}

	// One merchant at its request limit beside another.
	if s.runs(db, "noisy") {
		noisy, err := measureNoisyNeighbour(ctx, s, p, db, bin, dsn, c, pid)
		if err != nil {
			return dbReport{}, err
		}
		rep.Results = append(rep.Results, noisy...)
	}

	if s.runs(db, "events") {
		if err := measureEvents(ctx, s, p, bin, dsn, db, profile, &rep); err != nil {
			return dbReport{}, err
		}
	}
	if s.runs(db, "reads") {
		reads := drive(ctx, "balance read", s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
			status, body, err := c.do(ctx, "GET", "/v2/balances", nil, nil)
			return false, expectStatus(status, 200, body, err)
		})
		reads.Description = "GET /v2/balances"
		rep.Results = append(rep.Results, reads)
	}
	rep.PeakRSSMiB = peakRSS(pid)
	p.heapProfile(s, db)

	if s.runs(db, "spread") && db != "sqlite" {
		spread, err := measureSpread(ctx, s, bin, dsn, p.base, pid)
		if err != nil {
			return dbReport{}, err
		}
		rep.Results = append(rep.Results, spread...)
	}
	// One cut-off of 10,000 waiting transfers, on a payd of its own.
	if s.runs(db, "bankfile") && db != "citus" {
		cut, err := measureBankFile(ctx, s, bin, db)
		if err != nil {
			return dbReport{}, fmt.Errorf("bank-file cut-off: %w", err)
		}
		rep.Results = append(rep.Results, cut)
	}
	// One statement of 50,000 entries, on a payd of its own.
	if s.runs(db, "feed") && db != "citus" {
		imported, err := measureFeed(ctx, s, bin, db)
		if err != nil {
			return dbReport{}, fmt.Errorf("bank-feed import: %w", err)
		}
		rep.Results = append(rep.Results, imported)
	}
	if s.runs(db, "references") && db != "citus" {
		refs, err := references(ctx, s, db, dsn, halfPeakRate(rep))
		if err != nil {
			return dbReport{}, err
		}
		rep.References = refs
	}
	compare(&rep)
	return rep, nil
}

// halfPeakRate is the rate the half-peak row offers creates at: half the
// peak of rep's "payin create" row, or 0 when that row did not run.
func halfPeakRate(rep dbReport) float64 {
	for _, r := range rep.Results {
		if r.Name == createRowName {
			return r.PerSecond / 2
		}
	}
	return 0
}

// measureCreates measures payin creation, flat out and at half that peak,
// then, with the payins made, receipts into their one account.
func measureCreates(ctx context.Context, s settings, c *client, pid int, profile func(string) func(), rep *dbReport) error {
	// 1. Payin creation (QR method, with an Idempotency-Key).
	uuids := make([][]string, s.clients)
	stopProfile := profile("create")
	create := drive(ctx, createRowName, s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		uuid, err := c.createPayin(ctx, fmt.Sprintf("bench-%d-%d", cl, i), true)
		if err != nil {
			return false, err
		}
		uuids[cl] = append(uuids[cl], uuid)
		return false, nil
	})
	stopProfile()
	create.Description = "POST /v2/payins (id_bank_qris_idr, Idempotency-Key)"
	rep.Results = append(rep.Results, create)

	// 1b. The same at half of the peak just measured: the latency a merchant
	// sees when payd is busy but not saturated (issue 17: p99 at most 10 ms;
	// the reference offered the same rate shows what the machine allows).
	stopProfile = profile("create at half peak")
	half := drivePaced(ctx, halfPeakRowName, s.clients, s.duration, pid, halfPeakRate(*rep), func(ctx context.Context, cl, i int) (bool, error) {
		_, err := c.createPayin(ctx, fmt.Sprintf("half-%d-%d", cl, i), true)
		return false, err
	})
	stopProfile()
	half.Description = fmt.Sprintf("POST /v2/payins offered at %.0f/s (half the peak above)", halfPeakRate(*rep))
	rep.Results = append(rep.Results, half)

	if !s.runs(rep.Database, "receipt") {
		return nil
	}
	// 2. Payin receipt on one hot account: every request credits the same buckets.
	var pool []string
	for _, u := range uuids {
		pool = append(pool, u...)
	}
	var next atomic.Int64
	stopProfile = profile("receipt")
	receipt := drive(ctx, receiptRowName, s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		n := next.Add(1) - 1
		if int(n) >= len(pool) {
			return true, nil
		}
		status, body, err := c.do(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": pool[n], "status": "completed"}, nil)
		return false, expectStatus(status, 200, body, err)
	})
	stopProfile()
	receipt.Description = "POST /v2/payins/simulate on pre-created payins of one account"
	rep.Results = append(rep.Results, receipt)
	return nil
}

// setLimits sets a merchant's write and read rates with the operator command.
func setLimits(ctx context.Context, bin, dsn, merchantID string, rate int) error {
	out, err := exec.CommandContext(ctx, bin, "merchant", "limits", "--db", dsn, "--merchant", merchantID,
		"--write-rate", strconv.Itoa(rate), "--read-rate", strconv.Itoa(rate)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("payd merchant limits: %v: %s", err, out)
	}
	return nil
}

// noisyRate is the noisy merchant's write limit in the neighbour scenario;
// noisyOffered is the rate it sends at, twenty times over.
const (
	noisyRate    = 100
	noisyOffered = 20 * noisyRate
)

// measureNoisyNeighbour measures a merchant creating payins at a steady
// rate: alone; beside another merchant sending exactly its limit of
// noisyRate per second (all accepted: real work that shares the machine);
// beside the same merchant sending noisyOffered per second, twenty times its
// limit; and alone again (the two alone rows show the noise). The rule: the
// third row's p99 is the second's within noise, so the refused excess costs
// the neighbour nothing. The other merchant's load is paced rather than as
// fast as its clients go: on this one machine a closed loop of 429s would
// measure how the load generator and payd share the cores, not how payd
// isolates merchants.
func measureNoisyNeighbour(ctx context.Context, s settings, p *paydProcess, db, bin, dsn string, normal *client, pid int) ([]result, error) {
	noisyID, a, err := createMerchant(ctx, bin, dsn, "Noisy Merchant")
	if err != nil {
		return nil, err
	}
	if err := setLimits(ctx, bin, dsn, noisyID, noisyRate); err != nil {
		return nil, err
	}
	half := max(s.clients/2, 1)
	const steady = 200 // the normal merchant's payins per second
	normalOp := func(ctx context.Context, cl, i int) (bool, error) {
		_, err := normal.createPayin(ctx, fmt.Sprintf("neighbour-%d-%d", cl, i), false)
		return false, err
	}
	alone := drivePaced(ctx, "neighbour alone", half, s.duration, pid, steady, normalOp)
	alone.Description = fmt.Sprintf("POST /v2/payins offered at %d/s by one merchant, nobody else busy", steady)

	// beside measures the neighbour while the other merchant offers rate.
	beside := func(name, otherName string, rate int) (result, result, error) {
		stopOther, err := startNoisy(ctx, noisyOrder{Base: normal.base, AppID: a.id, Secret: a.secret, Name: otherName,
			Rate: float64(rate), Clients: s.clients, Duration: s.duration + 5*time.Second})
		if err != nil {
			return result{}, result{}, err
		}
		near := drivePaced(ctx, name, half, s.duration, pid, steady, normalOp)
		other, err := stopOther()
		if err != nil {
			return result{}, result{}, err
		}
		other.Result.PaydCPU = near.PaydCPU // the same stretch of time
		near.Description = fmt.Sprintf("the same while another merchant offers payins at %d/s (its limit is %d/s)", rate, noisyRate)
		other.Result.Description = fmt.Sprintf("the other merchant, sent by a child process at nice 19: %d of its %d requests refused with 429 (limit %d/s)",
			other.Refused, other.Result.Requests, noisyRate)
		return near, other.Result, nil
	}
	atLimit, atLimitOther, err := beside("neighbour beside a merchant at its limit", "merchant at its limit", noisyRate)
	if err != nil {
		return nil, err
	}
	stopProfile := p.profile(s, db, "noisy neighbour")
	noisyNear, loud, err := beside("neighbour beside a noisy merchant", "noisy merchant", noisyOffered)
	stopProfile()
	if err != nil {
		return nil, err
	}
	again := drivePaced(ctx, "neighbour alone again", half, s.duration, pid, steady, normalOp)
	again.Description = "the first row again, after the other merchant stopped: the two alone rows show the noise"
	return []result{alone, atLimit, atLimitOther, noisyNear, loud, again}, nil
}

// measureWebhooks sends ping events for the scenario's duration and measures
// the lag from the committed request to the receiver's receipt.
func measureWebhooks(ctx context.Context, s settings, c *client, pid int, profile func(string) func()) (result, error) {
	rcv, err := startReceiver(nil)
	if err != nil {
		return result{}, err
	}
	defer rcv.close()
	committed := map[string]time.Time{}
	var cmu sync.Mutex
	stopProfile := profile("webhooks")
	sent := drive(ctx, "webhook delivery", s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		id, err := sendTestEvent(ctx, c, rcv.url)
		at := time.Now()
		if err != nil {
			return false, err
		}
		cmu.Lock()
		committed[id] = at
		cmu.Unlock()
		return false, nil
	})
	stopProfile()
	rcv.await(committed, 30*time.Second)
	r := arrivalRow("webhook delivery", committed, rcv.arrival, sent)
	r.Description = "POST /v2/webhooks/test events delivered to a local receiver; latency = commit to receipt"
	return r, nil
}

// measurePayouts creates one-transaction AUD payouts on the demo merchant's
// AUD account for the scenario's duration (each moves amount and fee from
// available to outgoing and queues its submission), then moves the test clock
// past the sandbox network's answer and measures how fast every payout
// completes (submission, outcome, ledger and webhooks).
func measurePayouts(ctx context.Context, s settings, p *paydProcess, pid int, db string) ([]result, error) {
	c := &client{base: p.base, app: p.apps["AUD"], http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients * 2}}}
	status, body, err := c.do(ctx, "POST", "/v1/simulate_deposit", map[string]any{"account_number": c.app.account, "amount": "100000000"}, nil)
	if err := expectStatus(status, 201, body, err); err != nil {
		return nil, fmt.Errorf("fund the AUD account: %w", err)
	}
	if status, body, err := c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": 0}, nil); expectStatus(status, 200, body, err) != nil {
		return nil, fmt.Errorf("clear the deposit: %d %s %v", status, body, err)
	}
	stopProfile := p.profile(s, db, "payout create")
	create := drive(ctx, "payout create", s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		status, body, err := c.do(ctx, "POST", "/v2/payouts", map[string]any{"currency": "AUD", "payout_method_name": "au_bank_aud",
			"description": "bench payout", "payout_transaction_details": []any{map[string]any{"first_name": "Jane", "last_name": "Doe",
				"amount": "1.00", "payout_method_params": map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}}}},
			map[string]string{"Idempotency-Key": randomHex(12)})
		return false, expectStatus(status, 201, body, err)
	})
	stopProfile()
	create.Description = "POST /v2/payouts (au_bank_aud, one transaction, Idempotency-Key)"
	started := time.Now()
	if status, body, err := c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": 0}, nil); expectStatus(status, 200, body, err) != nil {
		return nil, fmt.Errorf("submit the payouts: %d %s %v", status, body, err)
	}
	if status, body, err := c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": 10}, nil); expectStatus(status, 200, body, err) != nil {
		return nil, fmt.Errorf("settle the payouts: %d %s %v", status, body, err)
	}
	completed, err := payoutTotal(ctx, c, "completed")
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(started)
	// Requests cut off by the scenario's end may still have created payouts: count what payd holds.
	all, err := payoutTotal(ctx, c, "")
	if err != nil {
		return nil, err
	}
	complete := result{Name: "payout completion", Requests: completed, PerSecond: float64(completed) / elapsed.Seconds(),
		Description: fmt.Sprintf("submission and sandbox outcome of the %d payouts above, run by POST /v2/sandbox/clock", all)}
	if completed != all {
		complete.Errors = all - completed
		complete.FirstError = fmt.Sprintf("%d of %d payouts completed", completed, all)
	}
	return []result{create, complete}, nil
}

// payoutTotal is how many payouts the bench merchant has in status ("" for all).
func payoutTotal(ctx context.Context, c *client, status string) (int64, error) {
	code, body, err := c.do(ctx, "GET", "/v2/payouts/all?per_page=1&status="+status, nil, nil)
	if err := expectStatus(code, 200, body, err); err != nil {
		return 0, err
	}
	var page struct{ Total int64 }
	if err := json.Unmarshal(body, &page); err != nil {
		return 0, fmt.Errorf("payout list: %w", err)
	}
	return page.Total, nil
}

// measureWebhookDrain measures how fast payd delivers a backlog: the
// receiver holds every request while events are created (for at most ten
// seconds, within an attempt's 15 s timeout), then answers them all, and the
// row is the events delivered per second from that moment until the last
// arrived. The live webhook row cannot show this: its rate is how fast
// POST /v2/webhooks/test makes events, not how fast they go out.
func measureWebhookDrain(ctx context.Context, s settings, p *paydProcess, db string, c *client, pid int) (result, error) {
	gate := make(chan struct{})
	rcv, err := startReceiver(gate)
	if err != nil {
		return result{}, err
	}
	defer rcv.close()
	var cmu sync.Mutex
	committed := map[string]time.Time{}
	fill := drive(ctx, "webhook backlog fill", s.clients, min(s.duration, 10*time.Second), pid, func(ctx context.Context, cl, i int) (bool, error) {
		id, err := sendTestEvent(ctx, c, rcv.url)
		if err != nil {
			return false, err
		}
		cmu.Lock()
		committed[id] = time.Now()
		cmu.Unlock()
		return false, nil
	})
	stopProfile := p.profile(s, db, "webhook drain")
	cpu := startCPU(pid)
	released := time.Now()
	close(gate)
	missing, last := rcv.await(committed, 60*time.Second)
	took := last.Sub(released)
	stopProfile()
	r := result{Name: drainRowName, Requests: int64(len(committed) - missing), Errors: int64(missing), FirstError: fill.FirstError,
		Description: fmt.Sprintf("%d events held by the receiver while they were created, then delivered: events per second from release to the last receipt", len(committed))}
	if took > 0 {
		r.PerSecond = float64(r.Requests) / took.Seconds()
		cpu.stop(&r, took)
	}
	return r, nil
}

// hookReceiver is a local webhook endpoint that notes when each event first
// arrived. Given a gate, it holds every request until the gate is closed.
type hookReceiver struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	received map[string]time.Time
}

func startReceiver(gate <-chan struct{}) (*hookReceiver, error) {
	return startReceiverBy(gate, func(r *http.Request, _ []byte) string { return r.Header.Get("webhook-id") })
}

// startReceiverBy is startReceiver noting each request by key of it (its
// webhook-id, or the uuid of the record in its body).
func startReceiverBy(gate <-chan struct{}, key func(r *http.Request, body []byte) string) (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hook", received: map[string]time.Time{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gate != nil {
			<-gate
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		at, id := time.Now(), key(r, body)
		h.mu.Lock()
		if _, ok := h.received[id]; !ok {
			h.received[id] = at
		}
		h.mu.Unlock()
	})}
	go h.srv.Serve(ln)
	return h, nil
}

func (h *hookReceiver) close() { h.srv.Close() }

// arrival is when event id first arrived.
func (h *hookReceiver) arrival(id string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.received[id]
	return at, ok
}

// await waits, at most within, for every event in ids to arrive, and
// returns how many did not and when the last that did arrived. It waits by
// id: counting is not enough, since requests cut off when a scenario ended
// may have committed events the receiver also gets.
func (h *hookReceiver) await(ids map[string]time.Time, within time.Duration) (missing int, last time.Time) {
	return awaitAll(ids, within, h.arrival)
}

// sendTestEvent asks payd for a test event to endpoint and returns its id.
func sendTestEvent(ctx context.Context, c *client, endpoint string) (string, error) {
	status, body, err := c.do(ctx, "POST", "/v2/webhooks/test", map[string]any{"endpoint_url": endpoint}, nil)
	if err := expectStatus(status, 201, body, err); err != nil {
		return "", err
	}
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); err != nil {
		return "", fmt.Errorf("read the test event: %w", err)
	}
	return out.ID, nil
}
