package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
	tests := []struct {
		name     string
		currency string
		records  []ledger.Record
		refs     map[string]string
		closing  int64
		want     totals
	}{
		{"aud_day", "AUD", []ledger.Record{payin, late, settled, failed, formula}, map[string]string{"STL0000001": "2026-10-03"},
			1850, totals{settlementCount: 1, settledAmount: 9000, settledFee: 100, closingBalance: 1850}},
		{"jpy_day", "JPY", []ledger.Record{{ID: "PAYIN00003", ReferenceID: "PIN00003", TransactionType: ledger.Payment, RequestType: ledger.MoneyIn,
			Status: ledger.Waiting, Currency: "JPY", Amount: 100000, Fees: 2500, Total: 102500, CreatedAt: at(9, 30), UpdatedAt: at(9, 30)}},
			nil, 0, totals{}},
		{"empty", "AUD", nil, nil, 1000, totals{closingBalance: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := money.Lookup(tt.currency)
			if err != nil {
				t.Fatal(err)
			}
			rows := statement(tt.records, tt.refs, tt.closing, end)
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
			if sum := summarise(rows, tt.closing); sum != tt.want {
				t.Errorf("summary = %+v, want %+v", sum, tt.want)
			}
		})
	}
}

// TestStatementBalanceAfter: each row's balance is the previous row's plus
// what the row's record did to the available balance by the period's end,
// whenever its money moved, and the last row's is the closing balance.
func TestStatementBalanceAfter(t *testing.T) {
	t.Parallel()
	end := at(23, 0)
	topUp := rec("DEP0000001", "D1", ledger.TopUp, ledger.MoneyIn, ledger.Done, 10000000, 0, at(1, 0), at(1, 5))
	payment := rec("PAYIN00001", "P1", ledger.Payment, ledger.MoneyIn, ledger.Done, 19900, 100, at(2, 0), at(2, 0).Add(time.Millisecond))
	clearsLater := rec("PAYIN00002", "P2", ledger.Payment, ledger.MoneyIn, ledger.Done, 4975, 25, at(22, 59), end.Add(time.Second))
	returned := rec("PAYIN00003", "P3", ledger.Payment, ledger.MoneyIn, ledger.Failed, 5000, 0, at(3, 0), at(3, 5))
	refund := rec("RFD0000001", "P1", ledger.Refund, ledger.MoneyOut, ledger.Done, 20000, 0, at(4, 0), at(4, 0).Add(5*time.Second))
	paid := rec("PAYOUT0001", "PO1", ledger.Payout, ledger.MoneyOut, ledger.Done, 30000, 50, at(5, 0), at(5, 0).Add(20*time.Second))
	refused := rec("PAYOUT0002", "PO1", ledger.Payout, ledger.MoneyOut, ledger.Failed, 4000, 50, at(5, 0), at(5, 0).Add(20*time.Second))
	pending := rec("STL0000001", "S1", ledger.Settlement, ledger.MoneyOut, ledger.Done, 100000, 100, at(22, 0), end.Add(time.Hour))
	spends := rec("STL0000002", "S2", ledger.Settlement, ledger.MoneyOut, ledger.Done, 4000, 100, at(6, 0), at(6, 0).Add(10*time.Second))
	instant := rec("TOPUP00001", "D2", ledger.TopUp, ledger.MoneyIn, ledger.Done, 10000, 0, at(6, 0), at(6, 0))
	tests := []struct {
		name    string
		records []ledger.Record
		closing int64
		want    []int64
	}{
		{"a top-up into an empty account counts at its row, though it cleared later", []ledger.Record{topUp}, 10000000, []int64{10000000}},
		{"payments add their net amount", []ledger.Record{topUp, payment}, 10019900, []int64{10000000, 10019900}},
		{"money in still in incoming at the end moves nothing", []ledger.Record{payment, clearsLater}, 19900, []int64{19900, 19900}},
		{"money in sent back moves nothing", []ledger.Record{payment, returned}, 19900, []int64{19900, 19900}},
		{"money out takes its total; a failed transaction gives it back", []ledger.Record{topUp, refund, paid, refused}, 9949950,
			[]int64{10000000, 9980000, 9949950, 9949950}},
		{"a payout's transactions, made in one millisecond, add up one after another", []ledger.Record{topUp, refused, paid}, 9969950,
			[]int64{10000000, 10000000, 9969950}},
		{"money in made in the same millisecond as money out comes first, whatever their Balance IDs", []ledger.Record{spends, instant}, 5900, []int64{10000, 5900}},
		{"money out still on its way at the end has left available", []ledger.Record{topUp, pending}, 9899900, []int64{10000000, 9899900}},
		{"money without a row is in the balance before the first", []ledger.Record{payment}, 29900, []int64{29900}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			for _, r := range statement(tt.records, nil, tt.closing, end) {
				got = append(got, r.balanceAfter)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("balances after = %v, want %v", got, tt.want)
			}
		})
	}
}
