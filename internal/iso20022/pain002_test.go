package iso20022

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pain002", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReadPain002 reads the bank's status reports about the golden files:
// everything settled, some transfers rejected with their reasons (the
// report listing only those), the whole group rejected, the payment
// information rejected, a partial acceptance, and answers still pending.
func TestReadPain002(t *testing.T) {
	t.Parallel()
	const (
		aud = "payd-au-npp-20260302-001"
		a1  = "F0000000000000A1"
	)
	tests := []struct {
		fixture     string
		wantCreated time.Time
		want        StatusReport
	}{
		{"accepted.xml", time.Date(2026, 3, 2, 5, 5, 0, 0, time.UTC), StatusReport{
			MsgID: "STS-20260302-0001", OriginalMsgID: aud, OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 4, OriginalCtrlSum: "1850.50", GroupStatus: StatusAcceptedCreditSettlementCompleted,
			Payments: []PaymentStatus{{InfoID: a1, OriginalCount: 4, OriginalCtrlSum: "1850.5", Status: StatusAcceptedCreditSettlementCompleted}},
			Transactions: []TransactionStatus{
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3D", Status: StatusAcceptedCreditSettlementCompleted},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3E", Status: StatusAcceptedSettlementCompleted},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3F", Status: StatusAcceptedCreditSettlementCompleted},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3G", Status: StatusAcceptedCreditSettlementCompleted},
			},
		}},
		{"rejected.xml", time.Date(2026, 3, 2, 4, 20, 0, 0, time.UTC), StatusReport{
			MsgID: "STS-20260302-0002", OriginalMsgID: aud, OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 4, OriginalCtrlSum: "1850.50", GroupStatus: StatusPartiallyAccepted,
			Payments: []PaymentStatus{{InfoID: a1, Status: StatusPartiallyAccepted}},
			Transactions: []TransactionStatus{
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3E", Status: StatusRejected, Reason: Reason{Code: "AC04", Text: "Account closed"}},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3F", Status: StatusRejected, Reason: Reason{Code: "BE05", Text: "PayID not registered: sam.obrien@example.com.au NPP-0402 Resolution failed"}},
			},
		}},
		{"group_rejected.xml", time.Date(2026, 3, 2, 4, 1, 30, 0, time.UTC), StatusReport{
			MsgID: "STS-20260302-0003", OriginalMsgID: aud, OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 4, OriginalCtrlSum: "1850.50", GroupStatus: StatusRejected,
			GroupReason: Reason{Code: "FF01", Text: "Invalid file format"},
		}},
		{"payment_rejected.xml", time.Date(2026, 3, 2, 0, 45, 0, 0, time.UTC), StatusReport{
			MsgID: "JPSTS0302000001", OriginalMsgID: "payd-jp-zengin-20260302-002", OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 2, OriginalCtrlSum: "3150000",
			Payments: []PaymentStatus{{InfoID: "F0000000000000J2", OriginalCount: 2, OriginalCtrlSum: "3150000", Status: StatusRejected, Reason: Reason{Code: "AM04", Text: "Insufficient funds"}}},
		}},
		{"partial.xml", time.Date(2026, 3, 2, 5, 30, 0, 0, time.UTC), StatusReport{
			MsgID: "STS-20260302-0004", OriginalMsgID: aud, OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 4, OriginalCtrlSum: "1850.50", GroupStatus: StatusPartiallyAccepted,
			Payments: []PaymentStatus{{InfoID: a1, OriginalCount: 4, OriginalCtrlSum: "1850.50", Status: StatusPartiallyAccepted}},
			Transactions: []TransactionStatus{
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3D", Status: StatusAcceptedSettlementCompleted},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3E", Status: StatusRejected, Reason: Reason{Code: "AC01"}},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3F", Status: StatusAcceptedSettlementInProcess},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3G", Status: StatusAcceptedSettlementCompleted},
			},
		}},
		{"pending.xml", time.Date(2026, 3, 2, 4, 0, 30, 0, time.UTC), StatusReport{
			MsgID: "STS-20260302-0000", OriginalMsgID: aud, OriginalMsgNameID: "pain.001.001.10",
			OriginalCount: 4, GroupStatus: StatusPending,
			Payments: []PaymentStatus{{InfoID: a1, OriginalCount: 4, Status: StatusAcceptedTechnicalValidation}},
			Transactions: []TransactionStatus{
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3D", Status: StatusAcceptedSettlementInProcess},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3E", Status: StatusPending, Reason: Reason{Text: "Awaiting the creditor bank"}},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3F", Status: StatusAcceptedTechnicalValidation},
				{PaymentInfoID: a1, EndToEndID: "PT7K2M9Q4X1B8C3G", Status: StatusAcceptedWithChange},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := ReadPain002(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if !got.CreatedAt.Equal(tt.wantCreated) {
				t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, tt.wantCreated)
			}
			got.CreatedAt = time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadPain002:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestReadPain002Refuses checks that a report that cannot be applied whole
// is refused whole (CONTRACT §17): counts or sums that disagree, another
// version's namespace, a status code outside ISO 20022's, a transaction
// named twice or not at all, what the schema requires missing, a report on
// another kind of message, and what is not a report at all.
func TestReadPain002Refuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		data     func(*testing.T) []byte
		wantIs   error
		wantText string
	}{
		{"NbOfTxsPerSts against OrgnlNbOfTxs", fixture("wrong_counts_per_status.xml"), ErrCounts, "NbOfTxsPerSts counts 4 transactions, OrgnlNbOfTxs 5"},
		{"listed against NbOfTxsPerSts", fixture("wrong_counts_listed.xml"), ErrCounts, "2 transactions listed RJCT, NbOfTxsPerSts says 1"},
		{"payment informations against the group", fixture("wrong_counts_payments.xml"), ErrCounts, "count 3 transactions, OrgnlGrpInfAndSts 2"},
		{"payment control sums against the group", fixture("wrong_ctrlsum.xml"), ErrCounts, "sum to 1850.49, OrgnlGrpInfAndSts to 1850.50"},
		{"DtldCtrlSums against OrgnlCtrlSum", fixture("wrong_ctrlsum_per_status.xml"), ErrCounts, "DtldCtrlSums sum to 1850.49, OrgnlCtrlSum is 1850.50"},
		{"more listed than the payment information", fixture("too_many_listed.xml"), ErrCounts, "3 transactions listed, OrgnlNbOfTxs 2"},
		{"pain.002.001.03", fixture("v03.xml"), ErrNamespace, "pain.002.001.03"},
		{"a pain.001 for a pain.002", func(t *testing.T) []byte {
			data, err := WritePain001(audFile(t))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}, ErrNamespace, "pain.001.001.10"},
		{"a status outside ISO 20022", fixture("unknown_status.xml"), nil, `"ZZZZ" is not an ISO 20022 payment status`},
		{"a transaction twice", fixture("duplicate.xml"), nil, "OrgnlEndToEndId PT7K2M9Q4X1B8C3E reported twice"},
		{"a status naming no transaction", fixture("no_end_to_end.xml"), nil, "TxInfAndSts 1: no OrgnlEndToEndId"},
		{"OrgnlMsgNmId missing", fixture("schema_invalid.xml"), nil, "no OrgnlGrpInfAndSts/OrgnlMsgNmId"},
		{"a report on a pain.008", fixture("not_pain001.xml"), nil, "not a report on a pain.001"},
		{"empty", raw(""), nil, "no root element"},
		{"not XML", raw("ACSC PT7K2M9Q4X1B8C3D\n"), nil, "no root element"},
		{"truncated", func(t *testing.T) []byte { return readFixture(t, "accepted.xml")[:900] }, nil, "unexpected EOF"},
		{"no report inside", raw(`<Document xmlns="` + NamespacePain002 + `"></Document>`), nil, "no CstmrPmtStsRpt"},
		{"another encoding", raw(`<?xml version="1.0" encoding="ISO-8859-1"?><Document xmlns="` + NamespacePain002 + `"/>`), nil, "ISO-8859-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPain002(tt.data(t))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
				t.Fatalf("ReadPain002 = %+v, %v; want an error (%v) saying %q", got, err, tt.wantIs, tt.wantText)
			}
		})
	}
}

