package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"payd/internal/fault"
	"payd/internal/store"
)

// RequestType says whether a balance record brings money in or takes it out.
type RequestType string

const (
	MoneyIn  RequestType = "money_in"
	MoneyOut RequestType = "money_out"
)

// TransactionType is the movement category of a balance record (CONTRACT §10).
type TransactionType string

const (
	Payment        TransactionType = "payment"
	Payout         TransactionType = "payout"
	Settlement     TransactionType = "settlement"
	Refund         TransactionType = "refund"
	TopUp          TransactionType = "top_up"
	Withdrawal     TransactionType = "withdrawal"
	Dispute        TransactionType = "dispute"
	DisputeFee     TransactionType = "dispute_fee"
	CashbackPayout TransactionType = "cashback_payout"
	TransferIn     TransactionType = "transfer_in"
	TransferOut    TransactionType = "transfer_out"
)

// Status is where a balance record stands: waiting until its money has
// finished moving, then done or failed. No other transition exists.
type Status string

const (
	Waiting Status = "waiting"
	Done    Status = "done"
	Failed  Status = "failed"
)

// Record is a balance record: the "Balance ID" row a merchant sees in balance
// history. Amounts are minor units of Currency.
type Record struct {
	ID              string
	MerchantID      string
	AccountID       int64
	Currency        string
	RequestType     RequestType
	TransactionType TransactionType
	Status          Status
	// Amount is the net amount: what reaches (money_in) or leaves (money_out) the balance less fees.
	Amount int64
	// Fees charged on the movement.
	Fees int64
	// Outgoing is the part that passes through the outgoing bucket (money_out).
	Outgoing int64
	// Total is the gross amount: Amount plus Fees.
	Total       int64
	ReferenceID string
	// SelfReference makes the record its own reference: a transfer is known
	// by the Balance ID of the record it writes.
	SelfReference bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// CreateRecord stores r with a fresh Balance ID, which it sets on r.
func CreateRecord(ctx context.Context, tx *store.Tx, r *Record) error {
	if r.Status == "" {
		r.Status = Waiting
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = r.CreatedAt
	}
	id, err := store.InsertWithID(ctx, store.BalanceIDLen, func(id string) (bool, error) {
		ref := r.ReferenceID
		if r.SelfReference {
			ref = id
		}
		return tx.InsertDrawn(ctx, `INSERT INTO balance_records
			(id, merchant_id, account_id, currency, request_type, transaction_type, status, amount, fees, outgoing, total, reference_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			id, r.MerchantID, r.AccountID, r.Currency, string(r.RequestType), string(r.TransactionType), string(r.Status),
			r.Amount, r.Fees, r.Outgoing, r.Total, ref, r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
	})
	if err != nil {
		return fmt.Errorf("create balance record: %w", err)
	}
	r.ID = id
	if r.SelfReference {
		r.ReferenceID = id
	}
	return nil
}

// Finish moves a waiting record to done or failed. A record that is no longer
// waiting is refused with INVALID_STATE, so two racing finishers cannot both win.
func Finish(ctx context.Context, tx *store.Tx, merchantID, id string, to Status, at time.Time) error {
	if to != Done && to != Failed {
		return fmt.Errorf("finish balance record %s: %q is not a final status", id, to)
	}
	// Sent (store.Tx.SendOne): a record that is not waiting fails the
	// transaction, with the next statement that goes to the server.
	return tx.SendOne(ctx, `UPDATE balance_records SET status = $1, updated_at = $2
		WHERE id = $3 AND merchant_id = $4 AND status = $5 RETURNING id`, []any{string(to), at.UnixMilli(), id, merchantID, string(Waiting)},
		fault.State("balance record %s is not waiting", id))
}

const recordColumns = `id, merchant_id, account_id, currency, request_type, transaction_type, status,
	amount, fees, outgoing, total, reference_id, created_at, updated_at`

func scanRecord(row interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var created, updated int64
	err := row.Scan(&r.ID, &r.MerchantID, &r.AccountID, &r.Currency, &r.RequestType, &r.TransactionType, &r.Status,
		&r.Amount, &r.Fees, &r.Outgoing, &r.Total, &r.ReferenceID, &created, &updated)
	r.CreatedAt = time.UnixMilli(created).UTC()
	r.UpdatedAt = time.UnixMilli(updated).UTC()
	return r, err
}

// GetRecord reads one of merchantID's balance records; another merchant's id
// answers as not found.
func GetRecord(ctx context.Context, q store.Querier, merchantID, id string) (Record, error) {
	r, err := scanRecord(q.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM balance_records WHERE id = $1 AND merchant_id = $2`, id, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fault.NotFoundf("no balance record %s", id)
	}
	if err != nil {
		return Record{}, fmt.Errorf("get balance record %s: %w", id, err)
	}
	return r, nil
}
