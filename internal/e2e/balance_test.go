package e2e

import (
	"strings"
	"testing"
)

// TestBalancesListEveryCurrency: GET /v2/balances has one entry per currency
// of the merchant, ordered by code, each amount a JSON number written with the
// currency's exact digits (CONTRACT §3), including currencies never used.
func TestBalancesListEveryCurrency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "JPY", "VND", "USD")
		m := accounts["AUD"]
		p.simulateDeposit(m, accounts["AUD"].AccountNumber, "250")
		p.simulateDeposit(m, accounts["JPY"].AccountNumber, "1000")
		p.simulateDeposit(m, accounts["VND"].AccountNumber, "5000000")
		p.runDue(m)

		r := p.get("/v2/balances", m)
		want(t, r, 200)
		wantRecords := []string{
			`{"currency":"AUD","available_balance":250.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":250.00}`,
			`{"currency":"JPY","available_balance":1000,"incoming_balance":0,"outgoing_balance":0,"rolling_reserve_balance":0,"withdrawable_balance":1000}`,
			`{"currency":"USD","available_balance":0.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":0.00}`,
			`{"currency":"VND","available_balance":5000000,"incoming_balance":0,"outgoing_balance":0,"rolling_reserve_balance":0,"withdrawable_balance":5000000}`,
		}
		if got, want := strings.TrimSpace(string(r.Body)), `{"records":[`+strings.Join(wantRecords, ",")+`]}`; got != want {
			t.Errorf("GET /v2/balances body\n got %s\nwant %s", got, want)
		}
	})
}

// TestBalanceDetail: /v2/balances/detail answers the calling app's currency
// by default and any other currency of the merchant on request; an unknown
// code is a 422 naming currency, a currency the merchant has no account in a 404.
func TestBalanceDetail(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "JPY")
		p.simulateDeposit(accounts["AUD"], accounts["AUD"].AccountNumber, "250")
		p.simulateDeposit(accounts["AUD"], accounts["JPY"].AccountNumber, "1000")
		p.runDue(accounts["AUD"])
		found := []struct {
			name  string
			as    creds
			query string
			body  string
		}{
			{name: "AUD app, default currency", as: accounts["AUD"],
				body: `{"currency":"AUD","available_balance":250.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":250.00}`},
			{name: "JPY app, default currency", as: accounts["JPY"],
				body: `{"currency":"JPY","available_balance":1000,"incoming_balance":0,"outgoing_balance":0,"rolling_reserve_balance":0,"withdrawable_balance":1000}`},
			{name: "JPY app asks for aud in lower case", as: accounts["JPY"], query: "?currency=aud",
				body: `{"currency":"AUD","available_balance":250.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":250.00}`},
			{name: "JPY app asks for AUD", as: accounts["JPY"], query: "?currency=AUD",
				body: `{"currency":"AUD","available_balance":250.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":250.00}`},
		}
		for _, tt := range found {
			t.Run(tt.name, func(t *testing.T) {
				r := p.get("/v2/balances/detail"+tt.query, tt.as)
				want(t, r, 200)
				if got := strings.TrimSpace(string(r.Body)); got != tt.body {
					t.Errorf("body\n got %s\nwant %s", got, tt.body)
				}
			})
		}
		refused := []struct {
			name   string
			query  string
			status int
			code   string
			field  string
		}{
			{name: "unknown currency code", query: "?currency=XYZ", status: 422, code: "VALIDATION_FAILED", field: "currency"},
			{name: "overlong value", query: "?currency=" + strings.Repeat("A", 300), status: 422, code: "VALIDATION_FAILED", field: "currency"},
			{name: "currency the merchant lacks", query: "?currency=EUR", status: 404, code: "NOT_FOUND"},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.get("/v2/balances/detail"+tt.query, accounts["AUD"]), tt.status, tt.code, tt.field)
			})
		}
	})
}