func fixture(name string) func(*testing.T) []byte {
	return func(t *testing.T) []byte { return readFixture(t, name) }
}

func raw(s string) func(*testing.T) []byte {
	return func(*testing.T) []byte { return []byte(s) }
}

// TestReasonFailureReason checks failure_reason as CONTRACT §25 spells it,
// "<Rsn/Cd> <AddtlInf>", and with either part missing.
func TestReasonFailureReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason Reason
		want   string
	}{
		{Reason{Code: "AC04", Text: "Account closed"}, "AC04 Account closed"},
		{Reason{Code: "AC01"}, "AC01"},
		{Reason{Text: "Awaiting the creditor bank"}, "Awaiting the creditor bank"},
		{Reason{}, ""},
	}
	for _, tt := range tests {
		if got := tt.reason.FailureReason(); got != tt.want {
			t.Errorf("%+v.FailureReason() = %q, want %q", tt.reason, got, tt.want)
		}
	}
}

// pain002Fixtures says of every file in testdata/pain002 whether it is
// valid against the official XSD: all are but the ones that test refusals
// of the schema itself.
var pain002Fixtures = map[string]bool{
	"accepted.xml":                 true,
	"rejected.xml":                 true,
	"group_rejected.xml":           true,
	"payment_rejected.xml":         true,
	"partial.xml":                  true,
	"pending.xml":                  true,
	"wrong_counts_per_status.xml":  true,
	"wrong_counts_listed.xml":      true,
	"wrong_counts_payments.xml":    true,
	"wrong_ctrlsum.xml":            true,
	"wrong_ctrlsum_per_status.xml": true,
	"too_many_listed.xml":          true,
	"unknown_status.xml":           true,
	"duplicate.xml":                true,
	"no_end_to_end.xml":            true,
	"not_pain001.xml":              true,
	"schema_invalid.xml":           false,
	"v03.xml":                      false,
}

