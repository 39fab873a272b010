package iso20022

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"payd/internal/money"
	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

// The official camt schemas (../shared/iso20022/ beside the repository).
const (
	camt053XSD = "camt.053.001.08.xsd"
	camt054XSD = "camt.054.001.08.xsd"
)

func readCamtFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "camt", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func collectCamt(data []byte) (statement.Header, []statement.Entry, error) {
	return statementtest.Collect(ReadCamt, data)
}

// camtFixtures says of every file in testdata/camt which XSD it is valid
// against ("" for the ones that are not: another version, a truncated file).
var camtFixtures = map[string]string{
	"notification.xml":   camt054XSD,
	"statement.xml":      camt053XSD,
	"wrong_balance.xml":  camt053XSD,
	"wrong_summary.xml":  camt053XSD,
	"unknown_status.xml": camt053XSD,
	"too_precise.xml":    camt054XSD,
	"jpy_fraction.xml":   camt054XSD,
	"other_currency.xml": camt054XSD,
	"v02.xml":            "",
	"truncated.xml":      "",
}

// TestCamtFixturesAgainstXSD validates every camt fixture against its
// official XSD, and checks that xmllint refuses the ones that are not valid
// (so that the validation can fail).
func TestCamtFixturesAgainstXSD(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "camt", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(camtFixtures) {
		t.Errorf("%d fixtures in testdata/camt, %d in camtFixtures", len(paths), len(camtFixtures))
	}
	byXSD := make(map[string][]string)
	for _, path := range paths {
		xsd, listed := camtFixtures[filepath.Base(path)]
		if !listed {
			t.Errorf("%s is not in camtFixtures", path)
		}
		byXSD[xsd] = append(byXSD[xsd], path)
	}
	for _, xsd := range []string{camt053XSD, camt054XSD} {
		if complaints := schemaErrors(t, xsd, byXSD[xsd]...); complaints != "" {
			t.Errorf("fixtures not valid against %s:\n%s", xsd, complaints)
		}
	}
	for _, path := range byXSD[""] {
		if schemaErrors(t, camt053XSD, path) == "" || schemaErrors(t, camt054XSD, path) == "" {
			t.Errorf("%s is valid against a camt XSD; camtFixtures says it is not", path)
		}
	}
}

// TestReadCamtGolden reads every fixture and compares the reading (the
// Header and entries, or the refusal) with its golden file
// (go test ./internal/iso20022 -update rewrites them).
func TestReadCamtGolden(t *testing.T) {
	t.Parallel()
	for name := range camtFixtures {
		t.Run(name, func(t *testing.T) {
			h, entries, err := collectCamt(readCamtFixture(t, name))
			golden := filepath.Join("testdata", "camt", strings.TrimSuffix(name, ".xml")+".golden")
			statementtest.Golden(t, golden, statementtest.Render(h, entries, err), *update)
		})
	}
}

