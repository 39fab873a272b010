package httpapi

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"payd/internal/fault"
)

// TestParseFileRefusals: every file a merchant can upload is an answer,
// never a panic: a row that is not CSV is named rows[N] by the line it
// starts on, a payee a spreadsheet would run as a formula is refused, and no
// cell holds a control character (no column is free text).
func TestParseFileRefusals(t *testing.T) {
	const header = "payee,amount,bsb,account_number,address\n"
	tests := []struct {
		name string
		file string
		want []string // the members named, in order
	}{
		{"a bare quote", header + "Ja\"ne,10,062000,12345678,\n", []string{"rows[2]"}},
		{"an unterminated quoted field", header + "Jane,10,062000,12345678,\n\"Bob,10,062000,12345678,\n", []string{"rows[3]"}},
		{"an unterminated quoted field over lines", header + "Jane,10,062000,12345678,\n\"Bob\nSmith,10,062000,12345678,\nCarol,1,062000,1,\n", []string{"rows[3]"}},
		{"a formula with a bare quote", header + "=HYPERLINK(\"http://evil\"),10,062000,12345678,\n", []string{"rows[2]"}},
		{"a quoted formula", header + "\"=HYPERLINK(\"\"http://evil\"\")\",10,062000,12345678,\n", []string{"rows[2].payee"}},
		{"a payee starting +", header + "Jane,10,062000,12345678,\n+61400000000,10,062000,12345678,\n", []string{"rows[3].payee"}},
		{"a payee starting -", header + "-2+3,10,062000,12345678,\n", []string{"rows[2].payee"}},
		{"a payee starting @", header + "@SUM(A1),10,062000,12345678,\n", []string{"rows[2].payee"}},
		{"a payee starting = after spaces", header + "  =1+1,10,062000,12345678,\n", []string{"rows[2].payee"}},
		{"a NUL in a payee", header + "Ja\x00ne,10,062000,12345678,\n", []string{"rows[2].payee"}},
		{"a tab in an address", header + "Jane,10,062000,12345678,1\tGeorge St\n", []string{"rows[2].address"}},
		{"a line break in a quoted address", header + "Jane,10,062000,12345678,\"1 George St\nSydney\"\n", []string{"rows[2].address"}},
		{"a CR in a quoted account number", header + "Jane,10,062000,\"1234\r5678\",\n", []string{"rows[2].account_number"}},
		{"an escape in an amount", header + "Jane,1\x1b0,062000,12345678,\n", []string{"rows[2].amount"}},
		{"a control character in the header", "payee,amount\x07,bsb,account_number\nJane,10,062000,12345678\n", []string{"rows[1]"}},
		{"problems on several rows", header + "Jane,10,062000,12345678,\n=1,10,062000,12345678,\nBob,10,062000,12345678,a\tb\n",
			[]string{"rows[3].payee", "rows[4].address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsePayoutFile([]byte(tt.file))
			e, ok := fault.As(err)
			if !ok || e.Code != fault.CodeValidation {
				t.Fatalf("parsePayoutFile() error = %v, want %s", err, fault.CodeValidation)
			}
			var got []string
			for k := range e.Fields {
				got = append(got, k)
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("parsePayoutFile() names %q, want %q (%v)", got, tt.want, err)
			}
		})
	}
}

// TestParseFileAccepts: what a spreadsheet writes is read, each
// transaction with its line (a quoted cell over two lines counts as its
// first), a negative amount left to the amount rule.
func TestParseFileAccepts(t *testing.T) {
	file := "\ufeffpayee,amount,bsb,account_number,address\r\n" +
		"Jane Doe,10.00,062000,12345678,\"1 George St, Sydney\"\r\n" +
		"\"O'Brien \"\"Bob\"\"\", 20 ,062000,87654321,\r\n" +
		"Carol,-5,062000,11111111,\r\n"
	got, err := parsePayoutFile([]byte(file))
	if err != nil {
		t.Fatalf("parsePayoutFile() error = %v", err)
	}
	if want := []int{2, 3, 4}; !slices.Equal(got.Lines, want) {
		t.Errorf("lines = %v, want %v", got.Lines, want)
	}
	payees := []string{}
	for _, tx := range got.Transactions {
		payees = append(payees, tx.Payee)
	}
	if want := []string{"Jane Doe", `O'Brien "Bob"`, "Carol"}; !slices.Equal(payees, want) {
		t.Errorf("payees = %q, want %q", payees, want)
	}
	if got.Transactions[0].Address != "1 George St, Sydney" || got.Transactions[1].Amount != "20" {
		t.Errorf("transactions = %+v", got.Transactions)
	}
}

// TestToRowsMessage: an error about a request made from a file names the
// file's rows in its fields, in what each says, and in its message, for one
// member or many, its code kept.
func TestToRowsMessage(t *testing.T) {
	file := payoutFile{Lines: []int{2, 3, 5}}
	mixed := func(f fault.Fields) error {
		e, _ := fault.As(f.Err())
		e.Code = codeMixedAddressing
		return e
	}
	tests := []struct {
		name     string
		err      error
		wantCode string
		want     fault.Fields
	}{
		{"one member", fault.Fields{"payout_transaction_details[1].amount": "must be a number"}.Err(), fault.CodeValidation,
			fault.Fields{"rows[3].amount": "must be a number"}},
		{"several members", fault.Fields{
			"payout_transaction_details[0].amount": "must be a number",
			"payout_transaction_details[2].bsb":    "must be 6 digits",
		}.Err(), fault.CodeValidation, fault.Fields{"rows[2].amount": "must be a number", "rows[5].bsb": "must be 6 digits"}},
		{"members naming other rows", mixed(fault.Fields{
			"payout_transaction_details[1]": "is addressed differently from payout_transaction_details[0]",
			"payout_transaction_details[2]": "is addressed differently from payout_transaction_details[0]",
		}), codeMixedAddressing, fault.Fields{"rows[3]": "is addressed differently from rows[2]", "rows[5]": "is addressed differently from rows[2]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := fault.As(file.toRows(tt.err))
			want, _ := fault.As(tt.want.Err())
			if got == nil || got.Code != tt.wantCode || got.Message != want.Message || strings.Contains(got.Message, "payout_transaction_details") {
				t.Errorf("toRows() = %v, want %s: %s", got, tt.wantCode, want.Message)
			}
			if got != nil && !maps.Equal(got.Fields, want.Fields) {
				t.Errorf("toRows() fields = %v, want %v", got.Fields, want.Fields)
			}
		})
	}
}
