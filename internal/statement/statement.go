// Package statement is a bank's report of an account's entries, whatever its
// format (CONTRACT §18, §19, §25): the account reported on, the balances the
// report states, and each entry with the key that makes it idempotent. The
// formats that read into it are beside it: ISO 20022 camt.053 and camt.054
// (package iso20022's ReadCamt), BAI2 (statement/bai2), SWIFT MT940
// (statement/mt940), and the reconciliation upload's CSV (ReadCSV, here).
// Detect tells them apart by content.
//
// Every reader has the same shape: Read(r, each) streams the file, handing
// each entry to each in file order, and returns the Header once the whole
// file has been read and its control totals checked; Check is Read without
// entries. Because the totals of a statement are known only at its end, an
// entry reaches each before the file is known to be whole: a caller that
// applies entries reads the file twice, Check first (the file is refused
// whole, nothing applied, if it fails), then Read. Files are immutable and
// known by SHA-256 (DESIGN), so the two passes see the same bytes.
//
// A refusal is a *Error naming the format, where in the file, and, when a
// control total failed, the check (ErrTotals); never a partial Header.
// Amounts are int64 minor units of the account's currency (package money's
// exponent): an amount with more decimals than the currency has is refused
// (rounded in the rounding currencies, as the API rounds them: ParseAmount),
// and no float is involved. Every size is bounded: the file
// by HardMaxBytes (and a caller's smaller bound through LimitReader), the
// entries by MaxEntries, texts by the lengths below.
package statement

import (
	"fmt"
	"strings"
	"time"
)

// Format is a bank report's layout.
type Format string

const (
	// Camt054 is ISO 20022 camt.054.001.08, the bank-to-customer debit/credit
	// notification: intraday entries, often not yet booked.
	Camt054 Format = "camt054"
	// Camt053 is ISO 20022 camt.053.001.08, the bank-to-customer statement:
	// the day's booked entries between an opening and a closing balance.
	Camt053 Format = "camt053"
	// BAI2 is the BAI Cash Management Balance Reporting Specifications
	// Version 2 file (records 01, 02, 03, 16, 88, 49, 98, 99).
	BAI2 Format = "bai2"
	// MT940 is the SWIFT MT940 customer statement message, with or without
	// its {1:}{2:}{4:} envelope.
	MT940 Format = "mt940"
	// CSV is the reconciliation upload's own format (CONTRACT §19): the
	// header date,amount,reference,description, amount signed (positive a
	// credit).
	CSV Format = "csv"
)

// String is the format as the documents name it.
func (f Format) String() string {
	switch f {
	case Camt054:
		return "camt.054"
	case Camt053:
		return "camt.053"
	case BAI2:
		return "BAI2"
	case MT940:
		return "MT940"
	case CSV:
		return "CSV"
	}
	return string(f)
}

// Direction says whether an entry put money into the account or took it out.
type Direction string

const (
	Credit Direction = "credit"
	Debit  Direction = "debit"
)

// Status is an entry's booking status. Only Booked entries are applied
// (CONTRACT §18); BAI2, MT940 and CSV entries are all Booked (§25).
type Status string

const (
	// Booked is camt BOOK: the entry is on the account.
	Booked Status = "booked"
	// Pending is camt PDNG: announced, not yet booked.
	Pending Status = "pending"
	// Information is camt INFO: for information only, never booked.
	Information Status = "information"
	// Future is camt FUTR: to be booked on a later date.
	Future Status = "future"
)

// Date is a calendar date as the bank writes it (a booking or value date),
// without a time or a zone: the bank's business day.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is t's calendar date in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// ParseDate reads an ISO 8601 calendar date, 2006-01-02.
func ParseDate(text string) (Date, error) {
	t, err := time.Parse(time.DateOnly, text)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
	}
	return DateOf(t), nil
}

// IsZero reports whether d is the zero Date: no date given.
func (d Date) IsZero() bool { return d == Date{} }

// String is d as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// In is midnight of d in loc.
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool {
	return d.In(time.UTC).Before(e.In(time.UTC))
}

// MarshalText writes d as YYYY-MM-DD, so that a Date in JSON reads as one.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Account is the account a report is about, as the file names it.
type Account struct {
	// Number is the account's identifier as the file writes it: an IBAN or
	// camt Othr/Id, the BAI2 03 customer account number, the account part
	// of MT940 :25: (after the bank's code and "/", when it has one).
	Number string
	// BSB is the Australian branch (nnn-nnn) when the file gives it: camt
	// Svcr's AUBSB member id, or an MT940 :25: "BSB/account".
	BSB string
	// BIC is the servicing bank's BICFI when the file gives it (camt
	// Svcr/FinInstnId/BICFI, an MT940 :25: "BIC/account").
	BIC string
	// Currency is the account's ISO 4217 code, which every amount of the
	// report is in.
	Currency string
}

// Digits is the account number's digits alone: what a feed's account is
// compared with (CONTRACT §25: "digits of camt Acct/Id, BAI2 03, MT940
// :25:"), so that 1234-5678 and 12345678 are one account.
func (a Account) Digits() string {
	return digitsOf(a.Number)
}