// TestReadCamt053 checks what payd applies from the day's statement: the
// keys, the balances that enclose the booked entries, a credit to a virtual
// account and one to a PayID, a batch debit known by its file reference, a
// transfer's debit and its return.
func TestReadCamt053(t *testing.T) {
	t.Parallel()
	h, entries, err := collectCamt(readCamtFixture(t, "statement.xml"))
	if err != nil {
		t.Fatal(err)
	}
	wantAccount := statement.Account{Number: "12345678", BSB: "062-000", BIC: "CTBAAU2S", Currency: "AUD"}
	if h.Format != statement.Camt053 || h.Account != wantAccount || h.MessageID != "STMT-20260302-062000-12345678" {
		t.Errorf("Header %+v", h)
	}
	if h.Opening == nil || h.Closing == nil || h.Opening.AmountMinor != 12500000 || h.Closing.AmountMinor != 12509799 {
		t.Errorf("balances %+v %+v, want 125000.00 and 125097.99", h.Opening, h.Closing)
	}
	if h.Entries != 7 || h.Booked != 7 || h.CreditsMinor != 210049 || h.DebitsMinor != 200250 {
		t.Errorf("counts %d/%d, credits %d, debits %d", h.Entries, h.Booked, h.CreditsMinor, h.DebitsMinor)
	}
	tests := []struct {
		index int
		check func(statement.Entry) bool
		want  string
	}{
		{0, func(e statement.Entry) bool {
			return e.Key == "NPP2026030200000001" && e.CreditedAccount == "98765432101" && e.AmountMinor == 125050 && e.CounterpartyName == "JANE CITIZEN"
		}, "a credit to virtual account 98765432101"},
		{1, func(e statement.Entry) bool {
			return e.CreditedProxy == "pay.acme@payd.example" && e.CreditedAccount == "" && e.Reference == "" && strings.Contains(e.Remittance, "3f2c7d1e-8a4b-4c6d-9e0f-1a2b3c4d5e6f")
		}, "a credit to a PayID, NOTPROVIDED read as nothing"},
		{3, func(e statement.Entry) bool {
			return e.Direction == statement.Debit && e.Reference == "F0000000000000A1" && e.Key == "BECS2026030200000917"
		}, "a file booked as one debit, known by its file reference"},
		{4, func(e statement.Entry) bool {
			return e.Direction == statement.Debit && e.Reference == "PT7K2M9Q4X1B8C3E" && !e.Return && e.CounterpartyName == "KIRRA WALKER"
		}, "a transfer's debit by its bank reference"},
		{5, func(e statement.Entry) bool {
			return e.Direction == statement.Credit && e.Return && e.ReturnedReference == "PT7K2M9Q4X1B8C3E" && e.ReturnReason == "AC04 Account closed"
		}, "the transfer's return"},
		{6, func(e statement.Entry) bool {
			return e.Key == "FEE20260302" && e.Remittance == "MONTHLY ACCOUNT FEE" && e.BankTransactionCode == "ACMT/MDOP/CHRG"
		}, "a fee without transaction details"},
	}
	for _, tt := range tests {
		if e := entries[tt.index]; !tt.check(e) {
			t.Errorf("entry %d is not %s: %+v", tt.index, tt.want, e)
		}
	}
}

// TestCamtNotificationAndStatementKeys reads a camt.054 and the camt.053
// that books its entries later: the same entry has the same key, amount and
// direction in both, so that the feed applies it once (CONTRACT §18), and
// the one pending in the notification is booked in the statement.
func TestCamtNotificationAndStatementKeys(t *testing.T) {
	t.Parallel()
	_, notified, err := collectCamt(readCamtFixture(t, "notification.xml"))
	if err != nil {
		t.Fatal(err)
	}
	_, booked, err := collectCamt(readCamtFixture(t, "statement.xml"))
	if err != nil {
		t.Fatal(err)
	}
	byKey := make(map[string]statement.Entry)
	for _, e := range booked {
		byKey[e.Key] = e
	}
	wantStatus := []statement.Status{statement.Booked, statement.Booked, statement.Pending}
	for i, n := range notified {
		b, ok := byKey[n.Key]
		if !ok {
			t.Errorf("notified entry %s is not in the statement", n.Key)
			continue
		}
		if b.AmountMinor != n.AmountMinor || b.Direction != n.Direction || b.Remittance != n.Remittance {
			t.Errorf("entry %s: notified %+v, booked %+v", n.Key, n, b)
		}
		if n.Status != wantStatus[i] || b.Status != statement.Booked {
			t.Errorf("entry %s: notified %s, booked %s", n.Key, n.Status, b.Status)
		}
	}
	if len(notified) != 3 {
		t.Errorf("%d notified entries, want 3", len(notified))
	}
}

