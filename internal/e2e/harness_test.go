package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/httpapi"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// payd is one running server under test.
type payd struct {
	t    testing.TB
	srv  *server.Server
	base string // http://127.0.0.1:port/api
	root string // http://127.0.0.1:port
	// production servers serve a document without the sandbox routes.
	production bool
	// hist, when set, records every request sent through this payd and
	// its answer (histories_test.go).
	hist *opHistory
}

type option func(*server.Config)

func production(c *server.Config) { c.Env = httpapi.Production }

// onClock runs the server on clk instead of the real clock, for a test that
// waits for time to pass (a Retry-After, a retry delay): it moves clk
// instead of sleeping.
func onClock(clk *clock.Manual) option { return func(c *server.Config) { c.Clock = clk } }

// start runs payd on dsn until the test ends. It listens before it opens,
// so the links payd hands out (pay_url, say) carry the server's real address
// as their public URL.
func start(t testing.TB, dsn string, opts ...option) *payd {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	root := "http://" + ln.Addr().String()
	cfg := server.Config{DB: dsn, Env: httpapi.Sandbox, PublicURL: root, StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}}
	if os.Getenv("PAYD_TEST_LOG") != "" {
		// PAYD_TEST_LOG=1 shows the servers' warnings and errors (500s explain themselves there).
		cfg.Log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatalf("open payd: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("payd did not stop within 30s")
		}
		srv.Close()
	})
	return &payd{t: t, srv: srv, base: root + "/api", root: root, production: cfg.Env == httpapi.Production}
}

// each runs fn against a fresh payd on every test database.
func each(t *testing.T, fn func(t *testing.T, p *payd), opts ...option) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) { fn(t, start(t, dsn, opts...)) })
}

// creds is one app of a merchant.
type creds struct {
	MerchantID    string
	Currency      string
	AccountNumber string
	AppID         string
	SecretKey     string
	Token         string // when set, sent as Authorization: Bearer instead of the keys
}

