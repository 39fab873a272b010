package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store/storetest"
	"payd/internal/transfer"
)

// policyForm is the policies page's proposal form.
func policyForm(b *browser, name, minAmount, approvals string, roles ...string) url.Values {
	form := url.Values{"csrf_token": {b.csrf("/portal/policies")}, "name": {name}, "currency": {"AUD"}, "min_amount": {minAmount}, "approvals": {approvals}}
	form["roles"] = roles
	return form
}

var policyID = regexp.MustCompile(`id="policy-([A-Za-z0-9_]+)"`)

// activatePortalPolicy proposes a policy as proposer and has approver
// approve it, through the pages; it returns the policy's id.
func activatePortalPolicy(t *testing.T, proposer, approver *browser, name, minAmount, approvals string, roles ...string) string {
	t.Helper()
	if a := proposer.do("POST", "/portal/policies", policyForm(proposer, name, minAmount, approvals, roles...)); a.status != http.StatusSeeOther {
		t.Fatalf("propose: %d\n%.500s", a.status, a.body)
	}
	m := policyID.FindAllStringSubmatch(approver.do("GET", "/portal/policies", nil).body, -1)
	if len(m) == 0 {
		t.Fatal("no policy on the page")
	}
	id := m[len(m)-1][1]
	if a := approver.post("/portal/policies", "/portal/policies/"+id+"/approve", nil); a.status != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%.500s", a.status, a.body)
	}
	return id
}

