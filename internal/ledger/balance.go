package ledger

import (
	"context"
	"fmt"

	"payd/internal/store"
)

// Balance is an account's merchant-facing buckets, in minor units.
type Balance struct {
	AccountID      int64
	Currency       string
	Available      int64
	Incoming       int64
	Outgoing       int64
	RollingReserve int64
	// Withdrawable is what may leave the account now: available less the
	// account's minimum balance, never below zero.
	Withdrawable int64
}

// Balances returns the balances of merchantID's accounts of the given kind
// ("payments" or "treasury"), ordered by currency. currency, when not empty,
// selects one.
func Balances(ctx context.Context, q store.Querier, merchantID, kind, currency string) ([]Balance, error) {
	// A bucket's balance is the sum of its rows (its slots, Entry.Spread).
	rows, err := q.QueryContext(ctx, `SELECT a.id, a.currency, a.min_balance, b.name, CAST(SUM(b.balance) AS BIGINT)
		FROM accounts a JOIN ledger_buckets b ON b.merchant_id = a.merchant_id AND b.account_id = a.id
		WHERE a.merchant_id = $1 AND a.kind = $2 AND ($3 = '' OR a.currency = $3)
		  AND b.name IN ('available', 'incoming', 'outgoing', 'rolling_reserve')
		GROUP BY a.id, a.currency, a.min_balance, b.name
		ORDER BY a.currency, a.id`, merchantID, kind, currency)
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	defer rows.Close()
	var out []Balance
	var minBalance int64
	for rows.Next() {
		var (
			id, min, amount int64
			cur, name       string
		)
		if err := rows.Scan(&id, &cur, &min, &name, &amount); err != nil {
			return nil, fmt.Errorf("read balances: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].AccountID != id {
			out = append(out, Balance{AccountID: id, Currency: cur})
			minBalance = min
		}
		b := &out[len(out)-1]
		switch Bucket(name) {
		case Available:
			b.Available = amount
			b.Withdrawable = max(0, amount-minBalance)
		case Incoming:
			b.Incoming = amount
		case Outgoing:
			b.Outgoing = amount
		case RollingReserve:
			b.RollingReserve = amount
		}
	}
	return out, rows.Err()
}
