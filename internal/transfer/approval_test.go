package transfer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/transfer"
)

func activePolicy(t *testing.T, e *servertest.Env, merchantID string, in policy.Input) {
	t.Helper()
	ctx := context.Background()
	a := policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
	b := policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
	if _, err := store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) {
		p, err := e.Policies.Propose(ctx, tx, merchantID, a, in, e.Clock.Now())
		if err != nil {
			return p, err
		}
		return e.Policies.Decide(ctx, tx, merchantID, p.ID, b, true, e.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
}

func finance(n int) policy.Actor {
	return policy.Actor{UserID: fmt.Sprintf("u-finance-%d", n), Email: fmt.Sprintf("f%d@shop.example", n), Role: merchant.Finance}
}

func codeOf(err error) string {
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// heldSetup is a merchant with 500 AUD in its treasury account and a
// policy of AUD 100 that needs approvals by finance.
func heldSetup(t *testing.T, e *servertest.Env, approvals int) (merchant.Principal, merchant.Account) {
	t.Helper()
	ctx := context.Background()
	p, acc := setup(t, e, "1000")
	in, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "500", Description: "fund treasury", TreasuryAccountID: acc.PublicID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storetest.Write(ctx, e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: in.UUID, Status: transfer.Completed}); err != nil {
		t.Fatal(err)
	}
	activePolicy(t, e, p.MerchantID, policy.Input{Name: "Out", Currency: "AUD", MinAmount: "100", Approvals: approvals, Roles: []merchant.Role{merchant.Finance}})
	return p, acc
}

func decide(e *servertest.Env, p merchant.Principal, uuid string, by policy.Actor, approve bool) (transfer.Transfer, error) {
	ctx := context.Background()
	return store.Do(ctx, e.DB, func(tx *store.Tx) (transfer.Transfer, error) {
		return e.Transfers.Decide(ctx, tx, transfer.Decision{MerchantID: p.MerchantID, TransferUUID: uuid, By: by, Approve: approve, Reason: "not this supplier"})
	})
}

// TestPolicyHoldsExternalTransfer: an external transfer a policy catches is
// held with an approval like a payout's, its amount out of available; an
// internal transfer is never held; the policy's roles approve, distinct,
// and at the last approval it goes on (processing); a rejection and the
// hold's expiry return the amount.
func TestPolicyHoldsExternalTransfer(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, acc := heldSetup(t, e, 2)
		internal, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "200", Description: "back", TreasuryAccountID: acc.PublicID, Direction: "out"})
		if err != nil || internal.Status != transfer.Processing || internal.Approval != nil {
			t.Fatalf("an internal transfer = %+v, %v; want processing, never held", internal, err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: internal.UUID, Status: transfer.Failed}); err != nil {
			t.Fatal(err)
		}
		bank := settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Supplier Pty Ltd"}
		create := func(amount string) transfer.Transfer {
			t.Helper()
			tr, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: money.Input(amount), Description: "supplier", ExternalBankAccount: &bank})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}
		small := create("99")
		if small.Status != transfer.Processing {
			t.Errorf("below min_amount: %s, want processing", small.Status)
		}
		tr := create("150")
		if tr.Status != transfer.Held || tr.Approval == nil || tr.Approval.RequiredApprovals != 2 || tr.Approval.Policy == nil || tr.Approval.Policy.Name != "Out" {
			t.Fatalf("caught: %+v, want held for 2 approvals by Out", tr)
		}
		if got := treasuryAvailable(t, e, p); got != 50000-9900-15000 {
			t.Errorf("treasury available %d, want the held amount out of it", got)
		}
		admin := policy.Actor{UserID: "u-admin", Email: "admin@shop.example", Role: merchant.Admin}
		steps := []struct {
			name string
			by   policy.Actor
			want string
			to   transfer.Status
		}{
			{"an admin (not the policy's role)", admin, fault.CodeForbidden, ""},
			{"finance 1", finance(1), "", transfer.Held},
			{"finance 1 again", finance(1), policy.CodeAlreadyApproved, ""},
			{"finance 2", finance(2), "", transfer.Processing},
			{"finance 3, too late", finance(3), policy.CodeDecisionConflict, ""},
		}
		for _, st := range steps {
			got, err := decide(e, p, tr.UUID, st.by, true)
			if codeOf(err) != st.want || (err == nil && got.Status != st.to) {
				t.Errorf("%s: %s, %v; want %q, %s", st.name, got.Status, err, st.want, st.to)
			}
		}
		rejected := create("100")
		if got, err := decide(e, p, rejected.UUID, finance(1), false); err != nil || got.Status != transfer.Rejected || got.Approval.RejectionReason != "not this supplier" {
			t.Errorf("rejected: %+v, %v", got, err)
		}
		expiring := create("100")
		e.Advance(t, p.MerchantID, 8*24*time.Hour)
		if got, err := e.Transfers.Get(ctx, p, expiring.UUID); err != nil || got.Status != transfer.Expired {
			t.Errorf("after the hold window: %+v, %v; want expired", got, err)
		}
		if got := treasuryAvailable(t, e, p); got != 50000-9900-15000 {
			t.Errorf("treasury available %d, want the rejected and expired amounts back", got)
		}
	})
}

