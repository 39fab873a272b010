package bai2

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func fixtures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bai"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return paths
}

// TestReadGolden reads every fixture and compares the reading with its
// golden file (go test ./internal/statement/bai2 -update rewrites them).
func TestReadGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h, entries, err := statementtest.Collect(Read, fixture(t, filepath.Base(path)))
			statementtest.Golden(t, strings.TrimSuffix(path, ".bai")+".golden", statementtest.Render(h, entries, err), *update)
		})
	}
}

// TestReadStatement checks the previous-day file: balances, the entries'
// keys, direction by type code, a text continued by 88 records, fields
// continued past a funds type S, a value date, a return and the
// non-monetary record that makes no entry.
func TestReadStatement(t *testing.T) {
	t.Parallel()
	h, entries, err := statementtest.Collect(Read, fixture(t, "statement.bai"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Account != (statement.Account{Number: "0975312468", Currency: "USD"}) || h.Opening.AmountMinor != 12500000 || h.Closing.AmountMinor != 12609799 {
		t.Errorf("Header %+v", h)
	}
	if h.Entries != 7 || h.CreditsMinor != 210049 || h.DebitsMinor != 100250 || h.Opening.AmountMinor+h.CreditsMinor-h.DebitsMinor != h.Closing.AmountMinor {
		t.Errorf("counts %d, credits %d, debits %d", h.Entries, h.CreditsMinor, h.DebitsMinor)
	}
	tests := []struct {
		index int
		check func(statement.Entry) bool
		want  string
	}{
		{0, func(e statement.Entry) bool {
			return e.Key == "FED20260302000001" && e.Reference == "INV1042" && e.Direction == statement.Credit &&
				e.Remittance == "CREDIT TO VA 98765432101 FROM JANE CITIZEN INV 1042 ACME COFFEE"
		}, "a credit whose text an 88 continues"},
		{1, func(e statement.Entry) bool {
			return e.ValueDate.String() == "2026-03-03" && e.BookingDate.String() == "2026-03-02" && e.Reference == ""
		}, "a value-dated credit"},
		{2, func(e statement.Entry) bool {
			return e.Key == "LBX20260302000003" && e.Reference == "ORDER77" && e.AmountMinor == 50000 &&
				e.Remittance == "LOCKBOX DEPOSIT ORDER 77 ref:0b7e4c2a-55d1-4f0e-a6b3-9c8d7e6f5a4b"
		}, "references and text in 88s after a funds type S"},
		{3, func(e statement.Entry) bool {
			return e.Direction == statement.Debit && e.Reference == "PT7K2M9Q4X1B8C3D" && e.Remittance == "OUTGOING WIRE TO KIRRA WALKER"
		}, "a transfer's debit, the line's closing slash dropped"},
		{4, func(e statement.Entry) bool {
			return e.Return && e.Direction == statement.Credit && e.ReturnedReference == "PT7K2M9Q4X1B8C3E" &&
				e.Remittance == "ACH RETURN R03 NO ACCOUNT/UNABLE TO LOCATE"
		}, "the return of a transfer (257), a slash inside its text kept"},
		{5, func(e statement.Entry) bool { return e.Remittance == "" && !e.Return }, "a defaulted text"},
		{6, func(e statement.Entry) bool { return e.AmountMinor == 250 && e.BankTransactionCode == "698" }, "a fee"},
	}
	for _, tt := range tests {
		if e := entries[tt.index]; !tt.check(e) {
			t.Errorf("entry %d is not %s: %+v", tt.index, tt.want, e)
		}
	}
}

// TestIntradayAndStatementKeys reads the intraday file and the next day's
// file that reports the same entries: each entry has the same key.
func TestIntradayAndStatementKeys(t *testing.T) {
	t.Parallel()
	_, intraday, err := statementtest.Collect(Read, fixture(t, "intraday.bai"))
	if err != nil {
		t.Fatal(err)
	}
	_, day, err := statementtest.Collect(Read, fixture(t, "statement.bai"))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range intraday {
		if got := day[i]; got.Key != e.Key || got.AmountMinor != e.AmountMinor || got.Remittance != e.Remittance {
			t.Errorf("entry %d: intraday %+v, statement %+v", i, e, got)
		}
	}
	if len(intraday) != 2 {
		t.Errorf("%d intraday entries, want 2", len(intraday))
	}
}

// TestReadSpecSample reads a file made of the manual's own sample
// transmission (Appendix D, its third group): an 03 whose type code and
// amount straddle an 88, a funds type D; its totals are the manual's.
func TestReadSpecSample(t *testing.T) {
	t.Parallel()
	h, err := Check(bytes.NewReader(fixture(t, "spec_sample.bai")))
	if err != nil {
		t.Fatal(err)
	}
	if h.Opening == nil || h.Opening.AmountMinor != 500000 || h.Entries != 0 || h.Account.Currency != "USD" {
		t.Errorf("Header %+v", h)
	}
}

// TestReadRefuses checks that a file that fails its totals or its layout
// is refused whole, naming the check or the record.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		data      []byte
		wantIs    error
		wantCheck string
		wantText  string
	}{
		{"49 total", fixture(t, "wrong_account_total.bai"), statement.ErrTotals, CheckAccountTotal, "record 49 (line 16): check \"49 account control total\" failed: the records sum to 25730397, the trailer says 25730398"},
		{"99 records", fixture(t, "wrong_records.bai"), statement.ErrTotals, CheckFileRecords, "18 counted, the trailer says 19"},
		{"truncated", fixture(t, "truncated.bai"), nil, "", "without its 99 file trailer (truncated)"},
		{"unknown record", fixture(t, "unknown_record.bai"), nil, "", "record code 17 is not one of BAI2's"},
		{"a decimal point", fixture(t, "decimal_point.bai"), nil, "", `amount "1250.50" is not unsigned digits`},
		{"a deletion group", fixture(t, "deletion_group.bai"), nil, "", "group status \"2\": payd applies only update groups"},
		{"two accounts", fixture(t, "two_accounts.bai"), nil, "", "a file is read for one account"},
		{"empty", nil, nil, "", "empty: no 01 file header"},
		{"version 1", []byte("01,1,2,260302,0200,1,,,1/\n"), nil, "", `version number "1"`},
		{"no file header", []byte("02,PAYDOPS,1,1,260302,,,/\n"), nil, "", "a file begins with its 01 file header"},
		{"an 88 first", []byte("88,X\n"), nil, "", "an 88 continuation before any record"},
		{"an unknown currency", bytes.Replace(fixture(t, "intraday.bai"), []byte(",USD,040"), []byte(",XXX,040"), 1), nil, "", `currency "XXX"`},
		{"a summary code in a detail", bytes.Replace(fixture(t, "intraday.bai"), []byte("16,195"), []byte("16,015"), 1), nil, "", "type code 015 is not a transaction detail code"},
		{"a record after 99", append(fixture(t, "intraday.bai"), "01,1/\n"...), nil, "", "a record after the 99 file trailer"},
		{"a long line", append(fixture(t, "intraday.bai")[:0:0], strings.Repeat("9", maxLineBytes+1)...), statement.ErrLimit, "", "more than 4096 bytes"},
		{"a funds type past its record", []byte("01,0,,000101,,0,,,2\n02,,,1,000110,,,\n03,0,,,,,D,1"), nil, "", "the record ends within its funds type's 3 fields"},
		{"a funds type of another kind", bytes.Replace(fixture(t, "intraday.bai"), []byte("125050,0,"), []byte("125050,X,"), 1), nil, "", `funds type "X"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, entries, err := statementtest.Collect(Read, tt.data)
			var refusal *statement.Error
			if !errors.As(err, &refusal) || refusal.Format != statement.BAI2 || !strings.Contains(err.Error(), tt.wantText) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) || refusal.Check != tt.wantCheck {
				t.Fatalf("Read = %+v, %d entries, %v; want a *statement.Error (%v, check %q) saying %q", h, len(entries), err, tt.wantIs, tt.wantCheck, tt.wantText)
			}
		})
	}
}

// FuzzRead feeds Read mutations of the fixtures: read whole or refused
// with a *statement.Error, never a panic or a partial result.
func FuzzRead(f *testing.F) {
	for _, path := range fixtures(f) {
		f.Add(fixture(f, filepath.Base(path)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		statementtest.CheckReading(t, Read, Check, data)
	})
}