// TestPortalPolicies: admins only see the page; a proposal is pending until
// another admin approves it (the proposer's approval is 403, shown no
// Approve button); a second policy with the same currency and min_amount is
// 422; each change is audited; GET /v2/approval_policies-shaped List shows
// the active policy and the daily limit once approved.
func TestPortalPolicies(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		a := signedIn(t, e, srv, p.MerchantID, "a@shop.example", merchant.Admin)
		b := signedIn(t, e, srv, p.MerchantID, "b@shop.example", merchant.Admin)
		fin := signedIn(t, e, srv, p.MerchantID, "f@shop.example", merchant.Finance)
		if got := fin.do("GET", "/portal/policies", nil); got.status != http.StatusForbidden {
			t.Errorf("finance GET /portal/policies: %d, want 403", got.status)
		}
		got := a.do("POST", "/portal/policies", policyForm(a, "Two to sign", "1000", "2", "finance", "admin"))
		if got.status != http.StatusSeeOther || got.header.Get("Location") != "/portal/policies?done=proposed" {
			t.Fatalf("propose: %d %q\n%.500s", got.status, got.header.Get("Location"), got.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/policies")
		page := a.do("GET", "/portal/policies", nil).body
		id := policyID.FindStringSubmatch(page)[1]
		if strings.Contains(page, "/portal/policies/"+id+"/approve") {
			t.Error("the proposer is offered to approve the proposal")
		}
		if got := a.post("/portal/policies", "/portal/policies/"+id+"/approve", nil); got.status != http.StatusForbidden {
			t.Errorf("the proposer's approval: %d, want 403", got.status)
		}
		if !strings.Contains(b.do("GET", "/portal/policies", nil).body, "/portal/policies/"+id+"/approve") {
			t.Error("another admin is not offered to approve the proposal")
		}
		if got := b.post("/portal/policies", "/portal/policies/"+id+"/approve", nil); got.status != http.StatusSeeOther {
			t.Fatalf("another admin's approval: %d\n%.500s", got.status, got.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/policies/{id}/approve")
		rules, err := e.Policies.List(context.Background(), p.MerchantID)
		if err != nil || len(rules.Records) != 1 || rules.Records[0].Status != "active" || rules.Records[0].Version != 1 || len(rules.Records[0].Roles) != 2 {
			t.Fatalf("List() = %+v, %v; want one active policy of version 1, two roles", rules, err)
		}
		if got := b.do("POST", "/portal/policies", policyForm(b, "Same", "1000.00", "1", "finance")); got.status != http.StatusUnprocessableEntity {
			t.Errorf("a second AUD 1000 policy: %d, want 422", got.status)
		}
		if got := b.do("POST", "/portal/policies", policyForm(b, "Bad", "5", "4", "viewer")); got.status != http.StatusUnprocessableEntity {
			t.Errorf("4 approvals by viewers: %d, want 422", got.status)
		}
		if got := b.post("/portal/policies", "/portal/policies/daily_limit", map[string]string{"currency": "AUD", "amount": "5000"}); got.status != http.StatusSeeOther {
			t.Fatalf("daily limit: %d\n%.300s", got.status, got.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/policies/daily_limit")
		rules, _ = e.Policies.List(context.Background(), p.MerchantID)
		if len(rules.Pending) != 1 || len(rules.DailyLimits) != 0 {
			t.Fatalf("after the daily limit's proposal: %+v", rules)
		}
		if got := a.post("/portal/policies", "/portal/policies/"+rules.Pending[0].ID+"/approve", nil); got.status != http.StatusSeeOther {
			t.Fatalf("approve the daily limit: %d", got.status)
		}
		if rules, _ = e.Policies.List(context.Background(), p.MerchantID); rules.DailyLimits["AUD"] != "5000.00" {
			t.Errorf("daily_limits = %v, want AUD 5000.00", rules.DailyLimits)
		}
		if got := a.do("POST", "/portal/policies/"+id+"/delete", url.Values{"csrf_token": {a.csrf("/portal/policies")}}); got.status != http.StatusSeeOther {
			t.Fatalf("propose the deletion: %d", got.status)
		}
		if got := b.post("/portal/policies", "/portal/policies/"+id+"/reject", nil); got.status != http.StatusSeeOther {
			t.Fatalf("reject the deletion: %d", got.status)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/policies/{id}/reject")
		if rules, _ = e.Policies.List(context.Background(), p.MerchantID); len(rules.Records) != 1 || rules.Records[0].Status != "active" {
			t.Errorf("after the rejected deletion: %+v, want the policy active", rules.Records)
		}
	})
}

// TestPortalPolicyHoldsPortalPayout: a payout made in the portal that a
// policy catches is held (the account's approvals off); its maker may not
// approve it (403), the same checker twice is 409, and it leaves held at
// the second approval; it is on the payouts page's "waiting for my
// approval" list of a user who may approve it and has not, and on "waiting
// for others" of its maker and of who approved it; its page shows the
// approvals trail and the policy.
func TestPortalPolicyHoldsPortalPayout(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		srv := portalServer(t, e)
		a := signedIn(t, e, srv, p.MerchantID, "a@shop.example", merchant.Admin)
		b := signedIn(t, e, srv, p.MerchantID, "b@shop.example", merchant.Admin)
		maker := signedIn(t, e, srv, p.MerchantID, "maker@shop.example", merchant.Finance)
		c1 := signedIn(t, e, srv, p.MerchantID, "c1@shop.example", merchant.Finance)
		c2 := signedIn(t, e, srv, p.MerchantID, "c2@shop.example", merchant.Finance)
		activatePortalPolicy(t, a, b, "Two to sign", "100", "2", "finance")
		created := maker.post("/portal/payouts/new", "/portal/payouts", payoutForm("100"))
		if created.status != http.StatusSeeOther {
			t.Fatalf("create: %d\n%.500s", created.status, created.body)
		}
		page := created.header.Get("Location")
		uuid := strings.TrimPrefix(page, "/portal/payouts/")
		po, err := e.Payouts.Get(context.Background(), p, uuid)
		if err != nil || po.Status != payout.Held || po.Approval.RequiredApprovals != 2 {
			t.Fatalf("the portal payout: %+v, %v; want held for 2", po, err)
		}
		lists := func(when string, want map[*browser][2]bool) {
			t.Helper()
			for b, w := range want {
				for i, list := range []string{"me", "others"} {
					if got := strings.Contains(b.do("GET", "/portal/payouts?waiting="+list, nil).body, uuid); got != w[i] {
						t.Errorf("%s: the payout on a user's waiting=%s list = %v, want %v", when, list, got, w[i])
					}
				}
			}
		}
		lists("created", map[*browser][2]bool{maker: {false, true}, c1: {true, false}, a: {false, false}})
		if got := c1.post(page, page+"/approve", nil); got.status != http.StatusSeeOther {
			t.Fatalf("c1's approval: %d", got.status)
		}
		lists("after c1's approval", map[*browser][2]bool{c1: {false, true}, c2: {true, false}})
		if strings.Contains(c1.do("GET", page, nil).body, `id="approve"`) || !strings.Contains(c2.do("GET", page, nil).body, `id="approve"`) {
			t.Error("the decision forms: want them hidden from who approved, shown to another checker")
		}
		steps := []struct {
			name string
			user *browser
			want int
		}{
			{"the maker", maker, http.StatusForbidden},
			{"an admin (not the policy's role)", a, http.StatusForbidden},
			{"the first checker again", c1, http.StatusConflict},
			{"a second checker", c2, http.StatusSeeOther},
			{"after it left held", b, http.StatusForbidden},
		}
		for _, st := range steps {
			if got := st.user.post(page, page+"/approve", nil); got.status != st.want {
				t.Errorf("%s: %d, want %d\n%.300s", st.name, got.status, st.want, got.body)
			}
		}
		if po, _ = e.Payouts.Get(context.Background(), p, uuid); po.Status != payout.Processing || len(po.Approval.Approvals) != 2 {
			t.Errorf("after two approvals: %+v, want processing", po)
		}
		body := c1.do("GET", page, nil).body
		for _, want := range []string{"2 of 2 approvals", "policy Two to sign, version 1", "c1@shop.example (finance)", "c2@shop.example (finance)"} {
			if !strings.Contains(body, want) {
				t.Errorf("the payout's page lacks %q", want)
			}
		}
	})
}

// TestPortalTransferDecisions: an external transfer a policy holds is
// decided at /portal/transfers/{uuid}/approve|reject by the policy's roles.
func TestPortalTransferDecisions(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000", "AUD")["AUD"]
		acc, err := e.Merchants.OpenTreasury(ctx, p.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		in, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "500", Description: "fund", TreasuryAccountID: acc.PublicID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: in.UUID, Status: transfer.Completed}); err != nil {
			t.Fatal(err)
		}
		srv := portalServer(t, e)
		a := signedIn(t, e, srv, p.MerchantID, "a@shop.example", merchant.Admin)
		b := signedIn(t, e, srv, p.MerchantID, "b@shop.example", merchant.Admin)
		fin := signedIn(t, e, srv, p.MerchantID, "f@shop.example", merchant.Finance)
		viewer := signedIn(t, e, srv, p.MerchantID, "v@shop.example", merchant.Viewer)
		activatePortalPolicy(t, a, b, "Out", "100", "1", "finance")
		bank := settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Supplier Pty Ltd"}
		tr, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "200", Description: "supplier", ExternalBankAccount: &bank})
		if err != nil || tr.Status != transfer.Held {
			t.Fatalf("Create() = %+v, %v; want held", tr, err)
		}
		page := "/portal/transfers/" + tr.UUID
		if got := viewer.post(page, page+"/approve", nil); got.status != http.StatusForbidden {
			t.Errorf("a viewer: %d, want 403", got.status)
		}
		if got := a.post(page, page+"/approve", nil); got.status != http.StatusForbidden {
			t.Errorf("an admin (not the policy's role): %d, want 403", got.status)
		}
		if !strings.Contains(fin.do("GET", page, nil).body, `id="approve"`) {
			t.Error("finance is not offered the decision")
		}
		if got := fin.post(page, page+"/approve", nil); got.status != http.StatusSeeOther {
			t.Fatalf("finance's approval: %d\n%.300s", got.status, got.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/transfers/{uuid}/approve")
		if got, _ := e.Transfers.Get(ctx, p, tr.UUID); got.Status != transfer.Processing {
			t.Errorf("after the approval: %s, want processing", got.Status)
		}
		if got := fin.post(page, page+"/reject", map[string]string{"reason": "changed my mind"}); got.status != http.StatusConflict {
			t.Errorf("a rejection after it left held: %d, want 409", got.status)
		}
	})
}
