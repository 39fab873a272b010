package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
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
	// balanceAfter is the available balance once every movement made at
	// or before the record's creation had been applied.
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
	opening, moves, err := ledger.BucketHistory(ctx, q, acc.MerchantID, acc.ID, ledger.Available, p.Start, p.End)
	if err != nil {
		return file{}, err
	}
	rows, closing := statement(records, refs, opening, moves, p.End)
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

// statement turns a period's records into rows, each with its status at
// end and the available balance after it, and returns the balance at the
// period's end. records and moves come in time order; opening is the
// balance at the period's start.
func statement(records []ledger.Record, refs map[string]string, opening int64, moves []ledger.BucketMove, end time.Time) ([]row, int64) {
	balance, next := opening, 0
	rows := make([]row, 0, len(records))
	for _, r := range records {
		for ; next < len(moves) && !moves[next].At.After(r.CreatedAt); next++ {
			balance += moves[next].Amount
		}
		ref, ok := refs[r.ID]
		if !ok {
			ref = r.ReferenceID
		}
		rows = append(rows, row{record: r, reference: ref, status: statusAt(r, end), balanceAfter: balance})
	}
	for ; next < len(moves); next++ {
		balance += moves[next].Amount
	}
	return rows, balance
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
