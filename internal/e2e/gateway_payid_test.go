package e2e

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// PayID on the v1 checkout page (issue 14 item 2): a one-time PayID of the
// PayID service, shown with its QR code; paying it over the (sandbox) NPP
// marks the gateway payment paid once.

var payidOnPage = regexp.MustCompile(`id="payid">([^<]+)<`)

// checkoutPayID opens the checkout page and returns the PayID it offers.
func checkoutPayID(t *testing.T, redirect string) string {
	t.Helper()
	res, err := http.Get(redirect)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	m := payidOnPage.FindStringSubmatch(string(body))
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("checkout page %d offers no PayID", res.StatusCode)
	}
	return m[1]
}

// TestGatewayCheckoutPayIDPaid: in Chromium the checkout page offers a
// one-time PayID with a QR code that reads as that PayID; the same PayID on
// every view; paid over the sandbox NPP, the order is paid (PayID's rules:
// incoming, then available less the fee), the page says so, the shop hears
// gateway_payment.paid with paid_with payid once, and the PayID and the card
// form take nothing more.
func TestGatewayCheckoutPayIDPaid(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	site := newMerchantSite(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		r := p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder("P-1", "100.00", site.URL+"/thanks?o=P-1", hooks.url))
		want(t, r, 200)
		redirect, id := str(r.JSON(t), "redirect_url"), num(r.JSON(t), "payment_id")

		open(t, tab, redirect)
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#payid")),
			chromedp.Poll[chromedp.Void](`document.getElementById('payid-qr').complete && document.getElementById('payid-qr').naturalWidth > 0`))
		payid := read(t, tab, chromedp.TextContent(chromedp.CSS("#payid")))
		src := read(t, tab, chromedp.Evaluate[string](`document.getElementById('payid-qr').src`))
		res, err := http.Get(src)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := decodeQRImage(t, raw); got != payid {
			t.Errorf("the QR code reads %q, the page shows the PayID %q", got, payid)
		}
		if again := checkoutPayID(t, redirect); again != payid {
			t.Errorf("a second view offers %s, the first %s", again, payid)
		}
		if got := str(p.get("/v1/payment_requests/status?payid="+url.QueryEscape(payid), m).JSON(t), "status"); got != "pending" {
			t.Errorf("the PayID's request is %q", got)
		}

		want(t, p.payInto(m, payid, "100.00", "JANE PAYER"), 200)
		hooks.waitTypes(t, "gateway_payment.paid")
		rec := p.get("/v1/payment_gateways/payment?payment_id="+id, m).JSON(t)
		if str(rec, "status") != "paid" || str(rec, "paid_with") != "payid" || str(rec, "balance_id") == "" {
			t.Errorf("payment after the PayID was paid: %v", rec)
		}
		p.runDue(m)
		waitUntil(t, "the PayID payment cleared", browserStepTimeout, func() bool { return balance(t, p, m, "available_balance") == "99.50" })
		if h := p.history(m, "currency=AUD"); len(h.Records) != 1 || h.Records[0].ID != str(rec, "balance_id") {
			t.Errorf("history %+v, want the one PayID payment", h.Records)
		}
		open(t, tab, redirect)
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#status"))); got != "Paid. Thank you." {
			t.Errorf("the page says %q", got)
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form').length + document.querySelectorAll('#payid').length`)); got != 0 {
			t.Errorf("the paid page still offers %d ways to pay", got)
		}
		// Neither a second PayID payment nor a card takes more money.
		wantError(t, p.payInto(m, payid, "100.00", "JANE PAYER"), 422, "PAYID_DEREGISTERED", "")
		if status, loc := postCheckout(t, redirect, cardForm("4242424242424242")); status != 303 || loc != site.URL+"/thanks?o=P-1" {
			t.Errorf("card after PayID = %d %q", status, loc)
		}
		if got := balance(t, p, m, "available_balance"); got != "99.50" {
			t.Errorf("available = %s, want 99.50", got)
		}
		hooks.waitTypes(t, "gateway_payment.paid")
	})
}

// TestGatewayCheckoutPayIDWithdrawn: an order paid by card withdraws its
// PayID (the NPP can no longer pay it) and one that expires does too; an
// order outside PayID's limits is offered cards only.
func TestGatewayCheckoutPayIDWithdrawn(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		token := p.bearerFor(m).Token
		hooks := newEventLog(t)
		r := p.gatewayCreate(token, gatewayOrder("W-1", "30.00", "https://shop.example/thanks", hooks.url))
		want(t, r, 200)
		redirect := str(r.JSON(t), "redirect_url")
		payid := checkoutPayID(t, redirect)
		if status, _ := postCheckout(t, redirect, cardForm("4242424242424242")); status != 303 {
			t.Fatalf("card = %d", status)
		}
		wantError(t, p.payInto(m, payid, "30.00", "LATE PAYER"), 422, "PAYID_DEREGISTERED", "")
		if got := balance(t, p, m, "available_balance"); got != "30.00" {
			t.Errorf("available = %s, want 30.00", got)
		}

		r = p.gatewayCreate(token, gatewayOrder("W-2", "30.00", "https://shop.example/thanks", hooks.url))
		want(t, r, 200)
		late := checkoutPayID(t, str(r.JSON(t), "redirect_url"))
		p.advance(m, 24*3600)
		hooks.waitTypes(t, "gateway_payment.paid", "gateway_payment.expired")
		wantError(t, p.payInto(m, late, "30.00", "LATE PAYER"), 422, "PAYID_DEREGISTERED", "")

		r = p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder("W-3", "10.00", "https://shop.example/thanks", hooks.url))
		want(t, r, 200)
		res, err := http.Get(str(r.JSON(t), "redirect_url"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(body), `id="payid"`) || !strings.Contains(string(body), `id="card-form"`) {
			t.Errorf("an order below PayID's 20.00 minimum: %d, PayID offered %v", res.StatusCode, strings.Contains(string(body), `id="payid"`))
		}
	})
}
