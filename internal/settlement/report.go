package settlement

import (
	"context"
	"fmt"
	"time"

	"payd/internal/store"
	"payd/internal/webhook"
)

// What settlement reports read of settlements: where an account's
// settlement and report events go, and the reference each settlement
// carries to the merchant's bank statement.

// NotificationTarget is the webhook_notification of an account's settlement
// config (CONTRACT §16: used for that account's settlements and reports);
// zero when the account has none.
func NotificationTarget(ctx context.Context, q store.Querier, merchantID string, accountID int64) (webhook.Target, error) {
	var t webhook.Target
	err := q.QueryRowContext(ctx, `SELECT endpoint_url, authorization_header FROM settlement_configs WHERE account_id = $1 AND merchant_id = $2`,
		accountID, merchantID).Scan(&t.EndpointURL, &t.AuthorizationHeader)
	if isNoRows(err) {
		return webhook.Target{}, nil
	}
	if err != nil {
		return webhook.Target{}, fmt.Errorf("settlement notification target: %w", err)
	}
	return t, nil
}

// References maps the Balance ID of each settlement of an account
// submitted in [from, to) to its reference: the local date of an
// end-of-day settlement, the uuid otherwise (what the bank statement shows).
func References(ctx context.Context, q store.Querier, merchantID string, accountID int64, from, to time.Time) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+rowColumns+` FROM settlements WHERE merchant_id = $1 AND account_id = $2
		AND created_at >= $3 AND created_at < $4`, merchantID, accountID, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("settlement references: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("settlement references: %w", err)
		}
		v, err := r.view()
		if err != nil {
			return nil, err
		}
		out[r.balanceID] = v.Reference
	}
	return out, rows.Err()
}
