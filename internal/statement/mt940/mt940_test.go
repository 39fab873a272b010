package mt940

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/internal/money"
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
	paths, err := filepath.Glob(filepath.Join("testdata", "*.sta"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return paths
}

// TestReadGolden reads every fixture and compares the reading with its
// golden file (go test ./internal/statement/mt940 -update rewrites them).
func TestReadGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h, entries, err := statementtest.Collect(Read, fixture(t, filepath.Base(path)))
			statementtest.Golden(t, strings.TrimSuffix(path, ".sta")+".golden", statementtest.Render(h, entries, err), *update)
		})
	}
}

// TestReadStatement checks a statement of two pages in their SWIFT
// envelopes: the account of :25:, the balances that enclose the entries,
// structured :86: code words over 65-character lines, supplementary
// details, a return (RTI, /RTRN/) and a reversal (RD).
func TestReadStatement(t *testing.T) {
	t.Parallel()
	h, entries, err := statementtest.Collect(Read, fixture(t, "statement.sta"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Account != (statement.Account{Number: "12345678", BSB: "062-000", Currency: "AUD"}) || h.MessageID != "STMT260302001" || len(h.StatementIDs) != 2 {
		t.Errorf("Header %+v", h)
	}
	if h.Opening.AmountMinor != 12500000 || h.Closing.AmountMinor != 12510049 || h.Opening.AmountMinor+h.CreditsMinor-h.DebitsMinor != h.Closing.AmountMinor {
		t.Errorf("balances %+v %+v, credits %d, debits %d", h.Opening, h.Closing, h.CreditsMinor, h.DebitsMinor)
	}
	tests := []struct {
		index int
		check func(statement.Entry) bool
		want  string
	}{
		{0, func(e statement.Entry) bool {
			return e.Key == "NPP2603020001" && e.Reference == "INV1042" && e.CounterpartyName == "JANE CITIZEN" && e.CounterpartyAccount == "083004 11223344" &&
				strings.Contains(e.Remittance, "/REMI/USTD//CREDIT TO VA 98765432101 INV 1042 ACME COFFEE/") && strings.HasSuffix(e.Remittance, " VA 98765432101")
		}, "a credit with its code words and supplementary details, a 65-character line run on"},
		{1, func(e statement.Entry) bool {
			return e.Reference == "" && strings.Contains(e.Remittance, "PAYMENT 3f2c7d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f THANKS")
		}, "NONREF and NOTPROVIDED read as no reference, a uuid across lines whole"},
		{2, func(e statement.Entry) bool {
			return e.Remittance == "ORDER 77 REF:0b7e4c2a-55d1-4f0e-a6b3-9c8d7e6f5a4b ORITETANGA CAFE AND CO"
		}, "an unstructured :86: whose short lines are joined by a space"},
		{3, func(e statement.Entry) bool {
			return e.Direction == statement.Debit && e.Reference == "F0000000000000A1" && e.AmountMinor == 175000
		}, "a file booked as one debit"},
		{5, func(e statement.Entry) bool {
			return e.Return && e.Direction == statement.Credit && e.ReturnedReference == "PT7K2M9Q4X1B8C3E" && e.ReturnReason == "AC04" && e.BankTransactionCode == "NRTI"
		}, "a return of a transfer"},
		{7, func(e statement.Entry) bool {
			return e.Reversal && e.Direction == statement.Credit && e.AmountMinor == 250 && !e.Return
		}, "a reversal of a debit, a credit"},
	}
	for _, tt := range tests {
		if e := entries[tt.index]; !tt.check(e) {
			t.Errorf("entry %d is not %s: %+v", tt.index, tt.want, e)
		}
	}
}

// TestReadGerman checks the German structured layout (Deutsche Bank's):
// the funds code after the mark, the remittance subfields run together,
// the counterparty of ?31 and ?32.
func TestReadGerman(t *testing.T) {
	t.Parallel()
	h, entries, err := statementtest.Collect(Read, fixture(t, "german.sta"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Account.Number != "1234567" || h.Account.Currency != "EUR" || len(entries) != 2 {
		t.Fatalf("Header %+v, %d entries", h, len(entries))
	}
	e := entries[0]
	if e.AmountMinor != 150000 || e.Direction != statement.Credit || e.Key != "DB0302000001" ||
		e.Remittance != "EREF+INV2026-118 SVWZ+Rechnung 2026-118 payd ref 6a1f0c9e-77b2-4d1e-8f3a-2b4c6d8e0f1a" ||
		e.CounterpartyAccount != "DE89370400440532013000" || e.CounterpartyName != "MUSTERMANN GMBH" {
		t.Errorf("entry 0 = %+v", e)
	}
	if e := entries[1]; e.CounterpartyAccount != "DE02120300000000202051" || e.Direction != statement.Debit {
		t.Errorf("entry 1 = %+v", e)
	}
}

// TestReadRoundsJPY: a JPY statement's amounts with a decimal are rounded
// half away from zero, as the API rounds JPY (CONTRACT §3), and its
// balance holds after the rounding.
func TestReadRoundsJPY(t *testing.T) {
	t.Parallel()
	h, entries, err := statementtest.Collect(Read, fixture(t, "jpy_rounding.sta"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].AmountMinor != 1001 || h.Closing == nil || h.Closing.AmountMinor != 101001 {
		t.Errorf("Header %+v, entries %+v; want one entry of 1001 and a closing balance of 101001", h, entries)
	}
}

// TestReadRefuses checks that a file that fails its balance or its layout
// is refused whole, naming the message and the check.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	german := string(fixture(t, "german.sta"))
	tests := []struct {
		name      string
		data      []byte
		wantIs    error
		wantCheck string
		wantText  string
	}{
		{"closing balance", fixture(t, "wrong_balance.sta"), statement.ErrTotals, CheckBalance, "message 2 (line 24): check \"60a + :61: credits - :61: debits = 62a\" failed: 124850.49 + credits 252.50 - debits 2.50 = 125100.49, but :62a: is 125100.50"},
		{"truncated", fixture(t, "truncated.sta"), nil, "", "without its -} (truncated)"},
		{"EUR with three decimals", []byte(strings.Replace(german, "CR1500,00", "CR1500,005", 1)), money.ErrTooPrecise, "", "EUR has 2"},
		{"an unknown field", fixture(t, "unknown_field.sta"), nil, "", "field :34F: is not one of MT940's"},
		{"two accounts", fixture(t, "two_accounts.sta"), nil, "", "a file is read for one account"},
		{"no closing balance", []byte(strings.Replace(german, ":62F:C260302EUR11250,00\n", "", 1)), nil, "", "no :62F: or :62M: closing balance"},
		{"fields out of order", []byte(strings.Replace(german, ":25:10070000/1234567\n:28C:00042/001\n", ":28C:00042/001\n:25:10070000/1234567\n", 1)), nil, "", "out of place after :20:"},
		{"an amount without its comma", []byte(strings.Replace(german, "CR1500,00", "CR150000", 1)), nil, "", "is not 15d"},
		{"a mark of MT942", []byte(strings.Replace(german, "CR1500,00", "EC1500,00", 1)), nil, "", "the debit/credit mark is not C, D, RC or RD"},
		{"a balance in another currency", []byte(strings.Replace(german, ":62F:C260302EUR", ":62F:C260302USD", 1)), nil, "", "a balance in USD on an account in EUR"},
		{"text before :20:", append([]byte("STATEMENT EXPORT\n"), german...), nil, "", "neither a field"},
		{"an envelope of an MT103", []byte("{1:F01X}{2:I103PAYDAU2SXXXXN}{4:\n" + german), nil, "", "not an MT940"},
		{"empty", nil, nil, "", "empty: no :20: message"},
		{"a long reference", []byte(strings.Replace(german, "NONREF//DB0302000001", "NONREF//DB03020000010000000", 1)), nil, "", "a reference of more than 16 characters"},
		{"too many :86: lines", []byte(strings.Replace(german, "?32MUSTERMANN GMBH\n", "?32MUSTERMANN GMBH\n"+strings.Repeat("X\n", maxInfoLines), 1)), statement.ErrLimit, "", "more than 64 lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, entries, err := statementtest.Collect(Read, tt.data)
			var refusal *statement.Error
			if !errors.As(err, &refusal) || refusal.Format != statement.MT940 || !strings.Contains(err.Error(), tt.wantText) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) || refusal.Check != tt.wantCheck {
				t.Fatalf("Read = %+v, %d entries, %v; want a *statement.Error (%v, check %q) saying %q", h, len(entries), err, tt.wantIs, tt.wantCheck, tt.wantText)
			}
		})
	}
}

// TestEntryDateAcrossTheYear reads an entry valued on 2 January and booked
// on 31 December of the year before.
func TestEntryDateAcrossTheYear(t *testing.T) {
	t.Parallel()
	l, err := parseLine("2701021231D10,00NTRFNONREF//X1")
	if err != nil || l.entryDate.String() != "2026-12-31" || l.valueDate.String() != "2027-01-02" {
		t.Fatalf("parseLine = %+v, %v", l, err)
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
