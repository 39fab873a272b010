package iso20022

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones of the tests must not depend on the machine's zoneinfo

	"payd/internal/money"
	"payd/internal/payfile"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden.xml files")

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// audFile is an AUD file of a pain001 rail: BSB accounts (one also known by
// its BIC) and two PayIDs, a debtor known by its BSB, text that XML must
// escape, a multi-line description.
func audFile(t testing.TB) payfile.File {
	sydney := mustZone(t, "Australia/Sydney")
	return payfile.File{
		Name:      "payd-au-npp-20260302-001",
		Reference: "F0000000000000A1",
		CreatedAt: time.Date(2026, 3, 2, 15, 0, 0, 0, sydney),
		Location:  sydney,
		Currency:  "AUD",
		Debtor: payfile.Debtor{
			Name:         "PAYD OPERATIONS PTY LTD",
			Account:      "123456789",
			BSB:          "062-000",
			OriginatorID: "301500",
		},
		Credits: []payfile.Credit{
			{BankReference: "PT7K2M9Q4X1B8C3D", AmountMinor: 125050, Name: "JANE CITIZEN", Account: "12345678", BSB: "083-004", Remitter: "ACME COFFEE", Description: "Invoice 1042"},
			{BankReference: "PT7K2M9Q4X1B8C3E", AmountMinor: 9999, Name: "Ōrītetanga Café & Co", Account: "000123456", BSB: "733-123", BIC: "WPACAU2S", Description: `Refund <order #77> "as agreed"`},
			{BankReference: "PT7K2M9Q4X1B8C3F", AmountMinor: 50000, Name: "SAM O'BRIEN", PayID: "sam.obrien@example.com.au", Remitter: "ACME COFFEE", Description: "Payout\r\nsecond line\tend"},
			{BankReference: "PT7K2M9Q4X1B8C3G", AmountMinor: 1, Name: "PAYID BY PHONE", PayID: "+61-412345678"},
		},
	}
}

// jpyFile is a JPY file of a pain001 rail: Zengin bank and branch codes for
// the debtor and each creditor, ordinary and current accounts, kana names.
func jpyFile(t testing.TB) payfile.File {
	tokyo := mustZone(t, "Asia/Tokyo")
	return payfile.File{
		Name:      "payd-jp-zengin-20260302-002",
		Reference: "F0000000000000J2",
		CreatedAt: time.Date(2026, 3, 2, 9, 30, 0, 0, tokyo),
		Location:  tokyo,
		Currency:  "JPY",
		Debtor: payfile.Debtor{
			Name:         "ﾍﾟｲﾄﾞ(ｶ",
			Account:      "1234567",
			BankCode:     "0005",
			BranchCode:   "001",
			OriginatorID: "1234567890",
			AccountType:  payfile.Ordinary,
		},
		Credits: []payfile.Credit{
			{BankReference: "JP0000000000000A", AmountMinor: 150000, Name: "ﾔﾏﾀﾞ ﾀﾛｳ", Account: "7654321", BankCode: "0009", BranchCode: "100", AccountType: payfile.Ordinary, Description: "3月分 給与"},
			{BankReference: "JP0000000000000B", AmountMinor: 3000000, Name: "ｶ)ｻﾝﾌﾟﾙｼｮｳｼﾞ", Account: "0000001", BankCode: "0001", BranchCode: "001", AccountType: payfile.Current},
		},
	}
}

// TestPain001Golden pins the pain.001 of an AUD and a JPY file byte for
// byte, so that any change in what payd sends its bank is seen in review
// (go test ./internal/iso20022 -update rewrites them after a deliberate
// change). Each file validates against the official XSD and reads back to
// exactly the File written.
func TestPain001Golden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file payfile.File
	}{
		{"aud_bsb_payid", audFile(t)},
		{"jpy_zengin", jpyFile(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WritePain001(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name+".golden.xml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("WritePain001 differs from %s (run with -update after a deliberate change):\n%s", path, got)
			}
			requireSameFile(t, got, tt.file)
			requireValid(t, pain001XSD, got)
		})
	}
}

