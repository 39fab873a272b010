package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payd/internal/merchant"
)

// TestPoliciesInBrowser drives approval policies in Chromium: admin A
// proposes a policy of two finance approvals from 100.00 AUD with the form
// and is offered no approval of their own proposal; admin B approves it;
// a payout of 150.00 is then held under the policy, and two finance users
// approve it on its page, the first leaving it held (1 of 2), the second
// sending it on; an external transfer the policy catches is approved on
// the transfer's page.
func TestPoliciesInBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		ctx := context.Background()
		users := map[string]merchant.Role{"a@shop.example": merchant.Admin, "b@shop.example": merchant.Admin,
			"f1@shop.example": merchant.Finance, "f2@shop.example": merchant.Finance}
		for email, role := range users {
			if _, err := p.srv.Merchants.CreateUser(ctx, m.MerchantID, email, role, "correct horse battery"); err != nil {
				t.Fatal(err)
			}
		}
		tab := func(email string) context.Context {
			b := newBrowser(t, alloc)
			signIn(t, b, p, email, "correct horse battery", "")
			return b
		}
		a := tab("a@shop.example")
		open(t, a, p.root+"/portal/policies")
		browse(t, a,
			chromedp.SendKeys(chromedp.CSS(`form[action="/portal/policies"] input[name="name"]`), "big payouts"),
			chromedp.SendKeys(chromedp.CSS(`form[action="/portal/policies"] input[name="min_amount"]`), "100"),
			chromedp.SetValue(chromedp.CSS(`form[action="/portal/policies"] input[name="approvals"]`), "2"),
			chromedp.Submit(chromedp.CSS(`form[action="/portal/policies"] input[name="name"]`)))
		waitTrue(t, a, `document.readyState === "complete" && document.querySelector("tr.policy") !== null`)
		if got := read(t, a, chromedp.Text(chromedp.CSS("tr.policy .status"))); got != "pending" {
			t.Errorf("the proposed policy is %q, want pending", got)
		}
		if n := read(t, a, chromedp.Evaluate[int](`document.querySelectorAll('tr.policy form[action$="/approve"]').length`)); n != 0 {
			t.Error("the proposer is offered the approval of their own policy")
		}

		b := tab("b@shop.example")
		open(t, b, p.root+"/portal/policies")
		browse(t, b, chromedp.Click(chromedp.CSS(`tr.policy form[action$="/approve"] button`)))
		waitTrue(t, b, `document.readyState === "complete" && (document.querySelector("tr.policy .status") || {}).textContent === "active"`)

		payout := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "150", bsbOK)), "uuid")
		f1, f2 := tab("f1@shop.example"), tab("f2@shop.example")
		page := p.root + "/portal/payouts/" + payout
		open(t, f1, page)
		if got := read(t, f1, chromedp.Text(chromedp.CSS("#status"))); got != "held" {
			t.Fatalf("the payout is %q, want held by the policy", got)
		}
		browse(t, f1, chromedp.Click(chromedp.CSS("#approve")))
		waitLocation(t, f1, page+"?done=approved")
		if got := read(t, f1, chromedp.Text(chromedp.CSS("#approval"))); !strings.Contains(got, "1 of 2 approvals") || !strings.Contains(got, "big payouts") {
			t.Errorf("after one approval: %q", got)
		}
		if got := read(t, f1, chromedp.Text(chromedp.CSS("#status"))); got != "held" {
			t.Errorf("after one of two approvals the payout is %q, want held", got)
		}
		open(t, f2, page)
		browse(t, f2, chromedp.Click(chromedp.CSS("#approve")))
		waitLocation(t, f2, page+"?done=approved")
		if got := read(t, f2, chromedp.Text(chromedp.CSS("#status"))); got == "held" {
			t.Errorf("after two approvals the payout is still held")
		}

		tre, err := p.srv.Merchants.OpenTreasury(ctx, m.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		in := p.post("/v2/transfers", m, map[string]any{"amount": "300", "description": "to treasury", "treasury_account_id": tre.PublicID})
		want(t, in, 201)
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in.JSON(t), "uuid"), "status": "completed"}), 200)
		out := p.post("/v2/transfers", m, map[string]any{"amount": "200", "description": "to my bank", "external_bank_account": audBank})
		want(t, out, 201)
		transfer := str(out.JSON(t), "uuid")
		if got := str(out.JSON(t), "status"); got != "held" {
			t.Fatalf("the external transfer is %q, want held", got)
		}
		tpage := p.root + "/portal/transfers/" + transfer
		for i, f := range []context.Context{f1, f2} {
			// The held transfers' list says whose approval each waits for.
			open(t, f, p.root+"/portal/transfers?status=held")
			if got := read(t, f, chromedp.Text(chromedp.CSS("#transfers"))); !strings.Contains(got, "waiting for my approval") || !strings.Contains(got, fmt.Sprintf("(%d of 2)", i)) {
				t.Errorf("the held transfers list shows %q", got)
			}
			browse(t, f, chromedp.Click(chromedp.CSS(`#transfers a[href="/portal/transfers/`+transfer+`"]`)))
			waitTrue(t, f, `location.pathname === "/portal/transfers/`+transfer+`" && document.readyState === "complete" && document.querySelector("#approve") !== null`)
			browse(t, f, chromedp.Click(chromedp.CSS("#approve")))
			waitLocation(t, f, tpage+"?done=approved")
		}
		open(t, a, p.root+"/portal/transfers?status=held")
		if got := read(t, a, chromedp.Text(chromedp.CSS("#transfers"))); !strings.Contains(got, "No transfers") {
			t.Errorf("after its approvals the held list shows %q", got)
		}
		if got := read(t, f2, chromedp.Text(chromedp.CSS("#status"))); got == "held" {
			t.Errorf("after two approvals the transfer is still held")
		}
	})
}
