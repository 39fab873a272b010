package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// Payment Gateway 3 (CONTRACT §11, §16): POST /v3/payin_links, GET
// /v3/payin_links/detail, and the hosted page at payment_link_url.

// linkCurrencies are the payments accounts of a Payment Gateway 3 test
// merchant: payd's test merchants (and the demo merchant) hold none of
// these unless asked, so these tests create theirs with them.
var linkCurrencies = []string{"NZD", "HKD", "MWK", "TZS", "USD", "UGX"}

// linkBody is a POST /v3/payin_links body.
func linkBody(method, currency string, amount any, success, failure, hooks string) map[string]any {
	redirect := map[string]any{"success": success}
	if failure != "" {
		redirect["failure"] = failure
	}
	b := map[string]any{"amount": amount, "currency": currency, "payin_method_code": method, "description": "Order at Example Shop",
		"redirect_url": redirect, "meta_data": map[string]any{"order_id": "1001", "lines": []any{1, 2}}}
	if hooks != "" {
		b["webhook_notification"] = map[string]any{"endpoint_url": hooks, "authorization_header": "Basic c2hvcDpzZWNyZXQ="}
	}
	return b
}

// newLink creates a link and returns its create answer.
func (p *payd) newLink(as creds, body map[string]any) map[string]any {
	p.t.Helper()
	r := p.post("/v3/payin_links", as, body)
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// linkForm posts a form to a link's page as its script does (Accept:
// application/json) when asJSON, else as a browser without script.
func linkForm(t *testing.T, pageURL, csrf string, form url.Values, asJSON bool) (int, http.Header, []byte) {
	t.Helper()
	if csrf != "" {
		form.Set("csrf_token", csrf)
	}
	req, err := http.NewRequest("POST", pageURL, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if asJSON {
		req.Header.Set("Accept", "application/json")
	}
	res, err := checkoutClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, body
}

// linkPage fetches a link's page and returns its status, headers and csrf_token.
func linkPage(t *testing.T, pageURL string) (int, http.Header, string) {
	t.Helper()
	res, err := http.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	_, rest, _ := strings.Cut(string(body), `name="csrf_token" value="`)
	token, _, _ := strings.Cut(rest, `"`)
	return res.StatusCode, res.Header, token
}

// TestPayinLinkAPI: every method makes a pending link readable by its
// merchant only (404 for another's, as for an unknown uuid); each refusal is
// its named 422: MWK below 2,000, UGX where not enabled and out of range, a
// method of another currency, a currency the merchant holds no account in,
// and the fields.
func TestPayinLinkAPI(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant(linkCurrencies...)
		m := apps["NZD"]
		other := p.merchant("NZD")["NZD"]
		success := "https://shop.example/paid"
		for _, tt := range []struct {
			method, currency string
			amount           any
			wantAmount       string
		}{
			{"nz_card_nzd", "NZD", "25.5", "25.50"},
			{"hk_card_hkd", "HKD", 120, "120.00"},
			{"mw_bank_mwk", "MWK", "2000", "2000.00"},
			{"tz_bank_tzs", "TZS", "15000.00", "15000.00"},
			{"kh_khqr_usd", "USD", "9.99", "9.99"},
		} {
			created := p.newLink(m, linkBody(tt.method, tt.currency, tt.amount, success, "", ""))
			uuid := str(created, "uuid")
			if len(uuid) != 8 || str(created, "status") != "pending" || !strings.HasPrefix(str(created, "payment_link_url"), p.root+"/links/"+uuid+"?t=") ||
				str(created, "expires_at") == "" || len(created) != 4 {
				t.Errorf("%s: create answered %v", tt.method, created)
			}
			r := p.get("/v3/payin_links/detail?uuid="+uuid, m)
			want(t, r, 200)
			rec := r.JSON(t)
			if str(rec, "amount") != tt.wantAmount || str(rec, "currency") != tt.currency || str(rec, "payin_method_code") != tt.method ||
				str(rec, "status") != "pending" || str(rec["redirect_url"].(map[string]any), "success") != success ||
				str(rec["meta_data"].(map[string]any), "order_id") != "1001" || rec["webhook_notification"] != nil {
				t.Errorf("%s: detail %s", tt.method, r.Body)
			}
			wantError(t, p.get("/v3/payin_links/detail?uuid="+uuid, other), 404, "NOT_FOUND", "")
		}
		wantError(t, p.get("/v3/payin_links/detail?uuid=NOSUCH01", m), 404, "NOT_FOUND", "")
		wantError(t, p.get("/v3/payin_links/detail", m), 422, "VALIDATION_FAILED", "uuid")

		refuse := func(as creds, body map[string]any, code, field string) {
			t.Helper()
			wantError(t, p.post("/v3/payin_links", as, body), 422, code, field)
		}
		refuse(m, linkBody("mw_bank_mwk", "MWK", "1999.99", success, "", ""), "AMOUNT_OUT_OF_RANGE", "")
		refuse(m, linkBody("ug_bank_ugx", "UGX", 15000, success, "", ""), "METHOD_NOT_ENABLED", "")
		refuse(m, linkBody("nz_card_nzd", "HKD", 10, success, "", ""), "METHOD_NOT_ENABLED", "")
		refuse(other, linkBody("hk_card_hkd", "HKD", 10, success, "", ""), "CURRENCY_NOT_SUPPORTED", "")
		refuse(m, linkBody("nz_card_nzd", "NZD", "1.234", success, "", ""), "VALIDATION_FAILED", "amount")
		refuse(m, linkBody("nz_wallet_nzd", "NZD", 10, success, "", ""), "VALIDATION_FAILED", "payin_method_code")
		refuse(m, linkBody("nz_card_nzd", "NZD", 10, "/paid", "", ""), "VALIDATION_FAILED", "redirect_url.success")
		refuse(m, linkBody("nz_card_nzd", "NZD", 10, success, "javascript:alert(1)", ""), "VALIDATION_FAILED", "redirect_url.failure")
		refuse(m, linkBody("nz_card_nzd", "NZD", 10, success, "", "ftp://hooks.example/"), "VALIDATION_FAILED", "webhook_notification.endpoint_url")
		// UGX once the account enables it, within 15,000–36,000,000.
		if _, err := p.srv.Merchants.UpdateAccount(context.Background(), m.MerchantID, "UGX", merchant.AccountUpdate{Methods: &[]string{"ug_bank_ugx"}}); err != nil {
			t.Fatal(err)
		}
		refuse(m, linkBody("ug_bank_ugx", "UGX", 14999, success, "", ""), "AMOUNT_OUT_OF_RANGE", "")
		refuse(m, linkBody("ug_bank_ugx", "UGX", 36000001, success, "", ""), "AMOUNT_OUT_OF_RANGE", "")
		created := p.newLink(m, linkBody("ug_bank_ugx", "UGX", 36000000, success, "", ""))
		if rec := p.get("/v3/payin_links/detail?uuid="+str(created, "uuid"), m).JSON(t); str(rec, "amount") != "36000000" {
			t.Errorf("UGX link %v", rec)
		}
		// A wrong JSON type is 400; no credentials 401.
		bad := linkBody("nz_card_nzd", "NZD", 10, success, "", "")
		bad["redirect_url"] = "https://shop.example/"
		want(t, p.post("/v3/payin_links", m, bad), 400)
		want(t, p.do(req{method: "POST", path: "/v3/payin_links", body: linkBody("nz_card_nzd", "NZD", 10, success, "", "")}), 401)
	})
}

