package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"payd/internal/merchant"
)

// signIn fills the portal's sign-in form in a browser.
func signIn(t *testing.T, tab context.Context, p *payd, email, password, code string) {
	t.Helper()
	if status := open(t, tab, p.root+"/portal/login"); status != 200 {
		t.Fatalf("GET /portal/login = %d", status)
	}
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
	}
	if code != "" {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS(`input[name="totp_code"]`), code))
	}
	browse(t, tab, append(steps, chromedp.Submit(chromedp.CSS(`input[name="email"]`)))...)
	waitLocation(t, tab, p.root+"/portal/")
}

// TestPortalInBrowser drives the portal in Chromium: finance user A signs in,
// sees the balances and creates a payout in the two steps of the new-payout
// form (the method, then its fields), finds it with the payouts list's
// filters (a status chosen, a search; an unknown status is a 422 saying
// so); the payout waits for approval and
// offers A no decision; finance user B approves it and sees it processing;
// the pages fit a 375-pixel phone without sideways scrolling; a user turns
// on TOTP and signs in with a code; signing out ends the session.
func TestPortalInBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.requireApprovals(m)
		p.fund(m, "300")
		ctx := context.Background()
		for _, email := range []string{"maker@shop.example", "checker@shop.example"} {
			if _, err := p.srv.Merchants.CreateUser(ctx, m.MerchantID, email, merchant.Finance, "correct horse battery"); err != nil {
				t.Fatal(err)
			}
		}

		maker := newBrowser(t, alloc)
		browse(t, maker, chromedp.EmulateViewport(375, 800))
		signIn(t, maker, p, "maker@shop.example", "correct horse battery", "")
		if got := read(t, maker, chromedp.Text(chromedp.CSS("main"))); !strings.Contains(got, "300.00") {
			t.Errorf("balances page shows %q, want 300.00", got)
		}
		if w := read(t, maker, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the balances page is %d px wide on a 375 px phone", w)
		}
		// The new-payout form's two steps: the method, then its fields.
		open(t, maker, p.root+"/portal/payouts/new")
		if n := read(t, maker, chromedp.Evaluate[int](`document.querySelectorAll('#payout-form').length`)); n != 0 {
			t.Error("the form's first step shows a method's fields before a method is chosen")
		}
		browse(t, maker, chromedp.SetValue(chromedp.CSS(`select[name="payout_method_name"]`), "au_bank_aud"), chromedp.Click(chromedp.CSS("#choose-method")))
		waitLocation(t, maker, p.root+"/portal/payouts/new?payout_method_name=au_bank_aud")
		browse(t, maker,
			chromedp.SendKeys(chromedp.CSS(`input[name="description"]`), "supplier run"),
			chromedp.SendKeys(chromedp.CSS(`input[name="first_name"]`), "Jane"),
			chromedp.SendKeys(chromedp.CSS(`input[name="amount"]`), "120"),
			chromedp.SendKeys(chromedp.CSS(`input[name="external_id"]`), "invoice-120"),
			chromedp.SendKeys(chromedp.CSS(`input[name="param.bsb"]`), "062000"),
			chromedp.SendKeys(chromedp.CSS(`input[name="param.account_number"]`), "12345678"),
			chromedp.SendKeys(chromedp.CSS(`input[name="param.account_name"]`), "Jane Doe"),
			chromedp.Click(chromedp.CSS("#create-payout")),
			chromedp.WaitVisible(chromedp.CSS("#status")))
		payoutURL := read(t, maker, chromedp.Location())
		if got := read(t, maker, chromedp.Text(chromedp.CSS("#recipients"))); !strings.Contains(got, "062000") || !strings.Contains(got, "invoice-120") {
			t.Errorf("the payout made by the form pays %q, want the BSB and external id entered", got)
		}

		// The payouts list's filters: a status chosen, a search, an unknown status.
		payoutUUID := payoutURL[strings.LastIndex(payoutURL, "/")+1:]
		open(t, maker, p.root+"/portal/payouts")
		browse(t, maker, chromedp.SetValue(chromedp.CSS(`#filters select[name="status"]`), "completed"), chromedp.Click(chromedp.CSS(`#filters button`)))
		waitLocation(t, maker, p.root+"/portal/payouts?status=completed&currency=&from_date=&to_date=&search=")
		// The address changes when the answer starts; its table is read once the page has loaded.
		waitTrue(t, maker, `document.readyState === "complete" && document.querySelector("#payouts tbody") !== null`)
		if got := read(t, maker, chromedp.Text(chromedp.CSS("#payouts tbody"))); !strings.Contains(got, "No payouts match these filters.") {
			t.Errorf("the completed payouts list shows %q, want none", got)
		}
		browse(t, maker, chromedp.SetValue(chromedp.CSS(`#filters select[name="status"]`), "held"),
			chromedp.SendKeys(chromedp.CSS(`#filters input[name="search"]`), "invoice-120"), chromedp.Click(chromedp.CSS(`#filters button`)))
		waitLocation(t, maker, p.root+"/portal/payouts?status=held&currency=&from_date=&to_date=&search=invoice-120")
		// The address changes when the answer starts; its table is read once the page has loaded.
		waitTrue(t, maker, `document.readyState === "complete" && document.querySelector("#payouts tbody") !== null`)
		if n := read(t, maker, chromedp.Evaluate[int](`document.querySelectorAll('#payouts tbody a[href="/portal/payouts/`+payoutUUID+`"]').length`)); n != 1 {
			t.Errorf("the held payouts searched by the transaction's external id list the new payout %d times, want once", n)
		}
		if status := open(t, maker, p.root+"/portal/payouts?status=hold"); status != 422 {
			t.Errorf("an unknown status: %d, want 422", status)
		}
		if got := read(t, maker, chromedp.Text(chromedp.CSS(".error"))); !strings.Contains(got, `there is no status "hold"`) {
			t.Errorf("an unknown status says %q", got)
		}
		open(t, maker, payoutURL)
		if got := read(t, maker, chromedp.Text(chromedp.CSS("#status"))); got != "held" {
			t.Errorf("the new payout is %q, want held", got)
		}
		if n := read(t, maker, chromedp.Evaluate[int](`document.querySelectorAll('#approve, #reject').length`)); n != 0 {
			t.Error("the payout's maker is offered a decision")
		}
		if w := read(t, maker, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the payout page is %d px wide on a 375 px phone", w)
		}
		for _, page := range []string{"/portal/payins", "/portal/payouts", "/portal/payouts/new", "/portal/settlements", "/portal/reports",
			"/portal/developers", "/portal/users", "/portal/audit", "/portal/account/totp"} {
			open(t, maker, p.root+page)
			if w := read(t, maker, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
				t.Errorf("%s is %d px wide on a 375 px phone", page, w)
			}
		}

		checker := newBrowser(t, alloc)
		signIn(t, checker, p, "checker@shop.example", "correct horse battery", "")
		open(t, checker, payoutURL)
		browse(t, checker, chromedp.Click(chromedp.CSS("#approve")))
		waitLocation(t, checker, payoutURL+"?done=approved")
		if got := read(t, checker, chromedp.Text(chromedp.CSS("#status"))); got != "processing" {
			t.Errorf("after approval the payout is %q, want processing", got)
		}

		// The checker rejects another payout with a reason: its funds are back.
		before := p.balanceOf(m, "AUD").Available
		second := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "40", bsbOK)), "uuid")
		open(t, checker, p.root+"/portal/payouts/"+second)
		browse(t, checker, chromedp.SendKeys(chromedp.CSS(`textarea[name="reason"]`), "wrong supplier account"), chromedp.Click(chromedp.CSS("#reject")))
		waitLocation(t, checker, p.root+"/portal/payouts/"+second+"?done=rejected")
		browse(t, checker, chromedp.WaitVisible(chromedp.CSS(".notice")))
		if got := read(t, checker, chromedp.Text(chromedp.CSS("#status"))); got != "rejected" {
			t.Errorf("after rejection the payout is %q, want rejected", got)
		}
		if got := read(t, checker, chromedp.Text(chromedp.CSS("#approval"))); !strings.Contains(got, "wrong supplier account") {
			t.Errorf("the approval record shows %q, want the reason", got)
		}
		open(t, checker, p.root+"/portal/")
		if got := read(t, checker, chromedp.Text(chromedp.CSS("main"))); !strings.Contains(got, before.String()) {
			t.Errorf("after the rejection the balances show %q, want %s available again", got, before)
		}

		// A viewer is offered no decision, and a forged approval is refused.
		if _, err := p.srv.Merchants.CreateUser(ctx, m.MerchantID, "viewer@shop.example", merchant.Viewer, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		third := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), "uuid")
		viewer := newBrowser(t, alloc)
		signIn(t, viewer, p, "viewer@shop.example", "correct horse battery", "")
		open(t, viewer, p.root+"/portal/payouts/"+third)
		if n := read(t, viewer, chromedp.Evaluate[int](`document.querySelectorAll('#approve, #reject').length`)); n != 0 {
			t.Error("a viewer is offered a decision")
		}
		read(t, viewer, chromedp.Evaluate[bool](`(() => {
			const f = document.createElement('form');
			f.method = 'post';
			f.action = '/portal/payouts/`+third+`/approve';
			const i = document.createElement('input');
			i.type = 'hidden'; i.name = 'csrf_token'; i.value = document.querySelector('input[name="csrf_token"]').value;
			f.appendChild(i);
			document.body.appendChild(f);
			f.submit();
			return true;
		})()`))
		waitLocation(t, viewer, p.root+"/portal/payouts/"+third+"/approve")
		browse(t, viewer, chromedp.WaitVisible(chromedp.CSS("h1")))
		if got := read(t, viewer, chromedp.Text(chromedp.CSS("h1"))); got != "Forbidden" {
			t.Errorf("a viewer's forged approval shows %q, want Forbidden", got)
		}
		if got := str(p.get("/v2/payouts/detail?uuid="+third, m).JSON(t), "status"); got != "held" {
			t.Errorf("after the viewer's forged approval the payout is %s, want held", got)
		}

		// The checker turns on a second factor and signs in with it.
		open(t, checker, p.root+"/portal/account/totp")
		secret := read(t, checker, chromedp.Text(chromedp.CSS("#totp-secret")))
		code, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		browse(t, checker, chromedp.SendKeys(chromedp.CSS(`input[name="code"]`), code), chromedp.Submit(chromedp.CSS(`input[name="code"]`)),
			chromedp.WaitVisible(chromedp.CSS("#totp-on")))
		browse(t, checker, chromedp.Click(chromedp.CSS(`header button`)))
		waitLocation(t, checker, p.root+"/portal/login")
		if status := open(t, checker, p.root+"/portal/payouts"); status != 200 || read(t, checker, chromedp.Location()) != p.root+"/portal/login" {
			t.Errorf("after signing out, /portal/payouts shows %s", read(t, checker, chromedp.Location()))
		}
		// The enrolment code is used up (RFC 6238 §5.2): sign in with the next
		// step's code, which the one step of allowed skew accepts.
		code, _ = totp.GenerateCode(secret, time.Now().Add(30*time.Second))
		signIn(t, checker, p, "checker@shop.example", "correct horse battery", code)
	})
}
