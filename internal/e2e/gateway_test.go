package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// gatewayCreate sends create_payment with the access-token header.
func (p *payd) gatewayCreate(token string, body any) response {
	p.t.Helper()
	return p.do(req{method: "POST", path: "/v1/payment_gateways/create_payment", body: body, header: map[string]string{"access-token": token}})
}

// gatewayOrder is a create_payment body for order id paying to hooks and returning to success.
func gatewayOrder(id, amount, success, hooks string) map[string]any {
	return map[string]any{
		"order_id": id, "amount": amount, "description": "Order " + id, "order_success_url": success,
		"payment_gateway_notification": map[string]any{"endpoint_url": hooks, "authorization_header": "Basic c2hvcDpzZWNyZXQ="},
		"order_details": map[string]any{
			"billing_details":  map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "country_code": "AU", "city": "Sydney"},
			"shipping_details": map[string]any{"first_name": "Ada", "last_name": "Lovelace", "address": "1 George St", "city": "Sydney"},
			"items":            []any{map[string]any{"id": "sku-1", "name": "Teapot", "quantity": "2", "price": "12.50", "image_url": "https://cdn.example/teapot.png", "enable_cashback": false}},
		},
	}
}

// checkoutClient posts the checkout forms and does not follow redirects.
var checkoutClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postCheckout submits a checkout form (the page's token as its CSRF field).
func postCheckout(t *testing.T, redirect string, form url.Values) (int, string) {
	t.Helper()
	u, err := url.Parse(redirect)
	if err != nil {
		t.Fatal(err)
	}
	form.Set("t", u.Query().Get("t"))
	res, err := checkoutClient.PostForm(redirect, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header.Get("Location")
}

func cardForm(number string) url.Values {
	return url.Values{"cc-name": {"Ada Lovelace"}, "cc-number": {number}, "cc-exp": {"12/39"}, "cc-csc": {"123"}}
}

// TestGatewayCreateRules: create_payment takes the access-token header, checks
// every rule, answers {redirect_url, payment_id, order_id, status, expired_at},
// refuses a repeated order_id with 409 naming the payment, and the payment is
// read back by its owner only.
func TestGatewayCreateRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		token := p.bearerFor(m).Token
		hooks := "http://127.0.0.1:9/hooks"
		r := p.gatewayCreate(token, gatewayOrder("A-1", "49.95", "https://shop.example/thanks", hooks))
		want(t, r, 200)
		created := r.JSON(t)
		if created["status"] != "pending" || created["order_id"] != "A-1" || !strings.HasPrefix(str(created, "redirect_url"), p.root+"/checkout/") || str(created, "expired_at") == "" {
			t.Fatalf("create answered %s", r.Body)
		}
		id := created["payment_id"].(json.Number).String()

		again := p.gatewayCreate(token, gatewayOrder("A-1", "10", "https://shop.example/thanks", hooks))
		wantError(t, again, 409, "ALREADY_EXISTS", "")
		if !strings.Contains(again.JSON(t)["errors"].(map[string]any)["message"].(string), id) {
			t.Errorf("409 does not name payment %s: %s", id, again.Body)
		}
		// Another merchant may use the same order_id.
		want(t, p.gatewayCreate(p.bearerFor(other).Token, gatewayOrder("A-1", "10", "https://shop.example/thanks", hooks)), 200)

		// The token header is required and must be valid.
		want(t, p.do(req{method: "POST", path: "/v1/payment_gateways/create_payment", body: gatewayOrder("A-2", "1", "https://s.example/", hooks)}), 401)
		want(t, p.gatewayCreate("not-a-token", gatewayOrder("A-2", "1", "https://s.example/", hooks)), 401)

		bad := func(mut func(b map[string]any), field string) {
			t.Helper()
			b := gatewayOrder("B-"+field, "10.00", "https://shop.example/thanks", hooks)
			mut(b)
			wantError(t, p.gatewayCreate(token, b), 422, "VALIDATION_FAILED", field)
		}
		bad(func(b map[string]any) { b["amount"] = "1.005" }, "amount")
		bad(func(b map[string]any) { b["amount"] = "-1" }, "amount")
		bad(func(b map[string]any) { b["amount"] = "0" }, "amount")
		bad(func(b map[string]any) { b["order_id"] = "" }, "order_id")
		bad(func(b map[string]any) { b["order_id"] = strings.Repeat("x", 101) }, "order_id")
		bad(func(b map[string]any) { b["order_success_url"] = "/relative" }, "order_success_url")
		bad(func(b map[string]any) { b["order_success_url"] = "ftp://shop.example/" }, "order_success_url")
		bad(func(b map[string]any) { b["payment_gateway_notification"] = map[string]any{} }, "payment_gateway_notification.endpoint_url")
		bad(func(b map[string]any) {
			b["payment_gateway_notification"] = map[string]any{"endpoint_url": "javascript:alert(1)"}
		}, "payment_gateway_notification.endpoint_url")
		bad(func(b map[string]any) {
			b["order_details"].(map[string]any)["items"] = []any{map[string]any{"name": "x", "quantity": "two", "price": "1"}}
		}, "order_details.items[0].quantity")
		bad(func(b map[string]any) {
			b["order_details"].(map[string]any)["items"] = []any{map[string]any{"name": "x", "quantity": "1", "price": "1.001"}}
		}, "order_details.items[0].price")
		bad(func(b map[string]any) {
			items := make([]any, 101)
			for i := range items {
				items[i] = map[string]any{"name": "x", "quantity": "1", "price": "1"}
			}
			b["order_details"].(map[string]any)["items"] = items
		}, "order_details.items")
		big := gatewayOrder("C-1", "100000000", "https://shop.example/thanks", hooks)
		wantError(t, p.gatewayCreate(token, big), 422, "AMOUNT_OUT_OF_RANGE", "")
		// A wrong JSON type is 400.
		wrong := gatewayOrder("C-2", "1", "https://shop.example/thanks", hooks)
		wrong["order_details"].(map[string]any)["items"] = []any{map[string]any{"quantity": 2}}
		want(t, p.gatewayCreate(token, wrong), 400)

		// Read back: the owner sees it; another merchant gets 404.
		got := p.get("/v1/payment_gateways/payment?payment_id="+id, m)
		want(t, got, 200)
		rec := got.JSON(t)
		if rec["amount"] != "49.95" || rec["status"] != "pending" || rec["currency"] != "AUD" {
			t.Errorf("payment record %s", got.Body)
		}
		want(t, p.get("/v1/payment_gateways/payment?payment_id="+id, other), 404)
		wantError(t, p.get("/v1/payment_gateways/payment?payment_id=abc", m), 422, "VALIDATION_FAILED", "payment_id")
	})
}

