// Package feedtest writes bank files as a bank would, for the tests that
// play the bank of a feed (CONTRACT §18): camt.054.001.08 notifications and
// camt.053.001.08 statements (valid against the official XSDs: the feed's
// tests check them with xmllint), BAI2 files and MT940 statements, each
// holding its own control totals.
package feedtest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"payd/internal/money"
)

// Entry is one entry of a file: a booked credit unless it says otherwise.
type Entry struct {
	// Key is the bank's reference of the entry (camt AcctSvcrRef, BAI2 16
	// bank reference, MT940 :61: after //).
	Key         string
	AmountMinor int64
	Debit       bool
	// Pending makes a camt entry PDNG (BAI2 and MT940 entries are booked).
	Pending bool
	// Reference is the owner's reference (camt EndToEndId, BAI2 customer
	// reference, MT940 :61: reference).
	Reference string
	// Remittance is the entry's text.
	Remittance string
	// CreditedAccount and Proxy are what a camt credit was addressed to
	// (CdtrAcct Othr/Id and Prxy/Id).
	CreditedAccount, Proxy string
	Payer                  string
	// Return makes a credit the return of Reference (camt RtrInf, BAI2
	// type 257, MT940 RTI), for ReturnReason.
	Return       bool
	ReturnReason string
}

// File is a file's account, day and entries.
type File struct {
	MsgID    string
	Account  string
	Currency string
	// Date is the day reported, YYYY-MM-DD.
	Date string
	// OpeningMinor is a statement's opening balance.
	OpeningMinor int64
	Entries      []Entry
}

func (f File) currency() money.Currency {
	c, err := money.Lookup(f.Currency)
	if err != nil {
		panic(err)
	}
	return c
}

func (f File) amount(minor int64) string { return money.Format(minor, f.currency()) }

func (f File) totals() (credits, debits int64, nc, nd int) {
	for _, e := range f.Entries {
		if e.Pending {
			continue
		}
		if e.Debit {
			debits += e.AmountMinor
			nd++
		} else {
			credits += e.AmountMinor
			nc++
		}
	}
	return
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Camt054 is f as a camt.054.001.08 notification.
func Camt054(f File) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">
<BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>%s</MsgId><CreDtTm>%sT14:00:00</CreDtTm></GrpHdr>
<Ntfctn><Id>%s-1</Id><CreDtTm>%sT14:00:00</CreDtTm>
%s
`, esc(f.MsgID), f.Date, esc(f.MsgID), f.Date, f.acct())
	for _, e := range f.Entries {
		b.WriteString(f.ntry(e))
	}
	b.WriteString("</Ntfctn>\n</BkToCstmrDbtCdtNtfctn>\n</Document>\n")
	return []byte(b.String())
}

// Camt053 is f as a camt.053.001.08 statement of its booked entries (a
// statement holds no pending ones), its balances and summary stated.
func Camt053(f File) []byte {
	f = f.booked()
	credits, debits, nc, nd := f.totals()
	closing := f.OpeningMinor + credits - debits
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
<BkToCstmrStmt>
<GrpHdr><MsgId>%s</MsgId><CreDtTm>%sT23:30:00</CreDtTm></GrpHdr>
<Stmt><Id>%s-1</Id><CreDtTm>%sT23:30:00</CreDtTm>
%s
%s
%s
<TxsSummry><TtlNtries><NbOfNtries>%d</NbOfNtries><Sum>%s</Sum></TtlNtries><TtlCdtNtries><NbOfNtries>%d</NbOfNtries><Sum>%s</Sum></TtlCdtNtries><TtlDbtNtries><NbOfNtries>%d</NbOfNtries><Sum>%s</Sum></TtlDbtNtries></TxsSummry>
`, esc(f.MsgID), f.Date, esc(f.MsgID), f.Date, f.acct(), f.bal("OPBD", f.OpeningMinor), f.bal("CLBD", closing),
		nc+nd, f.amount(credits+debits), nc, f.amount(credits), nd, f.amount(debits))
	for _, e := range f.Entries {
		b.WriteString(f.ntry(e))
	}
	b.WriteString("</Stmt>\n</BkToCstmrStmt>\n</Document>\n")
	return []byte(b.String())
}

func (f File) acct() string {
	return fmt.Sprintf(`<Acct><Id><Othr><Id>%s</Id></Othr></Id><Ccy>%s</Ccy></Acct>`, esc(f.Account), f.Currency)
}

func (f File) bal(code string, minor int64) string {
	ind := "CRDT"
	if minor < 0 {
		ind, minor = "DBIT", -minor
	}
	return fmt.Sprintf(`<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy="%s">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>`,
		code, f.Currency, f.amount(minor), ind, f.Date)
}

