// Package export takes a merchant's records out as CSV (CONTRACT §19, §25):
// payins, payout transactions and balance history of one account for a
// date range in the merchant's time zone, with the columns §25 names,
// amounts in major units as the API writes them and times in RFC 3339 with
// the merchant's offset. A text cell that a spreadsheet would read as a
// formula (starting =, +, - or @) is written with a leading ' (amounts
// never are). Each export streams: rows go from the database cursor to the
// writer one at a time, so that a year of a busy account takes the memory
// of one row.
package export

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/store"
)

// MaxDays is the longest range one export covers (CONTRACT §19).
const MaxDays = 366

// DefaultDays is the range of an export asked without a start.
const DefaultDays = 30

// Range is the range [from, to) an export covers when asked for from and to
// (zero when not given) at now, in loc: to defaults to the end of today,
// from to DefaultDays before to. A range that is empty or longer than
// MaxDays is refused naming to_date (CONTRACT §25).
func Range(from, to, now time.Time, loc *time.Location) (time.Time, time.Time, error) {
	if to.IsZero() {
		y, m, d := now.In(loc).Date()
		to = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -DefaultDays)
	}
	switch {
	case !to.After(from):
		return from, to, fault.Field("to_date", "must be after from_date")
	case from.AddDate(0, 0, MaxDays).Before(to):
		return from, to, fault.Field("to_date", fmt.Sprintf("is more than %d days after from_date: export at most %d days a request", MaxDays, MaxDays))
	}
	return from, to, nil
}

// ContentType is every export's media type.
const ContentType = "text/csv; charset=utf-8"

// Query is what one export covers: one account of one merchant, created
// within [From, To).
type Query struct {
	MerchantID string
	AccountID  int64
	Currency   string
	From, To   time.Time
	// Loc is the merchant's zone, the offset every time is written with.
	Loc *time.Location
}

// The columns of each export, in order (CONTRACT §25).
var (
	PayinColumns = []string{"uuid", "created_at", "status", "currency", "amount", "gst_amount", "total", "paid_amount",
		"payin_method_name", "external_id", "email", "name", "bank_reference"}
	PayoutColumns = []string{"payout_uuid", "transaction_uuid", "created_at", "status", "currency", "amount", "fee",
		"payout_method_name", "recipient", "external_id", "bank_reference", "failure_reason"}
	BalanceHistoryColumns = []string{"id", "amount", "currency", "request_type", "transaction_type", "status", "reference_id",
		"outgoing", "fees", "total", "created_at", "updated_at"}
)

// formulaLeads are the first characters that make a spreadsheet read a
// cell as a formula.
const formulaLeads = "=+-@"

