// Package aba writes and reads the Australian BECS Direct Entry file (the
// "ABA" or "Cemtex" file) that CONTRACT §17 and §25 describe: 120-character
// records ending in CR LF, a type 0 descriptive record, one type 1 detail
// record per credit (transaction code 50), one self-balancing type 1 debit
// (code 13) of the total to the debtor's own account, and a type 7 file total.
//
// The layout follows where these sources agree:
//
//   - Westpac, "Australian Direct Entry file format" (Corporate Online guide,
//     December 2006): the field positions, justification and fill of all
//     three records, and end-of-record characters at the end of each record;
//   - Commonwealth Bank, "Direct Entry – File Specification" and "Importing
//     and using Direct Entry (EFT) files" (CommBiz): the same positions,
//     that a payment file must carry a contra (balancing) entry to the
//     user's account, and ASCII with CR LF;
//   - cemtexaba.com, "ABA file format details" (the APCA layout re-published);
//   - public implementations: zeptofs/aba (Ruby) and anam-hossain/aba (PHP)
//     for the BECS character set, which both give as A-Z, a-z, 0-9, space
//     and ! # $ % & ' ( ) * + , - . / : ; = ? @ [ ] ^ _; simonblee/
//     aba-file-generator (PHP), flash-oss/aba-generator (JavaScript) and
//     Odoo's l10n_au_aba (as a copy of it reads) for the type 7 totals
//     (net = |credits − debits|, so zero for a balanced file; the count
//     includes the balancing record) and the balancing record itself (code
//     13, the debtor's BSB and account both as the account debited and as
//     the trace record).
//
// Where they differ: the implementations leave the last record without a
// line end, while the banks' guides end each record (so does this package,
// and Read requires it); some implementations write the debtor's BSB
// and account into positions 2–18 of the type 0 record, which the APCA
// layout, CBA and Westpac leave blank (so does this package); one unnamed
// TypeScript implementation allows a narrower set of punctuation
// (& ' ( ) * + , - . /) than the two above, which this package does not
// follow. Lower case, which the character set admits, is upper-cased, as
// §17 asks of account titles and remitter names.
//
// Write refuses (a *payfile.FieldError naming the credit and field) what the
// file cannot hold rather than mangle it; BECSProblem is the same character
// check for the rail to run at payout creation.
package aba

import (
	"fmt"
	"strings"

	"payd/internal/payfile"
)

// recordLen is every record's length, without its line end.
const recordLen = 120

// lineEnd follows every record, the last one included.
const lineEnd = "\r\n"

// Record types (position 1).
const (
	typeDescriptive = '0'
	typeDetail      = '1'
	typeFileTotal   = '7'
)

// Transaction codes (positions 19–20): a credit to the beneficiary, and the
// debit of the total to the debtor that balances the file.
const (
	codeCredit = "50"
	codeDebit  = "13"
)

// Constant fields of the records.
const (
	reelSequence     = "01"
	description      = "PAYOUTS"
	fileTotalBSB     = "999-999"
	withholdingZero  = "00000000"
	indicatorBlank   = " "
	currency         = "AUD"
	processingLayout = "020106" // DDMMYY
)

// Field widths.
const (
	widthUserName    = 26
	widthDescription = 12
	widthAccount     = 9
	widthAmount      = 10
	widthTitle       = 32
	widthReference   = 18
	widthRemitter    = 16
	widthCount       = 6
)

// maxAmountMinor is what a 10-digit amount field holds: each credit, the
// balancing debit (the total) and the type 7 totals.
const maxAmountMinor = 9_999_999_999

// maxCredits is what the type 7 count (6 digits) holds, less the balancing
// record it also counts.
const maxCredits = 999_998

