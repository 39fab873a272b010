package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"payd/internal/ledger"
	"payd/internal/money"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// at is a time on 2026-10-04 (UTC) at h:m.
func at(h, m int) time.Time { return time.Date(2026, 10, 4, h, m, 0, 0, time.UTC) }

func rec(id, ref string, tt ledger.TransactionType, rt ledger.RequestType, status ledger.Status, amount, fee int64, created, updated time.Time) ledger.Record {
	return ledger.Record{ID: id, ReferenceID: ref, TransactionType: tt, RequestType: rt, Status: status, Currency: "AUD",
		Amount: amount, Fees: fee, Total: amount + fee, CreatedAt: created, UpdatedAt: updated}
}

// TestReportCSV: the file format, against golden files (go test -update
// rewrites them): a header, one row per record oldest first, each with its
// status at the period's end and the available balance after it.
func TestReportCSV(t *testing.T) {
	t.Parallel()
	end := at(23, 0)
	payin := rec("PAYIN00001", "PIN00001", ledger.Payment, ledger.MoneyIn, ledger.Done, 9850, 150, at(1, 0), at(2, 0))
	late := rec("PAYIN00002", "PIN00002", ledger.Payment, ledger.MoneyIn, ledger.Done, 5000, 0, at(3, 0), end.Add(time.Hour))
	settled := rec("STL0000001", "STLUUID1", ledger.Settlement, ledger.MoneyOut, ledger.Done, 9000, 100, at(4, 0), at(4, 0))
	failed := rec("STL0000002", "STLUUID2", ledger.Settlement, ledger.MoneyOut, ledger.Failed, 500, 100, at(5, 0), at(6, 0))
	formula := rec("DEP0000001", "=HYPERLINK(\"x\")", ledger.TopUp, ledger.MoneyIn, ledger.Done, 100, 0, at(7, 0), at(7, 0))
	moves := []ledger.BucketMove{
		{At: at(2, 0), Amount: 9850},
		{At: at(4, 0), Amount: -9100},
		{At: at(5, 0), Amount: -600},
		{At: at(6, 0), Amount: 600},
		{At: at(7, 0), Amount: 100},
	}
	tests := []struct {
		name     string
		currency string
		records  []ledger.Record
		refs     map[string]string
		opening  int64
		moves    []ledger.BucketMove
		want     totals
	}{
		{"aud_day", "AUD", []ledger.Record{payin, late, settled, failed, formula}, map[string]string{"STL0000001": "2026-10-03"},
			1000, moves,
			totals{settlementCount: 1, settledAmount: 9000, settledFee: 100, closingBalance: 1850}},
		{"jpy_day", "JPY", []ledger.Record{{ID: "PAYIN00003", ReferenceID: "PIN00003", TransactionType: ledger.Payment, RequestType: ledger.MoneyIn,
			Status: ledger.Waiting, Currency: "JPY", Amount: 100000, Fees: 2500, Total: 102500, CreatedAt: at(9, 30), UpdatedAt: at(9, 30)}},
			nil, 0, nil, totals{}},
		{"empty", "AUD", nil, nil, 1000, nil, totals{closingBalance: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := money.Lookup(tt.currency)
			if err != nil {
				t.Fatal(err)
			}
			rows, closing := statement(tt.records, tt.refs, tt.opening, tt.moves, end)
			got, err := render(rows, c)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.name+".csv")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("CSV differs from %s:\ngot\n%s\nwant\n%s", golden, got, want)
			}
			if sum := summarise(rows, closing); sum != tt.want {
				t.Errorf("summary = %+v, want %+v", sum, tt.want)
			}
		})
	}
}

// TestStatementBalanceInTime: a row's balance is the opening balance plus
// every move made at or before it, in the order of their times, whatever
// order they were applied in.
func TestStatementBalanceInTime(t *testing.T) {
	t.Parallel()
	r := rec("PAYIN00001", "P1", ledger.Payment, ledger.MoneyIn, ledger.Done, 1, 0, at(2, 0), at(2, 0))
	moves := []ledger.BucketMove{
		{At: at(2, 0).Add(-time.Millisecond), Amount: 100},
		{At: at(2, 0), Amount: 100},
		{At: at(2, 0).Add(time.Millisecond), Amount: 100},
	}
	rows, closing := statement([]ledger.Record{r}, nil, 100, moves, at(4, 0))
	if got := []int64{rows[0].balanceAfter, closing}; got[0] != 300 || got[1] != 400 {
		t.Errorf("balance after the row, closing = %v, want [300 400]", got)
	}
}
