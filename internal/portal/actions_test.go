package portal_test

import (
	"context"
	"slices"
	"testing"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/portal"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

// signIn adds a user with role to merchantID and opens their session.
func signIn(t *testing.T, e *servertest.Env, merchantID, email string, role merchant.Role) portal.Session {
	t.Helper()
	user(t, e, merchantID, email, role)
	s, err := login(e, email, password, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func actionsOf(e *servertest.Env) *portal.Actions {
	return e.Portal.Actions(portal.ActionDeps{Merchants: e.Merchants, Payouts: e.Payouts, Webhooks: e.Webhooks})
}

// auditLog is the merchant's audit log's actions, newest first.
func auditLog(t *testing.T, e *servertest.Env, merchantID string) []portal.AuditAction {
	t.Helper()
	entries, _, err := e.Portal.AuditPage(context.Background(), merchantID, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []portal.AuditAction
	for _, en := range entries {
		out = append(out, en.Action)
	}
	return out
}

func heldPayout(currency string) payout.Request {
	return payout.Request{Currency: currency, PayoutMethodName: "au_bank_aud", Description: "supplier run", PayoutTransactionDetails: []payout.TransactionRequest{
		{Amount: "100", PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}}}}
}

// TestActionsRefuseRoles: each action refuses a role it is not given, for
// whichever entry point calls it, before anything is written. (Who decides
// is the payout service's rule: payout's TestMakerChecker.)
func TestActionsRefuseRoles(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		a := actionsOf(e)
		users := map[merchant.Role]portal.Session{}
		for _, role := range []merchant.Role{merchant.Finance, merchant.Developer, merchant.Viewer} {
			users[role] = signIn(t, e, p.MerchantID, string(role)+"@shop.example", role)
		}
		before := auditLog(t, e, p.MerchantID)
		tests := []struct {
			name string
			role merchant.Role
			do   func(by portal.Session) error
		}{
			{"a developer creates a payout", merchant.Developer, func(by portal.Session) error {
				_, err := a.CreatePayout(ctx, by, p, heldPayout("AUD"), "192.0.2.1")
				return err
			}},
			{"a finance user creates an app", merchant.Finance, func(by portal.Session) error {
				_, err := a.CreateApp(ctx, by, "AUD", merchant.Access{}, "192.0.2.1")
				return err
			}},
			{"a viewer revokes an app", merchant.Viewer, func(by portal.Session) error { return a.RevokeApp(ctx, by, p.AppID, "192.0.2.1") }},
			{"a finance user reads the signing secret", merchant.Finance, func(by portal.Session) error {
				_, err := a.SigningSecret(ctx, by)
				return err
			}},
			{"a viewer rotates the signing secret", merchant.Viewer, func(by portal.Session) error { return a.RotateSigningSecret(ctx, by, "192.0.2.1") }},
			{"a finance user adds a webhook endpoint", merchant.Finance, func(by portal.Session) error {
				_, err := a.CreateEndpoint(ctx, by, webhook.EndpointRequest{URL: "https://shop.example/hooks", EnabledEvents: []string{"*"}}, "192.0.2.1")
				return err
			}},
			{"a viewer replays events", merchant.Viewer, func(by portal.Session) error {
				_, err := a.ReplayEvents(ctx, by, webhook.Replay{EndpointID: "we_NONE"}, "192.0.2.1")
				return err
			}},
			{"a finance user resends a webhook", merchant.Finance, func(by portal.Session) error { return a.ResendWebhook(ctx, by, "evt", "192.0.2.1") }},
			{"a viewer sets the embedding origins", merchant.Viewer, func(by portal.Session) error {
				return a.SetEmbedOrigins(ctx, by, []string{"https://evil.example"}, "192.0.2.1")
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.do(users[tt.role]); !fault.Is(err, fault.CodeForbidden) {
					t.Errorf("error = %v, want forbidden", err)
				}
			})
		}
		if got := auditLog(t, e, p.MerchantID); !slices.Equal(got, before) {
			t.Errorf("refused actions wrote the audit log: %v, was %v", got, before)
		}
		apps, err := e.Merchants.Apps(ctx, p.MerchantID)
		if err != nil || len(apps) != 1 || apps[0].Revoked {
			t.Errorf("the apps after a refused revocation: %+v, %v", apps, err)
		}
	})
}

// TestActionsCommitWithTheirAudit: a portal payout commits with its
// payout_created entry and its maker, by user id, may not decide it; a
// checker's decision commits with its own entry; a refused or failed action
// writes none; an account of another merchant is not found.
func TestActionsCommitWithTheirAudit(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: money.Input("500")}); err != nil {
			t.Fatal(err)
		}
		e.RunDue(t, p.MerchantID)
		on := true
		if _, err := e.Merchants.UpdateAccount(ctx, p.MerchantID, "AUD", merchant.AccountUpdate{Approvals: &on}); err != nil {
			t.Fatal(err)
		}
		a := actionsOf(e)
		maker := signIn(t, e, p.MerchantID, "maker@shop.example", merchant.Finance)
		checker := signIn(t, e, p.MerchantID, "checker@shop.example", merchant.Finance)
		po, err := a.CreatePayout(ctx, maker, p, heldPayout("AUD"), "192.0.2.1")
		if err != nil || po.Status != payout.Held || po.Approval.CreatedBy != "maker@shop.example" {
			t.Fatalf("CreatePayout() = %+v, %v; want held, created by maker@shop.example", po, err)
		}
		entries, _, err := e.Portal.AuditPage(ctx, p.MerchantID, 1, 1)
		if err != nil || len(entries) != 1 || entries[0].Action != portal.AuditPayoutCreated || entries[0].Subject != po.UUID ||
			entries[0].Detail != "100.00 AUD" || entries[0].Actor != "maker@shop.example" || entries[0].Client != "192.0.2.1" {
			t.Errorf("the audit log's newest entry: %+v, %v", entries, err)
		}
		if err := a.MayDecide(ctx, maker, po.UUID); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("MayDecide(maker) = %v, want forbidden", err)
		}
		if _, err := a.Decide(ctx, maker, po.UUID, true, "", "192.0.2.1"); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("the maker's decision: %v, want forbidden", err)
		}
		if _, err := a.Decide(ctx, checker, po.UUID, false, "no", "192.0.2.1"); !fault.Is(err, fault.CodeValidation) {
			t.Errorf("a rejection without its reason: %v, want VALIDATION_FAILED", err)
		}
		if err := a.RevokeApp(ctx, checker, p.AppID, "192.0.2.1"); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("a finance user's revocation: %v, want forbidden", err)
		}
		if got := auditLog(t, e, p.MerchantID); got[0] != portal.AuditPayoutCreated {
			t.Errorf("refused and failed actions wrote %v", got)
		}
		decided, err := a.Decide(ctx, checker, po.UUID, false, "  not this supplier ", "192.0.2.1")
		if err != nil || decided.Status != payout.Rejected {
			t.Fatalf("the checker's rejection: %+v, %v", decided, err)
		}
		entries, _, _ = e.Portal.AuditPage(ctx, p.MerchantID, 1, 1)
		if entries[0].Action != portal.AuditPayoutRejected || entries[0].Detail != "not this supplier" || !entries[0].At.Equal(decided.UpdatedAt.T) {
			t.Errorf("the rejection's entry: %+v", entries[0])
		}
		other := e.Merchant(t, "AUD")["AUD"]
		if _, err := a.CreatePayout(ctx, maker, other, heldPayout("AUD"), "192.0.2.1"); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("a payout from another merchant's account: %v, want not found", err)
		}
	})
}
