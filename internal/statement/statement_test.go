package statement_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/internal/money"
	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

var update = flag.Bool("update", false, "rewrite the testdata/csv/*.golden files")

// TestDetect tells each format by its first bytes, as a feed's inbox and a
// reconciliation upload see them, and refuses what is none of them.
func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head string
		want statement.Format
	}{
		{"camt.053", `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>`, statement.Camt053},
		{"camt.054 with a prefix", `<doc:Document xmlns:doc="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">`, statement.Camt054},
		{"camt.053.001.02, refused by its reader", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">`, statement.Camt053},
		{"a byte order mark and blank lines", "\ufeff\r\n\r\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.054.001.08\"/>", statement.Camt054},
		{"BAI2", "01,122099999,123456789,260302,0200,1,80,,2/\n02,", statement.BAI2},
		{"MT940", ":20:STMT20260302\r\n:25:062000/12345678\r\n", statement.MT940},
		{"MT940 in its envelope", "{1:F01CTBAAU2SAXXX0000000000}{2:I940PAYDAU2SXXXXN}{4:\r\n:20:STMT20260302\r\n", statement.MT940},
		{"CSV", "date,amount,reference,description\r\n2026-03-02,10.00,,\r\n", statement.CSV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statement.Detect([]byte(tt.head))
			if err != nil || got != tt.want {
				t.Fatalf("Detect = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDetectRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		head     string
		wantText string
	}{
		{"empty", "", "neither camt.053/camt.054 XML"},
		{"camt.052", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.08">`, "camt.052.001.08"},
		{"a pain.002", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.11">`, "is not a camt.053 or camt.054 Document"},
		{"XML cut before its root", `<?xml version="1.0"?><!-- a long comment`, "without a root element"},
		{"another envelope", "{1:F01CTBAAU2SAXXX0000000000}{2:I103PAYDAU2SXXXXN}{4:\r\n:20:X\r\n:23B:CRED", "not an MT940"},
		{"an envelope without block 4", "{1:F01CTBAAU2SAXXX0000000000}", "not an MT940"},
		{"another CSV", "date,amount,description\n", "neither"},
		{"a PDF", "%PDF-1.7\n", "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statement.Detect([]byte(tt.head))
			var refusal *statement.Error
			if !errors.Is(err, statement.ErrUnknownFormat) || !errors.As(err, &refusal) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Detect = %q, %v; want ErrUnknownFormat saying %q", got, err, tt.wantText)
			}
		})
	}
}

var audAccount = statement.Account{Number: "12345678", BSB: "062-000", Currency: "AUD"}

func readCSV(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	return statement.ReadCSV(r, audAccount, each)
}

func checkCSV(r io.Reader) (statement.Header, error) { return statement.CheckCSV(r, audAccount) }

// TestReadCSVGolden reads every CSV fixture (the upload of §19 and the ones
// it refuses) and compares the reading with its golden file.
func TestReadCSVGolden(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "csv", "*.csv"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h, entries, err := statementtest.Collect(readCSV, data)
			statementtest.Golden(t, strings.TrimSuffix(path, ".csv")+".golden", statementtest.Render(h, entries, err), *update)
		})
	}
}

