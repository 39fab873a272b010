package banktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"payd/internal/iso20022"
)

// TestReportIsValid: the reports the tests write are valid against the
// official pain.002.001.11 XSD (../shared/iso20022/, with xmllint, as
// internal/iso20022's fixtures are) and read back, by payd's reader, to
// what was written.
func TestReportIsValid(t *testing.T) {
	t.Parallel()
	reports := map[string]Report{
		"transactions": {MsgID: "STS-0001", File: "payd-au-abc-20260302-001.aba", FileReference: "F0000000000000A1", Count: 3, CtrlSum: "32.50",
			GroupStatus: "PART", Transactions: []Transaction{
				{Reference: "PT7K2M9Q4X1B8C3D", Status: "ACSC"},
				{Reference: "PT7K2M9Q4X1B8C3E", Status: "RJCT", Reason: Reason{Code: "AC04", Text: "Account closed & <gone>"}},
				{Reference: "PT7K2M9Q4X1B8C3F", Status: "PDNG"},
			}},
		"group rejected": {MsgID: "STS-0002", File: "payd-au-abc-20260302-002.xml", Count: 2, CtrlSum: "1850.50", GroupStatus: "RJCT",
			GroupReason: Reason{Code: "FF01", Text: "Invalid file format"}},
		"payment rejected": {MsgID: "STS-0003", File: "payd-jp-abc-20260302-001.txt", FileReference: "F0000000000000J2", PaymentStatus: "RJCT",
			PaymentReason: Reason{Code: "AM04"}},
	}
	dir := t.TempDir()
	var files []string
	for name, r := range reports {
		doc := r.XML()
		read, err := iso20022.ReadPain002(doc)
		if err != nil {
			t.Errorf("%s: ReadPain002: %v\n%s", name, err, doc)
			continue
		}
		if read.MsgID != r.MsgID || read.OriginalMsgID+fileExtension(r.File) != r.File || len(read.Transactions) != len(r.Transactions) ||
			string(read.GroupStatus) != r.GroupStatus {
			t.Errorf("%s reads back as %+v", name, read)
		}
		for i, tx := range read.Transactions {
			want := r.Transactions[i]
			if tx.EndToEndID != want.Reference || string(tx.Status) != want.Status || tx.Reason.FailureReason() != joined(want.Reason) {
				t.Errorf("%s: transaction %d reads back as %+v, want %+v", name, i, tx, want)
			}
		}
		path := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI validates the reports against their XSD, but xmllint is not installed (Debian libxml2-utils)")
		}
		t.Skip("xmllint is not installed (Debian libxml2-utils): XSD validation skipped")
	}
	args := append([]string{"--noout", "--schema", schema(t)}, files...)
	if out, err := exec.Command(xmllint, args...).CombinedOutput(); err != nil {
		t.Errorf("not valid against pain.002.001.11.xsd: %v\n%s", err, out)
	}
}

func joined(r Reason) string {
	switch {
	case r.Code == "":
		return r.Text
	case r.Text == "":
		return r.Code
	}
	return r.Code + " " + r.Text
}

// schema finds the official XSD by walking up to the directory that holds
// shared/iso20022 (the repository sits beside shared/).
func schema(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		path := filepath.Join(dir, "shared", "iso20022", "pain.002.001.11.xsd")
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no shared/iso20022/pain.002.001.11.xsd above the package directory")
		}
		dir = parent
	}
}