// TestConcurrentTransferApprovals: twenty finance users approve a transfer
// that needs three at once: three count, it leaves held once.
func TestConcurrentTransferApprovals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, _ := heldSetup(t, e, 3)
		bank := settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Supplier Pty Ltd"}
		tr, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "300", Description: "supplier", ExternalBankAccount: &bank})
		if err != nil || tr.Status != transfer.Held {
			t.Fatalf("Create() = %+v, %v", tr, err)
		}
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			counted, passed int
		)
		for i := range 20 {
			wg.Go(func() {
				got, err := decide(e, p, tr.UUID, finance(i+1), true)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					counted++
					if got.Status == transfer.Processing {
						passed++
					}
				case codeOf(err) != policy.CodeDecisionConflict:
					t.Errorf("Decide() = %v", err)
				}
			})
		}
		wg.Wait()
		if counted != 3 || passed != 1 {
			t.Errorf("%d approvals counted, %d left held; want 3 and 1", counted, passed)
		}
	})
}

// TestDailyLimitCountsTransfersAndPayouts: the daily limit sums the
// creator's payouts and external transfers of the local day (not the
// rejected ones): an external transfer that takes the sum above it is held
// for one approval by admin or finance, with no policy named; a rejected
// one no longer counts.
func TestDailyLimitCountsTransfersAndPayouts(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, acc := setup(t, e, "2000")
		in, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "1000", Description: "fund treasury", TreasuryAccountID: acc.PublicID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: in.UUID, Status: transfer.Completed}); err != nil {
			t.Fatal(err)
		}
		a := policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
		b := policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
		if _, err := store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) {
			r, err := e.Policies.ProposeDailyLimit(ctx, tx, p.MerchantID, a, "AUD", "300", e.Clock.Now())
			if err != nil {
				return r, err
			}
			return e.Policies.Decide(ctx, tx, p.MerchantID, r.ID, b, true, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, payoutRequest("200")); err != nil {
			t.Fatal(err)
		}
		bank := settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Supplier Pty Ltd"}
		out := func(amount string) transfer.Transfer {
			t.Helper()
			tr, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: money.Input(amount), Description: "supplier", ExternalBankAccount: &bank})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}
		if tr := out("50"); tr.Status != transfer.Processing {
			t.Errorf("under the limit: %s, want processing", tr.Status)
		}
		crossing := out("100")
		if crossing.Status != transfer.Held || crossing.Approval.RequiredApprovals != 1 || crossing.Approval.Policy != nil {
			t.Fatalf("crossing the limit: %+v, want held for 1, no policy", crossing)
		}
		admin := policy.Actor{UserID: "u-admin", Email: "admin@shop.example", Role: merchant.Admin}
		if got, err := decide(e, p, crossing.UUID, admin, false); err != nil || got.Status != transfer.Rejected {
			t.Fatalf("an admin's rejection: %+v, %v", got, err)
		}
		if tr := out("50"); tr.Status != transfer.Processing {
			t.Errorf("after the rejection, up to the limit: %s, want processing", tr.Status)
		}
	})
}

// payoutRequest pays amount to an Australian bank account.
func payoutRequest(amount money.Input) payout.Request {
	return payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "supplier run",
		PayoutTransactionDetails: []payout.TransactionRequest{{Amount: amount,
			PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}}}}
}
