package aba

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"payd/internal/payfile"
)

// TestReadGolden: each golden file reads back as the File it was written
// from, as the file holds it (upper case, cut to the fields).
func TestReadGolden(t *testing.T) {
	t.Parallel()
	d := payfile.Debtor{Name: "PAYD OPERATIONS PTY LTD", Account: "12345678", BSB: "062-000", OriginatorID: "301500", BankAbbrev: "CBA"}
	tests := []struct {
		name string
		want payfile.File
	}{
		{"small", payfile.File{
			Reference: "F7K2M9Q4W8Z1X3C5", CreatedAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Location: time.UTC,
			Currency: "AUD", Debtor: d,
			Credits: []payfile.Credit{
				{BankReference: "PT7Q2M4K8W1Z3X5C", AmountMinor: 125_050, Name: "JANE CITIZEN", Account: "87654321", BSB: "032-001", Remitter: "ACME WIDGETS"},
				{BankReference: "PT9R8S7T6U5V4W3X", AmountMinor: 100, Name: "O'BRIEN & SONS PTY LTD", Account: "123456", BSB: "083-004", Remitter: "ACME WIDGETS"},
			},
		}},
		{"edge", payfile.File{
			Reference: "ABCDEFGHIJKLMNOPQR", CreatedAt: time.Date(2027, 2, 28, 0, 0, 0, 0, time.UTC), Location: time.UTC,
			Currency: "AUD", Debtor: func() payfile.Debtor { e := d; e.Name = "THE PAYD PAYMENTS OPERATIO"; return e }(),
			Credits: []payfile.Credit{
				{BankReference: "A00000000000000001", AmountMinor: 1, Name: "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", Account: "7", BSB: "000-000", Remitter: "REMITTER SIXTEEN"},
				{BankReference: "Z999999999999999", AmountMinor: 9_999_999_997, Name: "MR. J. O'NEIL-SMITH & CO (HOLDIN", Account: "123456789", BSB: "999-998", Remitter: "A MERCHANT WHOSE"},
				{BankReference: "PUNCT0000000000P", AmountMinor: 1, Name: "X!#$%&'()*+,-./:;=?@[]^_", Account: "000000001", BSB: "123-456", Remitter: "R"},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Read(golden(t, tt.name))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestReadRefuses: a file that is not what Write makes is refused, saying
// where.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	small := string(golden(t, "small"))
	records := strings.SplitAfter(small, "\r\n")[:5]
	// set replaces columns from.. (1-based) of record n (1-based).
	set := func(n, from int, s string) string {
		r := append([]string(nil), records...)
		line := r[n-1]
		r[n-1] = line[:from-1] + s + line[from-1+len(s):]
		return strings.Join(r, "")
	}
	without := func(n int) string {
		r := append([]string(nil), records[:n-1]...)
		return strings.Join(append(r, records[n:]...), "")
	}
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "0 records"},
		{"LF line ends", strings.ReplaceAll(small, "\r\n", "\n"), "record 1: ends in LF without CR"},
		{"no final line end", strings.TrimSuffix(small, "\r\n"), "record 5: no line end"},
		{"a short record", strings.Replace(small, "00000000\r\n", "0000000\r\n", 1), "record 2: 119 characters, not 120"},
		{"a long record", strings.Replace(small, "00000000\r\n", "000000000\r\n", 1), "record 2: 121 characters, not 120"},
		{"a non-ASCII byte", set(2, 31, "\xc9"), "record 2, column 31: byte 0xc9 is not ASCII text"},
		{"a record type out of place", set(2, 1, "7"), "record 2, columns 1-1: record type '7' where a type '1' record belongs"},
		{"no type 0", set(1, 1, "1"), "record 1, columns 1-1"},
		{"a wrong reel", set(1, 19, "02"), `columns 19-20: "02", not "01"`},
		{"a bad processing date", set(1, 75, "310226"), "processing date \"310226\" is not a DDMMYY date"},
		{"a debit among the credits", set(2, 19, "13"), "record 2: transaction code 13: a credit (50) belongs here"},
		{"no balancing debit", set(4, 19, "50"), "record 4: transaction code 50: the last detail record must be the balancing debit (13)"},
		{"another transaction code", set(2, 19, "53"), `transaction code "53" is neither 50 nor 13`},
		{"an indicator", set(2, 18, "N"), `columns 18-18: "N", not " "`},
		{"an amount with a blank", set(2, 21, " "), "columns 21-30: \" 000125050\" is not digits"},
		{"a zero amount", set(3, 21, "0000000000"), "record 3, columns 21-30: amount is zero"},
		{"a BSB without its hyphen", set(2, 2, "0320010"), `BSB "0320010" is not nnn-nnn`},
		{"a blank title", set(2, 31, "            "), `columns 31-62: "" must not be blank`},
		{"withholding tax", set(2, 113, "00000001"), `columns 113-120: "00000001", not "00000000"`},
		{"a trace not the debtor's", set(2, 81, "062-001"), "record 2: trace record 062-001 12345678 is not the debtor's account 062-000 12345678"},
		{"a wrong count", set(5, 75, "000004"), "record 5: count 4, but the file has 3 type 1 records"},
		{"a wrong credit total", set(5, 31, "0000125151"), "record 5: credit total 125151, but the credits sum to 125150"},
		{"a wrong debit total", set(5, 41, "0000125149"), "record 5: debit total 125149, but the balancing debit is 125150"},
		{"an unbalanced file", set(4, 21, "0000125149") /* the balancing debit short */, "record 5: debit total 125150, but the balancing debit is 125149"},
		{"a wrong net total", set(5, 21, "0000000001"), "record 5: net total 1, but the file balances"},
		{"a type 7 BSB", set(5, 2, "999-998"), `columns 2-8: "999-998", not "999-999"`},
		{"a missing credit", without(3), "record 4: count 3, but the file has 2 type 1 records"},
		{"no type 7", without(5), "record 4: record type '1': the last record must be the type 7 file total"},
		{"only a header", records[0], "1 records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := Read([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read = %+v, %v; want an error containing %q", f, err, tt.want)
			}
		})
	}
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".aba"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