// Write is f as an ABA file. It refuses a File the format cannot hold (see
// checkFile, checkCredit and checkTotal) with a *payfile.FieldError.
func Write(f payfile.File) ([]byte, error) {
	if err := checkFile(f); err != nil {
		return nil, err
	}
	for i, c := range f.Credits {
		if err := checkCredit(i, c); err != nil {
			return nil, err
		}
	}
	if err := checkTotal(f); err != nil {
		return nil, err
	}
	total := f.Total()
	d := f.Debtor
	var b strings.Builder
	b.Grow((len(f.Credits) + 3) * (recordLen + len(lineEnd)))
	writeRecord(&b, descriptive(f))
	for _, c := range f.Credits {
		writeRecord(&b, detail(detailFields{
			bsb: c.BSB, account: c.Account, code: codeCredit, amountMinor: c.AmountMinor,
			title: upper(c.Name), reference: c.BankReference,
			traceBSB: d.BSB, traceAccount: d.Account, remitter: upper(c.Remitter),
		}))
	}
	writeRecord(&b, detail(detailFields{
		bsb: d.BSB, account: d.Account, code: codeDebit, amountMinor: total,
		title: upper(d.Name), reference: f.Reference,
		traceBSB: d.BSB, traceAccount: d.Account, remitter: upper(d.Name),
	}))
	writeRecord(&b, fileTotal(total, total, len(f.Credits)+1))
	return []byte(b.String()), nil
}

func writeRecord(b *strings.Builder, r *record) {
	if r.Len() != recordLen {
		panic(fmt.Sprintf("aba: a record of %d characters", r.Len())) // a layout bug, never input
	}
	b.WriteString(r.String())
	b.WriteString(lineEnd)
}

// descriptive is the type 0 record: reel 01, the debtor's bank, its name
// (the user name), its APCA user id, PAYOUTS and the processing date, which
// is the cut-off's date in the rail's zone.
func descriptive(f payfile.File) *record {
	r := &record{}
	r.WriteByte(typeDescriptive)
	r.blank(17)
	r.WriteString(reelSequence)
	r.WriteString(f.Debtor.BankAbbrev)
	r.blank(7)
	r.left(upper(f.Debtor.Name), widthUserName)
	r.WriteString(f.Debtor.OriginatorID)
	r.left(description, widthDescription)
	r.WriteString(f.CreatedAt.In(f.Location).Format(processingLayout))
	r.blank(40)
	return r
}

// detailFields are a type 1 record's fields; text is already upper case and
// is cut to its width here.
type detailFields struct {
	bsb, account, code     string
	amountMinor            int64
	title, reference       string
	traceBSB, traceAccount string
	remitter               string
}

func detail(d detailFields) *record {
	r := &record{}
	r.WriteByte(typeDetail)
	r.WriteString(d.bsb)
	r.right(d.account, widthAccount)
	r.WriteString(indicatorBlank)
	r.WriteString(d.code)
	r.number(d.amountMinor, widthAmount)
	r.left(d.title, widthTitle)
	r.left(d.reference, widthReference)
	r.WriteString(d.traceBSB)
	r.right(d.traceAccount, widthAccount)
	r.left(d.remitter, widthRemitter)
	r.WriteString(withholdingZero)
	return r
}

// fileTotal is the type 7 record. Its net total is |credits − debits|, zero
// for the balanced file Write makes.
func fileTotal(creditMinor, debitMinor int64, count int) *record {
	net := creditMinor - debitMinor
	if net < 0 {
		net = -net
	}
	r := &record{}
	r.WriteByte(typeFileTotal)
	r.WriteString(fileTotalBSB)
	r.blank(12)
	r.number(net, widthAmount)
	r.number(creditMinor, widthAmount)
	r.number(debitMinor, widthAmount)
	r.blank(24)
	r.number(int64(count), widthCount)
	r.blank(40)
	return r
}

// record is one record being written. Its text fields are ASCII (checked
// before), so characters and bytes are the same count.
type record struct{ strings.Builder }

func (r *record) blank(width int) { r.WriteString(strings.Repeat(" ", width)) }

// left is s cut to width, left-justified and blank-filled.
func (r *record) left(s string, width int) {
	if len(s) > width {
		s = s[:width]
	}
	r.WriteString(s)
	r.blank(width - len(s))
}

// right is s (which fits) right-justified and blank-filled.
func (r *record) right(s string, width int) {
	r.blank(width - len(s))
	r.WriteString(s)
}

// number is n (which fits) right-justified and zero-filled.
func (r *record) number(n int64, width int) { fmt.Fprintf(r, "%0*d", width, n) }