func (f File) ntry(e Entry) string {
	ind, sts := "CRDT", "BOOK"
	if e.Debit {
		ind = "DBIT"
	}
	if e.Pending {
		sts = "PDNG"
	}
	fam := "RCDT/DMCT"
	switch {
	case e.Return:
		fam = "ICDT/RRTN"
	case e.Debit:
		fam = "ICDT/DMCT"
	}
	parts := strings.SplitN(fam, "/", 2)
	var tx strings.Builder
	ref := e.Reference
	if ref == "" {
		ref = "NOTPROVIDED"
	}
	fmt.Fprintf(&tx, `<TxDtls><Refs><EndToEndId>%s</EndToEndId></Refs>`, esc(ref))
	var parties strings.Builder
	if e.Payer != "" {
		fmt.Fprintf(&parties, `<Dbtr><Pty><Nm>%s</Nm></Pty></Dbtr>`, esc(e.Payer))
	}
	if e.CreditedAccount != "" || e.Proxy != "" {
		id := e.CreditedAccount
		if id == "" {
			id = "NOTPROVIDED"
		}
		fmt.Fprintf(&parties, `<CdtrAcct><Id><Othr><Id>%s</Id></Othr></Id>`, esc(id))
		if e.Proxy != "" {
			fmt.Fprintf(&parties, `<Prxy><Id>%s</Id></Prxy>`, esc(e.Proxy))
		}
		parties.WriteString(`</CdtrAcct>`)
	}
	if parties.Len() > 0 {
		fmt.Fprintf(&tx, `<RltdPties>%s</RltdPties>`, parties.String())
	}
	if e.Remittance != "" {
		fmt.Fprintf(&tx, `<RmtInf><Ustrd>%s</Ustrd></RmtInf>`, esc(e.Remittance))
	}
	if e.Return {
		code, text, _ := strings.Cut(e.ReturnReason, " ")
		if code == "" {
			code = "AC04"
		}
		fmt.Fprintf(&tx, `<RtrInf><Rsn><Cd>%s</Cd></Rsn>`, esc(code))
		if text != "" {
			fmt.Fprintf(&tx, `<AddtlInf>%s</AddtlInf>`, esc(text))
		}
		tx.WriteString(`</RtrInf>`)
	}
	tx.WriteString(`</TxDtls>`)
	return fmt.Sprintf(`<Ntry><Amt Ccy="%s">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>%s</Cd></Sts><BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt><AcctSvcrRef>%s</AcctSvcrRef><BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>%s</Cd><SubFmlyCd>%s</SubFmlyCd></Fmly></Domn></BkTxCd><NtryDtls>%s</NtryDtls></Ntry>
`, f.Currency, f.amount(e.AmountMinor), ind, sts, f.Date, f.Date, esc(e.Key), parts[0], parts[1], tx.String())
}

// booked is f without its pending entries.
func (f File) booked() File {
	var out []Entry
	for _, e := range f.Entries {
		if !e.Pending {
			out = append(out, e)
		}
	}
	f.Entries = out
	return f
}

// BAI2 is f's booked entries as a BAI2 file of one group and one account: type 165 credits
// (257 returns) and 495 debits, with its 49, 98 and 99 totals and counts.
func BAI2(f File) []byte {
	f = f.booked()
	day := strings.ReplaceAll(f.Date, "-", "")[2:]
	var recs []string
	recs = append(recs, fmt.Sprintf("01,PAYDBANK,PAYDOPS,%s,2330,1,,,2/", day))
	recs = append(recs, fmt.Sprintf("02,PAYDOPS,PAYDBANK,1,%s,2400,%s,2/", day, f.Currency))
	credits, debits, _, _ := f.totals()
	closing := f.OpeningMinor + credits - debits
	recs = append(recs, fmt.Sprintf("03,%s,%s,010,%d,,,015,%d,,/", f.Account, f.Currency, f.OpeningMinor, closing))
	accountSum := f.OpeningMinor + closing
	for _, e := range f.Entries {
		code := "165"
		switch {
		case e.Return:
			code = "257"
		case e.Debit:
			code = "495"
		}
		text := e.Remittance
		if e.Return && e.ReturnReason != "" {
			text = strings.TrimSpace("RETURN " + e.ReturnReason + " " + text)
		}
		recs = append(recs, fmt.Sprintf("16,%s,%d,0,%s,%s,%s", code, e.AmountMinor, e.Key, e.Reference, strings.ReplaceAll(text, "/", " ")))
		accountSum += e.AmountMinor
	}
	n := len(recs) - 2 + 1 // the 03 to the 49
	recs = append(recs, fmt.Sprintf("49,%d,%d/", accountSum, n))
	recs = append(recs, fmt.Sprintf("98,%d,1,%d/", accountSum, n+2))
	recs = append(recs, fmt.Sprintf("99,%d,1,%d/", accountSum, len(recs)+1))
	return []byte(strings.Join(recs, "\n") + "\n")
}

// MT940 is f's booked entries as one SWIFT MT940 message (without the
// envelope).
func MT940(f File) []byte {
	f = f.booked()
	day := strings.ReplaceAll(f.Date, "-", "")[2:]
	amount := func(minor int64) string { return strings.ReplaceAll(f.amount(minor), ".", ",") }
	mark := func(minor int64) (string, int64) {
		if minor < 0 {
			return "D", -minor
		}
		return "C", minor
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":20:%s\n:25:%s\n:28C:1/1\n", f.MsgID, f.Account)
	m, open := mark(f.OpeningMinor)
	fmt.Fprintf(&b, ":60F:%s%s%s%s\n", m, day, f.Currency, amount(open))
	credits, debits, _, _ := f.totals()
	for _, e := range f.Entries {
		dc, typ := "C", "NTRF"
		if e.Debit {
			dc = "D"
		}
		if e.Return {
			typ = "NRTI"
		}
		ref := e.Reference
		if ref == "" {
			ref = "NONREF"
		}
		fmt.Fprintf(&b, ":61:%s%s%s%s%s%s//%s\n", day, day[2:], dc, amount(e.AmountMinor), typ, ref, e.Key)
		text := e.Remittance
		if e.Return {
			text = "/RTRN/" + strings.Fields(e.ReturnReason + " AC04")[0] + "/EREF/" + e.Reference + "/REMI/USTD//" + text + "/"
		}
		if text != "" {
			fmt.Fprintf(&b, ":86:%s\n", text)
		}
	}
	m, closing := mark(f.OpeningMinor + credits - debits)
	fmt.Fprintf(&b, ":62F:%s%s%s%s\n-\n", m, day, f.Currency, amount(closing))
	return []byte(b.String())
}
