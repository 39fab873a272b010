package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
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

// TestPortalSettlementConfigForm: admins and finance users set an
// account's settlement frequency and beneficiary in the settlements page's
// form (the fields of PUT /v2/settlements/config), audited; the page shows
// the form filled with the config; a BSB that is none is a 422 naming it
// that changes nothing; a viewer sees no form and is refused one (403).
func TestPortalSettlementConfigForm(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "250", "AUD")["AUD"]
		srv := portalServer(t, e)
		finance := signedIn(t, e, srv, p.MerchantID, "finance@shop.example", merchant.Finance)
		viewer := signedIn(t, e, srv, p.MerchantID, "viewer@shop.example", merchant.Viewer)
		page := "/portal/settlements?currency=AUD"
		form := map[string]string{"currency": "AUD", "frequency": "end_of_day", "beneficiary": "bank", "bank_name": "Westpac", "bsb": "06200",
			"account_number": "12345678", "account_name": "Shop Pty Ltd"}
		if a := finance.post(page, "/portal/settlements/config", form); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "external_bank_account.bsb") {
			t.Errorf("a BSB of 5 digits: %d, want 422 naming it\n%.1500s", a.status, a.body)
		}
		if c, err := e.Settlements.GetConfig(context.Background(), p, "AUD"); err != nil || c.UpdatedAt != nil {
			t.Fatalf("after the refused form the config is %+v, %v", c, err)
		}
		form["bsb"] = "062000"
		a := finance.follow(finance.post(page, "/portal/settlements/config", form))
		if !strings.Contains(a.body, "The settlement config is saved.") || !strings.Contains(a.body, `<option selected>end_of_day</option>`) ||
			!strings.Contains(a.body, `name="bsb" maxlength="6" inputmode="numeric" value="062000"`) || !strings.Contains(a.body, "To Shop Pty Ltd, account 12345678.") {
			t.Errorf("the settlements page after saving:\n%.4000s", a.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/settlements/config")
		c, err := e.Settlements.GetConfig(context.Background(), p, "AUD")
		if err != nil || c.Frequency != settlement.EndOfDay || c.ExternalBankAccount == nil || c.ExternalBankAccount.BSB != "062000" {
			t.Errorf("the config: %+v, %v", c, err)
		}
		// With beneficiary approval on, the form's change of bank account
		// waits for another finance user, who approves it on the page.
		a1 := policy.Actor{UserID: "u-a1", Email: "a1@shop.example", Role: merchant.Admin}
		a2 := policy.Actor{UserID: "u-a2", Email: "a2@shop.example", Role: merchant.Admin}
		if _, err := store.Do(context.Background(), e.DB, func(tx *store.Tx) (policy.Policy, error) {
			r, err := e.Policies.ProposeBeneficiaryApproval(context.Background(), tx, p.MerchantID, a1, true, e.Clock.Now())
			if err != nil {
				return r, err
			}
			return e.Policies.Decide(context.Background(), tx, p.MerchantID, r.ID, a2, true, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		form["account_number"], form["account_name"] = "87654321", "Shop New Bank"
		pending := finance.follow(finance.post(page, "/portal/settlements/config", form))
		if !strings.Contains(pending.body, "87654321") || !strings.Contains(pending.body, "To Shop Pty Ltd, account 12345678.") ||
			!strings.Contains(pending.body, "asked for by finance@shop.example") {
			t.Errorf("the page with the change pending:\n%.4000s", pending.body)
		}
		if c, _ := e.Settlements.GetConfig(context.Background(), p, "AUD"); c.PendingChange == nil || c.ExternalBankAccount.AccountNumber != "12345678" {
			t.Fatalf("the config after the form with approval on: %+v", c)
		}
		if a := finance.post(page, "/portal/settlements/beneficiary/approve", map[string]string{"currency": "AUD"}); a.status != http.StatusForbidden {
			t.Errorf("the change's maker approving it: %d, want 403", a.status)
		}
		checker := signedIn(t, e, srv, p.MerchantID, "checker@shop.example", merchant.Finance)
		checker.follow(checker.post(page, "/portal/settlements/beneficiary/approve", map[string]string{"currency": "AUD"}))
		if c, _ := e.Settlements.GetConfig(context.Background(), p, "AUD"); c.PendingChange != nil || c.ExternalBankAccount.AccountNumber != "87654321" {
			t.Errorf("the config after another's approval: %+v", c)
		}
		if a := viewer.do("GET", page, nil); strings.Contains(a.body, `id="settlement-config"`) {
			t.Error("a viewer is shown the settlement config form")
		}
		if a := viewer.post(page, "/portal/settlements/config", form); a.status != http.StatusForbidden {
			t.Errorf("a viewer's form: %d, want 403", a.status)
		}
	})
}