// TestGatewayCheckoutFlow: declined (failed, webhook), then paid by card
// (303 to order_success_url, balance credited once, webhook with the
// authorization_header verbatim); a second submit credits nothing more.
func TestGatewayCheckoutFlow(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		token := p.bearerFor(m).Token
		hooks := newEventLog(t)
		r := p.gatewayCreate(token, gatewayOrder("F-1", "25.00", "https://shop.example/thanks?o=F-1", hooks.url))
		want(t, r, 200)
		redirect := str(r.JSON(t), "redirect_url")
		id := r.JSON(t)["payment_id"].(json.Number).String()
		// The page shows each line's total: 2 × 12.50.
		page, err := http.Get(redirect)
		if err != nil {
			t.Fatal(err)
		}
		html, _ := io.ReadAll(page.Body)
		page.Body.Close()
		if !strings.Contains(string(html), `<span class="item-total">25.00</span>`) {
			t.Errorf("the checkout page shows no line total:\n%.3000s", html)
		}

		// A form without the page's token is refused.
		res, err := checkoutClient.PostForm(redirect, cardForm("4242424242424242"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 403 {
			t.Fatalf("form without token = %d, want 403", res.StatusCode)
		}
		// An invalid card is refused on the server too (Luhn).
		if status, _ := postCheckout(t, redirect, cardForm("4242424242424241")); status != 422 {
			t.Fatalf("bad card number = %d, want 422", status)
		}
		if status, _ := postCheckout(t, redirect, cardForm("4000000000000002")); status != 200 {
			t.Fatalf("declined card = %d, want 200", status)
		}
		rec := p.get("/v1/payment_gateways/payment?payment_id="+id, m).JSON(t)
		if rec["status"] != "failed" || rec["card"].(map[string]any)["last4"] != "0002" {
			t.Fatalf("after decline: %v", rec)
		}
		status, loc := postCheckout(t, redirect, cardForm("4242 4242 4242 4242"))
		if status != 303 || loc != "https://shop.example/thanks?o=F-1" {
			t.Fatalf("paid = %d %q, want 303 to order_success_url", status, loc)
		}
		// A second submit (another tab) ends as the first did and credits nothing.
		if status, loc := postCheckout(t, redirect, url.Values{"outcome": {"pay"}}); status != 303 || loc != "https://shop.example/thanks?o=F-1" {
			t.Fatalf("second pay = %d %q", status, loc)
		}
		// A decline pressed in a stale tab changes nothing: the customer goes to the shop.
		if status, _ := postCheckout(t, redirect, url.Values{"outcome": {"decline"}}); status != 303 {
			t.Fatalf("decline after paid = %d, want 303", status)
		}
		if got := balance(t, p, m, "available_balance"); got != "25.00" {
			t.Errorf("available = %s, want 25.00", got)
		}
		hooks.waitTypes(t, "gateway_payment.failed", "gateway_payment.paid")
		hooks.mu.Lock()
		last := hooks.events[1]
		hooks.mu.Unlock()
		if last.Auth != "Basic c2hvcDpzZWNyZXQ=" || last.Record["order_id"] != "F-1" || last.Record["status"] != "paid" || last.Record["amount"] != "25.00" ||
			last.Record["payment_id"].(json.Number).String() != id {
			t.Errorf("paid notification: auth %q record %v", last.Auth, last.Record)
		}
		h := p.history(m, "currency=AUD")
		if len(h.Records) != 1 || h.Records[0].TransactionType != "payment" || h.Records[0].ReferenceID != id {
			t.Errorf("history %+v", h.Records)
		}
	})
}