// TestPain002FixturesAgainstXSD validates every pain.002 fixture against the
// official pain.002.001.11 XSD, and checks that xmllint refuses the two
// that are not valid (so that the validation can fail).
func TestPain002FixturesAgainstXSD(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "pain002", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var valid, invalid []string
	for _, path := range paths {
		ok, listed := pain002Fixtures[filepath.Base(path)]
		if !listed {
			t.Errorf("%s is not in pain002Fixtures", path)
		}
		if ok {
			valid = append(valid, path)
		} else {
			invalid = append(invalid, path)
		}
	}
	if len(valid)+len(invalid) != len(pain002Fixtures) {
		t.Errorf("%d fixtures in testdata/pain002, %d in pain002Fixtures", len(paths), len(pain002Fixtures))
	}
	if complaints := schemaErrors(t, pain002XSD, valid...); complaints != "" {
		t.Errorf("fixtures not valid against %s:\n%s", pain002XSD, complaints)
	}
	for _, path := range invalid {
		if schemaErrors(t, pain002XSD, path) == "" {
			t.Errorf("%s is valid against %s; pain002Fixtures says it is not", path, pain002XSD)
		}
	}
}

// FuzzReadPain002 feeds ReadPain002 mutations of the fixtures: whatever an
// inbox file holds, it is read or refused, never a panic, and a report read
// names each transaction once under a payment information it lists.
func FuzzReadPain002(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "pain002", "*.xml"))
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
		r, err := ReadPain002(data)
		if err != nil {
			return
		}
		infos := make(map[string]bool)
		for _, p := range r.Payments {
			infos[p.InfoID] = true
		}
		seen := make(map[string]bool)
		for _, tx := range r.Transactions {
			if seen[tx.EndToEndID] || !infos[tx.PaymentInfoID] || tx.Status == "" {
				t.Fatalf("transaction %+v: named twice, under an unlisted payment information, or without a status", tx)
			}
			seen[tx.EndToEndID] = true
		}
	})
}
