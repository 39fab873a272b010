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
	// The four buckets' rows are read in one pass, however the server plans
	// it: with a subquery per bucket and account, PostgreSQL planned each on
	// a small table (with statistics) as a scan of the whole table, 32 scans
	// a read for the demo merchant. The merchant is named as $1 on both
	// tables: Citus routes a query to one shard only when every table is
	// tied to the same constant.
	rows, err := q.QueryContext(ctx, `SELECT a.id, a.currency, a.min_balance,
		CAST(COALESCE(SUM(b.balance) FILTER (WHERE b.name = 'available'), 0) AS BIGINT),
		CAST(COALESCE(SUM(b.balance) FILTER (WHERE b.name = 'incoming'), 0) AS BIGINT),
		CAST(COALESCE(SUM(b.balance) FILTER (WHERE b.name = 'outgoing'), 0) AS BIGINT),
		CAST(COALESCE(SUM(b.balance) FILTER (WHERE b.name = 'rolling_reserve'), 0) AS BIGINT)
		FROM accounts a LEFT JOIN ledger_buckets b ON b.merchant_id = $1 AND b.account_id = a.id
			AND b.name IN ('available', 'incoming', 'outgoing', 'rolling_reserve')
		WHERE a.merchant_id = $1 AND a.kind = $2 AND ($3 = '' OR a.currency = $3)
		GROUP BY a.id, a.currency, a.min_balance
		ORDER BY a.currency, a.id`, merchantID, kind, currency)
	if err != nil {
		return nil, fmt.Errorf("read balances: %w", err)
	}
	defer rows.Close()
	var out []Balance
	for rows.Next() {
		var b Balance
		var minBalance int64
		if err := rows.Scan(&b.AccountID, &b.Currency, &minBalance, &b.Available, &b.Incoming, &b.Outgoing, &b.RollingReserve); err != nil {
			return nil, fmt.Errorf("read balances: %w", err)
		}
		b.Withdrawable = max(0, b.Available-minBalance)
		out = append(out, b)
	}
	return out, rows.Err()
}