// TestGatewayExpiry: at expired_at on the merchant's clock an unpaid payment
// expires, its page takes no payment, and the merchant hears so.
func TestGatewayExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		r := p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder("E-1", "5", "https://shop.example/thanks", hooks.url))
		want(t, r, 200)
		redirect := str(r.JSON(t), "redirect_url")
		p.advance(m, 24*3600)
		hooks.waitTypes(t, "gateway_payment.expired")
		if status, _ := postCheckout(t, redirect, url.Values{"outcome": {"pay"}}); status != 409 {
			t.Fatalf("pay after expiry = %d, want 409", status)
		}
		if got := balance(t, p, m, "available_balance"); got != "0.00" {
			t.Errorf("available = %s", got)
		}
	})
}

// TestGatewayRacePaysOnce: many concurrent pay submits of one checkout
// credit the balance once and send one paid notification.
func TestGatewayRacePaysOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		r := p.gatewayCreate(p.bearerFor(m).Token, gatewayOrder("R-1", "10.00", "https://shop.example/thanks", hooks.url))
		want(t, r, 200)
		redirect := str(r.JSON(t), "redirect_url")
		u, _ := url.Parse(redirect)
		var wg sync.WaitGroup
		statuses := make([]int, 12)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				form := url.Values{"t": {u.Query().Get("t")}, "outcome": {"pay"}}
				if i%2 == 0 {
					form = cardForm("4242424242424242")
					form.Set("t", u.Query().Get("t"))
				}
				res, err := checkoutClient.PostForm(redirect, form)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				statuses[i] = res.StatusCode
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			if s != 303 {
				t.Errorf("submit %d = %d, want 303", i, s)
			}
		}
		if got := balance(t, p, m, "available_balance"); got != "10.00" {
			t.Errorf("available = %s, want 10.00 (credited once)", got)
		}
		hooks.waitTypes(t, "gateway_payment.paid")
		if h := p.history(m, "currency=AUD"); len(h.Records) != 1 {
			t.Errorf("%d balance records, want 1", len(h.Records))
		}
	})
}

