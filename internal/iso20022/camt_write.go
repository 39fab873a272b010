package iso20022

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"payd/internal/money"
	"payd/internal/statement"
)

// WriteCamt053 writes h and its booked entries as a camt.053.001.08
// statement, as a bank sends one (the sandbox bank's statement, CONTRACT
// §19): one Stmt of h.Account for h.From to h.To in loc (FrToDt), its
// opening (OPBD) and closing (CLBD) balances, TxsSummry, and per entry its
// amount, direction, booking and value dates, AcctSvcrRef (Key), bank
// transaction code, EndToEndId (Reference) and Ustrd (Remittance).
// ReadCamt reads back exactly h and the entries, control totals included;
// the tests validate what it writes against the official XSD. The balances
// must agree with the entries (opening + credits - debits = closing); texts
// longer than the schema allows are refused, never cut.
func WriteCamt053(w io.Writer, h statement.Header, entries []statement.Entry, loc *time.Location) error {
	c, err := money.Lookup(h.Account.Currency)
	if err != nil {
		return err
	}
	if h.Opening == nil || h.Closing == nil {
		return errors.New("camt.053: a statement states its opening and closing balances")
	}
	doc := camtDoc{Xmlns: NamespaceCamt053}
	doc.Stmt.GrpHdr = camtOutHeader{MsgID: h.MessageID, CreDtTm: h.CreatedAt.In(loc).Format(time.RFC3339)}
	s := &doc.Stmt.Stmt
	s.ID = h.MessageID
	if len(h.StatementIDs) > 0 {
		s.ID = h.StatementIDs[0]
	}
	s.CreDtTm = doc.Stmt.GrpHdr.CreDtTm
	s.FrToDt.FrDtTm = h.From.In(loc).Format(time.RFC3339)
	s.FrToDt.ToDtTm = time.Date(h.To.Year, h.To.Month, h.To.Day, 23, 59, 59, 0, loc).Format(time.RFC3339)
	s.Acct.ID.Othr.ID = h.Account.Number
	s.Acct.Ccy = c.Code
	s.Bal = []camtOutBalance{balanceOut("OPBD", *h.Opening, c), balanceOut("CLBD", *h.Closing, c)}
	var totals statement.Totals
	var credits, debits, sum int64
	var nCredits, nDebits int
	for _, e := range entries {
		if err := totals.Add(e); err != nil {
			return err
		}
		n, err := entryOut(e, c)
		if err != nil {
			return err
		}
		s.Ntry = append(s.Ntry, n)
		sum += e.AmountMinor
		if e.Direction == statement.Credit {
			credits, nCredits = credits+e.AmountMinor, nCredits+1
		} else {
			debits, nDebits = debits+e.AmountMinor, nDebits+1
		}
	}
	if h.Opening.AmountMinor+credits-debits != h.Closing.AmountMinor {
		return fmt.Errorf("camt.053: opening %s + credits %s - debits %s is not closing %s", money.Format(h.Opening.AmountMinor, c),
			money.Format(credits, c), money.Format(debits, c), money.Format(h.Closing.AmountMinor, c))
	}
	net, netInd := credits-debits, "CRDT"
	if net < 0 {
		net, netInd = -net, "DBIT"
	}
	s.TxsSummry = &camtOutSummary{
		TtlNtries:    camtOutCount{NbOfNtries: fmt.Sprint(len(entries)), Sum: money.Format(sum, c), TtlNetNtry: &camtOutNet{Amt: money.Format(net, c), CdtDbtInd: netInd}},
		TtlCdtNtries: &camtOutCount{NbOfNtries: fmt.Sprint(nCredits), Sum: money.Format(credits, c)},
		TtlDbtNtries: &camtOutCount{NbOfNtries: fmt.Sprint(nDebits), Sum: money.Format(debits, c)},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("camt.053: %w", err)
	}
	_, err = io.WriteString(w, "\n")
	return err
}