// requireSameFile reads data back and checks it holds exactly want.
func requireSameFile(t *testing.T, data []byte, want payfile.File) {
	t.Helper()
	got, err := ReadPain001(data)
	if err != nil {
		t.Fatalf("ReadPain001: %v", err)
	}
	if diff := fileDiff(got, want); diff != "" {
		t.Fatalf("ReadPain001(WritePain001(f)) is not f: %s", diff)
	}
}

// fileDiff says how a read File differs from the one written, or "". The
// instants must be equal and the read zone must have the written one's
// offset at that instant (the file holds the offset, not the zone's name).
func fileDiff(got, want payfile.File) string {
	if !got.CreatedAt.Equal(want.CreatedAt) {
		return "CreatedAt " + got.CreatedAt.String() + ", want " + want.CreatedAt.String()
	}
	_, gotOffset := got.CreatedAt.In(got.Location).Zone()
	_, wantOffset := want.CreatedAt.In(want.Location).Zone()
	if gotOffset != wantOffset {
		return "the zone's offset differs"
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	got.Location, want.Location = nil, nil
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("\n got %+v\nwant %+v", got, want)
	}
	return ""
}

// TestWritePain001Deterministic checks that the same File, built again as a
// cut-off re-run would build it, gives the same bytes, and that a file read
// back and written again is the same file.
func TestWritePain001Deterministic(t *testing.T) {
	t.Parallel()
	first, err := WritePain001(audFile(t))
	if err != nil {
		t.Fatal(err)
	}
	again, err := WritePain001(audFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Fatalf("the same File wrote different bytes:\n%s\n%s", first, again)
	}
	read, err := ReadPain001(first)
	if err != nil {
		t.Fatal(err)
	}
	rewritten, err := WritePain001(read)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, rewritten) {
		t.Fatalf("WritePain001(ReadPain001(b)) is not b:\n%s\n%s", first, rewritten)
	}
}

// TestWritePain001Dates checks CreDtTm (the cut-off's instant, with the
// rail zone's offset) and ReqdExctnDt (its local date) on either side of
// midnight and of daylight-saving changes: a cut-off just after local
// midnight is still the previous UTC day.
func TestWritePain001Dates(t *testing.T) {
	t.Parallel()
	sydney := mustZone(t, "Australia/Sydney")
	newYork := mustZone(t, "America/New_York")
	tests := []struct {
		name          string
		at            time.Time
		loc           *time.Location
		wantCreated   string
		wantExecution string
	}{
		{"after local midnight", time.Date(2026, 3, 1, 13, 30, 0, 0, time.UTC), sydney, "2026-03-02T00:30:00+11:00", "2026-03-02"},
		{"last cut-off before DST ends", time.Date(2026, 4, 4, 15, 0, 0, 0, sydney), sydney, "2026-04-04T15:00:00+11:00", "2026-04-04"},
		{"first cut-off after DST ends", time.Date(2026, 4, 5, 9, 30, 0, 0, sydney), sydney, "2026-04-05T09:30:00+10:00", "2026-04-05"},
		{"DST starts", time.Date(2026, 10, 4, 9, 30, 0, 0, sydney), sydney, "2026-10-04T09:30:00+11:00", "2026-10-04"},
		{"west of UTC late", time.Date(2026, 3, 9, 23, 30, 0, 0, newYork), newYork, "2026-03-09T23:30:00-04:00", "2026-03-09"},
		{"UTC", time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC), time.UTC, "2026-03-02T15:00:00Z", "2026-03-02"},
		{"a fraction of a second", time.Date(2026, 3, 2, 15, 0, 0, 250_000_000, time.UTC), time.UTC, "2026-03-02T15:00:00.25Z", "2026-03-02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := audFile(t)
			f.CreatedAt, f.Location = tt.at, tt.loc
			data, err := WritePain001(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := between(data, "<CreDtTm>", "</CreDtTm>"); got != tt.wantCreated {
				t.Errorf("CreDtTm = %q, want %q", got, tt.wantCreated)
			}
			if got := between(data, "<Dt>", "</Dt>"); got != tt.wantExecution {
				t.Errorf("ReqdExctnDt/Dt = %q, want %q", got, tt.wantExecution)
			}
			requireSameFile(t, data, f)
			requireValid(t, pain001XSD, data)
		})
	}
}

