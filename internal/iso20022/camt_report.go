package iso20022

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"payd/internal/statement"
)

// The elements of an AccountStatement9 (Stmt) or AccountNotification17
// (Ntfctn) payd reads, decoded one child at a time.
type camtAccount struct {
	ID   camtAccountID `xml:"Id"`
	Ccy  string        `xml:"Ccy"`
	Prxy *struct {
		ID string `xml:"Id"`
	} `xml:"Prxy"`
	Svcr *struct {
		FinInstnID struct {
			BICFI       string `xml:"BICFI"`
			ClrSysMmbID *struct {
				ClrSysID struct {
					Cd string `xml:"Cd"`
				} `xml:"ClrSysId"`
				MmbID string `xml:"MmbId"`
			} `xml:"ClrSysMmbId"`
		} `xml:"FinInstnId"`
	} `xml:"Svcr"`
}

type camtAccountID struct {
	IBAN string `xml:"IBAN"`
	Othr *struct {
		ID string `xml:"Id"`
	} `xml:"Othr"`
}

// number is the account's IBAN or Othr/Id.
func (a camtAccountID) number() string {
	if a.IBAN != "" {
		return a.IBAN
	}
	if a.Othr != nil {
		return a.Othr.ID
	}
	return ""
}

type camtAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type camtDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

type camtBalance struct {
	Tp struct {
		CdOrPrtry struct {
			Cd    string `xml:"Cd"`
			Prtry string `xml:"Prtry"`
		} `xml:"CdOrPrtry"`
	} `xml:"Tp"`
	Amt       camtAmount `xml:"Amt"`
	CdtDbtInd string     `xml:"CdtDbtInd"`
	Dt        camtDate   `xml:"Dt"`
}

type camtCount struct {
	NbOfNtries *string `xml:"NbOfNtries"`
	Sum        *string `xml:"Sum"`
	TtlNetNtry *struct {
		Amt       string `xml:"Amt"`
		CdtDbtInd string `xml:"CdtDbtInd"`
	} `xml:"TtlNetNtry"`
}

type camtSummary struct {
	TtlNtries    *camtCount `xml:"TtlNtries"`
	TtlCdtNtries *camtCount `xml:"TtlCdtNtries"`
	TtlDbtNtries *camtCount `xml:"TtlDbtNtries"`
}

type camtPeriod struct {
	FrDtTm string `xml:"FrDtTm"`
	ToDtTm string `xml:"ToDtTm"`
}

// camtStatement is what one Stmt or Ntfctn says, as its children are read.
type camtStatement struct {
	id       string
	kind     string // Stmt or Ntfctn
	account  bool
	balances []camtBalance
	summary  *camtSummary
	period   *camtPeriod
	entries  statement.Totals
	all      camtTally // every entry, whatever its status (TxsSummry's count)
	// first and last are the earliest and latest entry dates (booking, else
	// value), the period of a report that states none.
	first, last statement.Date
}

// camtTally counts and sums entries of every status, as TxsSummry does.
type camtTally struct {
	entries, credits, debits            int
	sumMinor, creditsMinor, debitsMinor int64
	netMinor                            int64
}

func (t *camtTally) add(e statement.Entry) error {
	var err error
	t.entries++
	if t.sumMinor, err = statement.AddSigned(t.sumMinor, e.AmountMinor); err != nil {
		return err
	}
	if t.netMinor, err = statement.AddSigned(t.netMinor, e.SignedMinor()); err != nil {
		return err
	}
	if e.Direction == statement.Credit {
		t.credits++
		t.creditsMinor += e.AmountMinor // within sumMinor's bound
		return nil
	}
	t.debits++
	t.debitsMinor += e.AmountMinor
	return nil
}

func (s *camtStatement) where() string {
	if s.id == "" {
		return s.kind
	}
	return s.kind + " " + s.id
}

// report reads one Stmt or Ntfctn child by child: the entries are handed
// on as they come, the balances and summary kept for the checks at its end.
func (c *camtReader) report(start xml.StartElement) error {
	s := &camtStatement{kind: start.Name.Local}
	c.reports++
	for {
		child, ok, err := c.child()
		if err != nil {
			return c.refuse(s, "", err)
		}
		if !ok {
			break
		}
		if err := c.reportChild(s, child); err != nil {
			return err
		}
	}
	if s.id == "" {
		return c.refuse(s, "", errors.New("no Id"))
	}
	if !s.account {
		return c.refuse(s, "", errors.New("no Acct"))
	}
	c.h.StatementIDs = append(c.h.StatementIDs, s.id)
	return c.checkReport(s)
}

func (c *camtReader) reportChild(s *camtStatement, child xml.StartElement) error {
	var err error
	switch child.Name.Local {
	case "Id":
		err = c.reportID(s, child)
	case "FrToDt":
		s.period = new(camtPeriod)
		err = c.d.DecodeElement(s.period, &child)
	case "Acct":
		err = c.account(s, child)
	case "Bal":
		err = c.balance(s, child)
	case "TxsSummry":
		s.summary = new(camtSummary)
		err = c.d.DecodeElement(s.summary, &child)
	case "Ntry":
		return c.entry(s, child)
	default:
		// StmtPgntn, ElctrncSeqNb, CreDtTm, RltdAcct, Intrst, AddtlStmtInf, …:
		// nothing payd uses, left to the XSD.
		err = c.d.Skip()
	}
	if err != nil {
		return c.refuse(s, child.Name.Local, err)
	}
	return nil
}

