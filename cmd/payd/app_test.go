package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// TestAppCreateScopes: payd app create --scopes --expires-at --allowed-ips
// makes an app with that access (CONTRACT §23), shown in --json with
// scopes, expires_at and allowed_ips and carried by the app's principal;
// without them the app has every scope, no expiry and any address; bad
// values are refused before anything is made, each flag named.
func TestAppCreateScopes(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var m createdMerchant
		if err := json.Unmarshal([]byte(mustPayd(t, "merchant", "create", "--db", dsn, "--name", "Acme", "--country", "AU",
			"--timezone", "Australia/Sydney", "--currencies", "AUD", "--json")), &m); err != nil {
			t.Fatal(err)
		}
		var app struct {
			AppID      string   `json:"app_id"`
			SecretKey  string   `json:"secret_key"`
			Scopes     []string `json:"scopes"`
			ExpiresAt  *string  `json:"expires_at"`
			AllowedIPs []string `json:"allowed_ips"`
		}
		out := mustPayd(t, "app", "create", "--db", dsn, "--merchant", m.MerchantID, "--currency", "AUD", "--scopes", "payouts:write,balances:read",
			"--expires-at", "2099-01-31T00:00:00Z", "--allowed-ips", "203.0.113.0/24,198.51.100.7", "--json")
		if err := json.Unmarshal([]byte(out), &app); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(app.Scopes, []string{"balances:read", "payouts:write"}) || app.ExpiresAt == nil || *app.ExpiresAt != "2099-01-31T00:00:00Z" ||
			!slices.Equal(app.AllowedIPs, []string{"203.0.113.0/24", "198.51.100.7/32"}) {
			t.Errorf("app create --json: %s", out)
		}
		svc, _ := services(t, dsn)
		p, ok := authenticate(t, svc, app.AppID, app.SecretKey)
		if !ok || !p.Access.Allows("payouts:read") || p.Access.Allows("payins:read") || p.Access.ExpiresAt.Year() != 2099 || len(p.Access.AllowedIPs) != 2 {
			t.Errorf("the app's principal has access %+v", p.Access)
		}

		out = mustPayd(t, "app", "create", "--db", dsn, "--merchant", m.MerchantID, "--currency", "AUD", "--json")
		if err := json.Unmarshal([]byte(out), &app); err != nil || !slices.Equal(app.Scopes, []string{"*"}) || app.ExpiresAt != nil || len(app.AllowedIPs) != 0 {
			t.Errorf("app create without access flags: %s", out)
		}

		r := payd(t, "app", "create", "--db", dsn, "--merchant", m.MerchantID, "--currency", "AUD", "--expires-at", "2020-01-01T00:00:00Z")
		if r.code != 1 || !strings.Contains(r.stderr, "expires_at is not in the future") {
			t.Errorf("a past expiry: exit %d, %s", r.code, r.stderr)
		}
		r = payd(t, "app", "create", "--db", dsn, "--merchant", m.MerchantID, "--currency", "AUD", "--scopes", "payouts:delete", "--allowed-ips", "nowhere")
		if r.code != 1 || !strings.Contains(r.stderr, "scopes: \"payouts:delete\" is not a scope") || !strings.Contains(r.stderr, "allowed-ips: \"nowhere\"") {
			t.Errorf("a bad scope and address: exit %d, %s", r.code, r.stderr)
		}
	})
}