// TestGatewayCheckoutBrowser: in Chromium, the checkout page shows the order
// (merchant, items, totals, addresses) at 375 px without script; declined by
// the sandbox button, retried with the test card, the customer lands on
// order_success_url; another checkout's sandbox pay button pays too.
func TestGatewayCheckoutBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	site := newMerchantSite(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		m := p.merchant("AUD")["AUD"]
		token := p.bearerFor(m).Token
		hooks := newEventLog(t)
		r := p.gatewayCreate(token, gatewayOrder("W-1", "25.00", site.URL+"/thanks?o=W-1", hooks.url))
		want(t, r, 200)
		redirect := str(r.JSON(t), "redirect_url")
		browse(t, tab, chromedp.EmulateViewport(375, 800))
		if status := open(t, tab, redirect); status != 200 {
			t.Fatalf("GET checkout = %d", status)
		}
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#decline")))
		for sel, want := range map[string]string{"#order-id": "W-1", "#amount": "25.00", "#currency": "AUD", "#status": "Waiting for your payment"} {
			if got := read(t, tab, chromedp.TextContent(chromedp.CSS(sel))); got != want {
				t.Errorf("%s shows %q, want %q", sel, got, want)
			}
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); got > 375 {
			t.Errorf("page is %d px wide at 375 px", got)
		}
		for _, tok := range []string{"cc-name", "cc-number", "cc-exp", "cc-csc"} {
			if got := read(t, tab, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('input[autocomplete=%q]').length`, tok))); got != 1 {
				t.Errorf("%d inputs with autocomplete %s", got, tok)
			}
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form input[name=t]').length`)); got != 2 {
			t.Errorf("%d forms carry the CSRF token, want 2", got)
		}

		browse(t, tab, chromedp.Click(chromedp.CSS("#decline")))
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#retry")))
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#status"))); got != "Payment declined" {
			t.Errorf("after decline status shows %q", got)
		}
		browse(t, tab, chromedp.Click(chromedp.CSS("#retry")), chromedp.WaitVisible(chromedp.CSS("#card-form")),
			chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-number]`), "4242 4242 4242 4242"),
			chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-exp]`), "12/39"),
			chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-csc]`), "123"),
			chromedp.Click(chromedp.CSS(`#card-form button[type=submit]`)))
		waitLocation(t, tab, site.URL+"/thanks?o=W-1")
		hooks.waitTypes(t, "gateway_payment.failed", "gateway_payment.paid")
		if got := balance(t, p, m, "available_balance"); got != "25.00" {
			t.Errorf("available = %s", got)
		}
		// The paid link shows the outcome and takes no more payments.
		open(t, tab, redirect)
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form').length`)); got != 0 {
			t.Errorf("paid page has %d forms", got)
		}

		// Sandbox pay button.
		r = p.gatewayCreate(token, gatewayOrder("W-2", "1.00", site.URL+"/thanks?o=W-2", hooks.url))
		want(t, r, 200)
		open(t, tab, str(r.JSON(t), "redirect_url"))
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#pay")), chromedp.Click(chromedp.CSS("#pay")))
		waitLocation(t, tab, site.URL+"/thanks?o=W-2")

		// Expired: the page says so and shows no form.
		r = p.gatewayCreate(token, gatewayOrder("W-3", "1.00", site.URL+"/thanks?o=W-3", hooks.url))
		want(t, r, 200)
		p.advance(m, 24*3600)
		open(t, tab, str(r.JSON(t), "redirect_url"))
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#status"))); got != "This checkout link has expired" {
			t.Errorf("expired page status %q", got)
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form').length`)); got != 0 {
			t.Errorf("expired page has %d forms", got)
		}
	})
}
