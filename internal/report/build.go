package report

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/ledger"
	"payd/internal/money"
	"payd/internal/settlement"
	"payd/internal/store"
)

// ContentType is the media type of every report file.
const ContentType = "text/csv"

// header is the first line of every report file. Balance ID and Reference
// are the spec's columns: a row traces through balance history by its
// Balance ID, and matches the merchant's bank statement by its Reference.
var header = []string{"Created At", "Balance ID", "Reference", "Transaction Type", "Request Type", "Status", "Currency",
	"Amount", "Fee", "Total", "Balance After"}

// account is the payments account a report is made for.
type account struct {
	ID         int64
	MerchantID string
	Currency   string
	Location   *time.Location
}

// row is one line of a report: one balance record created in the period.
type row struct {
	record ledger.Record
	// reference is what the bank statement shows: a settlement's
	// reference, the record's reference_id otherwise.
	reference string
	// status is the record's status at the end of the period.
	status ledger.Status
	// balanceAfter is the available balance after the row: the previous
	// row's plus the row's movement (statement).
	balanceAfter int64
}

// totals is a report's summary in minor units.
type totals struct {
	settlementCount int64
	settledAmount   int64
	settledFee      int64
	closingBalance  int64
}

// file is a report's content and what is stored beside it.
type file struct {
	content []byte
	sha256  string
	totals  totals
}

// build makes the report of acc for p from the ledger. It reads only what
// never changes once p has ended (records created in p, each one's status
// as it stood at p.End, the postings made before p.End), so building the
// same period again gives the same bytes.
func build(ctx context.Context, q store.Querier, acc account, p Period) (file, error) {
	records, err := ledger.Between(ctx, q, acc.MerchantID, acc.ID, p.Start, p.End)
	if err != nil {
		return file{}, err
	}
	refs, err := settlement.References(ctx, q, acc.MerchantID, acc.ID, p.Start, p.End)
	if err != nil {
		return file{}, err
	}
	// The balance at p.End: BucketHistory's opening of the empty range there.
	closing, _, err := ledger.BucketHistory(ctx, q, acc.MerchantID, acc.ID, ledger.Available, p.End, p.End)
	if err != nil {
		return file{}, err
	}
	rows := statement(records, refs, closing, p.End)
	c, err := money.Lookup(acc.Currency)
	if err != nil {
		return file{}, fmt.Errorf("report of account %d: %w", acc.ID, err)
	}
	content, err := render(rows, c)
	if err != nil {
		return file{}, err
	}
	sum := sha256.Sum256(content)
	return file{content: content, sha256: hex.EncodeToString(sum[:]), totals: summarise(rows, closing)}, nil
}

// statement turns a period's records (in time order) into rows, each with
// its status at end and the available balance after it: the previous
// row's plus the row's own movement, so that the column adds up, row by
// row, to closing, the available balance at end. A row counts its whole
// movement by end, even when its money reached available after the record
// was made (a payment waits in incoming until it clears). Records made in
// the same millisecond (a deposit and a settlement on a frozen test clock,
// a payout's transactions) list money in before money out, so that no row
// shows a balance the account never went below. Money that moved available
// in the period without a row of its own (a record of an earlier period
// clearing or failing, a rolling reserve held or released) is in the
// balance before the first row.
func statement(records []ledger.Record, refs map[string]string, closing int64, end time.Time) []row {
	records = slices.Clone(records)
	slices.SortStableFunc(records, func(a, b ledger.Record) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(moneyOutLast(a), moneyOutLast(b))
	})
	rows := make([]row, len(records))
	opening := closing
	for i, r := range records {
		ref, ok := refs[r.ID]
		if !ok {
			ref = r.ReferenceID
		}
		rows[i] = row{record: r, reference: ref, status: statusAt(r, end)}
		opening -= rows[i].movement()
	}
	balance := opening
	for i := range rows {
		balance += rows[i].movement()
		rows[i].balanceAfter = balance
	}
	return rows
}

// moneyOutLast orders money in (0) before money out (1).
func moneyOutLast(r ledger.Record) int {
	if r.RequestType == ledger.MoneyOut {
		return 1
	}
	return 0
}

// movement is what the row's record did to the available balance by the
// period's end, as its own columns tell (ledger.Record): money out took its
// Total (amount and fees) into outgoing when it was made, and a failure gave
// it back; money in reached available with its Amount (fees off) once done,
// and never while waiting in incoming or once failed.
func (r row) movement() int64 {
	switch {
	case r.status == ledger.Failed:
		return 0
	case r.record.RequestType == ledger.MoneyOut:
		return -r.record.Total
	case r.status == ledger.Done:
		return r.record.Amount
	}
	return 0
}

// statusAt is a record's status as it stood at end: a record that finished
// later was still waiting then.
func statusAt(r ledger.Record, end time.Time) ledger.Status {
	if r.Status != ledger.Waiting && r.UpdatedAt.Before(end) {
		return r.Status
	}
	return ledger.Waiting
}

// summarise is the §12 summary of a report's rows: the settlements
// submitted in the period that had not failed by its end, their amounts and
// fees, and the available balance at its end.
func summarise(rows []row, closing int64) totals {
	t := totals{closingBalance: closing}
	for _, r := range rows {
		if r.record.TransactionType != ledger.Settlement || r.status == ledger.Failed {
			continue
		}
		t.settlementCount++
		t.settledAmount += r.record.Amount
		t.settledFee += r.record.Fees
	}
	return t
}

// render writes rows as CSV (RFC 4180 quoting, LF line ends): times in
// RFC 3339 UTC with milliseconds as the API writes them, amounts as
// decimals with the currency's precision.
func render(rows []row, c money.Currency) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	for _, r := range rows {
		rec := r.record
		line := []string{clock.Format(rec.CreatedAt), rec.ID, cell(r.reference), string(rec.TransactionType), string(rec.RequestType),
			string(r.status), rec.Currency, money.Format(rec.Amount, c), money.Format(rec.Fees, c), money.Format(rec.Total, c),
			money.Format(r.balanceAfter, c)}
		if err := w.Write(line); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// cell keeps a text value from being read as a formula by a spreadsheet
// (OWASP CSV injection): one that starts with = + - @ or a control
// character gets a leading apostrophe.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