// TestReadCamtRefuses checks that a file that cannot be applied whole is
// refused whole, naming why: failed control totals (naming the check),
// another version's namespace, a truncated file, an amount with more
// decimals than its currency (a rounding currency's are rounded: the
// golden jpy_fraction), an unknown status code, an entry in another
// currency, and what is not a camt file at all.
func TestReadCamtRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		data      []byte
		wantIs    error
		wantCheck string
		wantText  string
	}{
		{"closing balance", readCamtFixture(t, "wrong_balance.xml"), statement.ErrTotals, CheckCamtBalance, "OPBD 125000.00 + credits 2100.49 - debits 2002.50 = 125097.99, but CLBD is 125098.99"},
		{"TxsSummry credits", readCamtFixture(t, "wrong_summary.xml"), statement.ErrTotals, "TxsSummry/TtlCdtNtries/Sum", "the entries sum to 2100.49, TxsSummry says 2100.50"},
		{"camt.053.001.02", readCamtFixture(t, "v02.xml"), ErrNamespace, "", "camt.053.001.02"},
		{"truncated", readCamtFixture(t, "truncated.xml"), nil, "", "unexpected EOF"},
		{"AUD with three decimals", readCamtFixture(t, "too_precise.xml"), money.ErrTooPrecise, "", "Ntfctn NTFN-20260302-0001-1 Ntry 1: Amt: amount 10.005"},
		{"unknown status", readCamtFixture(t, "unknown_status.xml"), nil, "", `Sts/Cd "XXXX" is not BOOK, PDNG, INFO or FUTR`},
		{"another currency", readCamtFixture(t, "other_currency.xml"), nil, "", "an amount in USD on an account in AUD"},
		{"a pain.002", readFixture(t, "accepted.xml"), ErrNamespace, "", "pain.002.001.11"},
		{"empty", nil, nil, "", "no root element"},
		{"not XML", []byte("01,122099999,123456789,040621,0200,1,55,,2/\n"), nil, "", "no root element"},
		{"another encoding", []byte(`<?xml version="1.0" encoding="ISO-8859-1"?><Document xmlns="` + NamespaceCamt053 + `"/>`), nil, "", "ISO-8859-1"},
		{"a second root", append(readCamtFixture(t, "notification.xml"), "<Document/>"...), nil, "", "a second root element"},
		{"no statement", []byte(`<Document xmlns="` + NamespaceCamt053 + `"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-03-02T00:00:00</CreDtTm></GrpHdr></BkToCstmrStmt></Document>`), nil, "", "no Stmt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, entries, err := collectCamt(tt.data)
			var refusal *statement.Error
			if !errors.As(err, &refusal) || !strings.Contains(err.Error(), tt.wantText) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) || refusal.Check != tt.wantCheck {
				t.Fatalf("ReadCamt = %+v, %d entries, %v; want a *statement.Error (%v, check %q) saying %q", h, len(entries), err, tt.wantIs, tt.wantCheck, tt.wantText)
			}
			if _, err := CheckCamt(bytes.NewReader(tt.data)); err == nil || err.Error() != refusal.Error() {
				t.Errorf("CheckCamt = %v, ReadCamt %v", err, refusal)
			}
		})
	}
}

// TestReadCamtBounds checks that what is beyond payd's bounds is refused
// rather than held: a text longer than an entry may have, an element larger
// than the reader decodes whole, more transaction details than an entry
// may list.
func TestReadCamtBounds(t *testing.T) {
	t.Parallel()
	statementXML := string(readCamtFixture(t, "statement.xml"))
	longText := strings.Replace(statementXML, "<AddtlNtryInf>MONTHLY ACCOUNT FEE</AddtlNtryInf>",
		"<AddtlNtryInf>"+strings.Repeat("x", statement.MaxTextRunes+1)+"</AddtlNtryInf>", 1)
	hugeElement := strings.Replace(statementXML, "<AddtlNtryInf>MONTHLY ACCOUNT FEE</AddtlNtryInf>",
		"<AddtlNtryInf>"+strings.Repeat("x", maxCamtElementBytes+64<<10)+"</AddtlNtryInf>", 1)
	manyDetails := strings.Replace(statementXML, "<AddtlNtryInf>MONTHLY ACCOUNT FEE</AddtlNtryInf>",
		"<NtryDtls>"+strings.Repeat("<TxDtls/>", maxCamtTransactions+1)+"</NtryDtls>", 1)
	tests := []struct {
		name     string
		data     string
		wantText string
	}{
		{"remittance", longText, "the remittance has 4097 characters, more than 4096"},
		{"element", hugeElement, fmt.Sprintf("an element of more than %d bytes", maxCamtElementBytes)},
		{"transactions", manyDetails, "10001 transaction details, more than 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := collectCamt([]byte(tt.data))
			if !errors.Is(err, statement.ErrLimit) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("ReadCamt: %v; want ErrLimit saying %q", err, tt.wantText)
			}
		})
	}
}

