package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/internal/deposit"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// funded makes a merchant with an account in each currency and puts amount
// into the first's available balance.
func funded(t *testing.T, e *servertest.Env, amount money.Input, currencies ...string) map[string]merchant.Principal {
	t.Helper()
	accounts := e.Merchant(t, currencies...)
	p := accounts[currencies[0]]
	if _, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: amount}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	return accounts
}

// TestPortalBalancesAndPayins: the balances page shows every currency's
// balances; the payins page lists a currency's payins, filtered by status,
// and answers a status that is none with 422, listing nothing; a viewer
// reads both.
func TestPortalBalancesAndPayins(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		accounts := funded(t, e, "250", "AUD", "IDR")
		idr := accounts["IDR"]
		pi, err := storetest.Write(context.Background(), e.DB, e.Payins.Create, idr, payin.Request{Currency: "IDR", Amount: "10000", PayinMethodName: "id_bank_qris_idr"})
		if err != nil {
			t.Fatal(err)
		}
		viewer := signedIn(t, e, portalServer(t, e), idr.MerchantID, "viewer@shop.example", merchant.Viewer)
		home := viewer.do("GET", "/portal/", nil)
		if home.status != http.StatusOK || !strings.Contains(home.body, "250.00") || !strings.Contains(home.body, "IDR") {
			t.Errorf("balances: %d\n%.800s", home.status, home.body)
		}
		tests := []struct {
			path   string
			status int
			listed bool
		}{
			{"/portal/payins?currency=IDR", 200, true},
			{"/portal/payins?currency=IDR&status=pending", 200, true},
			{"/portal/payins?currency=IDR&status=no-such-status", 422, false},
			{"/portal/payins?currency=IDR&status=received", 200, false},
			{"/portal/payins?currency=AUD", 200, false},
		}
		for _, tt := range tests {
			t.Run(tt.path, func(t *testing.T) {
				a := viewer.do("GET", tt.path, nil)
				if a.status != tt.status || strings.Contains(a.body, pi.UUID) != tt.listed {
					t.Errorf("GET %s: %d (want %d), lists %s = %v, want %v", tt.path, a.status, tt.status, pi.UUID, !tt.listed, tt.listed)
				}
			})
		}
	})
}