// TestPayinLinkPage: the page answers with its strict headers, framable by
// the success origin and the merchant's listed origins only; a form without
// the csrf_token is refused; a declined card fails the link (webhook, no
// credit, a JSON answer carrying redirect_url.failure), a good card pays it
// (303 to success without script); twelve racing submits of another link
// credit it once; the card number is nowhere in the database or the logs.
func TestPayinLinkPage(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var logs syncBuffer
		p := start(t, dsn, func(c *server.Config) {
			c.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
		apps := p.merchant(linkCurrencies...)
		m := apps["NZD"]
		if _, err := p.srv.Merchants.SetEmbedOrigins(context.Background(), m.MerchantID, []string{"https://embed.example", "http://127.0.0.1:9"}); err != nil {
			t.Fatal(err)
		}
		hooks := newEventLog(t)
		link := p.newLink(m, linkBody("nz_card_nzd", "NZD", "40.00", "https://shop.example/paid?o=1", "https://shop.example/failed?o=1", hooks.url))
		uuid, page := str(link, "uuid"), str(link, "payment_link_url")

		status, h, csrf := linkPage(t, page)
		if status != 200 || csrf == "" {
			t.Fatalf("GET page = %d, csrf %q", status, csrf)
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"frame-ancestors https://shop.example https://embed.example http://127.0.0.1:9;", "script-src 'self'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if h.Get("X-Frame-Options") != "" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("headers %v", h)
		}
		if s, _, _ := linkPage(t, strings.Replace(page, "?t=", "?t=x", 1)); s != 404 {
			t.Errorf("wrong token = %d, want 404", s)
		}
		if s, _, _ := linkForm(t, page, "", cardForm("4242424242424242"), false); s != 403 {
			t.Fatalf("form without csrf_token = %d, want 403", s)
		}
		if s, _, body := linkForm(t, page, csrf, cardForm("4242424242424241"), true); s != 422 || !strings.Contains(string(body), `"page_state":"pending"`) {
			t.Fatalf("bad Luhn = %d %s", s, body)
		}
		s, _, body := linkForm(t, page, csrf, cardForm("4000 0000 0000 0002"), true)
		var ans map[string]any
		json.Unmarshal(body, &ans)
		if s != 200 || ans["page_state"] != "failed" || ans["redirect_url"] != "https://shop.example/failed?o=1" || ans["uuid"] != uuid {
			t.Fatalf("declined = %d %s", s, body)
		}
		s, h, _ = linkForm(t, page, csrf, cardForm("4242 4242 4242 4242"), false)
		if s != 303 || h.Get("Location") != "https://shop.example/paid?o=1" {
			t.Fatalf("paid = %d %v", s, h)
		}
		// Another tab pays again: it ends as the first did and credits nothing.
		if s, _, body := linkForm(t, page, csrf, url.Values{"outcome": {"pay"}}, true); s != 200 || !strings.Contains(string(body), `"page_state":"paid"`) {
			t.Errorf("second pay = %d %s", s, body)
		}
		hooks.waitTypes(t, "payin_link.failed", "payin_link.paid")
		hooks.mu.Lock()
		paid := hooks.events[1]
		hooks.mu.Unlock()
		if paid.Auth != "Basic c2hvcDpzZWNyZXQ=" || paid.Record["uuid"] != uuid || paid.Record["status"] != "paid" || paid.Record["amount"] != "40.00" ||
			paid.Record["card"].(map[string]any)["last4"] != "4242" || paid.Record["card"].(map[string]any)["brand"] != "visa" {
			t.Errorf("paid webhook %q %v", paid.Auth, paid.Record)
		}
		if got := balance(t, p, m, "available_balance"); got != "40.00" {
			t.Errorf("NZD available = %s, want 40.00", got)
		}
		if h := p.history(m, "currency=NZD"); len(h.Records) != 1 || h.Records[0].ReferenceID != uuid || h.Records[0].TransactionType != "payment" {
			t.Errorf("history %+v", h.Records)
		}

		// Racing submits (cards and the sandbox button) of one HKD link.
		hkd := apps["HKD"]
		race := p.newLink(hkd, linkBody("hk_card_hkd", "HKD", "88.80", "https://shop.example/paid", "", hooks.url))
		_, _, raceCSRF := linkPage(t, str(race, "payment_link_url"))
		var wg sync.WaitGroup
		statuses := make([]int, 12)
		for i := range statuses {
			wg.Go(func() {
				form := url.Values{"outcome": {"pay"}, "csrf_token": {raceCSRF}}
				if i%2 == 0 {
					form = cardForm("4242424242424242")
					form.Set("csrf_token", raceCSRF)
				}
				res, err := checkoutClient.PostForm(str(race, "payment_link_url"), form)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				statuses[i] = res.StatusCode
			})
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 303 {
				t.Errorf("submit %d = %d, want 303", i, s)
			}
		}
		hooks.waitTypes(t, "payin_link.failed", "payin_link.paid", "payin_link.paid")
		if got := balance(t, p, hkd, "available_balance"); got != "88.80" {
			t.Errorf("HKD available = %s, want 88.80 (credited once)", got)
		}
		if h := p.history(hkd, "currency=HKD"); len(h.Records) != 1 {
			t.Errorf("%d HKD balance records, want 1", len(h.Records))
		}

		// Expired: the job on the merchant's clock, one webhook.
		late := p.newLink(apps["TZS"], linkBody("tz_bank_tzs", "TZS", 5000, "https://shop.example/paid", "", hooks.url))
		_, _, lateCSRF := linkPage(t, str(late, "payment_link_url"))
		p.advance(apps["TZS"], 24*3600)
		hooks.waitTypes(t, "payin_link.failed", "payin_link.paid", "payin_link.paid", "payin_link.expired")
		if s, _, body := linkForm(t, str(late, "payment_link_url"), lateCSRF, url.Values{"outcome": {"pay"}}, true); s != 409 || !strings.Contains(string(body), `"page_state":"expired"`) {
			t.Errorf("pay after expiry = %d %s", s, body)
		}

		wantCardNumberNowhere(t, p, dsn, &logs, "4242424242424242", "4242 4242 4242 4242", "4000000000000002", "4000 0000 0000 0002")
	})
}