// TestReadCSV checks the upload's lines: a signed amount (positive a
// credit), the reference and description as written, the period.
func TestReadCSV(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "csv", "upload.csv"))
	if err != nil {
		t.Fatal(err)
	}
	h, entries, err := statementtest.Collect(readCSV, data)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		amount    int64
		direction statement.Direction
		reference string
		text      string
	}{
		{125050, statement.Credit, "ST7K2M9Q4X1B8C3D", "PAYD SETTLEMENT ST7K2M9Q4X1B8C3D"},
		{1200, statement.Debit, "", "ACCOUNT FEE"},
		{9999, statement.Credit, "TR7K2M9Q4X1B8C3E", "Transfer, from payd"},
		{1, statement.Credit, "", `interest "bonus"`},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(entries), len(want))
	}
	for i, w := range want {
		e := entries[i]
		if e.AmountMinor != w.amount || e.Direction != w.direction || e.Reference != w.reference || e.Remittance != w.text || e.Status != statement.Booked || e.Key != "" {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
	if h.From.String() != "2026-03-02" || h.To.String() != "2026-03-04" || h.CreditsMinor != 135050 || h.DebitsMinor != 1200 || h.Account != audAccount {
		t.Errorf("Header %+v", h)
	}
}

// TestReadCSVRefuses checks that a line the upload cannot take refuses the
// whole file, naming the line: too many decimals for the currency, no
// header, the wrong cells, a zero, an exponent; and that the
// upload needs its account.
func TestReadCSVRefuses(t *testing.T) {
	t.Parallel()
	const header = "date,amount,reference,description\n"
	idr := statement.Account{Number: "1234567", Currency: "IDR"}
	tests := []struct {
		name     string
		account  statement.Account
		data     string
		wantIs   error
		wantText string
	}{
		{"AUD with three decimals", audAccount, header + "2026-03-02,10.005,,\n", money.ErrTooPrecise, "line 2: amount 10.005"},
		{"IDR with three decimals", idr, header + "2026-03-02,1000.505,,\n", money.ErrTooPrecise, "IDR has 2"},
		{"no header", audAccount, "2026-03-02,10.00,,\n", nil, "line 1: the header is"},
		{"empty", audAccount, "", nil, "empty"},
		{"too few cells", audAccount, header + "2026-03-02,10.00\n", nil, "line 2: not 4 cells"},
		{"zero", audAccount, header + "2026-03-02,0,,\n", nil, "zero is not an entry"},
		{"two signs", audAccount, header + "2026-03-02,-+5,,\n", nil, "not a decimal number"},
		{"a date of another shape", audAccount, header + "02/03/2026,5,,\n", nil, "date: \"02/03/2026\""},
		{"a control character", audAccount, header + "2026-03-02,5,,a\x01b\n", nil, "control character U+0001"},
		{"a reference too long", audAccount, header + "2026-03-02,5," + strings.Repeat("R", statement.MaxReferenceRunes+1) + ",\n", statement.ErrLimit, "the reference has 141 characters"},
		{"no account number", statement.Account{Currency: "AUD"}, header, nil, "account_number"},
		{"no currency", statement.Account{Number: "1"}, header, nil, `currency ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := statement.CheckCSV(strings.NewReader(tt.data), tt.account)
			var refusal *statement.Error
			if !errors.As(err, &refusal) || refusal.Format != statement.CSV || !strings.Contains(err.Error(), tt.wantText) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
				t.Fatalf("CheckCSV = %+v, %v; want a refusal (%v) saying %q", h, err, tt.wantIs, tt.wantText)
			}
		})
	}
}

// TestLimitReader checks that a file larger than its bound fails as such,
// rather than reading as a shorter (truncated) file.
func TestLimitReader(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("x"), 1000)
	if got, err := io.ReadAll(statement.LimitReader(bytes.NewReader(data), 1000)); err != nil || len(got) != 1000 {
		t.Errorf("at the bound: %d bytes, %v", len(got), err)
	}
	got, err := io.ReadAll(statement.LimitReader(bytes.NewReader(data), 999))
	if !errors.Is(err, statement.ErrLimit) || len(got) != 999 || !strings.Contains(err.Error(), "larger than 999 bytes") {
		t.Errorf("above the bound: %d bytes, %v", len(got), err)
	}
	if _, err := io.ReadAll(statement.LimitReader(bytes.NewReader(data), 0)); err != nil {
		t.Errorf("no bound is HardMaxBytes: %v", err)
	}
}

// TestParseAmount reads amounts exactly in each currency's minor units:
// more decimals than the currency has are rounded half away from zero in
// the rounding currencies and refused in the others.
func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text     string
		currency string
		want     int64
		wantErr  error
	}{
		{"1250.50", "AUD", 125050, nil},
		{"10.500", "AUD", 1050, nil},
		{"1000", "JPY", 1000, nil},
		{"1000.0", "JPY", 1000, nil},
		{"1.234", "KWD", 1234, nil},
		{"0.05", "AUD", 5, nil},
		{"10.005", "AUD", 0, money.ErrTooPrecise},
		{"1000.5", "JPY", 1001, nil},
		{"1000.49", "JPY", 1000, nil},
		{"50000.5", "KRW", 50001, nil},
		{"1000.505", "IDR", 0, money.ErrTooPrecise},
		{"1.5", "UGX", 0, money.ErrTooPrecise},
		{"1000000000000000.00", "AUD", money.MaxMinor, nil},
		{"1000000000000000.01", "AUD", 0, money.ErrOutOfRange},
	}
	for _, tt := range tests {
		got, err := statement.ParseAmount(tt.text, money.MustLookup(tt.currency))
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Errorf("ParseAmount(%q, %s) = %d, %v; want %d, %v", tt.text, tt.currency, got, err, tt.want, tt.wantErr)
		}
	}
	for _, text := range []string{"", "-1", "+1", "1e3", "1,00", ".5", "5.", " 5", "1.2.3"} {
		if _, err := statement.ParseAmount(text, money.MustLookup("AUD")); err == nil {
			t.Errorf("ParseAmount(%q) is not refused", text)
		}
	}
}

// TestAccountDigits checks that an account is compared by its digits
// (CONTRACT §25).
func TestAccountDigits(t *testing.T) {
	t.Parallel()
	for number, want := range map[string]string{"12345678": "12345678", "1234-5678": "12345678", "AU12 3456 78": "12345678", "": ""} {
		if got := (statement.Account{Number: number}).Digits(); got != want {
			t.Errorf("Digits(%q) = %q, want %q", number, got, want)
		}
	}
}

// TestTotalsBounds checks that sums that would overflow are refused.
func TestTotalsBounds(t *testing.T) {
	t.Parallel()
	var totals statement.Totals
	e := statement.Entry{AmountMinor: money.MaxMinor, Direction: statement.Credit, Status: statement.Booked}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = totals.Add(e)
	}
	if !errors.Is(err, statement.ErrLimit) {
		t.Errorf("adding 100 × MaxMinor: %v; want ErrLimit", err)
	}
	if _, err := statement.AddSigned(statement.MaxSumMinor, 1); !errors.Is(err, statement.ErrLimit) {
		t.Errorf("AddSigned past MaxSumMinor: %v", err)
	}
	if got, err := statement.AddSigned(-5, 3); got != -2 || err != nil {
		t.Errorf("AddSigned(-5, 3) = %d, %v", got, err)
	}
}

// FuzzReadCSV feeds ReadCSV mutations of the fixtures: read whole or
// refused, never a panic.
func FuzzReadCSV(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "csv", "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		statementtest.CheckReading(t, readCSV, checkCSV, data)
	})
}

// FuzzDetect: whatever a file begins with, Detect names a format or
// refuses with ErrUnknownFormat, never a panic.
func FuzzDetect(f *testing.F) {
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">`))
	f.Add([]byte("01,1,2,260302,0200,1,,,2/"))
	f.Add([]byte("{1:F01X}{4:\n:20:X"))
	f.Fuzz(func(t *testing.T, head []byte) {
		format, err := statement.Detect(head)
		if (err == nil) == (format == "") || (err != nil && !errors.Is(err, statement.ErrUnknownFormat)) {
			t.Fatalf("Detect = %q, %v", format, err)
		}
	})
}
