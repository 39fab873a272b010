package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/store/storetest"
)

// validHeaderValue reports whether Go's HTTP client will send v as a header
// value (no control characters but tab); others never reach the server.
func validHeaderValue(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

// wantJSONAnswer fails unless the answer is a JSON object with a request id
// and, for an error status, the errors envelope with a code and a message.
func wantJSONAnswer(t *testing.T, r response) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &obj); err != nil || obj == nil {
		t.Fatalf("%d answer is not a JSON object: %q", r.Status, r.Body)
	}
	var e struct {
		Errors *struct{ Code, Message string } `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &e)
	if r.Status >= 400 && (e.Errors == nil || e.Errors.Code == "" || e.Errors.Message == "") {
		t.Fatalf("%d answer is not the errors envelope: %s", r.Status, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("%d answer without X-Request-Id", r.Status)
	}
}

// FuzzSimulateDeposit sends arbitrary bodies and content types to POST
// /v1/simulate_deposit with valid keys. The placeholders {AUD}, {JPY}, {VND}
// and {FOREIGN} in a body become account numbers of the caller (a fresh
// merchant per input, so an input reproduces alone) and of another merchant.
// Whatever is sent, the answer is one of the statuses the endpoint documents,
// never a 500, and always a JSON object (the errors envelope on a 4xx).
func FuzzSimulateDeposit(f *testing.F) {
	seeds := []struct{ body, contentType string }{
		{`{"account_number":"{AUD}","amount":"250"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":250}`, ""},
		{`{"account_number":"{JPY}","amount":1000,"remitter_name":"ﾔﾏﾀﾞ ﾀﾛｳ","remitter_bank_name":"ﾐｽﾞﾎ","remitter_branch_name":"ｼﾌﾞﾔ"}`, "application/json; charset=utf-8"},
		{`{"account_number":"{JPY}","amount":"1","remitter_name":"ヤマダ"}`, "application/json"},
		{`{"account_number":"{JPY}","amount":"1","remitter_name":"\ud800"}`, "application/json"},
		{`{"account_number":"{JPY}","amount":"1","remitter_name":"\u0000"}`, "application/json"},
		{`{"account_number":"{VND}","amount":"5e6"}`, "application/json"},
		{`{"account_number":"{VND}","amount":"100000000000000000"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":1e400}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1e-400"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1e30"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1E+2"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1000000000000000"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1000000000000001"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"100000000000000000000000000000"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":-0}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"0.000"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"10.50"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"１００"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":" 1"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":true}`, "application/json"},
		{`{"account_number":"{AUD}","amount":{"$gt":0}}`, "application/json"},
		{`{"account_number":["{AUD}"],"amount":"1"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1","account_number":"{JPY}"}`, "application/json"},
		{`{"ACCOUNT_NUMBER":"{AUD}","Amount":"1"}`, "application/json"},
		{`{"account_number":"{FOREIGN}","amount":"1"}`, "application/json"},
		{`{"account_number":"{AUD}{AUD}{AUD}","amount":"1"}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1","remarks":"` + strings.Repeat("é", 141) + `"}`, "application/json"},
		{"{\"account_number\":\"{AUD}\",\"amount\":\"1\",\"remarks\":\"\xff\xfe\"}", "application/json"},
		{"\xef\xbb\xbf{\"account_number\":\"{AUD}\",\"amount\":\"1\"}", "application/json"},
		{`{"account_number":"{AUD}","amount":"1"}{}`, "application/json"},
		{`{"account_number":"{AUD}","amount":"1"}`, "text/plain"},
		{`{"account_number":"{AUD}","amount":"1"}`, "APPLICATION/JSON"},
		{`{"account_number":"{AUD}","amount":"1"}`, "application/problem+json"},
		{`{"account_number":"{AUD}","amount":"1"}`, `application/json; charset="`},
		{strings.Repeat("[", 20000), "application/json"},
		{`null`, "application/json"},
		{`"x"`, "application/json"},
		{`1`, "application/json"},
		{`{}`, "application/json"},
		{``, "application/json"},
		{`   `, "application/json"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.contentType)
	}
	p := start(f, storetest.SQLiteDSN(f))
	foreign := p.merchant("AUD")["AUD"].AccountNumber
	documented := []int{201, 400, 404, 413, 415, 422}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if !validHeaderValue(contentType) {
			return
		}
		c, err := p.srv.Merchants.Create(context.Background(), merchantParams("AUD", "JPY", "VND"))
		if err != nil {
			t.Fatal(err)
		}
		as := creds{MerchantID: c.MerchantID, AppID: c.Accounts[0].AppID, SecretKey: c.Accounts[0].SecretKey}
		filled := strings.NewReplacer("{AUD}", c.Accounts[0].AccountNumber, "{JPY}", c.Accounts[1].AccountNumber,
			"{VND}", c.Accounts[2].AccountNumber, "{FOREIGN}", foreign).Replace(string(body))
		tp := &payd{t: t, srv: p.srv, base: p.base, root: p.root}
		r, err := tp.send(req{method: "POST", path: "/v1/simulate_deposit", as: &as, body: []byte(filled), header: map[string]string{"Content-Type": contentType}, fuzzed: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(documented, r.Status) {
			t.Fatalf("status %d, want one of %v; body %s", r.Status, documented, r.Body)
		}
		wantJSONAnswer(t, r)
	})
}