func between(data []byte, open, close string) string {
	s := string(data)
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	j := strings.Index(s, close)
	if j < 0 {
		return ""
	}
	return s[:j]
}

// TestWritePain001Limits writes what is just inside the schema's bounds
// (35- and 140-character texts, counted in characters however many bytes
// they take, a 2048-character PayID, the largest amounts, a currency with
// three decimals and one with none): each is written, validates, and reads
// back exactly.
func TestWritePain001Limits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*payfile.File)
	}{
		{"35-character name", func(f *payfile.File) { f.Name = strings.Repeat("n", 35) }},
		{"35-character references", func(f *payfile.File) {
			f.Reference = strings.Repeat("F", 35)
			f.Credits[0].BankReference = strings.Repeat("P", 35)
		}},
		{"140 two-byte characters", func(f *payfile.File) { f.Credits[0].Name = strings.Repeat("é", 140) }},
		{"140 four-byte characters", func(f *payfile.File) { f.Credits[0].Description = strings.Repeat("😀", 140) }},
		{"140-character debtor and remitter", func(f *payfile.File) {
			f.Debtor.Name = strings.Repeat("D", 140)
			f.Credits[0].Remitter = strings.Repeat("R", 140)
		}},
		{"34-character accounts", func(f *payfile.File) {
			f.Debtor.Account = strings.Repeat("1", 34)
			f.Credits[0].Account = strings.Repeat("2", 34)
		}},
		{"2048-character PayID", func(f *payfile.File) { f.Credits[2].PayID = strings.Repeat("p", 2040) + "@example" }},
		{"35-character originator id", func(f *payfile.File) { f.Debtor.OriginatorID = strings.Repeat("9", 35) }},
		{"no originator id", func(f *payfile.File) { f.Debtor.OriginatorID = "" }},
		{"debtor by BIC", func(f *payfile.File) { f.Debtor.BSB, f.Debtor.BIC = "", "CTBAAU2SXXX" }},
		{"the largest total", func(f *payfile.File) {
			f.Credits[0].AmountMinor = money.MaxMinor - 3
			for i := 1; i < len(f.Credits); i++ {
				f.Credits[i].AmountMinor = 1
			}
		}},
		{"KWD has three decimals", func(f *payfile.File) { f.Currency = "KWD" }},
		{"XOF has none", func(f *payfile.File) { f.Currency = "XOF" }},
		{"no remitter, no description", func(f *payfile.File) {
			for i := range f.Credits {
				f.Credits[i].Remitter, f.Credits[i].Description = "", ""
			}
		}},
		{"XML's own characters", func(f *payfile.File) { f.Credits[0].Name = `<&>"' ]]> <!-- -->` }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := audFile(t)
			tt.modify(&f)
			data, err := WritePain001(f)
			if err != nil {
				t.Fatal(err)
			}
			requireSameFile(t, data, f)
			requireValid(t, pain001XSD, data)
		})
	}
}

