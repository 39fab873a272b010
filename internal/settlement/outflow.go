package settlement

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Table holds the rows of an operation whose money leaves an account
// through outgoing: a settlement, or a transfer, which ends as a settlement
// does. Each row is keyed by merchant_id and uuid and has status,
// completed_at, failure_reason and updated_at.
type Table string

const (
	Settlements Table = "settlements"
	Transfers   Table = "transfers"
)

// End is how an operation ended, as Finish recorded it on its row.
type End struct {
	// Status is completed, failed or returned, the status of settlements
	// and transfers alike.
	Status      string
	CompletedAt sql.NullInt64
	// Failure is the reason of a failed operation, null for a completed one.
	Failure sql.NullString
}

// ReadLocked reads an operation's row (read) under the ledger locks of the
// accounts its money moves between (lock, by ledger.LockAccounts), and the
// merchant's time. The row is read once to learn its accounts and again
// once they are locked: it may have moved on while the locks were awaited.
func ReadLocked[R any](ctx context.Context, tx *store.Tx, clk merchant.Clock, merchantID string, read func() (R, error), lock func(R) error) (R, time.Time, error) {
	r, err := read()
	if err == nil {
		err = lock(r)
	}
	if err == nil {
		r, err = read()
	}
	if err != nil {
		var none R
		return none, time.Time{}, err
	}
	now, err := clk.Read(ctx, tx, merchantID)
	return r, now, err
}

// Finish ends an operation in tx: its money lands (ledger.Land: where o
// says when done, back in available when not), and its row in table takes
// the final status, the time and, when it failed, reason. The caller holds
// the ledger locks of o's accounts (in account id order) and sets End on
// its copy of the row.
func Finish(ctx context.Context, tx *store.Tx, table Table, o ledger.Outflow, done bool, reason string, now time.Time) (End, error) {
	if err := ledger.Land(ctx, tx, o, done, now); err != nil {
		return End{}, err
	}
	end := End{Status: string(Completed), CompletedAt: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}}
	if !done {
		end.Status, end.Failure = string(Failed), sql.NullString{String: reason, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+string(table)+` SET status = $1, completed_at = $2, failure_reason = $3, updated_at = $2
		WHERE merchant_id = $4 AND uuid = $5`, end.Status, end.CompletedAt.Int64, end.Failure, o.MerchantID, o.Reference); err != nil {
		return End{}, fmt.Errorf("%s %s: %w", o.Operation, o.Reference, err)
	}
	return end, nil
}

// categories are the balance-record categories of the operations' money.
var categories = map[Table]ledger.TransactionType{Settlements: ledger.Settlement, Transfers: ledger.TransferOut}

// Return books the return of a completed operation that left for a bank
// (CONTRACT §25): its amount and fee come back to available as a new
// money_in balance record of its category (ledger.GiveBack), and its row
// in table becomes returned with reason as its failure_reason; completed_at
// stays. The caller holds the ledger lock of o.From and sets End on its
// copy of the row.
func Return(ctx context.Context, tx *store.Tx, table Table, o ledger.Outflow, reason string, now time.Time) (End, error) {
	if o.To.Valid {
		return End{}, fmt.Errorf("%s %s went into an account of payd: no bank can return it", o.Operation, o.Reference)
	}
	if _, err := ledger.GiveBack(ctx, tx, ledger.Return{MerchantID: o.MerchantID, Currency: o.Currency, Operation: o.Operation, Account: o.From,
		Category: categories[table], Reference: o.Reference, Amount: o.Amount, Fee: o.Fee}, now); err != nil {
		return End{}, err
	}
	end := End{Status: string(Returned), Failure: sql.NullString{String: reason, Valid: true}}
	if _, err := tx.ExecContext(ctx, `UPDATE `+string(table)+` SET status = $1, failure_reason = $2, updated_at = $3
		WHERE merchant_id = $4 AND uuid = $5`, end.Status, end.Failure, now.UnixMilli(), o.MerchantID, o.Reference); err != nil {
		return End{}, fmt.Errorf("%s %s: %w", o.Operation, o.Reference, err)
	}
	return end, nil
}

// Announce emits ev, with payload as its body, to the events log, the
// merchant's webhook endpoints and the operation's own webhook target, if
// it has one: settlement.<status> and transfer.<status> on creation and on
// Finish.
func Announce(ctx context.Context, tx *store.Tx, webhooks *webhook.Dispatcher, ev webhook.Event, payload func() (any, error)) error {
	var err error
	if ev.Payload, err = payload(); err != nil {
		return err
	}
	_, err = webhooks.Emit(ctx, tx, ev)
	return err
}