func balanceOut(code string, b statement.Balance, c money.Currency) camtOutBalance {
	out := camtOutBalance{Amt: camtOutAmount{Ccy: c.Code, Value: money.Format(abs(b.AmountMinor), c)}, CdtDbtInd: "CRDT"}
	if b.AmountMinor < 0 {
		out.CdtDbtInd = "DBIT"
	}
	out.Tp.CdOrPrtry.Cd = code
	out.Dt.Dt = b.Date.String()
	return out
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func entryOut(e statement.Entry, c money.Currency) (camtOutEntry, error) {
	for _, t := range []struct{ name, value string }{{"AcctSvcrRef", e.Key}, {"EndToEndId", e.Reference}} {
		if utf8.RuneCountInString(t.value) > max35Text {
			return camtOutEntry{}, fmt.Errorf("camt.053 entry %d: %s %q is longer than %d characters", e.Index, t.name, t.value, max35Text)
		}
	}
	if utf8.RuneCountInString(e.Remittance) > max140Text {
		return camtOutEntry{}, fmt.Errorf("camt.053 entry %d: Ustrd is longer than %d characters", e.Index, max140Text)
	}
	n := camtOutEntry{Amt: camtOutAmount{Ccy: c.Code, Value: money.Format(e.AmountMinor, c)}, CdtDbtInd: "CRDT", AcctSvcrRef: e.Key}
	family := "RCDT"
	if e.Direction == statement.Debit {
		n.CdtDbtInd, family = "DBIT", "ICDT"
	}
	n.Sts.Cd = "BOOK"
	n.BookgDt.Dt = e.BookingDate.String()
	n.ValDt.Dt = e.ValueDate.String()
	n.BkTxCd.Domn.Cd = "PMNT"
	n.BkTxCd.Domn.Fmly.Cd = family
	n.BkTxCd.Domn.Fmly.SubFmlyCd = "DMCT"
	tx := camtOutTx{}
	tx.Refs.EndToEndID = e.Reference
	if tx.Refs.EndToEndID == "" {
		tx.Refs.EndToEndID = "NOTPROVIDED"
	}
	if e.Remittance != "" {
		tx.RmtInf = &camtOutRemittance{Ustrd: e.Remittance}
	}
	n.NtryDtls.TxDtls = []camtOutTx{tx}
	return n, nil
}

// The elements WriteCamt053 writes, in the schema's order.
type camtDoc struct {
	XMLName xml.Name `xml:"Document"`
	Xmlns   string   `xml:"xmlns,attr"`
	Stmt    struct {
		GrpHdr camtOutHeader    `xml:"GrpHdr"`
		Stmt   camtOutStatement `xml:"Stmt"`
	} `xml:"BkToCstmrStmt"`
}

type camtOutHeader struct {
	MsgID   string `xml:"MsgId"`
	CreDtTm string `xml:"CreDtTm"`
}

type camtOutStatement struct {
	ID      string `xml:"Id"`
	CreDtTm string `xml:"CreDtTm"`
	FrToDt  struct {
		FrDtTm string `xml:"FrDtTm"`
		ToDtTm string `xml:"ToDtTm"`
	} `xml:"FrToDt"`
	Acct struct {
		ID struct {
			Othr struct {
				ID string `xml:"Id"`
			} `xml:"Othr"`
		} `xml:"Id"`
		Ccy string `xml:"Ccy"`
	} `xml:"Acct"`
	Bal       []camtOutBalance `xml:"Bal"`
	TxsSummry *camtOutSummary  `xml:"TxsSummry"`
	Ntry      []camtOutEntry   `xml:"Ntry"`
}

type camtOutAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type camtOutBalance struct {
	Tp struct {
		CdOrPrtry struct {
			Cd string `xml:"Cd"`
		} `xml:"CdOrPrtry"`
	} `xml:"Tp"`
	Amt       camtOutAmount `xml:"Amt"`
	CdtDbtInd string        `xml:"CdtDbtInd"`
	Dt        struct {
		Dt string `xml:"Dt"`
	} `xml:"Dt"`
}

type camtOutSummary struct {
	TtlNtries    camtOutCount  `xml:"TtlNtries"`
	TtlCdtNtries *camtOutCount `xml:"TtlCdtNtries"`
	TtlDbtNtries *camtOutCount `xml:"TtlDbtNtries"`
}

type camtOutCount struct {
	NbOfNtries string      `xml:"NbOfNtries"`
	Sum        string      `xml:"Sum"`
	TtlNetNtry *camtOutNet `xml:"TtlNetNtry"`
}

type camtOutNet struct {
	Amt       string `xml:"Amt"`
	CdtDbtInd string `xml:"CdtDbtInd"`
}

type camtOutEntry struct {
	Amt       camtOutAmount `xml:"Amt"`
	CdtDbtInd string        `xml:"CdtDbtInd"`
	Sts       struct {
		Cd string `xml:"Cd"`
	} `xml:"Sts"`
	BookgDt struct {
		Dt string `xml:"Dt"`
	} `xml:"BookgDt"`
	ValDt struct {
		Dt string `xml:"Dt"`
	} `xml:"ValDt"`
	AcctSvcrRef string `xml:"AcctSvcrRef,omitempty"`
	BkTxCd      struct {
		Domn struct {
			Cd   string `xml:"Cd"`
			Fmly struct {
				Cd        string `xml:"Cd"`
				SubFmlyCd string `xml:"SubFmlyCd"`
			} `xml:"Fmly"`
		} `xml:"Domn"`
	} `xml:"BkTxCd"`
	NtryDtls struct {
		TxDtls []camtOutTx `xml:"TxDtls"`
	} `xml:"NtryDtls"`
}

type camtOutTx struct {
	Refs struct {
		EndToEndID string `xml:"EndToEndId"`
	} `xml:"Refs"`
	RmtInf *camtOutRemittance `xml:"RmtInf"`
}

type camtOutRemittance struct {
	Ustrd string `xml:"Ustrd"`
}
