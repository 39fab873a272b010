package ledger

import (
	"context"
	"fmt"

	"payd/internal/store"
)

// Problem is one broken ledger invariant.
type Problem struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Verify checks every ledger invariant over the whole database and returns
// the breaks it finds (none means the ledger is sound):
//   - every journal entry's postings sum to zero per currency;
//   - every bucket's balance equals the sum of its postings;
//   - each bucket's postings, in order, carry a running balance that adds up;
//   - no bucket that may not go negative is below zero, and no posting took
//     it there, unless the movement allowed it (the posting's overdraft flag:
//     a lost card dispute's); a credit never takes a bucket below zero, and
//     one into a bucket a dispute overdrew may leave it there;
//   - postings are in their bucket's currency;
//   - an entry and its balance record belong to the same merchant, and so
//     do each of its postings and the posting's bucket.
//
// Every check joins on merchant_id, so on Citus each runs on every shard at
// once, without moving rows between nodes.
func Verify(ctx context.Context, q store.Querier) ([]Problem, error) {
	checks := []struct {
		name  string
		query string
	}{
		{"entry_balances", `SELECT 'entry ' || CAST(entry_id AS TEXT) || ' ' || currency || ' sums to ' || CAST(SUM(amount) AS TEXT)
			FROM postings GROUP BY merchant_id, entry_id, currency HAVING SUM(amount) <> 0`},
		{"entry_has_postings", `SELECT 'entry ' || CAST(e.id AS TEXT) || ' has no postings'
			FROM journal_entries e WHERE NOT EXISTS (SELECT 1 FROM postings p WHERE p.merchant_id = e.merchant_id AND p.entry_id = e.id)`},
		{"bucket_sum", `SELECT 'bucket ' || CAST(b.id AS TEXT) || ' (' || b.name || ') holds ' || CAST(b.balance AS TEXT) || ' but its postings sum to ' || CAST(COALESCE(s.total, 0) AS TEXT)
			FROM ledger_buckets b LEFT JOIN (SELECT merchant_id, bucket_id, SUM(amount) AS total FROM postings GROUP BY merchant_id, bucket_id) s
			  ON s.merchant_id = b.merchant_id AND s.bucket_id = b.id
			WHERE b.balance <> COALESCE(s.total, 0)`},
		{"running_balance", `SELECT 'posting ' || CAST(id AS TEXT) || ' says balance ' || CAST(balance_after AS TEXT) || ' but the running sum is ' || CAST(running AS TEXT)
			FROM (SELECT id, balance_after, SUM(amount) OVER (PARTITION BY merchant_id, bucket_id ORDER BY id) AS running FROM postings) r
			WHERE balance_after <> running`},
		{"non_negative", `SELECT 'bucket ' || CAST(b.id AS TEXT) || ' (' || b.name || ') is ' || CAST(b.balance AS TEXT)
			FROM ledger_buckets b WHERE b.balance < 0 AND NOT b.allow_negative
			  AND NOT COALESCE((SELECT p.overdraft FROM postings p WHERE p.merchant_id = b.merchant_id AND p.bucket_id = b.id AND p.amount < 0 ORDER BY p.id DESC LIMIT 1), FALSE)`},
		{"posting_non_negative", `SELECT 'posting ' || CAST(p.id AS TEXT) || ' took bucket ' || CAST(b.id AS TEXT) || ' (' || b.name || ') to ' || CAST(p.balance_after AS TEXT) || ' without the movement allowing it'
			FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
			WHERE p.balance_after < 0 AND p.amount < 0 AND NOT b.allow_negative AND NOT p.overdraft`},
		{"posting_currency", `SELECT 'posting ' || CAST(p.id AS TEXT) || ' is in ' || p.currency || ' but its bucket is in ' || b.currency
			FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id WHERE p.currency <> b.currency`},
		// A row's merchant is found by its merchant_id alone (the tables are
		// distributed by it on Citus), so ownership is checked as presence:
		// the row an entry or posting names must be its own merchant's.
		{"record_owner", `SELECT 'entry ' || CAST(e.id AS TEXT) || ' of merchant ' || e.merchant_id || ' names balance record ' || e.balance_record_id || ', which is not that merchant''s'
			FROM journal_entries e WHERE e.balance_record_id IS NOT NULL
			  AND NOT EXISTS (SELECT 1 FROM balance_records r WHERE r.merchant_id = e.merchant_id AND r.id = e.balance_record_id)`},
		{"posting_owner", `SELECT 'posting ' || CAST(p.id AS TEXT) || ' of merchant ' || p.merchant_id || ' names entry ' || CAST(p.entry_id AS TEXT) || ', which is not that merchant''s'
			FROM postings p WHERE NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.merchant_id = p.merchant_id AND e.id = p.entry_id)`},
		{"posting_bucket_owner", `SELECT 'posting ' || CAST(p.id AS TEXT) || ' of merchant ' || p.merchant_id || ' names bucket ' || CAST(p.bucket_id AS TEXT) || ', which is not that merchant''s'
			FROM postings p WHERE NOT EXISTS (SELECT 1 FROM ledger_buckets b WHERE b.merchant_id = p.merchant_id AND b.id = p.bucket_id)`},
	}
	var out []Problem
	for _, c := range checks {
		rows, err := q.QueryContext(ctx, c.query)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", c.name, err)
		}
		for rows.Next() {
			var detail string
			if err := rows.Scan(&detail); err != nil {
				rows.Close()
				return nil, fmt.Errorf("verify %s: %w", c.name, err)
			}
			out = append(out, Problem{Check: c.name, Detail: detail})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("verify %s: %w", c.name, err)
		}
	}
	return out, nil
}