// wantCardNumberNowhere fails if any of numbers is in the database (the
// SQLite files, or every row of every table in PostgreSQL) or in the logs.
func wantCardNumberNowhere(t *testing.T, p *payd, dsn string, logs *syncBuffer, numbers ...string) {
	t.Helper()
	var haystacks []struct {
		what string
		data []byte
	}
	add := func(what string, data []byte) {
		haystacks = append(haystacks, struct {
			what string
			data []byte
		}{what, data})
	}
	add("the logs", []byte(logs.String()))
	if p.srv.DB.Dialect() == store.SQLite {
		file := strings.TrimPrefix(dsn, "sqlite:")
		files, _ := filepath.Glob(file + "*")
		if len(files) == 0 {
			t.Fatalf("no database files at %s", file)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(f, data)
		}
	} else {
		for _, table := range countedTables {
			rows, err := p.srv.DB.Read().QueryContext(context.Background(), fmt.Sprintf(`SELECT t::text FROM %s t`, table))
			if err != nil {
				t.Fatal(err)
			}
			var all bytes.Buffer
			for rows.Next() {
				var s string
				rows.Scan(&s)
				all.WriteString(s)
			}
			rows.Close()
			add("table "+table, all.Bytes())
		}
	}
	if logs.String() == "" {
		t.Fatal("no log lines: the log search would prove nothing")
	}
	for _, h := range haystacks {
		for _, n := range numbers {
			if bytes.Contains(h.data, []byte(n)) {
				t.Errorf("%s holds the card number %s", h.what, n)
			}
		}
	}
}

