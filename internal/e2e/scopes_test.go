package e2e

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// appWith issues as's merchant a new app on its account with access.
func (p *payd) appWith(as creds, access merchant.Access) creds {
	p.t.Helper()
	app, err := store.Do(context.Background(), p.srv.DB, func(tx *store.Tx) (merchant.NewApp, error) {
		return p.srv.Merchants.CreateAppWith(context.Background(), tx, as.MerchantID, as.Currency, access)
	})
	if err != nil {
		p.t.Fatal(err)
	}
	as.AppID, as.SecretKey, as.Token = app.AppID, app.SecretKey, ""
	return as
}

// TestScopesRefuse is generated from the route table as the served document
// shows it (CONTRACT §23): every operation with an x-required-scope, called
// with a key of another scope (banks:read), is refused 403 SCOPE_REQUIRED
// naming its scope, before anything of the request is read, and so is the
// same call with an access token of that key (a token carries its app's
// scopes); the operations of banks:read itself answer.
func TestScopesRefuse(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		m := p.merchant("AUD")["AUD"]
		banks := p.appWith(m, merchant.Access{Scopes: []string{"banks:read"}})
		token := p.bearerFor(banks)
		var doc struct {
			Paths map[string]map[string]struct {
				Scope    string                `json:"x-required-scope"`
				Security []map[string][]string `json:"security"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(p.get("/openapi.json", m).Body, &doc); err != nil {
			t.Fatal(err)
		}
		tried := 0
		for path, ops := range doc.Paths {
			for method, op := range ops {
				if op.Scope == "" || op.Scope == "banks:read" {
					continue
				}
				tried++
				// The token goes as the access-token header, which every
				// operation that takes a token reads; the keys where the
				// operation takes them.
				calls := map[string]req{"a token": {header: map[string]string{"access-token": token.Token}}}
				for _, sec := range op.Security {
					if _, ok := sec["appId"]; ok {
						calls["the keys"] = req{as: &banks}
					}
				}
				for how, call := range calls {
					call.method, call.path, call.body = strings.ToUpper(method), path, map[string]any{}
					r := p.do(call)
					if r.Status != 403 || !strings.Contains(string(r.Body), `"code":"SCOPE_REQUIRED"`) || !strings.Contains(string(r.Body), "this key lacks "+op.Scope) {
						t.Errorf("%s %s with a banks:read key's %s: %d %s, want 403 SCOPE_REQUIRED naming %s", method, path, how, r.Status, r.Body, op.Scope)
					}
				}
			}
		}
		if tried < 50 {
			t.Errorf("tried %d operations: the document lacks x-required-scope", tried)
		}
		want(t, p.get("/v2/banks/branches?bank_code=0001&branch_code=001", banks), 200)
	})
}

// TestScopesAllow: a payouts:write key creates a payout and reads payouts
// (write includes read) but not balances; a key whose allowed_ips leave out
// the client's address is refused 403 IP_NOT_ALLOWED, one that lists it
// answers; a key past its expiry is 401 REQUIRE_LOGIN saying so; apps made
// before scopes existed (the merchant's own) keep every scope.
func TestScopesAllow(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "100")
		payouts := p.appWith(m, merchant.Access{Scopes: []string{"payouts:write"}})
		want(t, p.post("/v2/payouts", payouts, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), 201)
		want(t, p.get("/v2/payouts/all", payouts), 200)
		if r := p.get("/v2/balances", payouts); r.Status != 403 || !strings.Contains(string(r.Body), "this key lacks balances:read") {
			t.Errorf("a payouts:write key reading balances: %d %s", r.Status, r.Body)
		}

		elsewhere := p.appWith(m, merchant.Access{AllowedIPs: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}})
		if r := p.get("/v2/balances", elsewhere); r.Status != 403 || !strings.Contains(string(r.Body), `"code":"IP_NOT_ALLOWED"`) {
			t.Errorf("a key of 203.0.113.0/24 from loopback: %d %s", r.Status, r.Body)
		}
		here := p.appWith(m, merchant.Access{AllowedIPs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
		want(t, p.get("/v2/balances", here), 200)

		expiring := p.appWith(m, merchant.Access{ExpiresAt: time.Now().Add(time.Hour)})
		want(t, p.get("/v2/balances", expiring), 200)
		// Its hour is up: the app's expiry moved into the past; the servers'
		// principal caches see it within their 100 ms.
		if err := p.srv.DB.Exec(context.Background(), func(tx *store.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE apps SET expires_at = $1 WHERE merchant_id = $2 AND app_id = $3`,
				time.Now().Add(-time.Minute).UnixMilli(), m.MerchantID, expiring.AppID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the expired key refused", 5*time.Second, func() bool {
			r := p.get("/v2/balances", expiring)
			return r.Status == 401 && strings.Contains(string(r.Body), "this key expired at")
		})
		want(t, p.get("/v2/balances", m), 200)
	})
}