// TestReadCamtEachError checks that an error each returns stops the
// reading and comes back as it is, for the feed to handle as its own.
func TestReadCamtEachError(t *testing.T) {
	t.Parallel()
	stop := errors.New("the database is gone")
	seen := 0
	_, err := ReadCamt(bytes.NewReader(readCamtFixture(t, "statement.xml")), func(statement.Entry) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	if err != stop || seen != 2 {
		t.Fatalf("ReadCamt = %v after %d entries; want each's error after 2", err, seen)
	}
}

// FuzzReadCamt feeds ReadCamt mutations of the fixtures: whatever an inbox
// file holds, it is read whole or refused with a *statement.Error, never a
// panic and never a partial result, and Check agrees with Read. Its seeds
// are whole statements, which the fuzzer's minimising of each new input
// reads again and again: run it with -fuzzminimizetime=0.
func FuzzReadCamt(f *testing.F) {
	for name := range camtFixtures {
		f.Add(readCamtFixture(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		statementtest.CheckReading(t, ReadCamt, CheckCamt, data)
	})
}

// camt053Of writes a camt.053 of n entries, alternately credits and debits
// of realistic size, as a day of a busy collection account.
func camt053Of(n int) []byte {
	var entries bytes.Buffer
	var credits, debits int64
	for i := range n {
		amount := int64(1000 + i%50000)
		ind := "CRDT"
		if i%2 == 1 {
			ind = "DBIT"
			debits += amount
		} else {
			credits += amount
		}
		fmt.Fprintf(&entries, `<Ntry><NtryRef>%d</NtryRef><Amt Ccy="AUD">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>`+
			`<BookgDt><Dt>2026-03-02</Dt></BookgDt><ValDt><Dt>2026-03-02</Dt></ValDt><AcctSvcrRef>NPP20260302%08d</AcctSvcrRef>`+
			`<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>DMCT</SubFmlyCd></Fmly></Domn></BkTxCd>`+
			`<NtryDtls><TxDtls><Refs><EndToEndId>E2E%012d</EndToEndId></Refs><RltdPties><Dbtr><Pty><Nm>CUSTOMER %d PTY LTD</Nm></Pty></Dbtr>`+
			`<DbtrAcct><Id><Othr><Id>%08d</Id></Othr></Id></DbtrAcct><CdtrAcct><Id><Othr><Id>9876%07d</Id></Othr></Id></CdtrAcct></RltdPties>`+
			`<RmtInf><Ustrd>payin 3f2c7d1e-8a4b-4c6d-9e0f-%012d</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`+"\n",
			i, money.Format(amount, money.MustLookup("AUD")), ind, i, i, i, i, i, i)
	}
	aud := money.MustLookup("AUD")
	opening := int64(100_000_000)
	closing := opening + credits - debits
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="%s"><BkToCstmrStmt><GrpHdr><MsgId>BENCH</MsgId><CreDtTm>2026-03-02T23:30:00+11:00</CreDtTm></GrpHdr>
<Stmt><Id>BENCH-1</Id><Acct><Id><Othr><Id>12345678</Id></Othr></Id><Ccy>AUD</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="AUD">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-01</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="AUD">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-02</Dt></Dt></Bal>
<TxsSummry><TtlNtries><NbOfNtries>%d</NbOfNtries></TtlNtries></TxsSummry>
%s</Stmt></BkToCstmrStmt></Document>
`, NamespaceCamt053, money.Format(opening, aud), money.Format(closing, aud), n, entries.Bytes())
}

// TestReadCamtLarge reads a generated 50,000-entry camt.053 (issue 48's
// performance case, about 35 MB) from a file to its end, and checks that it
// streams: the heap in use while reading stays far below the file's size
// (about 5 MB here), where a reader holding the document would need several
// times it. It runs alone (not parallel), so that no other test's garbage
// is counted.
func TestReadCamtLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 50,000-entry statement")
	}
	const maxHeapInUse = 16 << 20
	path := filepath.Join(t.TempDir(), "statement.xml")
	if err := os.WriteFile(path, camt053Of(50_000), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	runtime.GC()
	var peak uint64
	n := 0
	h, err := ReadCamt(file, func(statement.Entry) error {
		if n++; n%500 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		return nil
	})
	if err != nil || n != 50_000 || h.Entries != 50_000 {
		t.Fatalf("ReadCamt: %v, %d entries handed on, Header counts %d", err, n, h.Entries)
	}
	if peak > maxHeapInUse {
		t.Errorf("%d bytes of heap in use while reading, more than %d: the reader does not stream", peak, maxHeapInUse)
	}
	requireValid(t, camt053XSD, camt053Of(20))
}

// BenchmarkReadCamt053 reads a 50,000-entry camt.053 (about 40 MB) once per
// iteration, as a feed's Check pass does.
func BenchmarkReadCamt053(b *testing.B) {
	data := camt053Of(50_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadCamt(bytes.NewReader(data), func(statement.Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
