package ledger

import (
	"context"
	"fmt"
	"time"

	"payd/internal/store"
)

// Return is money the bank sent back after it left payd (CONTRACT §25): a
// payout transaction, a settlement or an external transfer that was done,
// returned by the recipient's bank.
type Return struct {
	MerchantID, Currency string
	// Operation names the journal entry: its kind is Operation+".returned"
	// ("payout_transaction", "settlement", "transfer").
	Operation string
	// Account is the account the money left from and comes back to.
	Account int64
	// Category is the returned record's transaction type (payout,
	// settlement, transfer_out): the return's balance record has it too.
	Category TransactionType
	// Reference is the returned record's uuid, the return's reference_id.
	Reference string
	// Amount went out of payd; Fee went to payd's fees with it. Both come
	// back, as a failure gives them back.
	Amount, Fee int64
}

// GiveBack books r in one step of tx: a new money_in balance record of r's
// category, done, whose reference is the returned record (amount, fees and
// total as the money_out record had them: the fee is given back with the
// amount), and its journal entry, which takes the amount back from external
// and the fee back from fees into available. The money_out record stays
// done: what happened to it is history, and the return is a movement of its
// own. The caller holds the ledger lock of r.Account and changes its own
// record.
func GiveBack(ctx context.Context, tx *store.Tx, r Return, at time.Time) (Record, error) {
	if r.Amount <= 0 || r.Fee < 0 {
		return Record{}, fmt.Errorf("return of %s %s: amount %d and fee %d", r.Operation, r.Reference, r.Amount, r.Fee)
	}
	rec := Record{MerchantID: r.MerchantID, AccountID: r.Account, Currency: r.Currency, RequestType: MoneyIn,
		TransactionType: r.Category, Status: Done, Amount: r.Amount, Fees: r.Fee, Total: r.Amount + r.Fee,
		ReferenceID: r.Reference, CreatedAt: at}
	if err := CreateRecord(ctx, tx, &rec); err != nil {
		return Record{}, err
	}
	_, err := Post(ctx, tx, Entry{MerchantID: r.MerchantID, Currency: r.Currency, Kind: r.Operation + ".returned", RecordID: rec.ID, At: at,
		Legs: []Leg{
			{Account: r.Account, Bucket: External, Amount: -r.Amount},
			{Account: r.Account, Bucket: Fees, Amount: -r.Fee},
			{Account: r.Account, Bucket: Available, Amount: r.Amount + r.Fee},
		}})
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}