// TestWritePain001Refuses checks that what pain.001 cannot hold is refused
// before a byte is written, with a payfile.FieldError naming the credit, the
// field and the element, rather than cut or mangled into a file the bank
// rejects.
func TestWritePain001Refuses(t *testing.T) {
	t.Parallel()
	tokyo := mustZone(t, "Asia/Tokyo")
	tests := []struct {
		name        string
		modify      func(*payfile.File)
		wantCredit  int
		wantField   string
		wantElement string
	}{
		{"name over 35", func(f *payfile.File) { f.Name = strings.Repeat("n", 36) }, -1, "Name", "GrpHdr/MsgId"},
		{"no name", func(f *payfile.File) { f.Name = "" }, -1, "Name", "GrpHdr/MsgId"},
		{"reference in lower case", func(f *payfile.File) { f.Reference = "f0000000000000a1" }, -1, "Reference", "PmtInf/PmtInfId"},
		{"reference with a hyphen", func(f *payfile.File) { f.Reference = "F0000000-00000A1" }, -1, "Reference", "PmtInf/PmtInfId"},
		{"reference over 35", func(f *payfile.File) { f.Reference = strings.Repeat("F", 36) }, -1, "Reference", "PmtInf/PmtInfId"},
		{"no zone", func(f *payfile.File) { f.Location = nil }, -1, "Location", "ReqdExctnDt/Dt"},
		{"no instant", func(f *payfile.File) { f.CreatedAt = time.Time{} }, -1, "CreatedAt", "GrpHdr/CreDtTm"},
		{"local mean time's offset of seconds", func(f *payfile.File) {
			f.CreatedAt, f.Location = time.Date(1880, 1, 2, 0, 0, 0, 0, time.UTC), tokyo
		}, -1, "Location", "GrpHdr/CreDtTm"},
		{"USDC has six decimals", func(f *payfile.File) { f.Currency = "USDC" }, -1, "Currency", "InstdAmt/@Ccy"},
		{"unknown currency", func(f *payfile.File) { f.Currency = "XXX" }, -1, "Currency", "InstdAmt/@Ccy"},
		{"no credits", func(f *payfile.File) { f.Credits = nil }, -1, "Credits", "PmtInf/CdtTrfTxInf"},
		{"total over the bound", func(f *payfile.File) { f.Credits[0].AmountMinor = money.MaxMinor - 1 }, -1, "Credits", "GrpHdr/CtrlSum"},
		{"debtor name over 140", func(f *payfile.File) { f.Debtor.Name = strings.Repeat("é", 141) }, -1, "Debtor.Name", "Dbtr/Nm"},
		{"debtor name with a newline", func(f *payfile.File) { f.Debtor.Name = "PAYD\nOPS" }, -1, "Debtor.Name", "Dbtr/Nm"},
		{"debtor account over 34", func(f *payfile.File) { f.Debtor.Account = strings.Repeat("1", 35) }, -1, "Debtor.Account", "DbtrAcct/Id/Othr/Id"},
		{"debtor without a bank", func(f *payfile.File) { f.Debtor.BSB = "" }, -1, "Debtor.BIC", "DbtrAgt/FinInstnId"},
		{"debtor BIC malformed", func(f *payfile.File) { f.Debtor.BIC = "CTBA AU2S" }, -1, "Debtor.BIC", "DbtrAgt/FinInstnId/BICFI"},
		{"debtor originator over 35", func(f *payfile.File) { f.Debtor.OriginatorID = strings.Repeat("9", 36) }, -1, "Debtor.OriginatorID", "InitgPty/Id/OrgId/Othr/Id"},
		{"debtor account type unknown", func(f *payfile.File) { f.Debtor.AccountType = "savings" }, -1, "Debtor.AccountType", "DbtrAcct/Tp/Cd"},
		{"bank reference twice", func(f *payfile.File) { f.Credits[1].BankReference = f.Credits[0].BankReference }, 1, "BankReference", "PmtId/EndToEndId"},
		{"bank reference over 35", func(f *payfile.File) { f.Credits[2].BankReference = strings.Repeat("P", 36) }, 2, "BankReference", "PmtId/EndToEndId"},
		{"bank reference in lower case", func(f *payfile.File) { f.Credits[2].BankReference = "pt7k2m9q4x1b8c3f" }, 2, "BankReference", "PmtId/EndToEndId"},
		{"no bank reference", func(f *payfile.File) { f.Credits[0].BankReference = "" }, 0, "BankReference", "PmtId/EndToEndId"},
		{"zero amount", func(f *payfile.File) { f.Credits[0].AmountMinor = 0 }, 0, "AmountMinor", "Amt/InstdAmt"},
		{"negative amount", func(f *payfile.File) { f.Credits[1].AmountMinor = -5 }, 1, "AmountMinor", "Amt/InstdAmt"},
		{"amount over the bound", func(f *payfile.File) { f.Credits[0].AmountMinor = money.MaxMinor + 1 }, 0, "AmountMinor", "Amt/InstdAmt"},
		{"no creditor name", func(f *payfile.File) { f.Credits[0].Name = "" }, 0, "Name", "Cdtr/Nm"},
		{"creditor name over 140", func(f *payfile.File) { f.Credits[3].Name = strings.Repeat("😀", 141) }, 3, "Name", "Cdtr/Nm"},
		{"creditor name with NUL", func(f *payfile.File) { f.Credits[0].Name = "JANE\x00" }, 0, "Name", "Cdtr/Nm"},
		{"creditor name with a C1 control", func(f *payfile.File) { f.Credits[0].Name = "JANE\u0085" }, 0, "Name", "Cdtr/Nm"},
		{"creditor name with a tab", func(f *payfile.File) { f.Credits[0].Name = "JANE\tCITIZEN" }, 0, "Name", "Cdtr/Nm"},
		{"creditor name not UTF-8", func(f *payfile.File) { f.Credits[0].Name = "JANE\xff" }, 0, "Name", "Cdtr/Nm"},
		{"creditor name with U+FFFE", func(f *payfile.File) { f.Credits[0].Name = "JANE\ufffe" }, 0, "Name", "Cdtr/Nm"},
		{"description over 140", func(f *payfile.File) { f.Credits[1].Description = strings.Repeat("d", 141) }, 1, "Description", "RmtInf/Ustrd"},
		{"description with BEL", func(f *payfile.File) { f.Credits[1].Description = "ring\a" }, 1, "Description", "RmtInf/Ustrd"},
		{"remitter over 140", func(f *payfile.File) { f.Credits[0].Remitter = strings.Repeat("r", 141) }, 0, "Remitter", "UltmtDbtr/Nm"},
		{"account over 34", func(f *payfile.File) { f.Credits[0].Account = strings.Repeat("1", 35) }, 0, "Account", "CdtrAcct/Id/Othr/Id"},
		{"neither account nor PayID", func(f *payfile.File) { f.Credits[0].Account = "" }, 0, "Account", "CdtrAcct/Id/Othr/Id"},
		{"account and PayID", func(f *payfile.File) { f.Credits[2].Account = "12345678" }, 2, "PayID", "CdtrAcct/Prxy/Id"},
		{"PayID over 2048", func(f *payfile.File) { f.Credits[2].PayID = strings.Repeat("p", 2049) }, 2, "PayID", "CdtrAcct/Prxy/Id"},
		{"account without a bank", func(f *payfile.File) { f.Credits[0].BSB = "" }, 0, "BSB", "CdtrAgt/FinInstnId"},
		{"BSB without its hyphen", func(f *payfile.File) { f.Credits[0].BSB = "083004" }, 0, "BSB", "CdtrAgt/FinInstnId/ClrSysMmbId/MmbId"},
		{"BSB and Zengin code", func(f *payfile.File) { f.Credits[0].BankCode, f.Credits[0].BranchCode = "0005", "001" }, 0, "BSB", "CdtrAgt/FinInstnId/ClrSysMmbId"},
		{"creditor BIC malformed", func(f *payfile.File) { f.Credits[1].BIC = "wpacau2s" }, 1, "BIC", "CdtrAgt/FinInstnId/BICFI"},
		{"bank code of two", func(f *payfile.File) {
			f.Credits[0].BSB, f.Credits[0].BankCode, f.Credits[0].BranchCode = "", "05", "001"
		}, 0, "BankCode", "CdtrAgt/FinInstnId/ClrSysMmbId/MmbId"},
		{"bank code without branch", func(f *payfile.File) {
			f.Credits[0].BSB, f.Credits[0].BankCode = "", "0005"
		}, 0, "BranchCode", "CdtrAgt/FinInstnId/ClrSysMmbId/MmbId"},
		{"account type unknown", func(f *payfile.File) { f.Credits[3].AccountType = "savings" }, 3, "AccountType", "CdtrAcct/Tp/Cd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := audFile(t)
			tt.modify(&f)
			data, err := WritePain001(f)
			var fe *payfile.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("WritePain001 = %d bytes, %v; want a *payfile.FieldError", len(data), err)
			}
			if data != nil {
				t.Errorf("WritePain001 refused and wrote %d bytes", len(data))
			}
			got := [4]any{fe.Format, fe.Credit, fe.Field, strings.HasSuffix(fe.Problem, " ["+tt.wantElement+"]")}
			want := [4]any{payfile.Pain001, tt.wantCredit, tt.wantField, true}
			if got != want {
				t.Errorf("FieldError %v (%v), want format, credit, field, element %v %s", got, err, want, tt.wantElement)
			}
			if tt.wantCredit >= 0 && (fe.BankReference == "" && f.Credits[tt.wantCredit].BankReference != "") {
				t.Errorf("FieldError %v does not name the bank reference", err)
			}
		})
	}
}

