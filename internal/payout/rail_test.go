package payout_test

import (
	"context"
	"testing"

	"payd/internal/deposit"
	"payd/internal/payfile"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// TestProductionRails: in production a payout of a method a bank-file rail
// serves is handed to it (its transactions get bank references and wait
// for the rail's cut-off), while one of a method no rail serves behaves as
// without any rail: it waits in processing, its transactions never handed
// over and without a reference.
func TestProductionRails(t *testing.T) {
	t.Parallel()
	servertest.EachProduction(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "1000"}); err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, e.Deposits.ClearAfter)
		setRail(t, e, payfile.ABA, "AUD", "au_bank_aud")
		bank, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "10", "20"))
		if err != nil {
			t.Fatal(err)
		}
		payID, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, payoutBy("au_payid_npp_aud", "AUD", "5", map[string]any{"pay_id": "jane@example.com", "pay_id_type": "EMAIL"}))
		if err != nil {
			t.Fatal(err)
		}
		e.RunDue(t, p.MerchantID)
		got := func(uuid string) payout.Payout {
			po, err := e.Payouts.Get(ctx, p, uuid)
			if err != nil {
				t.Fatal(err)
			}
			return po
		}
		for _, tx := range got(bank.UUID).PayoutTransactions {
			if tx.BankReference == nil || len(*tx.BankReference) != 16 || tx.Status != payout.TxPending {
				t.Errorf("a transaction of the rail's method: %+v, want pending with a bank reference", tx)
			}
		}
		if po := got(payID.UUID); po.Status != payout.Processing || po.PayoutTransactions[0].BankReference != nil {
			t.Errorf("a payout no rail serves: %s, reference %v; want processing without one", po.Status, po.PayoutTransactions[0].BankReference)
		}
		waiting, err := e.Files.Waiting(ctx)
		if err != nil || waiting != 2 {
			t.Errorf("%d transfers wait for the rail (%v), want the bank payout's 2", waiting, err)
		}
	})
}
