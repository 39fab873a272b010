package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store/storetest"
)

// TestPortalSettlementsAndReports: the settlements page shows a currency's
// configuration and its settlements; the reports page its reports,
// filtered by frequency (an unknown one is ignored); a viewer reads both.
func TestPortalSettlementsAndReports(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		accounts := funded(t, e, "250", "AUD", "JPY")
		p := accounts["AUD"]
		ctx := context.Background()
		bank := &settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Shop Pty Ltd"}
		if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand, ExternalBankAccount: bank}); err != nil {
			t.Fatal(err)
		}
		st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: "10"})
		if err != nil {
			t.Fatal(err)
		}
		viewer := signedIn(t, e, portalServer(t, e), p.MerchantID, "viewer@shop.example", merchant.Viewer)
		tests := []struct {
			path string
			want []string
		}{
			{"/portal/settlements?currency=AUD", []string{st.UUID, "Frequency: on_demand", "To Shop Pty Ltd, account 12345678"}},
			{"/portal/settlements?currency=JPY", []string{"No settlements.", "No beneficiary is set"}},
			{"/portal/reports?currency=AUD", []string{"No reports yet", `<option value="" selected>`}},
			{"/portal/reports?currency=AUD&frequency=monthly", []string{`<option selected>monthly</option>`}},
			{"/portal/reports?currency=AUD&frequency=hourly", []string{`<option value="" selected>`}},
		}
		for _, tt := range tests {
			t.Run(tt.path, func(t *testing.T) {
				a := viewer.do("GET", tt.path, nil)
				for _, want := range tt.want {
					if a.status != http.StatusOK || !strings.Contains(a.body, want) {
						t.Errorf("GET %s: %d, lacks %q\n%.800s", tt.path, a.status, want, a.body)
					}
				}
			})
		}
	})
}
