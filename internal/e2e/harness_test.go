package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"payd/internal/httpapi"
	"payd/internal/merchant"
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
}

type option func(*server.Config)

func production(c *server.Config) { c.Env = httpapi.Production }

// start runs payd on dsn until the test ends.
func start(t testing.TB, dsn string, opts ...option) *payd {
	t.Helper()
	cfg := server.Config{DB: dsn, Env: httpapi.Sandbox, StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("open payd: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("listen: %v", err)
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
	root := "http://" + ln.Addr().String()
	return &payd{t: t, srv: srv, base: root + "/api", root: root}
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
	c, err := p.srv.Merchants.Create(context.Background(), merchant.CreateParams{
		Name: "Test Merchant", Country: "AU", Timezone: "Australia/Sydney", Currencies: currencies})
	if err != nil {
		p.t.Fatalf("create merchant: %v", err)
	}
	out := map[string]creds{}
	for _, a := range c.Accounts {
		out[a.Currency] = creds{MerchantID: c.MerchantID, Currency: a.Currency, AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
	}
	return out
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
	header map[string]string
}

// do sends r and returns the answer.
func (p *payd) do(r req) response {
	p.t.Helper()
	var body io.Reader
	switch b := r.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			p.t.Fatalf("marshal: %v", err)
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(r.method, p.base+r.path, body)
	if err != nil {
		p.t.Fatalf("request: %v", err)
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
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		p.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatalf("read body: %v", err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: raw}
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

// want fails the test unless the answer has the status.
func want(t testing.TB, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
}
