package iso20022

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/statement"
)

// camtEntry is the part of a ReportEntry10 (Ntry) payd reads.
type camtEntry struct {
	NtryRef   string     `xml:"NtryRef"`
	Amt       camtAmount `xml:"Amt"`
	CdtDbtInd string     `xml:"CdtDbtInd"`
	RvslInd   string     `xml:"RvslInd"`
	Sts       struct {
		Cd    string `xml:"Cd"`
		Prtry string `xml:"Prtry"`
	} `xml:"Sts"`
	BookgDt     *camtDate `xml:"BookgDt"`
	ValDt       *camtDate `xml:"ValDt"`
	AcctSvcrRef string    `xml:"AcctSvcrRef"`
	BkTxCd      struct {
		Domn *struct {
			Cd   string `xml:"Cd"`
			Fmly struct {
				Cd        string `xml:"Cd"`
				SubFmlyCd string `xml:"SubFmlyCd"`
			} `xml:"Fmly"`
		} `xml:"Domn"`
		Prtry *struct {
			Cd string `xml:"Cd"`
		} `xml:"Prtry"`
	} `xml:"BkTxCd"`
	NtryDtls     []camtEntryDetails `xml:"NtryDtls"`
	AddtlNtryInf string             `xml:"AddtlNtryInf"`
}

type camtEntryDetails struct {
	Btch *struct {
		MsgID    string `xml:"MsgId"`
		PmtInfID string `xml:"PmtInfId"`
	} `xml:"Btch"`
	TxDtls []camtTransaction `xml:"TxDtls"`
}

