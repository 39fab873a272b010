package transfer_test

import (
	"context"
	"testing"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store/storetest"
	"payd/internal/transfer"
)

// setup makes an AUD merchant with aud in available and an active treasury account.
func setup(t *testing.T, e *servertest.Env, aud string) (merchant.Principal, merchant.Account) {
	t.Helper()
	ctx := context.Background()
	p := e.Merchant(t, "AUD")["AUD"]
	if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: money.Input(aud)}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	acc, err := e.Merchants.OpenTreasury(ctx, p.MerchantID, "AUD")
	if err != nil {
		t.Fatal(err)
	}
	return p, acc
}

func treasuryAvailable(t *testing.T, e *servertest.Env, p merchant.Principal) int64 {
	t.Helper()
	b, err := ledger.Balances(context.Background(), e.DB.Read(), p.MerchantID, string(merchant.Treasury), "AUD")
	if err != nil || len(b) != 1 {
		t.Fatalf("treasury balance: %v, %v", b, err)
	}
	return b[0].Available
}

// TestProductionInternalTransferCompletesAtOnce: outside the sandbox nobody
// simulates; an internal transfer completes by its job, and the money
// arrives once.
func TestProductionInternalTransferCompletesAtOnce(t *testing.T) {
	t.Parallel()
	servertest.EachProduction(t, func(t *testing.T, e *servertest.Env) {
		p, acc := setup(t, e, "100")
		tr, err := storetest.Write(context.Background(), e.DB, e.Transfers.Create, p, transfer.Request{Amount: "60", Description: "sweep", TreasuryAccountID: acc.PublicID})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status != transfer.Processing {
			t.Fatalf("new transfer is %s", tr.Status)
		}
		e.RunDue(t, p.MerchantID)
		e.RunDue(t, p.MerchantID)
		got, err := e.Transfers.Get(context.Background(), p, tr.UUID)
		if err != nil || got.Status != transfer.Completed {
			t.Fatalf("after its job: %+v, %v", got, err)
		}
		if a := treasuryAvailable(t, e, p); a != 6000 {
			t.Errorf("treasury available = %d, want 6000", a)
		}
		if b := e.Balance(t, p); b.Available != 4000 || b.Outgoing != 0 {
			t.Errorf("payments balance = %+v", b)
		}
		if _, err := storetest.Write(context.Background(), e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: tr.UUID, Status: transfer.Failed}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("simulating a finished transfer: %v, want INVALID_STATE", err)
		}
	})
}

// TestRefusals: each refusal names its field or rule and moves nothing.
func TestRefusals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p, acc := setup(t, e, "100")
		bank := transferBank()
		tests := []struct {
			name string
			req  transfer.Request
			want string
		}{
			{"no amount", transfer.Request{Description: "x", TreasuryAccountID: acc.PublicID}, "amount"},
			{"negative amount", transfer.Request{Amount: "-1", Description: "x", TreasuryAccountID: acc.PublicID}, "amount"},
			{"three decimals", transfer.Request{Amount: "1.001", Description: "x", TreasuryAccountID: acc.PublicID}, "amount"},
			{"no destination", transfer.Request{Amount: "1", Description: "x"}, "treasury_account_id"},
			{"unknown treasury account", transfer.Request{Amount: "1", Description: "x", TreasuryAccountID: "NOPE0000"}, "treasury_account_id"},
			{"direction with a bank account", transfer.Request{Amount: "1", Description: "x", ExternalBankAccount: &bank, Direction: "out"}, "direction"},
			{"bad BSB", transfer.Request{Amount: "1", Description: "x", ExternalBankAccount: withBSB(bank, "12345")}, "external_bank_account.bsb"},
			{"more than withdrawable", transfer.Request{Amount: "100.01", Description: "x", TreasuryAccountID: acc.PublicID}, fault.CodeInsufficientFunds},
			{"external with an empty treasury", transfer.Request{Amount: "1", Description: "x", ExternalBankAccount: &bank}, fault.CodeInsufficientFunds},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.Transfers.Create, p, tt.req)
				got, _ := fault.As(err)
				if got == nil || (got.Fields[tt.want] == "" && got.Code != tt.want) {
					t.Errorf("err = %v, want %s", err, tt.want)
				}
			})
		}
		if b := e.Balance(t, p); b.Available != 10000 || b.Outgoing != 0 {
			t.Errorf("after refusals: %+v", b)
		}
	})
}

func transferBank() settlement.BankAccount {
	return settlement.BankAccount{BankName: "Westpac", BSB: "062000", AccountNumber: "12345678", AccountName: "Shop Pty Ltd"}
}

func withBSB(b settlement.BankAccount, bsb string) *settlement.BankAccount {
	b.BSB = bsb
	return &b
}