// text is a text cell as written: with a ' before a formula's lead.
func text(s string) string {
	if s != "" && strings.IndexByte(formulaLeads, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// timeText is t (ms) in the merchant's zone, RFC 3339 with milliseconds.
func (q Query) timeText(ms int64) string {
	return clock.FromMillis(ms).In(q.Loc).Format("2006-01-02T15:04:05.000Z07:00")
}

// writer writes an export's rows, flushing as it goes.
type writer struct {
	csv  *csv.Writer
	cur  money.Currency
	rows int
}

func newWriter(w io.Writer, currency string, header []string) (*writer, error) {
	c, err := money.Lookup(currency)
	if err != nil {
		return nil, err
	}
	out := &writer{csv: csv.NewWriter(w), cur: c}
	return out, out.csv.Write(header)
}

func (w *writer) amount(minor int64) string { return money.Format(minor, w.cur) }

// write writes one row; every 256 rows go out to the client.
func (w *writer) write(row []string) error {
	if err := w.csv.Write(row); err != nil {
		return err
	}
	if w.rows++; w.rows%256 == 0 {
		w.csv.Flush()
	}
	return w.csv.Error()
}

func (w *writer) end() error {
	w.csv.Flush()
	return w.csv.Error()
}

// Payins writes the payins of q's account created in q's range, oldest first.
func Payins(ctx context.Context, db store.Querier, q Query, out io.Writer) error {
	w, err := newWriter(out, q.Currency, PayinColumns)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT uuid, created_at, status, currency, amount, gst_amount, total, paid_amount, method, external_id, email, name,
		bank_reference FROM payins WHERE merchant_id = $1 AND account_id = $2 AND created_at >= $3 AND created_at < $4 ORDER BY created_at, uuid`,
		q.MerchantID, q.AccountID, q.From.UnixMilli(), q.To.UnixMilli())
	if err != nil {
		return fmt.Errorf("export payins: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			uuid, status, currency, method, external, email, name string
			created, amount, gst, total, paid                     int64
			bankRef                                               sql.NullString
		)
		if err := rows.Scan(&uuid, &created, &status, &currency, &amount, &gst, &total, &paid, &method, &external, &email, &name, &bankRef); err != nil {
			return fmt.Errorf("export payins: %w", err)
		}
		if err := w.write([]string{text(uuid), q.timeText(created), text(status), text(currency), w.amount(amount), w.amount(gst), w.amount(total),
			w.amount(paid), text(method), text(external), text(email), text(name), text(bankRef.String)}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export payins: %w", err)
	}
	return w.end()
}

// Payouts writes the transactions of q's account's payouts created in q's
// range, one row a transaction, oldest first.
func Payouts(ctx context.Context, db store.Querier, q Query, out io.Writer) error {
	w, err := newWriter(out, q.Currency, PayoutColumns)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT p.uuid, t.uuid, t.created_at, t.status, p.currency, t.amount, t.fee, p.method, t.first_name, t.last_name,
		COALESCE(t.external_id, ''), p.external_id, t.bank_reference, t.failure_reason
		FROM payouts p JOIN payout_transactions t ON t.merchant_id = p.merchant_id AND t.payout_id = p.id
		WHERE p.merchant_id = $1 AND p.account_id = $2 AND p.created_at >= $3 AND p.created_at < $4 ORDER BY p.created_at, p.id, t.seq`,
		q.MerchantID, q.AccountID, q.From.UnixMilli(), q.To.UnixMilli())
	if err != nil {
		return fmt.Errorf("export payouts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			payout, tx, status, currency, method, first, last, external, payoutExternal, failure string
			created, amount, fee                                                                 int64
			bankRef                                                                              sql.NullString
		)
		if err := rows.Scan(&payout, &tx, &created, &status, &currency, &amount, &fee, &method, &first, &last, &external, &payoutExternal, &bankRef, &failure); err != nil {
			return fmt.Errorf("export payouts: %w", err)
		}
		if external == "" {
			external = payoutExternal
		}
		recipient := strings.TrimSpace(first + " " + last)
		if err := w.write([]string{text(payout), text(tx), q.timeText(created), text(status), text(currency), w.amount(amount), w.amount(fee),
			text(method), text(recipient), text(external), text(bankRef.String), text(failure)}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export payouts: %w", err)
	}
	return w.end()
}

// BalanceHistory writes the balance records of q's account created in q's
// range (CONTRACT §10's members, balance_detail's as outgoing, fees,
// total), oldest first.
func BalanceHistory(ctx context.Context, db store.Querier, q Query, out io.Writer) error {
	w, err := newWriter(out, q.Currency, BalanceHistoryColumns)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, amount, currency, request_type, transaction_type, status, reference_id, outgoing, fees, total, created_at, updated_at
		FROM balance_records WHERE merchant_id = $1 AND account_id = $2 AND created_at >= $3 AND created_at < $4 ORDER BY created_at, id`,
		q.MerchantID, q.AccountID, q.From.UnixMilli(), q.To.UnixMilli())
	if err != nil {
		return fmt.Errorf("export balance history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, currency, requestType, transactionType, status, reference string
			amount, outgoing, fees, total, created, updated               int64
		)
		if err := rows.Scan(&id, &amount, &currency, &requestType, &transactionType, &status, &reference, &outgoing, &fees, &total, &created, &updated); err != nil {
			return fmt.Errorf("export balance history: %w", err)
		}
		if err := w.write([]string{text(id), w.amount(amount), text(currency), text(requestType), text(transactionType), text(status), text(reference),
			w.amount(outgoing), w.amount(fees), w.amount(total), q.timeText(created), q.timeText(updated)}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export balance history: %w", err)
	}
	return w.end()
}