// syncBuffer is a log destination that many goroutines write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestPortalEmbedOrigins: on the portal's developers page an admin or a
// developer sets the origins that may frame the merchant's Payment Gateway 3
// pages (a form with its csrf_token; audited), which the pages' CSP then
// lists; a forged form, a viewer and a bad origin change nothing.
func TestPortalEmbedOrigins(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("NZD")["NZD"]
		dev := p.newPortalUser(t, m.MerchantID, "dev@shop.example", merchant.Developer)
		viewer := p.newPortalUser(t, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		stored := func() string {
			t.Helper()
			got, err := merchant.EmbedOrigins(context.Background(), p.srv.DB.Read(), m.MerchantID)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(got, ",")
		}
		page := dev.do("GET", "/portal/developers", nil)
		if page.status != 200 || !strings.Contains(page.body, `action="/portal/developers/embed-origins"`) || !strings.Contains(page.body, `name="embed_origins"`) {
			t.Fatalf("developers page: %d without the embedding origins form", page.status)
		}
		if a := dev.do("POST", "/portal/developers/embed-origins", url.Values{"embed_origins": {"https://evil.example"}}); a.status != http.StatusForbidden {
			t.Errorf("form without csrf_token: %d, want 403", a.status)
		}
		if a := viewer.post("/portal/", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://evil.example"}); a.status != http.StatusForbidden {
			t.Errorf("a viewer: %d, want 403", a.status)
		}
		if a := dev.post("/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://shop.example/path"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("an origin with a path: %d, want 422", a.status)
		}
		if got := stored(); got != "" {
			t.Fatalf("after refused forms the origins are %q", got)
		}
		a := dev.post("/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://A.example\r\nhttps://b.example:8443\r\n"})
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/developers" {
			t.Fatalf("save origins: %d %.300s", a.status, a.body)
		}
		if got := stored(); got != "https://a.example,https://b.example:8443" {
			t.Errorf("stored %q", got)
		}
		if body := dev.do("GET", "/portal/developers", nil).body; !strings.Contains(body, "https://a.example\nhttps://b.example:8443</textarea>") {
			t.Errorf("the form does not show the stored origins")
		}
		link := p.newLink(m, linkBody("nz_card_nzd", "NZD", 10, "https://shop.example/paid", "", ""))
		if _, h, _ := linkPage(t, str(link, "payment_link_url")); !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors https://shop.example https://a.example https://b.example:8443;") {
			t.Errorf("CSP %q", h.Get("Content-Security-Policy"))
		}
		entries, _, err := p.srv.Portal.AuditPage(context.Background(), m.MerchantID, 1, 50)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(entries, func(e portal.Entry) bool {
			return e.Action == "embed_origins_updated" && e.Actor == "dev@shop.example" && e.Detail == "https://a.example,https://b.example:8443"
		}) {
			t.Errorf("no audit entry of the change in %+v", entries)
		}
	})
}
