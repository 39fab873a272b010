package gateway_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/qr"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/webhook"
)

// linkCurrencies are the payments accounts a Payment Gateway 3 merchant of
// these tests holds: one per method's currency.
var linkCurrencies = []string{"NZD", "HKD", "MWK", "TZS", "USD", "UGX"}

func linkRequest(method, currency, amount string) gateway.LinkRequest {
	return gateway.LinkRequest{Amount: toInput(amount), Currency: currency, PayinMethodCode: method, Description: "Order 7",
		RedirectURL:         gateway.RedirectURL{Success: "https://shop.example/paid", Failure: "https://shop.example/failed"},
		WebhookNotification: webhookTarget(), MetaData: map[string]any{"order": "7", "tags": []any{"a"}}}
}

func createLink(t *testing.T, e *servertest.Env, p merchant.Principal, req gateway.LinkRequest) (gateway.LinkCreated, error) {
	t.Helper()
	return store.Do(context.Background(), e.DB, func(tx *store.Tx) (gateway.LinkCreated, error) {
		return e.Gateway.CreateLink(context.Background(), tx, p, req)
	})
}

func mustLink(t *testing.T, e *servertest.Env, p merchant.Principal, req gateway.LinkRequest) (uuid, token string) {
	t.Helper()
	c, err := createLink(t, e, p, req)
	if err != nil {
		t.Fatalf("create link: %v", err)
	}
	u, err := url.Parse(c.PaymentLinkURL)
	if err != nil {
		t.Fatal(err)
	}
	return c.UUID, u.Query().Get("t")
}

