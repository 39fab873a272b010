package ledger

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
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

// BucketChange is one posting to a bucket: the order it was applied in
// (postings to one bucket are serialised by its row lock), when its entry
// was made, and the balance it left.
type BucketChange struct {
	Seq          int64
	At           time.Time
	BalanceAfter int64
}

// BucketChanges reads how an account's bucket moved up to to: opening is
// the last posting made before from (zero Seq and balance when there is
// none), changes every posting applied after it and made before to, in the
// order they were applied. The balance at any instant t in [from, to) is the
// BalanceAfter of the latest-applied of those made at or before t.
func BucketChanges(ctx context.Context, q store.Querier, merchantID string, accountID int64, bucket Bucket, from, to time.Time) (opening BucketChange, changes []BucketChange, err error) {
	var bucketID int64
	if err := q.QueryRowContext(ctx, `SELECT id FROM ledger_buckets WHERE merchant_id = $1 AND account_id = $2 AND name = $3`,
		merchantID, accountID, string(bucket)).Scan(&bucketID); err != nil {
		return BucketChange{}, nil, fmt.Errorf("bucket %s of account %d: %w", bucket, accountID, err)
	}
	// Backwards along the bucket's postings: only those after from are read.
	var at int64
	err = q.QueryRowContext(ctx, `SELECT p.id, e.created_at, p.balance_after FROM postings p JOIN journal_entries e ON e.id = p.entry_id
		WHERE p.bucket_id = $1 AND e.created_at < $2 ORDER BY p.id DESC LIMIT 1`, bucketID, from.UnixMilli()).Scan(&opening.Seq, &at, &opening.BalanceAfter)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		opening = BucketChange{}
	case err != nil:
		return BucketChange{}, nil, fmt.Errorf("opening balance of account %d: %w", accountID, err)
	default:
		opening.At = time.UnixMilli(at).UTC()
	}
	rows, err := q.QueryContext(ctx, `SELECT p.id, e.created_at, p.balance_after FROM postings p JOIN journal_entries e ON e.id = p.entry_id
		WHERE p.bucket_id = $1 AND p.id > $2 AND e.created_at < $3 ORDER BY p.id`, bucketID, opening.Seq, to.UnixMilli())
	if err != nil {
		return BucketChange{}, nil, fmt.Errorf("postings of account %d: %w", accountID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c BucketChange
		if err := rows.Scan(&c.Seq, &at, &c.BalanceAfter); err != nil {
			return BucketChange{}, nil, fmt.Errorf("postings of account %d: %w", accountID, err)
		}
		c.At = time.UnixMilli(at).UTC()
		changes = append(changes, c)
	}
	return opening, changes, rows.Err()
}