// rotatingClient sends each request over a new connection from another
// loopback address (127.0.0.0/8), so that the per-address limit on failed
// authentication does not turn a fuzzing run into a stream of 429s.
func rotatingClient() *http.Client {
	var n atomic.Uint32
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			i := n.Add(1)
			local := net.IPv4(127, byte(1+i/62500%250), byte(i/250%250), byte(2+i%250))
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// FuzzAccessToken sends arbitrary app-id, secret-key, Authorization and
// access-token headers to the token endpoint and to GET /v2/balances. The
// placeholders {APP}, {SECRET} and {TOKEN} become a real app-id, its secret
// and a token of it. Every answer is 200 or exactly the contract's 401, a
// JSON object, never a 500.
func FuzzAccessToken(f *testing.F) {
	seeds := [][4]string{
		{"{APP}", "{SECRET}", "", ""},
		{"{APP}", "{SECRET}", "Bearer {TOKEN}", ""},
		{"", "", "Bearer {TOKEN}", ""},
		{"", "", "bearer {TOKEN}", ""},
		{"", "", "BEARER {TOKEN}", ""},
		{"", "", "Bearer  {TOKEN}", ""},
		{"", "", "Bearer {TOKEN} ", ""},
		{"", "", "", "{TOKEN}"},
		{"", "", "Bearer", ""},
		{"", "", "Bearer ", ""},
		{"", "", "Basic {TOKEN}", ""},
		{"{APP}", "", "Bearer {TOKEN}", ""},
		{"", "{SECRET}", "", ""},
		{"{APP}", "{SECRET}x", "", ""},
		{"{APP}x", "{SECRET}", "", ""},
		{" {APP} ", "\t{SECRET}", "", ""},
		{"{APP}", "{SECRET}{SECRET}{SECRET}{SECRET}", "", ""},
		{"' OR '1'='1", "' OR '1'='1", "", ""},
		{"{APP}", "{SECRET}", "Bearer ' OR 1=1 --", "{TOKEN}"},
		{strings.Repeat("a", 4096), strings.Repeat("b", 4096), "Bearer " + strings.Repeat("c", 4096), strings.Repeat("d", 4096)},
		{"ｱﾌﾟﾘ", "秘密", "Bearer トークン", "\xff\xfe"},
		{"", "", "Bearer {TOKEN}", "x"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	p := start(f, storetest.SQLiteDSN(f))
	m := p.merchant("AUD")["AUD"]
	tok := p.bearerFor(m).Token
	fill := strings.NewReplacer("{APP}", m.AppID, "{SECRET}", m.SecretKey, "{TOKEN}", tok)
	client := rotatingClient()
	f.Fuzz(func(t *testing.T, appID, secret, authorization, accessToken string) {
		if len(appID)+len(secret)+len(authorization)+len(accessToken) > 32<<10 {
			return // past the server's 64 KiB header limit net/http answers 431 itself
		}
		header := map[string]string{"app-id": fill.Replace(appID), "secret-key": fill.Replace(secret),
			"Authorization": fill.Replace(authorization), "access-token": fill.Replace(accessToken)}
		for _, v := range header {
			if !validHeaderValue(v) {
				return
			}
		}
		for _, path := range []string{"/v1/payment_gateways/access_token", "/v2/balances"} {
			tp := &payd{t: t, srv: p.srv, base: p.base, root: p.root}
			r, err := tp.send(req{method: "GET", path: path, header: header, client: client, fuzzed: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != 200 && (r.Status != 401 || strings.TrimSpace(string(r.Body)) != notAuthorised) {
				t.Fatalf("GET %s: %d %s; want 200 or exactly %s", path, r.Status, r.Body, notAuthorised)
			}
			wantJSONAnswer(t, r)
		}
	})
}
