package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestGiveBack: a payout that left (amount to external, fee to fees) and
// is returned gives amount and fee back to available in one balanced
// entry, with a new done money_in record of the payout's category naming
// the payout; the money_out record stays done and the ledger verifies.
func TestGiveBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		deposit(t, db, merchant, account, 1000)
		out, err := store.Do(ctx, db, func(tx *store.Tx) (ledger.Record, error) {
			r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyOut,
				TransactionType: ledger.Payout, Status: ledger.Done, Amount: 300, Fees: 20, Outgoing: 320, Total: 320, ReferenceID: "PAYOUT01", CreatedAt: t0}
			if err := ledger.CreateRecord(ctx, tx, &r); err != nil {
				return r, err
			}
			_, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "payout_transaction.done", RecordID: r.ID, At: t0,
				Legs: []ledger.Leg{{Account: account, Bucket: ledger.Available, Amount: -320}, {Account: account, Bucket: ledger.External, Amount: 300},
					{Account: account, Bucket: ledger.Fees, Amount: 20}}})
			return r, err
		})
		if err != nil {
			t.Fatal(err)
		}
		back, err := store.Do(ctx, db, func(tx *store.Tx) (ledger.Record, error) {
			return ledger.GiveBack(ctx, tx, ledger.Return{MerchantID: merchant, Currency: "JPY", Operation: "payout_transaction", Account: account,
				Category: ledger.Payout, Reference: "PAYOUT01", Amount: 300, Fee: 20}, t0.Add(48*time.Hour))
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ledger.GetRecord(ctx, db.Read(), merchant, back.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := ledger.Record{ID: back.ID, MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn,
			TransactionType: ledger.Payout, Status: ledger.Done, Amount: 300, Fees: 20, Total: 320, ReferenceID: "PAYOUT01",
			CreatedAt: t0.Add(48 * time.Hour), UpdatedAt: t0.Add(48 * 3600e9)}
		if got != want {
			t.Errorf("the return's record\n%+v\nwant\n%+v", got, want)
		}
		if old, _ := ledger.GetRecord(ctx, db.Read(), merchant, out.ID); old.Status != ledger.Done {
			t.Errorf("the returned record is %s, want it done still", old.Status)
		}
		if got, want := buckets(t, db, account), map[ledger.Bucket]int64{ledger.Available: 1000, ledger.External: -1000}; !maps.Equal(got, want) {
			t.Errorf("buckets %v, want %v", got, want)
		}
		if n := count(t, db, `SELECT count(*) FROM journal_entries WHERE merchant_id = $1 AND kind = 'payout_transaction.returned' AND balance_record_id = $2`, merchant, back.ID); n != 1 {
			t.Errorf("%d return entries, want 1", n)
		}
		if problems, err := ledger.Verify(ctx, db.Read()); err != nil || len(problems) != 0 {
			t.Errorf("Verify = %v, %v", problems, err)
		}
	})
}

// TestGiveBackRefuses: a return of nothing is a programming error, not a
// movement.
func TestGiveBackRefuses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		_, err := store.Do(ctx, db, func(tx *store.Tx) (ledger.Record, error) {
			return ledger.GiveBack(ctx, tx, ledger.Return{MerchantID: merchant, Currency: "JPY", Operation: "settlement", Account: account,
				Category: ledger.Settlement, Reference: "S1"}, t0)
		})
		if err == nil {
			t.Error("a return of 0 was booked")
		}
	})
}
