package settlement_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store/storetest"
)

// funded makes a merchant's account in currency hold amount in available.
func funded(t *testing.T, e *servertest.Env, currency, amount string) merchant.Principal {
	t.Helper()
	p := e.Merchant(t, currency)[currency]
	if _, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: money.Input(amount)}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	return p
}

// TestFundingCheckHoldsJPYNotAUD: a JPY settlement stays processing for the
// funding check (rule 3), an AUD one goes to the rail at once; both leave
// available for outgoing at submission as one record.
func TestFundingCheckHoldsJPYNotAUD(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		tests := []struct {
			currency, fund string
			bank           settlement.BankAccount
			held           bool
		}{
			{"AUD", "500", settlement.BankAccount{BSB: "062000", AccountNumber: "12345678", AccountName: "Shop"}, false},
			{"JPY", "50000", settlement.BankAccount{BankCode: "0001", BranchCode: "001", AccountNumber: "1234567", AccountName: "ｼｮｯﾌﾟ", AccountType: "ordinary"}, true},
		}
		for _, tt := range tests {
			p := funded(t, e, tt.currency, tt.fund)
			if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand, ExternalBankAccount: &tt.bank}); err != nil {
				t.Fatal(err)
			}
			st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if b := e.Balance(t, p); b.Available != 0 || b.Outgoing == 0 {
				t.Errorf("%s submitted: %+v, want everything in outgoing", tt.currency, b)
			}
			e.Advance(t, p.MerchantID, 30*time.Second) // the sandbox rail answers within seconds
			got, err := e.Settlements.Get(ctx, p, st.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if held := got.Status == settlement.Processing; held != tt.held {
				t.Errorf("%s 30 s after submission: %s, held %v, want held %v", tt.currency, got.Status, held, tt.held)
			}
			e.Advance(t, p.MerchantID, settlement.DefaultFundingDelay)
			e.Advance(t, p.MerchantID, 30*time.Second)
			if got, _ := e.Settlements.Get(ctx, p, st.UUID); got.Status != settlement.Completed {
				t.Errorf("%s after the funding check: %s", tt.currency, got.Status)
			}
			if b := e.Balance(t, p); b.Available != 0 || b.Outgoing != 0 {
				t.Errorf("%s completed: %+v", tt.currency, b)
			}
		}
	})
}
