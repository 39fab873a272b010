package feedtest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"payd/internal/feed/feedtest"
	"payd/internal/iso20022"
	"payd/internal/statement"
	"payd/internal/statement/bai2"
	"payd/internal/statement/mt940"
)

// day is a file of every kind of entry: a credit to a virtual account, a
// credit naming a payin in its text, a PayID credit, a pending one, a
// debit and a return.
var day = feedtest.File{MsgID: "NTF-1", Account: "12345678", Currency: "AUD", Date: "2026-03-02", OpeningMinor: 100000, Entries: []feedtest.Entry{
	{Key: "NPP1", AmountMinor: 125050, CreditedAccount: "98765432101", Remittance: "INV 1042", Payer: "JANE CITIZEN"},
	{Key: "NPP2", AmountMinor: 9999, Remittance: "payment ab12cd34 thanks"},
	{Key: "NPP3", AmountMinor: 5000, Proxy: "pay.acme@payd.example"},
	{Key: "NPP4", AmountMinor: 700, Pending: true},
	{Key: "BECS1", AmountMinor: 2000, Debit: true, Reference: "PT7K2M9Q4X1B8C3D"},
	{Key: "NPP5", AmountMinor: 2000, Return: true, Reference: "PT7K2M9Q4X1B8C3D", ReturnReason: "AC04 Account closed"},
}}

// TestFilesRead: each writer's file reads back whole with its booked
// entries, keys and totals, and the camt files are valid against the
// official XSDs.
func TestFilesRead(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		read   func(r *bytes.Reader) (statement.Header, error)
		booked int
	}{
		{"camt054", feedtest.Camt054(day), func(r *bytes.Reader) (statement.Header, error) { return iso20022.CheckCamt(r) }, 5},
		{"camt053", feedtest.Camt053(day), func(r *bytes.Reader) (statement.Header, error) { return iso20022.CheckCamt(r) }, 5},
		{"bai2", feedtest.BAI2(day), func(r *bytes.Reader) (statement.Header, error) { return bai2.Check(r) }, 5},
		{"mt940", feedtest.MT940(day), func(r *bytes.Reader) (statement.Header, error) { return mt940.Check(r) }, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.read(bytes.NewReader(tt.data))
			if err != nil {
				t.Fatalf("%v\n%s", err, tt.data)
			}
			if h.Booked != tt.booked || h.Account.Digits() != "12345678" || h.Account.Currency != "AUD" || h.CreditsMinor != 125050+9999+5000+2000 || h.DebitsMinor != 2000 {
				t.Errorf("header %+v", h)
			}
		})
	}
}

// TestCamtIsValid checks the camt files against the official XSDs.
func TestCamtIsValid(t *testing.T) {
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is not installed (Debian libxml2-utils)")
		}
		t.Skip("xmllint is not installed: XSD validation skipped")
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"camt.054.001.08": feedtest.Camt054(day), "camt.053.001.08": feedtest.Camt053(day)} {
		file := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(lint, "--noout", "--schema", schemaPath(t, name+".xsd"), file).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}

// schemaPath finds an official XSD in shared/iso20022 above the package.
func schemaPath(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		path := filepath.Join(dir, "shared", "iso20022", name)
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no shared/iso20022/%s above the package directory", name)
		}
		dir = parent
	}
}