func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Balance is a balance a report states: signed minor units (negative is a
// debit balance, an overdraft) at the end of Date.
type Balance struct {
	AmountMinor int64
	Date        Date
}

// Header is what a report says of itself and its account, and what its
// entries add up to, once the whole file has been read.
type Header struct {
	Format Format
	// MessageID names the file as its bank does: camt GrpHdr/MsgId, BAI2's
	// sender and file id ("sender/date/id"), MT940's first :20:.
	MessageID string
	// StatementIDs are the reports the file holds, in order: camt Stmt/Id
	// or Ntfctn/Id, BAI2 group originator and as-of date, MT940 :28C:.
	StatementIDs []string
	// CreatedAt is when the bank made the file, when it says: camt
	// GrpHdr/CreDtTm (read as UTC without a zone), BAI2's 01 creation date
	// and time (UTC, as the file gives no zone); zero for MT940 and CSV.
	CreatedAt time.Time
	Account   Account
	// From and To are the period reported: camt FrToDt (or the dates of
	// the balances), the BAI2 as-of dates, MT940's opening and closing
	// balance dates, the CSV's first and last dates.
	From, To Date
	// Opening and Closing are the booked balances the report states: camt
	// OPBD (or PRCD) of its first statement and CLBD of its last, BAI2 03
	// type codes 010 and 015, MT940 :60a: of the first and :62a: of the
	// last message; nil when it states none (a camt.054, a CSV).
	Opening, Closing *Balance
	// Entries counts the entries of every status; Booked those booked.
	Entries, Booked int
	// CreditsMinor and DebitsMinor are the sums of the booked credits and
	// debits (positive minor units).
	CreditsMinor, DebitsMinor int64
}

// Entry is one movement on the account as the bank reports it.
type Entry struct {
	// Key is the entry's bank reference within its account (CONTRACT §18):
	// camt AcctSvcrRef, else NtryRef; BAI2 16 bank reference number;
	// MT940 :61: account servicing institution's reference (after //).
	// The same entry in a notification and in the later statement, or in a
	// file imported twice, has the same Key. "" when the file gives none (a
	// CSV line, an entry without a bank reference): such an entry cannot be
	// applied by key (§25: unmatched).
	Key string
	// AmountMinor is the amount in Currency's minor units, never negative:
	// Direction says which way it moved.
	AmountMinor int64
	Currency    string
	Direction   Direction
	Status      Status
	// Index is the entry's position in the file, from 0, over every entry
	// of every status.
	Index int
	// BookingDate is when the entry was booked (camt BookgDt, BAI2 group
	// as-of date, MT940 :61: entry date, else its value date); ValueDate
	// when the money is available (camt ValDt, BAI2 funds type V, MT940
	// :61: value date). Either may be zero in a camt.054.
	BookingDate, ValueDate Date
	// Reference is the account owner's reference of the payment: camt
	// TxDtls/Refs/EndToEndId (a payd transfer's bank reference), or the
	// batch's Btch/PmtInfId (a payd file reference) for an entry of many
	// transactions; BAI2 16 customer reference number; MT940 :61:
	// reference for the account owner (NONREF is none), else its :86:
	// /EREF/; the CSV's reference column.
	Reference string
	// BankTransactionCode is the bank's code for the kind of entry: camt
	// BkTxCd Domn/Fmly/SubFmly as "PMNT/RCDT/ESCT" (or Prtry/Cd), the BAI2
	// type code ("165"), the MT940 transaction type ("NTRF").
	BankTransactionCode string
	// Remittance is the entry's text, where a payin's reference, a
	// virtual account or a PayID may be named: camt RmtInf (each Ustrd,
	// then Strd's CdtrRefInf/Ref and AddtlRmtInf, space-separated; an
	// entry's AddtlNtryInf when it has no transaction details); the BAI2
	// 16 text with its 88 continuations; MT940 :86: (its remittance
	// subfields ?20–?29 and ?60–?63 when it is in the German structured
	// layout, else the whole field) followed by the :61: supplementary
	// details; the CSV's description.
	Remittance string
	// CounterpartyName and CounterpartyAccount are who paid (a credit) or
	// who was paid (a debit), when the file names them: camt
	// RltdPties Dbtr/DbtrAcct or Cdtr/CdtrAcct; MT940 :86: /CNTP/ or ?31,
	// ?32 and ?33. BAI2 has no such fields (its text may name them).
	CounterpartyName    string
	CounterpartyAccount string
	// CreditedAccount and CreditedProxy are the account (or PayID) a credit
	// was addressed to within the reported account: camt
	// TxDtls/RltdPties/CdtrAcct/Id/Othr/Id (or IBAN) and CdtrAcct/Prxy/Id.
	// BAI2 and MT940 carry them only in their text, which Remittance holds
	// (CONTRACT §25).
	CreditedAccount string
	CreditedProxy   string
	// Return reports that the entry returns an earlier payment: camt
	// TxDtls/RtrInf; a BAI2 return type code (ReturnTypeCodes in
	// statement/bai2); an MT940 transaction type RTI or :86: /RTRN/.
	// ReturnedReference is what it returns: the original's end-to-end id
	// or bank reference, as Reference gives it; ReturnReason the bank's
	// reason (camt Rsn/Cd and AddtlInf, MT940 /RTRN/).
	Return            bool
	ReturnedReference string
	ReturnReason      string
	// Reversal reports that the entry undoes an earlier one (camt RvslInd,
	// MT940 mark RC or RD): a reversed credit is a debit, a reversed debit a
	// credit, as Direction says.
	Reversal bool
}

// SignedMinor is the entry's effect on the account's balance: AmountMinor
// for a credit, its negation for a debit.
func (e Entry) SignedMinor() int64 {
	if e.Direction == Debit {
		return -e.AmountMinor
	}
	return e.AmountMinor
}
