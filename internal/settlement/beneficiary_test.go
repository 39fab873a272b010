package settlement_test

import (
	"context"
	"testing"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestBeneficiaryApproval: off, a change of the external beneficiary applies
// at once; on (itself changed like a policy), a PUT to another bank account
// answers the old beneficiary and the pending change (a newer PUT replaces
// it), settlements keep going to the old one, and an admin or finance user
// approves it (a viewer may not; nothing pending is 409); a switch to a
// treasury account applies at once.
func TestBeneficiaryApproval(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "AUD", "500")
		put := func(bank *settlement.BankAccount, treasuryID string) settlement.Config {
			t.Helper()
			c, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand, ExternalBankAccount: bank, TreasuryAccountID: treasuryID})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		bankA := settlement.BankAccount{BSB: "062000", AccountNumber: "11111111", AccountName: "Shop A"}
		bankB := settlement.BankAccount{BSB: "062000", AccountNumber: "22222222", AccountName: "Shop B"}
		bankC := settlement.BankAccount{BSB: "062000", AccountNumber: "33333333", AccountName: "Shop C"}
		if c := put(&bankA, ""); c.PendingChange != nil || c.ExternalBankAccount == nil || c.ExternalBankAccount.AccountNumber != "11111111" {
			t.Fatalf("off: %+v, want A at once", c)
		}
		a := policy.Actor{UserID: "u-a", Email: "a@shop.example", Role: merchant.Admin}
		b := policy.Actor{UserID: "u-b", Email: "b@shop.example", Role: merchant.Admin}
		if _, err := store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) {
			r, err := e.Policies.ProposeBeneficiaryApproval(ctx, tx, p.MerchantID, a, true, e.Clock.Now())
			if err != nil {
				return r, err
			}
			return e.Policies.Decide(ctx, tx, p.MerchantID, r.ID, b, true, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		c := put(&bankB, "")
		if c.ExternalBankAccount == nil || c.ExternalBankAccount.AccountNumber != "11111111" || c.PendingChange == nil ||
			c.PendingChange.ExternalBankAccount.AccountNumber != "22222222" || c.PendingChange.RequestedBy != "app:"+p.AppID {
			t.Fatalf("on: %+v, want A with B pending", c)
		}
		if c = put(&bankC, ""); c.PendingChange == nil || c.PendingChange.ExternalBankAccount.AccountNumber != "33333333" {
			t.Fatalf("a newer PUT: %+v, want C pending", c)
		}
		st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: "10"})
		if err != nil || st.Beneficiary.ExternalBankAccount == nil || st.Beneficiary.ExternalBankAccount.AccountNumber != "11111111" {
			t.Fatalf("a settlement meanwhile: %+v, %v; want to A", st, err)
		}
		decide := func(by policy.Actor, approve bool) (settlement.Config, error) {
			return store.Do(ctx, e.DB, func(tx *store.Tx) (settlement.Config, error) {
				return e.Settlements.DecideBeneficiary(ctx, tx, p.MerchantID, "AUD", by, approve, e.Clock.Now())
			})
		}
		if _, err := decide(policy.Actor{UserID: "u-v", Role: merchant.Viewer}, true); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("a viewer's approval = %v, want FORBIDDEN", err)
		}
		c, err = decide(policy.Actor{UserID: "u-f", Email: "f@shop.example", Role: merchant.Finance}, true)
		if err != nil || c.PendingChange != nil || c.ExternalBankAccount.AccountNumber != "33333333" {
			t.Fatalf("finance's approval = %+v, %v; want C, nothing pending", c, err)
		}
		if _, err := decide(b, false); !fault.Is(err, policy.CodeDecisionConflict) {
			t.Errorf("a decision with nothing pending = %v, want DECISION_CONFLICT", err)
		}
		put(&bankA, "")
		if c, err = decide(b, false); err != nil || c.PendingChange != nil || c.ExternalBankAccount.AccountNumber != "33333333" {
			t.Errorf("rejected: %+v, %v; want C kept", c, err)
		}
		acc, err := e.Merchants.OpenTreasury(ctx, p.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		if c = put(nil, acc.PublicID); c.TreasuryAccountID == nil || c.PendingChange != nil {
			t.Errorf("a switch to the treasury account: %+v, want at once", c)
		}
	})
}
