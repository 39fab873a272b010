package ledger

import (
	"context"
	"database/sql"
	"time"

	"payd/internal/store"
)

// Outflow is money an operation (a settlement, a transfer) moved from an
// account's available balance into outgoing when it was submitted, and that
// now lands: in another account of the merchant, out of payd to a bank, or,
// when the operation failed, back in available.
type Outflow struct {
	MerchantID, Currency string
	// Operation names the journal entry ("settlement", "transfer"): its
	// entries are Operation+".completed" and Operation+".failed".
	Operation string
	// RecordID is the Balance ID of the outflow's money-out record;
	// Reference the operation's uuid, which the receiving account's
	// Transfer In record points to.
	RecordID, Reference string
	From                int64
	// To is the receiving account of the merchant; none means out of payd.
	To sql.NullInt64
	// Amount lands; Fee, held in outgoing with it, goes to payd's fees on
	// success and back to available on failure.
	Amount, Fee int64
}

// Land finishes an outflow in one step of tx: the journal entry that empties
// outgoing, the money-out record's final status, and on success into an
// account, that account's Transfer In record. The caller holds the ledger
// locks of From and To (in account id order) and updates its own record.
func Land(ctx context.Context, tx *store.Tx, o Outflow, done bool, at time.Time) error {
	held := o.Amount + o.Fee
	legs := []Leg{{Account: o.From, Bucket: Outgoing, Amount: -held}}
	kind, final := o.Operation+".completed", Done
	switch {
	case !done:
		kind, final = o.Operation+".failed", Failed
		legs = append(legs, Leg{Account: o.From, Bucket: Available, Amount: held})
	case o.To.Valid:
		legs = append(legs, Leg{Account: o.From, Bucket: Fees, Amount: o.Fee}, Leg{Account: o.To.Int64, Bucket: Available, Amount: o.Amount})
	default:
		legs = append(legs, Leg{Account: o.From, Bucket: Fees, Amount: o.Fee}, Leg{Account: o.From, Bucket: External, Amount: o.Amount})
	}
	if _, err := Post(ctx, tx, Entry{MerchantID: o.MerchantID, Currency: o.Currency, Kind: kind, RecordID: o.RecordID, At: at, Legs: legs}); err != nil {
		return err
	}
	if err := Finish(ctx, tx, o.MerchantID, o.RecordID, final, at); err != nil {
		return err
	}
	if !done || !o.To.Valid {
		return nil
	}
	in := Record{MerchantID: o.MerchantID, AccountID: o.To.Int64, Currency: o.Currency, RequestType: MoneyIn,
		TransactionType: TransferIn, Status: Done, Amount: o.Amount, Total: o.Amount, ReferenceID: o.Reference, CreatedAt: at}
	return CreateRecord(ctx, tx, &in)
}