// TestReadPain001Refuses checks that the reader refuses a file that is not
// exactly a File: totals that disagree with the credits, another version,
// what WritePain001 never writes.
func TestReadPain001Refuses(t *testing.T) {
	t.Parallel()
	good, err := WritePain001(audFile(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"group count", "<NbOfTxs>4</NbOfTxs>\n      <CtrlSum>1850.50</CtrlSum>\n      <InitgPty>", "<NbOfTxs>5</NbOfTxs>\n      <CtrlSum>1850.50</CtrlSum>\n      <InitgPty>", "GrpHdr/NbOfTxs"},
		{"group control sum", "<CtrlSum>1850.50</CtrlSum>\n      <InitgPty>", "<CtrlSum>1850.51</CtrlSum>\n      <InitgPty>", "GrpHdr/CtrlSum"},
		{"payment count", "<NbOfTxs>4</NbOfTxs>\n      <CtrlSum>1850.50</CtrlSum>\n      <ReqdExctnDt>", "<NbOfTxs>3</NbOfTxs>\n      <CtrlSum>1850.50</CtrlSum>\n      <ReqdExctnDt>", "PmtInf/NbOfTxs"},
		{"payment control sum", "<CtrlSum>1850.50</CtrlSum>\n      <ReqdExctnDt>", "<CtrlSum>1850.49</CtrlSum>\n      <ReqdExctnDt>", "PmtInf/CtrlSum"},
		{"a fraction of a cent", `<InstdAmt Ccy="AUD">99.99</InstdAmt>`, `<InstdAmt Ccy="AUD">99.995</InstdAmt>`, "more decimal places"},
		{"two currencies", `<InstdAmt Ccy="AUD">99.99</InstdAmt>`, `<InstdAmt Ccy="NZD">99.99</InstdAmt>`, "NZD in a AUD file"},
		{"batch booking", "<BtchBookg>false</BtchBookg>", "<BtchBookg>true</BtchBookg>", "BtchBookg"},
		{"execution date", "<Dt>2026-03-02</Dt>", "<Dt>2026-03-03</Dt>", "ReqdExctnDt"},
		{"another version", NamespacePain001, "urn:iso:std:iso:20022:tech:xsd:pain.001.001.03", "pain.001.001.03"},
		{"unknown clearing system", "<Cd>AUBSB</Cd>", "<Cd>USABA</Cd>", "ClrSysMmbId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Replace(string(good), tt.old, tt.new, 1)
			if data == string(good) {
				t.Fatalf("%q is not in the file", tt.old)
			}
			_, err := ReadPain001([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadPain001 = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

// BenchmarkWritePain001 writes a 10,000-transfer file, the size of the
// issue's cut-off target (issue 47: under 5 s for the whole cut-off).
func BenchmarkWritePain001(b *testing.B) {
	f := audFile(b)
	template := f.Credits[0]
	f.Credits = make([]payfile.Credit, 10_000)
	for i := range f.Credits {
		f.Credits[i] = template
		f.Credits[i].BankReference = fmt.Sprintf("PT%014d", i)
	}
	b.ReportAllocs()
	for b.Loop() {
		data, err := WritePain001(f)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
	}
}