// merchant makes a merchant with the given currencies (AU, Australia/Sydney)
// and returns its apps by currency.
func (p *payd) merchant(currencies ...string) map[string]creds {
	p.t.Helper()
	c, err := p.srv.Merchants.Create(context.Background(), merchantParams(currencies...))
	if err != nil {
		p.t.Fatalf("create merchant: %v", err)
	}
	out := map[string]creds{}
	for _, a := range c.Accounts {
		out[a.Currency] = creds{MerchantID: c.MerchantID, Currency: a.Currency, AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
	}
	return out
}

// merchantIn is merchant with the merchant's time zone zone.
func (p *payd) merchantIn(zone string, currencies ...string) map[string]creds {
	p.t.Helper()
	params := merchantParams(currencies...)
	params.Timezone = zone
	c, err := p.srv.Merchants.Create(context.Background(), params)
	if err != nil {
		p.t.Fatalf("create merchant: %v", err)
	}
	out := map[string]creds{}
	for _, a := range c.Accounts {
		out[a.Currency] = creds{MerchantID: c.MerchantID, Currency: a.Currency, AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
	}
	return out
}

// merchantParams describes a test merchant (AU, Australia/Sydney) with the currencies.
func merchantParams(currencies ...string) merchant.CreateParams {
	return merchant.CreateParams{Name: "Test Merchant", Country: "AU", Timezone: "Australia/Sydney", Currencies: currencies}
}

// response is what a request got back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (numbers kept as json.Number).
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return m
}

// ErrorCode is errors.code of an error answer.
func (r response) ErrorCode(t testing.TB) string {
	t.Helper()
	e, _ := r.JSON(t)["errors"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// req is a request to send.
type req struct {
	method string
	path   string // under /api, e.g. /v2/balances
	as     *creds
	body   any // marshalled to JSON unless it is a string or []byte (sent as is)
	// header is set after the defaults; an empty value removes a header
	// (Content-Type, say).
	header map[string]string
	// root sends path from the server's root instead of under /api (/healthz).
	root bool
	// client sends the request (http.DefaultClient when nil).
	client *http.Client
	// fuzzed requests are arbitrary bytes and headers: only payd's answer is
	// held to the OpenAPI document, not the request (see checkContract).
	fuzzed bool
}

// do sends r and returns the answer; it ends the test if the request
// cannot be made at all.
func (p *payd) do(r req) response {
	p.t.Helper()
	res, err := p.send(r)
	if err != nil {
		p.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	return res
}

// send is do for goroutines other than the test's own: it reports a failed
// request instead of ending the test. With a history, the request and its
// answer are an operation of it.
func (p *payd) send(r req) (response, error) {
	op := p.hist.invoke(r)
	hr, sent, res, err := p.exchange(r)
	p.hist.answer(op, res, err)
	if err != nil {
		return response{}, err
	}
	p.checkContract(r, hr, sent, res.Status, res.Header, res.Body)
	return res, nil
}

// exchange sends r and reads the answer; it returns the request made and
// the body it sent, for the contract's check.
func (p *payd) exchange(r req) (*http.Request, []byte, response, error) {
	var body io.Reader
	var sent []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, nil, response{}, fmt.Errorf("marshal: %w", err)
		}
		sent = raw
	}
	if r.body != nil {
		body = bytes.NewReader(sent)
	}
	target := p.base + r.path
	if r.root {
		target = p.root + r.path
	}
	hr, err := http.NewRequest(r.method, target, body)
	if err != nil {
		return nil, nil, response{}, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.as != nil {
		if r.as.Token != "" {
			hr.Header.Set("Authorization", "Bearer "+r.as.Token)
		} else {
			hr.Header.Set("app-id", r.as.AppID)
			hr.Header.Set("secret-key", r.as.SecretKey)
		}
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	client := r.client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(hr)
	if err != nil {
		return nil, nil, response{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, response{}, fmt.Errorf("read body: %w", err)
	}
	return hr, sent, response{Status: res.StatusCode, Header: res.Header, Body: raw}, nil
}

// get and post are shorthands.
func (p *payd) get(path string, as creds) response {
	p.t.Helper()
	return p.do(req{method: "GET", path: path, as: &as})
}

func (p *payd) post(path string, as creds, body any) response {
	p.t.Helper()
	return p.do(req{method: "POST", path: path, as: &as, body: body})
}

// runDue advances the merchant's test clock by zero seconds, which runs every
// job that is due (deposit clearing, say) before it answers.
func (p *payd) runDue(as creds) {
	p.t.Helper()
	if r := p.post("/v2/sandbox/clock", as, map[string]any{"advance_seconds": 0}); r.Status != 200 {
		p.t.Fatalf("advance clock: %d %s", r.Status, r.Body)
	}
}

// drainWithin bounds how long drained waits for a merchant's webhook events
// to be delivered.
const drainWithin = 10 * time.Second

// drained runs every job due on the merchant's clock (job.Queue.RunDue,
// which also waits for those another worker is running) and waits until
// none of the merchant's webhook events is left to deliver. A receiver has
// every delivery before its event leaves pending, so from then on nothing
// more is sent about what has happened so far: a test asserts what was not
// delivered after it, instead of sleeping and hoping.
func (p *payd) drained(t testing.TB, as creds) {
	t.Helper()
	ctx := context.Background()
	var pending int
	waitUntilOr(t, "the merchant's webhook events to be delivered", drainWithin, func() bool {
		if err := p.srv.Queue.RunDue(ctx, as.MerchantID); err != nil {
			t.Fatalf("run due jobs: %v", err)
		}
		err := p.srv.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND status = 'pending'`, as.MerchantID).Scan(&pending)
		if err != nil {
			t.Fatalf("count pending webhook events: %v", err)
		}
		return pending == 0
	}, func() string { return fmt.Sprintf(" (%d still pending)", pending) })
}

// want fails the test unless the answer has the status.
func want(t testing.TB, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
}

// Decode decodes the body into v, numbers kept as json.Number where v asks for them.
func (r response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Fields is errors.fields of an error answer (nil when there is none).
func (r response) Fields(t testing.TB) map[string]any {
	t.Helper()
	e, _ := r.JSON(t)["errors"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	return f
}

// wantError fails the test unless the answer is the errors envelope with
// status and code and, when field is not empty, names field in errors.fields;
// like every answer, it must carry an X-Request-Id.
func wantError(t testing.TB, r response, status int, code, field string) {
	t.Helper()
	want(t, r, status)
	if got := r.ErrorCode(t); got != code {
		t.Fatalf("errors.code = %q, want %q; body %s", got, code, r.Body)
	}
	if _, ok := r.Fields(t)[field]; field != "" && !ok {
		t.Fatalf("errors.fields does not name %q; body %s", field, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("a %d answer without X-Request-Id", status)
	}
}

// notAuthorised is the exact body of every authentication failure (CONTRACT §2).
const notAuthorised = `{"errors":{"code":"REQUIRE_LOGIN","message":"Not Authorised"}}`

// simulateDeposit simulates a deposit of amount (whole units) into the account with
// number account and returns the created deposit.
func (p *payd) simulateDeposit(as creds, account string, amount any) map[string]any {
	p.t.Helper()
	r := p.post("/v1/simulate_deposit", as, map[string]any{"account_number": account, "amount": amount})
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// clockNow reads the merchant's sandbox clock.
func (p *payd) clockNow(as creds) time.Time {
	p.t.Helper()
	r := p.get("/v2/sandbox/clock", as)
	want(p.t, r, 200)
	var c struct {
		Now string `json:"now"`
	}
	r.Decode(p.t, &c)
	now, err := time.Parse(time.RFC3339Nano, c.Now)
	if err != nil {
		p.t.Fatalf("clock now %q: %v", c.Now, err)
	}
	return now
}

// advance moves the merchant's clock forward and runs what became due.
func (p *payd) advance(as creds, seconds int64) {
	p.t.Helper()
	want(p.t, p.post("/v2/sandbox/clock", as, map[string]any{"advance_seconds": seconds}), 200)
}

// balanceView is one currency's entry of GET /v2/balances, numbers kept exactly.
type balanceView struct {
	Currency       string      `json:"currency"`
	Available      json.Number `json:"available_balance"`
	Incoming       json.Number `json:"incoming_balance"`
	Outgoing       json.Number `json:"outgoing_balance"`
	RollingReserve json.Number `json:"rolling_reserve_balance"`
	Withdrawable   json.Number `json:"withdrawable_balance"`
}

// balanceOf reads GET /v2/balances/detail for currency.
func (p *payd) balanceOf(as creds, currency string) balanceView {
	p.t.Helper()
	r := p.get("/v2/balances/detail?currency="+currency, as)
	want(p.t, r, 200)
	var b balanceView
	r.Decode(p.t, &b)
	return b
}

// historyPage is an answer of GET /v2/balances/history.
type historyPage struct {
	Records     []historyRecord `json:"records"`
	AccountType string          `json:"account_type"`
	NextCursor  *string         `json:"next_cursor"`
	HasMore     bool            `json:"has_more"`
}

type historyRecord struct {
	ID              string      `json:"id"`
	Amount          json.Number `json:"amount"`
	Currency        string      `json:"currency"`
	RequestType     string      `json:"request_type"`
	TransactionType string      `json:"transaction_type"`
	Status          string      `json:"status"`
	ReferenceID     string      `json:"reference_id"`
	CreatedAt       string      `json:"created_at"`
}

// history reads one page of GET /v2/balances/history with the query (without "?").
func (p *payd) history(as creds, query string) historyPage {
	p.t.Helper()
	r := p.get("/v2/balances/history?"+query, as)
	want(p.t, r, 200)
	var h historyPage
	r.Decode(p.t, &h)
	return h
}

// minorUnits reads an amount the API wrote (a JSON number or decimal string) in
// minor units of currency, exactly.
func minorUnits(t testing.TB, amount any, currency string) int64 {
	t.Helper()
	c, err := money.Lookup(currency)
	if err != nil {
		t.Fatal(err)
	}
	m, rounded, err := money.Parse(fmt.Sprint(amount), c)
	if err != nil || rounded {
		t.Fatalf("amount %v in %s: %v (rounded %v)", amount, currency, err, rounded)
	}
	return m
}

// eachShared runs fn with two payd processes on one database, as several
// `payd serve` may share one PostgreSQL database (CONTRACT §1). Only
// PostgreSQL (and Citus) promises that, so it runs there alone.
func eachShared(t *testing.T, fn func(t *testing.T, a, b *payd), opts ...option) {
	t.Helper()
	targets := storetest.PostgresTargets()
	if len(targets) == 0 {
		t.Skip(storetest.DSNEnv + " not set: processes share only a PostgreSQL database")
	}
	for _, target := range targets {
		t.Run(target.Name, func(t *testing.T) {
			dsn := target.DSN(t)
			a := start(t, dsn, opts...)
			fn(t, a, start(t, dsn, opts...))
		})
	}
}