// refuse is a refusal within report s (and element, when given).
func (c *camtReader) refuse(s *camtStatement, element string, err error) error {
	var refusal *statement.Error
	if errors.As(err, &refusal) {
		return err
	}
	at := s.where()
	if element != "" {
		at += " " + element
	}
	return &statement.Error{Format: c.format, At: at, Err: err}
}

func (c *camtReader) reportID(s *camtStatement, start xml.StartElement) error {
	if err := c.d.DecodeElement(&s.id, &start); err != nil {
		return err
	}
	return statement.TextError("Id", s.id, max35Text)
}

// bsbMember is an AUBSB clearing member id: a BSB, with or without its dash.
var bsbMember = regexp.MustCompile(`^([0-9]{3})-?([0-9]{3})$`)

// account reads Acct; every report of a file must be of the same account
// and currency (a feed is one account, CONTRACT §25).
func (c *camtReader) account(s *camtStatement, start xml.StartElement) error {
	var a camtAccount
	if err := c.d.DecodeElement(&a, &start); err != nil {
		return err
	}
	got := statement.Account{Number: a.ID.number(), Currency: a.Ccy}
	if got.Number == "" {
		return errors.New("no Id/IBAN or Id/Othr/Id")
	}
	if err := statement.TextError("Id", got.Number, max34Text); err != nil {
		return err
	}
	if a.Svcr != nil {
		got.BIC = a.Svcr.FinInstnID.BICFI
		if m := a.Svcr.FinInstnID.ClrSysMmbID; m != nil && m.ClrSysID.Cd == clearingBSB {
			if parts := bsbMember.FindStringSubmatch(m.MmbID); parts != nil {
				got.BSB = parts[1] + "-" + parts[2]
			}
		}
	}
	s.account = true
	if c.reports == 1 {
		c.h.Account = got
		return c.setCurrency(got.Currency)
	}
	if got.Number != c.h.Account.Number {
		return fmt.Errorf("account %s, but the file's first report is of %s: a file is read for one account", got.Number, c.h.Account.Number)
	}
	return c.setCurrency(got.Currency)
}

// setCurrency fixes the account's currency the first time one is stated
// (Acct/Ccy, else the first balance's or entry's), refusing a second.
func (c *camtReader) setCurrency(code string) error {
	if code == "" {
		return nil
	}
	if c.h.Account.Currency == "" {
		cur, err := statement.Currency(code)
		if err != nil {
			return err
		}
		c.h.Account.Currency, c.currency = code, cur
		return nil
	}
	if code != c.h.Account.Currency {
		return fmt.Errorf("an amount in %s on an account in %s", code, c.h.Account.Currency)
	}
	if c.currency.Code == "" {
		cur, err := statement.Currency(code)
		if err != nil {
			return err
		}
		c.currency = cur
	}
	return nil
}

func (c *camtReader) balance(s *camtStatement, start xml.StartElement) error {
	if !s.account {
		return errors.New("a balance before Acct")
	}
	if len(s.balances) >= maxCamtBalances {
		return fmt.Errorf("more than %d balances: %w", maxCamtBalances, statement.ErrLimit)
	}
	var b camtBalance
	if err := c.d.DecodeElement(&b, &start); err != nil {
		return err
	}
	s.balances = append(s.balances, b)
	return nil
}

// maxCamtBalances bounds the Bal elements of a statement (the schema leaves
// them unbounded; a statement states a handful: OPBD, CLBD, CLAV, FWAV, …).
const maxCamtBalances = 64

// entry decodes one Ntry, hands it on and forgets it.
func (c *camtReader) entry(s *camtStatement, start xml.StartElement) error {
	at := fmt.Sprintf("%s Ntry %d", s.where(), s.all.entries+1)
	if !s.account {
		return &statement.Error{Format: c.format, At: at, Err: errors.New("an entry before Acct")}
	}
	var n camtEntry
	if err := c.d.DecodeElement(&n, &start); err != nil {
		return &statement.Error{Format: c.format, At: at, Err: err}
	}
	if err := c.setCurrency(n.Amt.Ccy); err != nil {
		return &statement.Error{Format: c.format, At: at, Err: err}
	}
	e, err := entryOf(&n, c.currency)
	if err == nil {
		err = c.totals.Add(e)
	}
	if err == nil {
		err = s.all.add(e)
	}
	if err == nil {
		err = s.entries.Add(e)
	}
	if err != nil {
		return &statement.Error{Format: c.format, At: at, Err: err}
	}
	e.Index = c.totals.Entries - 1
	s.widen(e)
	if c.each == nil {
		return nil
	}
	if err := c.each(e); err != nil {
		return eachError{err}
	}
	return nil
}

// widen takes e's date into the report's entry dates.
func (s *camtStatement) widen(e statement.Entry) {
	d := e.BookingDate
	if d.IsZero() {
		d = e.ValueDate
	}
	if d.IsZero() {
		return
	}
	if s.first.IsZero() || d.Before(s.first) {
		s.first = d
	}
	if s.last.IsZero() || s.last.Before(d) {
		s.last = d
	}
}

// trimmed is an XML text as the schema reads it: xs:decimal and the code
// types collapse surrounding blank space.
func trimmed(s string) string { return strings.TrimSpace(s) }
