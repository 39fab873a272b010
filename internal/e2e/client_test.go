package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/client/go/paydclient"
	"payd/internal/store/storetest"
)

// ptr is a pointer to v, for the generated client's optional fields.
func ptr[T any](v T) *T { return &v }

// withKeys sends an app's keys, as the access token endpoint asks.
func withKeys(as creds) paydclient.ClientOption {
	return paydclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("app-id", as.AppID)
		r.Header.Set("secret-key", as.SecretKey)
		return nil
	})
}

// withBearer sends an access token.
func withBearer(token string) paydclient.ClientOption {
	return paydclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}

// TestGoClient runs the main flows of an integration through the official Go
// client (client/go/paydclient) against a running payd, as a merchant's
// developer would: an access token from the app's keys, then with it a
// contact and a 50.00 AUD PayID payin, completed by the sandbox, cleared
// into available (49.75 after its 0.25 fee), a 25.00 payout (fee 0.50)
// read back completed, available 24.25, the balance history with both, and
// a webhook endpoint with its signing secret. Each answer is decoded by the
// generated code into the documented type.
func TestGoClient(t *testing.T) {
	t.Parallel()
	p := start(t, storetest.SQLiteDSN(t))
	aud := p.merchant("AUD")["AUD"]
	ctx := context.Background()

	keys, err := paydclient.NewClientWithResponses(p.base, withKeys(aud))
	if err != nil {
		t.Fatal(err)
	}
	token, err := keys.GetV1PaymentGatewaysAccessTokenWithResponse(ctx)
	if err != nil || token.JSON200 == nil {
		t.Fatalf("access token: %v %d %s", err, token.StatusCode(), token.Body)
	}
	c, err := paydclient.NewClientWithResponses(p.base, withBearer(token.JSON200.AccessToken))
	if err != nil {
		t.Fatal(err)
	}

	contact, err := c.PostV2ContactsWithResponse(ctx, &paydclient.PostV2ContactsParams{},
		paydclient.ContactNewContact{Email: "jane@example.com", FirstName: "Jane", LastName: "Payer"})
	if err != nil || contact.JSON201 == nil {
		t.Fatalf("create contact: %v %d %s", err, contact.StatusCode(), contact.Body)
	}

	var amount paydclient.PayinRequest_Amount
	if err := amount.FromPayinRequestAmount1("50.00"); err != nil {
		t.Fatal(err)
	}
	created, err := c.PostV2PayinsWithResponse(ctx, &paydclient.PostV2PayinsParams{IdempotencyKey: ptr("pin-1")}, paydclient.PayinRequest{
		Currency: "AUD", Amount: amount, PayinMethodName: "au_payid_npp_aud", Name: ptr("Jane Payer"),
		Email: ptr("jane@example.com"), Description: ptr("Order 42"),
		PayinMethodParams: &map[string]any{"callback_url": "https://shop.example/return"},
	})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create payin: %v %d %s", err, created.StatusCode(), created.Body)
	}
	payin := created.JSON201
	if payin.Status != paydclient.PayinStatusPending || payin.Amount != "50.00" {
		t.Fatalf("created payin: status %q amount %q, want pending 50.00", payin.Status, payin.Amount)
	}

	simulated, err := c.PostV2PayinsSimulateWithResponse(ctx, &paydclient.PostV2PayinsSimulateParams{},
		paydclient.PayinSimulateRequest{Uuid: payin.Uuid, Status: paydclient.PayinSimulateRequestStatusCompleted})
	if err != nil || simulated.JSON200 == nil {
		t.Fatalf("simulate payin: %v %d %s", err, simulated.StatusCode(), simulated.Body)
	}
	detail, err := c.GetV2PayinsDetailWithResponse(ctx, &paydclient.GetV2PayinsDetailParams{Uuid: payin.Uuid})
	if err != nil || detail.JSON200 == nil {
		t.Fatalf("payin detail: %v %d %s", err, detail.StatusCode(), detail.Body)
	}
	if got := detail.JSON200.Status; got != paydclient.PayinStatusReceived {
		t.Fatalf("payin status = %q, want received", got)
	}

	// The test clock's run at 0 clears the receipt into available.
	advance(t, c, 0)
	if got := available(t, c); got != "49.75" {
		t.Fatalf("available after the payin = %s, want 49.75", got)
	}

	var payoutAmount paydclient.PayoutTransactionRequest_Amount
	if err := payoutAmount.FromPayoutTransactionRequestAmount1("25.00"); err != nil {
		t.Fatal(err)
	}
	sent, err := c.PostV2PayoutsWithResponse(ctx, &paydclient.PostV2PayoutsParams{IdempotencyKey: ptr("po-1")}, paydclient.PayoutRequest{
		Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "Supplier invoice 17",
		PayoutTransactionDetails: &[]paydclient.PayoutTransactionRequest{{
			FirstName: ptr("Jane"), LastName: ptr("Doe"), Amount: payoutAmount,
			PayoutMethodParams: &map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"},
		}},
	})
	if err != nil || sent.JSON201 == nil {
		t.Fatalf("create payout: %v %d %s", err, sent.StatusCode(), sent.Body)
	}
	// The run at 0 submits it; the sandbox network answers 3 seconds later
	// on the merchant's clock.
	advance(t, c, 0)
	advance(t, c, 10)
	payout, err := c.GetV2PayoutsDetailWithResponse(ctx, &paydclient.GetV2PayoutsDetailParams{Uuid: sent.JSON201.Uuid})
	if err != nil || payout.JSON200 == nil {
		t.Fatalf("payout detail: %v %d %s", err, payout.StatusCode(), payout.Body)
	}
	if got := payout.JSON200; got.Status != paydclient.PayoutStatusCompleted || got.TotalAmount != "25.00" || got.TotalFees != "0.50" {
		t.Fatalf("payout: status %q total %q fees %q, want completed 25.00 0.50", got.Status, got.TotalAmount, got.TotalFees)
	}
	if got := available(t, c); got != "24.25" {
		t.Fatalf("available after the payout = %s, want 24.25", got)
	}

	history, err := c.GetV2BalancesHistoryWithResponse(ctx, &paydclient.GetV2BalancesHistoryParams{Currency: ptr("AUD")})
	if err != nil || history.JSON200 == nil || history.JSON200.Records == nil {
		t.Fatalf("balance history: %v %d %s", err, history.StatusCode(), history.Body)
	}
	refs := map[string]bool{}
	for _, r := range *history.JSON200.Records {
		refs[r.ReferenceId] = true
	}
	if !refs[payin.Uuid] || !refs[sent.JSON201.Uuid] {
		t.Fatalf("balance history references %v, want the payin %s and the payout %s", refs, payin.Uuid, sent.JSON201.Uuid)
	}

	endpoint, err := c.PostV2WebhookEndpointsWithResponse(ctx, &paydclient.PostV2WebhookEndpointsParams{}, paydclient.WebhookEndpointRequest{
		Url: "https://shop.example/payd-webhooks", EnabledEvents: &[]string{"payin.received", "payout.completed"}, Description: ptr("shop"),
	})
	if err != nil || endpoint.JSON201 == nil {
		t.Fatalf("create webhook endpoint: %v %d %s", err, endpoint.StatusCode(), endpoint.Body)
	}
	if got := endpoint.JSON201; got.Url != "https://shop.example/payd-webhooks" || !strings.HasPrefix(got.Secret, "whsec_") {
		t.Fatalf("webhook endpoint: url %q secret %q, want the url and a whsec_ secret", got.Url, got.Secret)
	}
}

// advance moves the caller's test clock by seconds and runs what became due.
func advance(t *testing.T, c *paydclient.ClientWithResponses, seconds int) {
	t.Helper()
	r, err := c.PostV2SandboxClockWithResponse(context.Background(), &paydclient.PostV2SandboxClockParams{},
		paydclient.ClockRequest{AdvanceSeconds: ptr(seconds)})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("advance clock %d s: %v %d %s", seconds, err, r.StatusCode(), r.Body)
	}
}

// available is the caller's AUD available balance, as payd wrote it.
func available(t *testing.T, c *paydclient.ClientWithResponses) string {
	t.Helper()
	r, err := c.GetV2BalancesDetailWithResponse(context.Background(), &paydclient.GetV2BalancesDetailParams{Currency: ptr("AUD")})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("balance: %v %d %s", err, r.StatusCode(), r.Body)
	}
	return r.JSON200.AvailableBalance.String()
}
