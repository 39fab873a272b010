package ledger

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/store"
)

// HistoryQuery selects balance records of one account, newest first.
type HistoryQuery struct {
	MerchantID string
	AccountID  int64
	// From is inclusive, To exclusive; zero means unbounded.
	From, To time.Time
	// Cursor continues a previous page (its NextCursor).
	Cursor string
	Size   int
}

// HistoryPage is one page of balance history.
type HistoryPage struct {
	Records    []Record
	NextCursor string
	HasMore    bool
}

// History lists balance records by (created_at, id) descending. The cursor is
// the position of the last record returned, so records created meanwhile
// neither repeat nor shift a page.
func History(ctx context.Context, q store.Querier, hq HistoryQuery) (HistoryPage, error) {
	if hq.Size <= 0 {
		hq.Size = 20
	}
	afterAt, afterID, err := decodeCursor(hq.Cursor)
	if err != nil {
		return HistoryPage{}, err
	}
	var from, to int64 = 0, 1 << 62
	if !hq.From.IsZero() {
		from = hq.From.UnixMilli()
	}
	if !hq.To.IsZero() {
		to = hq.To.UnixMilli()
	}
	rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM balance_records
		WHERE merchant_id = $1 AND account_id = $2 AND created_at >= $3 AND created_at < $4
		  AND (created_at < $5 OR (created_at = $5 AND id < $6))
		ORDER BY created_at DESC, id DESC LIMIT $7`,
		hq.MerchantID, hq.AccountID, from, to, afterAt, afterID, hq.Size+1)
	if err != nil {
		return HistoryPage{}, fmt.Errorf("balance history: %w", err)
	}
	defer rows.Close()
	var page HistoryPage
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return HistoryPage{}, fmt.Errorf("balance history: %w", err)
		}
		page.Records = append(page.Records, r)
	}
	if err := rows.Err(); err != nil {
		return HistoryPage{}, fmt.Errorf("balance history: %w", err)
	}
	if len(page.Records) > hq.Size {
		page.Records = page.Records[:hq.Size]
		page.HasMore = true
		last := page.Records[len(page.Records)-1]
		page.NextCursor = encodeCursor(last.CreatedAt.UnixMilli(), last.ID)
	}
	return page, nil
}

func encodeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + ":" + id))
}

// decodeCursor reads a cursor; the empty cursor starts at the newest record.
func decodeCursor(c string) (int64, string, error) {
	if c == "" {
		return 1 << 62, "", nil
	}
	bad := fault.Field("cursor", "is not a cursor this endpoint returned")
	if len(c) > 64 {
		return 0, "", bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	at, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || n < 0 || len(id) != store.BalanceIDLen {
		return 0, "", bad
	}
	return n, id, nil
}

// Between lists every balance record of an account created in [from, to),
// oldest first (by created_at, then Balance ID): the rows of a period's
// statement, as balance history shows them.
func Between(ctx context.Context, q store.Querier, merchantID string, accountID int64, from, to time.Time) ([]Record, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM balance_records
		WHERE merchant_id = $1 AND account_id = $2 AND created_at >= $3 AND created_at < $4
		ORDER BY created_at, id`, merchantID, accountID, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("balance records of account %d: %w", accountID, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("balance records of account %d: %w", accountID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// BucketMove is one entry's movement of a bucket: when the entry was made
// and the net amount it added.
type BucketMove struct {
	At     time.Time
	Amount int64
}

// BucketHistory reads how an account's bucket moved over [from, to), in
// time: opening is its balance at from (every posting made before from),
// moves the entries made in the period that moved it, each with its net
// amount over the bucket's rows (slots, Entry.Spread), in the order of
// their times (then of their application). The balance at any instant t of
// the period is opening plus the moves made at or before t. Only the
// postings made since from are read: opening is the bucket's balance less
// those, in one statement, so both come from one snapshot.
func BucketHistory(ctx context.Context, q store.Querier, merchantID string, accountID int64, bucket Bucket, from, to time.Time) (opening int64, moves []BucketMove, err error) {
	err = q.QueryRowContext(ctx, `SELECT CAST(SUM(b.balance) - COALESCE((SELECT SUM(p.amount) FROM journal_entries e
		JOIN postings p ON p.merchant_id = e.merchant_id AND p.entry_id = e.id WHERE e.merchant_id = $1 AND e.created_at >= $2
		  AND p.bucket_id IN (SELECT id FROM ledger_buckets WHERE merchant_id = $1 AND account_id = $3 AND name = $4)), 0) AS BIGINT)
		FROM ledger_buckets b WHERE b.merchant_id = $1 AND b.account_id = $3 AND b.name = $4
		HAVING COUNT(*) > 0`,
		merchantID, from.UnixMilli(), accountID, string(bucket)).Scan(&opening)
	if err != nil {
		return 0, nil, fmt.Errorf("bucket %s of account %d: %w", bucket, accountID, err)
	}
	rows, err := q.QueryContext(ctx, `SELECT e.created_at, CAST(SUM(p.amount) AS BIGINT) FROM journal_entries e JOIN postings p ON p.merchant_id = e.merchant_id AND p.entry_id = e.id
		WHERE e.merchant_id = $1 AND e.created_at >= $2 AND e.created_at < $3
		  AND p.bucket_id IN (SELECT id FROM ledger_buckets WHERE merchant_id = $1 AND account_id = $4 AND name = $5)
		GROUP BY e.id, e.created_at
		ORDER BY e.created_at, e.id`, merchantID, from.UnixMilli(), to.UnixMilli(), accountID, string(bucket))
	if err != nil {
		return 0, nil, fmt.Errorf("postings of account %d: %w", accountID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m BucketMove
		var at int64
		if err := rows.Scan(&at, &m.Amount); err != nil {
			return 0, nil, fmt.Errorf("postings of account %d: %w", accountID, err)
		}
		m.At = time.UnixMilli(at).UTC()
		moves = append(moves, m)
	}
	return opening, moves, rows.Err()
}
