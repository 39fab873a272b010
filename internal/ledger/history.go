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
