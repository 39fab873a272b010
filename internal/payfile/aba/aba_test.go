package aba

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payd/internal/payfile"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.aba golden files")

// aedt is Sydney's summer offset: the cut-offs below fall on the previous day
// in UTC, so a processing date taken in the wrong zone shows.
var aedt = time.FixedZone("AEDT", 11*60*60)

var debtor = payfile.Debtor{
	Name: "Payd Operations Pty Ltd", Account: "12345678", BSB: "062-000",
	OriginatorID: "301500", BankAbbrev: "CBA",
}

// smallFile is a cut-off with two ordinary credits.
func smallFile() payfile.File {
	return payfile.File{
		Name: "payd-au-main-20261202-001", Reference: "F7K2M9Q4W8Z1X3C5",
		CreatedAt: time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC), // 09:30 on 2 December in Sydney
		Location:  aedt, Currency: "AUD", Debtor: debtor,
		Credits: []payfile.Credit{
			{BankReference: "PT7Q2M4K8W1Z3X5C", AmountMinor: 125_050, Name: "Jane Citizen",
				Account: "87654321", BSB: "032-001", Remitter: "Acme Widgets"},
			{BankReference: "PT9R8S7T6U5V4W3X", AmountMinor: 100, Name: "O'Brien & Sons Pty Ltd",
				Account: "123456", BSB: "083-004", Remitter: "Acme Widgets"},
		},
	}
}

// edgeFile has names at and over their widths, lower case to upper-case,
// every punctuation mark of the BECS set, accounts of 1 and 9 digits, a
// reference of 18, amounts at 1 cent and a total at the field's bound.
func edgeFile() payfile.File {
	d := debtor
	d.Name = "The Payd Payments Operations Company Pty Ltd" // over 26, 32 and 16
	return payfile.File{
		Name: "payd-au-edge-20270228-002", Reference: "ABCDEFGHIJKLMNOPQR",
		CreatedAt: time.Date(2027, 2, 28, 23, 59, 59, 0, aedt),
		Location:  aedt, Currency: "AUD", Debtor: d,
		Credits: []payfile.Credit{
			{BankReference: "A00000000000000001", AmountMinor: 1, Name: "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", // 32
				Account: "7", BSB: "000-000", Remitter: "REMITTER SIXTEEN"}, // 16
			{BankReference: "Z999999999999999", AmountMinor: 9_999_999_997,
				Name:    "mr. j. o'neil-smith & co (holdings) #1 [a/c]", // lower case, over 32
				Account: "123456789", BSB: "999-998", Remitter: "a merchant whose name runs long"},
			{BankReference: "PUNCT0000000000P", AmountMinor: 1, Name: "X!#$%&'()*+,-./:;=?@[]^_",
				Account: "000000001", BSB: "123-456", Remitter: "r"},
		},
	}
}

// TestGolden pins the bytes of a small file and of one with the edge cases.
// Run go test ./internal/payfile/aba -update to rewrite them after a
// deliberate change.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file payfile.File
	}{
		{"small", smallFile()},
		{"edge", edgeFile()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Write(tt.file)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			golden := filepath.Join("testdata", tt.name+".aba")
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
				t.Errorf("Write differs from %s:\n%s", golden, lineDiff(string(got), string(want)))
			}
		})
	}
}

// TestGoldenRecords checks the golden files' shape independently of Write:
// 120 characters and CR LF per record, and the fields §17 names.
func TestGoldenRecords(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "small.aba"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\r\n")
	if last := lines[len(lines)-1]; last != "" {
		t.Fatalf("the file does not end in CR LF: %q", last)
	}
	lines = lines[:len(lines)-1]
	for i, l := range lines {
		if len(l) != 122 {
			t.Errorf("record %d: %d characters with its line end, want 122", i+1, len(l))
		}
	}
	tests := []struct {
		name     string
		record   int
		from, to int
		want     string
	}{
		{"type 0", 0, 1, 1, "0"},
		{"reel", 0, 19, 20, "01"},
		{"bank", 0, 21, 23, "CBA"},
		{"user name", 0, 31, 56, "PAYD OPERATIONS PTY LTD   "},
		{"APCA user id", 0, 57, 62, "301500"},
		{"description", 0, 63, 74, "PAYOUTS     "},
		{"processing date in Sydney", 0, 75, 80, "021226"},
		{"credit BSB", 1, 2, 8, "032-001"},
		{"credit account right-justified", 1, 9, 17, " 87654321"},
		{"indicator", 1, 18, 18, " "},
		{"credit code", 1, 19, 20, "50"},
		{"amount in cents", 1, 21, 30, "0000125050"},
		{"account title upper-cased", 1, 31, 62, "JANE CITIZEN                    "},
		{"lodgement reference", 1, 63, 80, "PT7Q2M4K8W1Z3X5C  "},
		{"trace BSB", 1, 81, 87, "062-000"},
		{"trace account", 1, 88, 96, " 12345678"},
		{"remitter upper-cased", 1, 97, 112, "ACME WIDGETS    "},
		{"withholding", 1, 113, 120, "00000000"},
		{"balancing BSB", 3, 2, 8, "062-000"},
		{"balancing account", 3, 9, 17, " 12345678"},
		{"balancing code", 3, 19, 20, "13"},
		{"balancing amount", 3, 21, 30, "0000125150"},
		{"file reference", 3, 63, 80, "F7K2M9Q4W8Z1X3C5  "},
		{"type 7 BSB", 4, 2, 8, "999-999"},
		{"net total", 4, 21, 30, "0000000000"},
		{"credit total", 4, 31, 40, "0000125150"},
		{"debit total", 4, 41, 50, "0000125150"},
		{"count of type 1 records", 4, 75, 80, "000003"},
	}
	for _, tt := range tests {
		if got := lines[tt.record][tt.from-1 : tt.to]; got != tt.want {
			t.Errorf("%s (record %d, columns %d-%d) = %q, want %q", tt.name, tt.record+1, tt.from, tt.to, got, tt.want)
		}
	}
}

// TestWriteSameBytes: a cut-off re-run after a crash writes the file it
// wrote before.
func TestWriteSameBytes(t *testing.T) {
	t.Parallel()
	first, err := Write(edgeFile())
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		again, err := Write(edgeFile())
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("a second Write differs (%v)", err)
		}
	}
}

// lineDiff shows the records that differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\r\n"), strings.Split(want, "\r\n")
	var b strings.Builder
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "record %d:\n got  %q\n want %q\n", i+1, gl, wl)
		}
	}
	return b.String()
}