// camtTransaction is the part of an EntryTransaction10 (TxDtls) payd reads.
type camtTransaction struct {
	Refs struct {
		EndToEndID string `xml:"EndToEndId"`
	} `xml:"Refs"`
	RltdPties struct {
		Dbtr     *camtParty   `xml:"Dbtr"`
		DbtrAcct *camtAccount `xml:"DbtrAcct"`
		Cdtr     *camtParty   `xml:"Cdtr"`
		CdtrAcct *camtAccount `xml:"CdtrAcct"`
	} `xml:"RltdPties"`
	RmtInf struct {
		Ustrd []string `xml:"Ustrd"`
		Strd  []struct {
			CdtrRefInf struct {
				Ref string `xml:"Ref"`
			} `xml:"CdtrRefInf"`
			AddtlRmtInf []string `xml:"AddtlRmtInf"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
	RtrInf *struct {
		Rsn struct {
			Cd    string `xml:"Cd"`
			Prtry string `xml:"Prtry"`
		} `xml:"Rsn"`
		AddtlInf []string `xml:"AddtlInf"`
	} `xml:"RtrInf"`
	AddtlTxInf string `xml:"AddtlTxInf"`
}

// camtParty is a Party40Choice: a party's name, or an agent's.
type camtParty struct {
	Pty *struct {
		Nm string `xml:"Nm"`
	} `xml:"Pty"`
	Agt *struct {
		FinInstnID struct {
			Nm    string `xml:"Nm"`
			BICFI string `xml:"BICFI"`
		} `xml:"FinInstnId"`
	} `xml:"Agt"`
}

func (p *camtParty) name() string {
	switch {
	case p == nil:
		return ""
	case p.Pty != nil:
		return p.Pty.Nm
	case p.Agt != nil:
		return joinNonEmpty(p.Agt.FinInstnID.Nm, p.Agt.FinInstnID.BICFI)
	}
	return ""
}

// notProvided is what a schema-required reference holds when there is none
// (the EPC and CBPR+ guidelines' NOTPROVIDED).
const notProvided = "NOTPROVIDED"

// entryStatuses are ExternalEntryStatus1Code's codes.
var entryStatuses = map[string]statement.Status{
	"BOOK": statement.Booked,
	"PDNG": statement.Pending,
	"INFO": statement.Information,
	"FUTR": statement.Future,
}

// entryOf is n as a statement.Entry of an account in c.
func entryOf(n *camtEntry, c money.Currency) (statement.Entry, error) {
	e := statement.Entry{Key: n.AcctSvcrRef, Currency: c.Code, BankTransactionCode: n.bankTransactionCode()}
	if e.Key == "" {
		e.Key = n.NtryRef
	}
	var err error
	if e.AmountMinor, err = camtAmountMinor(n.Amt.Value, c); err != nil {
		return statement.Entry{}, fmt.Errorf("Amt: %w", err)
	}
	if e.Direction, err = direction(n.CdtDbtInd); err != nil {
		return statement.Entry{}, err
	}
	if n.Sts.Prtry != "" {
		return statement.Entry{}, fmt.Errorf("Sts/Prtry %q: a proprietary status payd cannot tell booked or not", n.Sts.Prtry)
	}
	status, ok := entryStatuses[trimmed(n.Sts.Cd)]
	if !ok {
		return statement.Entry{}, fmt.Errorf("Sts/Cd %q is not BOOK, PDNG, INFO or FUTR", n.Sts.Cd)
	}
	e.Status = status
	e.Reversal = trimmed(n.RvslInd) == "true" || trimmed(n.RvslInd) == "1"
	if e.BookingDate, err = camtDateOf(n.BookgDt); err != nil {
		return statement.Entry{}, fmt.Errorf("BookgDt: %w", err)
	}
	if e.ValueDate, err = camtDateOf(n.ValDt); err != nil {
		return statement.Entry{}, fmt.Errorf("ValDt: %w", err)
	}
	if err := n.details(&e); err != nil {
		return statement.Entry{}, err
	}
	if err := statement.CheckEntryText(e); err != nil {
		return statement.Entry{}, err
	}
	return e, nil
}

func (n *camtEntry) bankTransactionCode() string {
	if d := n.BkTxCd.Domn; d != nil {
		return d.Cd + "/" + d.Fmly.Cd + "/" + d.Fmly.SubFmlyCd
	}
	if p := n.BkTxCd.Prtry; p != nil {
		return p.Cd
	}
	return ""
}

// details fills in what the entry's transaction details say. An entry of
// one transaction takes its references, parties and remittance; an entry
// of many (a batch: a whole payment file booked as one debit) is known by
// the batch's PmtInfId (payd's file reference, CONTRACT §25) and its own
// AddtlNtryInf.
func (n *camtEntry) details(e *statement.Entry) error {
	var txs []*camtTransaction
	batchRef := ""
	for i := range n.NtryDtls {
		d := &n.NtryDtls[i]
		if d.Btch != nil && batchRef == "" {
			batchRef = joinFirst(d.Btch.PmtInfID, d.Btch.MsgID)
		}
		for j := range d.TxDtls {
			txs = append(txs, &d.TxDtls[j])
		}
	}
	if len(txs) > maxCamtTransactions {
		return fmt.Errorf("%d transaction details, more than %d: %w", len(txs), maxCamtTransactions, statement.ErrLimit)
	}
	if len(txs) != 1 {
		e.Reference, e.Remittance = batchRef, n.AddtlNtryInf
		return nil
	}
	tx := txs[0]
	e.Reference = tx.Refs.EndToEndID
	if e.Reference == notProvided {
		e.Reference = ""
	}
	if e.Reference == "" {
		e.Reference = batchRef
	}
	e.Remittance = joinFirst(tx.remittance(), tx.AddtlTxInf, n.AddtlNtryInf)
	tx.parties(e)
	if r := tx.RtrInf; r != nil {
		e.Return, e.ReturnedReference = true, e.Reference
		e.ReturnReason = joinNonEmpty(append([]string{joinFirst(r.Rsn.Cd, r.Rsn.Prtry)}, r.AddtlInf...)...)
	}
	return nil
}

// remittance is RmtInf as one text: each Ustrd, then each Strd's creditor
// reference and additional remittance information, space-separated.
func (tx *camtTransaction) remittance() string {
	parts := append([]string(nil), tx.RmtInf.Ustrd...)
	for _, s := range tx.RmtInf.Strd {
		parts = append(parts, s.CdtrRefInf.Ref)
		parts = append(parts, s.AddtlRmtInf...)
	}
	return joinNonEmpty(parts...)
}

// parties sets the counterparty (the debtor of a credit, the creditor of a
// debit) and, for a credit, the account or proxy it was addressed to.
func (tx *camtTransaction) parties(e *statement.Entry) {
	p := tx.RltdPties
	if e.Direction == statement.Debit {
		e.CounterpartyName = p.Cdtr.name()
		if p.CdtrAcct != nil {
			e.CounterpartyAccount = p.CdtrAcct.ID.number()
		}
		return
	}
	e.CounterpartyName = p.Dbtr.name()
	if p.DbtrAcct != nil {
		e.CounterpartyAccount = p.DbtrAcct.ID.number()
	}
	if p.CdtrAcct != nil {
		e.CreditedAccount = p.CdtrAcct.ID.number()
		if e.CreditedAccount == notProvided {
			e.CreditedAccount = ""
		}
		if p.CdtrAcct.Prxy != nil {
			e.CreditedProxy = p.CdtrAcct.Prxy.ID
		}
	}
}

// joinFirst is the first non-empty of texts.
func joinFirst(texts ...string) string {
	for _, t := range texts {
		if t != "" {
			return t
		}
	}
	return ""
}

func direction(code string) (statement.Direction, error) {
	switch trimmed(code) {
	case "CRDT":
		return statement.Credit, nil
	case "DBIT":
		return statement.Debit, nil
	}
	return "", fmt.Errorf("CdtDbtInd %q is not CRDT or DBIT", code)
}

// camtAmountMinor reads an ActiveOrHistoricCurrencyAndAmount (xs:decimal,
// at least 0) in c's minor units.
func camtAmountMinor(text string, c money.Currency) (int64, error) {
	text = strings.TrimPrefix(trimmed(text), "+")
	if strings.HasPrefix(text, ".") {
		text = "0" + text
	}
	text = strings.TrimSuffix(text, ".")
	return statement.ParseAmount(text, c)
}

// camtDateOf is a DateAndDateTime2Choice's calendar date: Dt (an xs:date,
// whose zone, if any, is dropped) or DtTm's date as written, in its own
// offset (the bank's business day). Absent is the zero Date.
func camtDateOf(d *camtDate) (statement.Date, error) {
	if d == nil {
		return statement.Date{}, nil
	}
	switch {
	case d.Dt != "":
		return isoDate(trimmed(d.Dt))
	case d.DtTm != "":
		t, err := reportTime(trimmed(d.DtTm))
		if err != nil {
			return statement.Date{}, fmt.Errorf("DtTm %q is not an ISODateTime", d.DtTm)
		}
		return statement.DateOf(t), nil
	}
	return statement.Date{}, errors.New("neither Dt nor DtTm")
}

// isoDate reads an xs:date: YYYY-MM-DD, optionally followed by Z or an
// offset, which a calendar date does not need.
func isoDate(text string) (statement.Date, error) {
	if len(text) < len(time.DateOnly) {
		return statement.Date{}, fmt.Errorf("%q is not an ISODate", text)
	}
	date, zone := text[:len(time.DateOnly)], text[len(time.DateOnly):]
	if zone != "" && zone != "Z" {
		if _, err := time.Parse("-07:00", zone); err != nil {
			return statement.Date{}, fmt.Errorf("%q is not an ISODate", text)
		}
	}
	d, err := statement.ParseDate(date)
	if err != nil {
		return statement.Date{}, fmt.Errorf("%q is not an ISODate", text)
	}
	return d, nil
}
