package payout_test

import (
	"context"
	"encoding/json"
	"testing"

	"payd/internal/deposit"
	"payd/internal/ledger"
	"payd/internal/payfile"
	"payd/internal/payout"
	"payd/internal/rail"
	"payd/internal/rail/bankfile"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
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

// TestReturnedTransaction: a transaction of a bank-file rail follows the
// outcome order (CONTRACT §25): done, its return gives amount and fee back
// to available as a new money_in payout record naming it, makes it
// returned with the return's reason, and sends payout_transaction.returned
// with the transaction's body; the payout stays completed with its total.
// A return of a failed one and a failure of a returned one change nothing.
func TestReturnedTransaction(t *testing.T) {
	t.Parallel()
	servertest.EachProduction(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		setRail(t, e, payfile.ABA, "AUD", "au_bank_aud")
		e.Files.Forget()
		req := bankPayout("12345678", "10", "20")
		req.WebhookNotification = webhook.Target{EndpointURL: "https://merchant.example/hooks"}
		po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, req)
		if err != nil {
			t.Fatal(err)
		}
		e.RunDue(t, p.MerchantID)
		po, _ = e.Payouts.Get(ctx, p, po.UUID)
		refs := []string{*po.PayoutTransactions[0].BankReference, *po.PayoutTransactions[1].BankReference}
		outcome := func(ref string, v rail.Verdict, reason string) rail.Effect {
			t.Helper()
			res, err := store.Do(ctx, e.DB, func(tx *store.Tx) (bankfile.Result, error) {
				return e.Files.Outcome(ctx, tx, bankfile.Evidence{BankReference: ref, Verdict: v, Reason: reason, Source: bankfile.Source{Document: "test"}})
			})
			if err != nil {
				t.Fatal(err)
			}
			return res.Effect
		}
		if outcome(refs[0], rail.Done, "") != rail.Changed || outcome(refs[1], rail.Failed, "AC04 Closed account") != rail.Changed {
			t.Fatal("the first outcomes changed nothing")
		}
		before := e.Balance(t, p)
		if got := outcome(refs[0], rail.Returned, "AC04 Account closed after payment"); got != rail.Changed {
			t.Fatalf("the return: %s", got)
		}
		if outcome(refs[1], rail.Returned, "MS03") != rail.Contrary || outcome(refs[0], rail.Failed, "AC01") != rail.Contrary {
			t.Error("a return of a failed transaction, or a failure of a returned one, was not contrary")
		}
		po, _ = e.Payouts.Get(ctx, p, po.UUID)
		tx0 := po.PayoutTransactions[0]
		if po.Status != payout.Completed || po.TotalAmount.String() != "30.00" || tx0.Status != payout.TxReturned || tx0.FailureReason != "AC04 Account closed after payment" ||
			po.PayoutTransactions[1].Status != payout.TxFailed {
			t.Errorf("after the return: payout %s %s, transactions %+v", po.Status, po.TotalAmount, po.PayoutTransactions)
		}
		if after := e.Balance(t, p); after.Available-before.Available != 1000+feeMinor || after.Outgoing != before.Outgoing {
			t.Errorf("available %d → %d, outgoing %d → %d; want 10.50 back in available", before.Available, after.Available, before.Outgoing, after.Outgoing)
		}
		var n int
		if err := e.DB.Read().QueryRow(`SELECT count(*) FROM balance_records WHERE merchant_id = $1 AND reference_id = $2 AND request_type = 'money_in'
			AND transaction_type = 'payout' AND status = 'done' AND amount = 1000 AND fees = $3 AND total = $4`, p.MerchantID, tx0.UUID, feeMinor, 1000+feeMinor).Scan(&n); err != nil || n != 1 {
			t.Errorf("%d money_in payout records of the return (%v), want 1", n, err)
		}
		var body string
		if err := e.DB.Read().QueryRow(`SELECT body FROM webhook_events WHERE merchant_id = $1 AND event_type = 'payout_transaction.returned'`, p.MerchantID).Scan(&body); err != nil {
			t.Fatalf("no payout_transaction.returned event: %v", err)
		}
		var ev struct {
			PayoutUUID  string `json:"payout_uuid"`
			Transaction struct {
				UUID          string `json:"uuid"`
				Status        string `json:"status"`
				FailureReason string `json:"failure_reason"`
			} `json:"payout_transaction"`
		}
		one := &ev.Transaction
		if err := json.Unmarshal([]byte(body), &ev); err != nil || ev.PayoutUUID != po.UUID || one.UUID != tx0.UUID || one.Status != "returned" ||
			one.FailureReason != tx0.FailureReason {
			t.Errorf("payout_transaction.returned body %s (%v)", body, err)
		}
		if problems, err := ledger.Verify(ctx, e.DB.Read()); err != nil || len(problems) != 0 {
			t.Errorf("ledger.Verify = %v, %v", problems, err)
		}
	})
}