// TestCreateLinkRules: each refusal of POST /v3/payin_links is its named
// 422, and nothing is written.
func TestCreateLinkRules(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, linkCurrencies...)["NZD"]
		onlyNZD := e.Merchant(t, "NZD")["NZD"]
		with := func(mut func(r *gateway.LinkRequest)) gateway.LinkRequest {
			r := linkRequest("nz_card_nzd", "NZD", "25.00")
			mut(&r)
			return r
		}
		tests := []struct {
			name      string
			as        merchant.Principal
			req       gateway.LinkRequest
			wantCode  string
			wantField string
		}{
			{"unknown method", p, with(func(r *gateway.LinkRequest) { r.PayinMethodCode = "nz_bank_nzd" }), fault.CodeValidation, "payin_method_code"},
			{"no method", p, with(func(r *gateway.LinkRequest) { r.PayinMethodCode = "" }), fault.CodeValidation, "payin_method_code"},
			{"no currency", p, with(func(r *gateway.LinkRequest) { r.Currency = "" }), fault.CodeValidation, "currency"},
			{"too many decimals", p, with(func(r *gateway.LinkRequest) { r.Amount = "1.001" }), fault.CodeValidation, "amount"},
			{"no success URL", p, with(func(r *gateway.LinkRequest) { r.RedirectURL.Success = "" }), fault.CodeValidation, "redirect_url.success"},
			{"relative failure URL", p, with(func(r *gateway.LinkRequest) { r.RedirectURL.Failure = "/failed" }), fault.CodeValidation, "redirect_url.failure"},
			{"bad webhook", p, with(func(r *gateway.LinkRequest) { r.WebhookNotification.EndpointURL = "ftp://x" }), fault.CodeValidation, "webhook_notification.endpoint_url"},
			{"deep meta_data", p, with(func(r *gateway.LinkRequest) {
				r.MetaData = map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": map[string]any{"f": 1}}}}}}
			}), fault.CodeValidation, "meta_data"},
			{"long description", p, with(func(r *gateway.LinkRequest) { r.Description = strings.Repeat("x", 256) }), fault.CodeValidation, "description"},
			{"method of another currency", p, linkRequest("nz_card_nzd", "HKD", "25.00"), fault.CodeMethodNotEnabled, ""},
			{"MWK below 2,000", p, linkRequest("mw_bank_mwk", "MWK", "1999.99"), fault.CodeAmountOutOfRange, ""},
			{"UGX below 15,000", p, linkRequest("ug_bank_ugx", "UGX", "14999"), fault.CodeAmountOutOfRange, ""},
			{"UGX above 36,000,000", p, linkRequest("ug_bank_ugx", "UGX", "36000001"), fault.CodeAmountOutOfRange, ""},
			{"UGX not enabled", p, linkRequest("ug_bank_ugx", "UGX", "15000"), fault.CodeMethodNotEnabled, ""},
			{"card below its minimum", p, linkRequest("nz_card_nzd", "NZD", "0.99"), fault.CodeAmountOutOfRange, ""},
			{"no account in the currency", onlyNZD, linkRequest("hk_card_hkd", "HKD", "25.00"), fault.CodeCurrency, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := createLink(t, e, tt.as, tt.req)
				got, _ := fault.As(err)
				if got == nil || got.Code != tt.wantCode || (tt.wantField != "" && got.Fields[tt.wantField] == "") {
					t.Fatalf("err = %v, want %s naming %q", err, tt.wantCode, tt.wantField)
				}
			})
		}
		var n int
		if err := e.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM payin_links`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d links written (%v), want none", n, err)
		}
	})
}

// TestCreateLinkEveryMethod: each method makes a pending link, readable by
// its merchant only; ug_bank_ugx once the UGX account enables it, and MWK
// from exactly 2,000.
func TestCreateLinkEveryMethod(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ps := e.Merchant(t, linkCurrencies...)
		other := e.Merchant(t, "NZD")["NZD"]
		methods := []string{"ug_bank_ugx"}
		if _, err := e.Merchants.UpdateAccount(context.Background(), ps["UGX"].MerchantID, "UGX", merchant.AccountUpdate{Methods: &methods}); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ method, currency, amount, want string }{
			{"nz_card_nzd", "NZD", "25", "25.00"},
			{"hk_card_hkd", "HKD", "99.90", "99.90"},
			{"mw_bank_mwk", "MWK", "2000", "2000.00"},
			{"tz_bank_tzs", "TZS", "15000", "15000.00"},
			{"kh_khqr_usd", "USD", "12.5", "12.50"},
			{"ug_bank_ugx", "UGX", "15000", "15000"},
		} {
			t.Run(tt.method, func(t *testing.T) {
				uuid, _ := mustLink(t, e, ps["NZD"], linkRequest(tt.method, tt.currency, tt.amount))
				l, err := e.Gateway.GetLink(context.Background(), ps["NZD"], uuid)
				if err != nil {
					t.Fatal(err)
				}
				if l.Status != gateway.LinkPending || l.Amount.String() != tt.want || l.Currency != tt.currency || l.PayinMethodCode != tt.method ||
					l.MetaData["order"] != "7" || !strings.Contains(l.PaymentLinkURL, "/links/"+uuid+"?t=") {
					t.Errorf("link %+v", l)
				}
				if _, err := e.Gateway.GetLink(context.Background(), other, uuid); !fault.Is(err, fault.CodeNotFound) {
					t.Errorf("another merchant reads it: %v", err)
				}
			})
		}
	})
}

// TestLinkCardDeclinedThenPaid: a declined card fails the link (a webhook,
// nothing credited, only brand and last four kept), a good card pays it and
// credits the NZD balance once, in the transaction of the change and its
// webhook; the paid link takes no more attempts.
func TestLinkCardDeclinedThenPaid(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "NZD")["NZD"]
		uuid, token := mustLink(t, e, p, linkRequest("nz_card_nzd", "NZD", "40.00"))
		ctx := context.Background()
		card := func(number string) gateway.Attempt {
			return gateway.Attempt{Card: &gateway.Card{Name: "Ada", Number: number, Expiry: "12/39", CVC: "123"}}
		}
		if _, err := e.Gateway.PayLink(ctx, uuid, token, card("4242424242424241")); !fault.Is(err, fault.CodeValidation) {
			t.Fatalf("bad Luhn: %v", err)
		}
		l, err := e.Gateway.PayLink(ctx, uuid, token, card("4000 0000 0000 0002"))
		if err != nil || l.Status != gateway.LinkFailed || l.Card == nil || l.Card.Last4 != "0002" || l.FailureReason == "" {
			t.Fatalf("declined: %+v %v", l, err)
		}
		if got := e.Balance(t, p).Available; got != 0 {
			t.Errorf("available after decline = %d", got)
		}
		l, err = e.Gateway.PayLink(ctx, uuid, token, card("4242 4242 4242 4242"))
		if err != nil || l.Status != gateway.LinkPaid || l.BalanceID == nil || l.PaidAt == nil || l.Attempts != 2 {
			t.Fatalf("paid: %+v %v", l, err)
		}
		if _, err := e.Gateway.PayLink(ctx, uuid, token, gateway.Attempt{Sandbox: "pay"}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("pay of a paid link: %v", err)
		}
		if got := e.Balance(t, p).Available; got != 4000 {
			t.Errorf("available = %d, want 4000", got)
		}
		rec, err := ledger.GetRecord(ctx, e.DB.Read(), p.MerchantID, *l.BalanceID)
		if err != nil || rec.ReferenceID != uuid || rec.Status != ledger.Done {
			t.Errorf("balance record %+v %v", rec, err)
		}
		if got := eventTypes(t, e, uuid); !slices.Equal(got, []string{"payin_link.failed", "payin_link.paid"}) {
			t.Errorf("events %v", got)
		}
		if _, err := e.Gateway.PayLink(ctx, uuid, "wrong", gateway.Attempt{Sandbox: "pay"}); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("wrong token: %v", err)
		}
	})
}

// TestLinkRacePaysOnce: many concurrent attempts (cards and the sandbox
// button) on one link credit the balance once and send one paid event.
func TestLinkRacePaysOnce(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "HKD")["HKD"]
		uuid, token := mustLink(t, e, p, linkRequest("hk_card_hkd", "HKD", "88.00"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		paid, conflicts := 0, 0
		for i := range 16 {
			wg.Go(func() {
				a := gateway.Attempt{Sandbox: "pay"}
				if i%2 == 0 {
					a = gateway.Attempt{Card: &gateway.Card{Number: "4242424242424242", Expiry: "01/40", CVC: "999"}}
				}
				l, err := e.Gateway.PayLink(context.Background(), uuid, token, a)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && l.Status == gateway.LinkPaid:
					paid++
				case fault.Is(err, fault.CodeInvalidState):
					conflicts++
				default:
					t.Errorf("attempt %d: %+v %v", i, l, err)
				}
			})
		}
		wg.Wait()
		if paid != 1 || conflicts != 15 {
			t.Errorf("%d paid, %d conflicts; want 1 and 15", paid, conflicts)
		}
		if got := e.Balance(t, p).Available; got != 8800 {
			t.Errorf("available = %d, want 8800 (credited once)", got)
		}
		if got := eventTypes(t, e, uuid); !slices.Equal(got, []string{"payin_link.paid"}) {
			t.Errorf("events %v", got)
		}
	})
}

// TestLinkExpiry: at expires_at on the merchant's clock a pending or failed
// link expires (a webhook) and takes no more attempts; a paid one stays paid.
func TestLinkExpiry(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "TZS")["TZS"]
		ctx := context.Background()
		pending, pendingToken := mustLink(t, e, p, linkRequest("tz_bank_tzs", "TZS", "5000"))
		failed, failedToken := mustLink(t, e, p, linkRequest("tz_bank_tzs", "TZS", "5000"))
		paid, paidToken := mustLink(t, e, p, linkRequest("tz_bank_tzs", "TZS", "5000"))
		if _, err := e.Gateway.PayLink(ctx, failed, failedToken, gateway.Attempt{Sandbox: "decline"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Gateway.PayLink(ctx, paid, paidToken, gateway.Attempt{Sandbox: "pay"}); err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, gateway.PayinLinkLifetime-time.Second)
		if l, _ := e.Gateway.GetLink(ctx, p, pending); l.Status != gateway.LinkPending {
			t.Fatalf("a second early: %s", l.Status)
		}
		e.Advance(t, p.MerchantID, time.Second)
		for uuid, want := range map[string]gateway.LinkStatus{pending: gateway.LinkExpired, failed: gateway.LinkExpired, paid: gateway.LinkPaid} {
			if l, err := e.Gateway.GetLink(ctx, p, uuid); err != nil || l.Status != want {
				t.Errorf("link %s is %s (%v), want %s", uuid, l.Status, err, want)
			}
		}
		if _, err := e.Gateway.PayLink(ctx, pending, pendingToken, gateway.Attempt{Sandbox: "pay"}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("pay after expiry: %v", err)
		}
		if got := eventTypes(t, e, pending); !slices.Equal(got, []string{"payin_link.expired"}) {
			t.Errorf("events %v", got)
		}
		if got := e.Balance(t, p).Available; got != 500000 {
			t.Errorf("available = %d, want 500000", got)
		}
	})
}

// TestLinkPage: the page of a KHQR link carries a KHQR payload that
// decodes to the link's amount in USD with its uuid as bill number; frame
// ancestors are the success origin and the merchant's listed origins; a
// card cannot pay a bank-transfer link.
func TestLinkPage(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ps := e.Merchant(t, "USD", "MWK")
		ctx := context.Background()
		if _, err := e.Merchants.SetEmbedOrigins(ctx, ps["USD"].MerchantID, []string{"https://B.example:8443/", "https://shop.example"}); err != nil {
			t.Fatal(err)
		}
		uuid, token := mustLink(t, e, ps["USD"], linkRequest("kh_khqr_usd", "USD", "12.5"))
		pg, err := e.Gateway.LinkPage(ctx, uuid, token)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"https://shop.example", "https://b.example:8443"}; !slices.Equal(pg.FrameAncestors, want) {
			t.Errorf("frame ancestors %v, want %v", pg.FrameAncestors, want)
		}
		payload, err := qr.Decode(pg.QRString)
		if err != nil {
			t.Fatalf("decode KHQR %q: %v", pg.QRString, err)
		}
		if payload.Amount() != "12.50" || payload.Currency() != qr.CurrencyUSD || payload.CountryCode() != "KH" || payload.AdditionalData().BillNumber != uuid {
			t.Errorf("KHQR %q", pg.QRString)
		}
		if _, err := e.Gateway.LinkPage(ctx, uuid, token+"x"); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("wrong token: %v", err)
		}
		bank, bankToken := mustLink(t, e, ps["USD"], linkRequest("mw_bank_mwk", "MWK", "2000"))
		_, err = e.Gateway.PayLink(ctx, bank, bankToken, gateway.Attempt{Card: &gateway.Card{Number: "4242424242424242", Expiry: "12/39", CVC: "123"}})
		if !fault.Is(err, fault.CodeValidation) {
			t.Errorf("card on a bank transfer link: %v", err)
		}
		if _, err := e.Merchants.SetEmbedOrigins(ctx, ps["USD"].MerchantID, []string{"https://shop.example/path"}); !fault.Is(err, fault.CodeValidation) {
			t.Errorf("an origin with a path: %v", err)
		}
	})
}

// eventTypes are the types of record uuid's webhook events, sorted (the
// fixture's clock stands still, so they may share a creation time).
func eventTypes(t *testing.T, e *servertest.Env, uuid string) []string {
	t.Helper()
	rows, err := e.DB.Read().QueryContext(context.Background(), `SELECT event_type FROM webhook_events WHERE record_uuid = $1 ORDER BY created_at, id`, uuid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func toInput(s string) money.Input { return money.Input(s) }

func webhookTarget() webhook.Target {
	return webhook.Target{EndpointURL: "https://shop.example/hooks", AuthorizationHeader: "Basic c2hvcDpzZWNyZXQ="}
}
