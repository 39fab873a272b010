package iso20022

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/payfile"
)

// The elements of pain.001.001.10 payd writes, in the schema's order
// (encoding/xml writes fields in declaration order). Optional elements are
// pointers or omitempty so that the reader can tell them absent.
type pain001Document struct {
	XMLName    xml.Name          `xml:"urn:iso:std:iso:20022:tech:xsd:pain.001.001.10 Document"`
	Initiation pain001Initiation `xml:"CstmrCdtTrfInitn"`
}

type pain001Initiation struct {
	GrpHdr groupHeader          `xml:"GrpHdr"`
	PmtInf []paymentInstruction `xml:"PmtInf"`
}

type groupHeader struct {
	MsgID    string `xml:"MsgId"`
	CreDtTm  string `xml:"CreDtTm"`
	NbOfTxs  string `xml:"NbOfTxs"`
	CtrlSum  string `xml:"CtrlSum"`
	InitgPty party  `xml:"InitgPty"`
}

type paymentInstruction struct {
	PmtInfID    string           `xml:"PmtInfId"`
	PmtMtd      string           `xml:"PmtMtd"`
	BtchBookg   string           `xml:"BtchBookg"`
	NbOfTxs     string           `xml:"NbOfTxs"`
	CtrlSum     string           `xml:"CtrlSum"`
	ReqdExctnDt dateChoice       `xml:"ReqdExctnDt"`
	Dbtr        party            `xml:"Dbtr"`
	DbtrAcct    cashAccount      `xml:"DbtrAcct"`
	DbtrAgt     agent            `xml:"DbtrAgt"`
	CdtTrfTxInf []creditTransfer `xml:"CdtTrfTxInf"`
}

type dateChoice struct {
	Dt string `xml:"Dt"`
}

type party struct {
	Nm string   `xml:"Nm,omitempty"`
	ID *partyID `xml:"Id,omitempty"`
}

type partyID struct {
	OrgID organisationID `xml:"OrgId"`
}

type organisationID struct {
	Othr []genericID `xml:"Othr"`
}

type genericID struct {
	ID string `xml:"Id"`
}

type cashAccount struct {
	ID   accountID    `xml:"Id"`
	Tp   *accountType `xml:"Tp,omitempty"`
	Prxy *proxy       `xml:"Prxy,omitempty"`
}

type accountID struct {
	Othr genericID `xml:"Othr"`
}

type accountType struct {
	Cd string `xml:"Cd"`
}

type proxy struct {
	ID string `xml:"Id"`
}

type agent struct {
	FinInstnID financialInstitution `xml:"FinInstnId"`
}

type financialInstitution struct {
	BICFI       string          `xml:"BICFI,omitempty"`
	ClrSysMmbID *clearingMember `xml:"ClrSysMmbId,omitempty"`
}

type clearingMember struct {
	ClrSysID clearingSystem `xml:"ClrSysId"`
	MmbID    string         `xml:"MmbId"`
}

type clearingSystem struct {
	Cd string `xml:"Cd"`
}

type creditTransfer struct {
	PmtID     paymentID   `xml:"PmtId"`
	Amt       amount      `xml:"Amt"`
	UltmtDbtr *party      `xml:"UltmtDbtr,omitempty"`
	CdtrAgt   *agent      `xml:"CdtrAgt,omitempty"`
	Cdtr      party       `xml:"Cdtr"`
	CdtrAcct  cashAccount `xml:"CdtrAcct"`
	RmtInf    *remittance `xml:"RmtInf,omitempty"`
}

type paymentID struct {
	EndToEndID string `xml:"EndToEndId"`
}

type amount struct {
	InstdAmt currencyAmount `xml:"InstdAmt"`
}

type currencyAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

type remittance struct {
	Ustrd []string `xml:"Ustrd"`
}

// accountTypeCodes are the ExternalCashAccountType1Code of a Japanese
// account's 預金種目: 普通 (ordinary) is a savings account, 当座 a current one.
var accountTypeCodes = map[payfile.AccountType]string{
	payfile.Ordinary: "SVGS",
	payfile.Current:  "CACC",
}

// Layouts of the dates pain.001 carries. CreDtTm is the cut-off's instant in
// the rail's zone with its offset, to the second (a fraction only when the
// instant has one), so the same cut-off always writes the same text;
// ReqdExctnDt is that instant's local date (CONTRACT §25).
const (
	dateTimeLayout = time.RFC3339Nano
	dateLayout     = time.DateOnly
)

// maxFractionDigits is ActiveOrHistoricCurrencyAndAmount's fractionDigits: a
// currency with more decimals (USDC's 6) cannot be written. An amount or a
// total is at most money.MaxMinor (10^17), so with at most five decimals it
// has at most the 18 digits of the schema's totalDigits.
const maxFractionDigits = 5

// WritePain001 writes f as an ISO 20022 pain.001.001.10 customer credit
// transfer initiation (CONTRACT §17, §25): MsgId is f.Name, CreDtTm
// f.CreatedAt, one PmtInf (PmtInfId f.Reference, BtchBookg false) whose
// requested execution date is CreatedAt's date in f.Location, and one
// CdtTrfTxInf per credit in f.Credits' order, EndToEndId its bank reference.
// NbOfTxs and CtrlSum are exact, CtrlSum a decimal in the currency's units.
//
// The same File always gives the same bytes. A field the schema cannot hold
// (or a reference outside §17's [A-Z0-9]) is refused with a
// *payfile.FieldError naming the credit, the field and the element. The
// Zengin kana names and the ABA bank abbreviation have no place in pain.001
// and are not written.
func WritePain001(f payfile.File) ([]byte, error) {
	doc, err := pain001Of(f)
	if err != nil {
		return nil, err
	}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("pain.001 %s: %w", f.Name, err)
	}
	out := make([]byte, 0, len(xml.Header)+len(body)+1)
	out = append(out, xml.Header...)
	out = append(out, body...)
	return append(out, '\n'), nil
}

// fileRefuser names members of the file and its debtor.
var fileRefuser = refuser{credit: -1}

func pain001Of(f payfile.File) (pain001Document, error) {
	cur, err := fileCurrency(f.Currency)
	if err != nil {
		return pain001Document{}, err
	}
	created, execution, err := fileDates(f)
	if err != nil {
		return pain001Document{}, err
	}
	if err := checkFileNames(f); err != nil {
		return pain001Document{}, err
	}
	debtor, err := debtorOf(f.Debtor)
	if err != nil {
		return pain001Document{}, err
	}
	credits, total, err := creditTransfersOf(f.Credits, cur)
	if err != nil {
		return pain001Document{}, err
	}
	count := strconv.Itoa(len(credits))
	ctrlSum := money.Format(total, cur)
	return pain001Document{Initiation: pain001Initiation{
		GrpHdr: groupHeader{
			MsgID:    f.Name,
			CreDtTm:  created,
			NbOfTxs:  count,
			CtrlSum:  ctrlSum,
			InitgPty: debtor.initiator,
		},
		PmtInf: []paymentInstruction{{
			PmtInfID:    f.Reference,
			PmtMtd:      "TRF",
			BtchBookg:   "false",
			NbOfTxs:     count,
			CtrlSum:     ctrlSum,
			ReqdExctnDt: dateChoice{Dt: execution},
			Dbtr:        debtor.party,
			DbtrAcct:    debtor.account,
			DbtrAgt:     debtor.agent,
			CdtTrfTxInf: credits,
		}},
	}}, nil
}

// fileCurrency is the file's currency, which the amount type can hold: three
// letters and at most five decimals.
func fileCurrency(code string) (money.Currency, error) {
	cur, err := money.Lookup(code)
	if err != nil {
		return money.Currency{}, fileRefuser.refuse("Currency", "InstdAmt/@Ccy", fmt.Sprintf("must be a currency payd holds (got %q)", code))
	}
	if len(cur.Code) != 3 || cur.Digits > maxFractionDigits {
		return money.Currency{}, fileRefuser.refuse("Currency", "InstdAmt/@Ccy", fmt.Sprintf("must be an ISO 4217 code of at most %d decimals (got %s)", maxFractionDigits, code))
	}
	return cur, nil
}

// fileDates are CreDtTm and ReqdExctnDt's date.
func fileDates(f payfile.File) (created, execution string, err error) {
	if f.Location == nil {
		return "", "", fileRefuser.refuse("Location", "ReqdExctnDt/Dt", "must be set (the execution date is CreatedAt's date there)")
	}
	local := f.CreatedAt.In(f.Location)
	if f.CreatedAt.IsZero() || local.Year() < 1 || local.Year() > 9999 {
		return "", "", fileRefuser.refuse("CreatedAt", "GrpHdr/CreDtTm", "must be the cut-off's instant, in years 1 to 9999")
	}
	// RFC 3339 writes an offset in minutes; a zone's historical offset in
	// seconds (local mean time) would name another instant.
	if _, offset := local.Zone(); offset%60 != 0 {
		return "", "", fileRefuser.refuse("Location", "GrpHdr/CreDtTm", fmt.Sprintf("must be offset from UTC by whole minutes at CreatedAt (got %ds)", offset))
	}
	return local.Format(dateTimeLayout), local.Format(dateLayout), nil
}

func checkFileNames(f payfile.File) error {
	if err := fileRefuser.text("Name", "GrpHdr/MsgId", f.Name, max35Text, false); err != nil {
		return err
	}
	if referenceProblem(f.Reference) != "" {
		return fileRefuser.refuse("Reference", "PmtInf/PmtInfId", referenceProblem(f.Reference))
	}
	return nil
}

// debtorParts are the elements the debtor fills: the initiating party of
// the group header and the payment instruction's Dbtr, DbtrAcct and
// DbtrAgt.
type debtorParts struct {
	initiator party
	party     party
	account   cashAccount
	agent     agent
}

func debtorOf(d payfile.Debtor) (debtorParts, error) {
	r := refuser{credit: -1, prefix: "Debtor."}
	if err := r.text("Name", "Dbtr/Nm", d.Name, max140Text, false); err != nil {
		return debtorParts{}, err
	}
	if err := r.text("Account", "DbtrAcct/Id/Othr/Id", d.Account, max34Text, false); err != nil {
		return debtorParts{}, err
	}
	initiator := party{Nm: d.Name}
	if d.OriginatorID != "" {
		if err := r.text("OriginatorID", "InitgPty/Id/OrgId/Othr/Id", d.OriginatorID, max35Text, false); err != nil {
			return debtorParts{}, err
		}
		initiator.ID = &partyID{OrgID: organisationID{Othr: []genericID{{ID: d.OriginatorID}}}}
	}
	tp, err := r.accountType("DbtrAcct/Tp/Cd", d.AccountType)
	if err != nil {
		return debtorParts{}, err
	}
	agt, err := r.agent("DbtrAgt", d.BIC, d.BSB, d.BankCode, d.BranchCode)
	if err != nil {
		return debtorParts{}, err
	}
	if agt == nil {
		return debtorParts{}, r.refuse("BIC", "DbtrAgt/FinInstnId", "must be set, or BSB, or BankCode and BranchCode (the debtor's bank)")
	}
	return debtorParts{
		initiator: initiator,
		party:     party{Nm: d.Name},
		account:   cashAccount{ID: accountID{Othr: genericID{ID: d.Account}}, Tp: tp},
		agent:     *agt,
	}, nil
}

// creditTransfersOf makes one CdtTrfTxInf per credit and sums them, the
// total within money.MaxMinor as every amount payd holds. A bank reference
// twice in one file is refused: the bank's report could not say which of
// the two it means.
func creditTransfersOf(credits []payfile.Credit, cur money.Currency) ([]creditTransfer, int64, error) {
	if len(credits) == 0 {
		return nil, 0, fileRefuser.refuse("Credits", "PmtInf/CdtTrfTxInf", "must hold at least one credit")
	}
	out := make([]creditTransfer, 0, len(credits))
	seen := make(map[string]int, len(credits))
	var total int64
	for i, c := range credits {
		tx, err := creditTransferOf(i, c, cur)
		if err != nil {
			return nil, 0, err
		}
		if first, ok := seen[c.BankReference]; ok {
			return nil, 0, refuser{credit: i, ref: c.BankReference}.refuse("BankReference", "PmtId/EndToEndId", fmt.Sprintf("must be unique in the file (credit %d has it too)", first))
		}
		seen[c.BankReference] = i
		if total > money.MaxMinor-c.AmountMinor {
			return nil, 0, fileRefuser.refuse("Credits", "GrpHdr/CtrlSum", fmt.Sprintf("must total at most %d minor units", money.MaxMinor))
		}
		total += c.AmountMinor
		out = append(out, tx)
	}
	return out, total, nil
}

func creditTransferOf(i int, c payfile.Credit, cur money.Currency) (creditTransfer, error) {
	r := refuser{credit: i, ref: c.BankReference}
	if referenceProblem(c.BankReference) != "" {
		return creditTransfer{}, r.refuse("BankReference", "PmtId/EndToEndId", referenceProblem(c.BankReference))
	}
	value, err := r.amount(c.AmountMinor, cur)
	if err != nil {
		return creditTransfer{}, err
	}
	if err := r.text("Name", "Cdtr/Nm", c.Name, max140Text, false); err != nil {
		return creditTransfer{}, err
	}
	acct, err := r.creditorAccount(c)
	if err != nil {
		return creditTransfer{}, err
	}
	agt, err := r.agent("CdtrAgt", c.BIC, c.BSB, c.BankCode, c.BranchCode)
	if err != nil {
		return creditTransfer{}, err
	}
	if agt == nil && c.PayID == "" {
		return creditTransfer{}, r.refuse("BSB", "CdtrAgt/FinInstnId", "must be set, or BIC, or BankCode and BranchCode (the account's bank)")
	}
	tx := creditTransfer{
		PmtID:    paymentID{EndToEndID: c.BankReference},
		Amt:      amount{InstdAmt: currencyAmount{Ccy: cur.Code, Value: value}},
		CdtrAgt:  agt,
		Cdtr:     party{Nm: c.Name},
		CdtrAcct: acct,
	}
	if c.Remitter != "" {
		if err := r.text("Remitter", "UltmtDbtr/Nm", c.Remitter, max140Text, false); err != nil {
			return creditTransfer{}, err
		}
		tx.UltmtDbtr = &party{Nm: c.Remitter}
	}
	if c.Description != "" {
		if err := r.text("Description", "RmtInf/Ustrd", c.Description, max140Text, true); err != nil {
			return creditTransfer{}, err
		}
		tx.RmtInf = &remittance{Ustrd: []string{c.Description}}
	}
	return tx, nil
}

// refuser makes the payfile.FieldErrors of one credit (or of the file and
// its debtor, credit -1). Each problem ends with the pain.001 element the
// field goes into, in brackets.
type refuser struct {
	credit int
	ref    string
	prefix string
}

func (r refuser) refuse(field, element, problem string) *payfile.FieldError {
	return &payfile.FieldError{
		Format:        payfile.Pain001,
		Credit:        r.credit,
		BankReference: r.ref,
		Field:         r.prefix + field,
		Problem:       problem + " [" + element + "]",
	}
}

func (r refuser) text(field, element, value string, max int, multiline bool) error {
	if problem := textProblem(value, max, multiline); problem != "" {
		return r.refuse(field, element, problem)
	}
	return nil
}

// amount is the InstdAmt text of minor units: positive and within the
// API's bound.
func (r refuser) amount(minor int64, cur money.Currency) (string, error) {
	if minor < 1 || minor > money.MaxMinor {
		return "", r.refuse("AmountMinor", "Amt/InstdAmt", fmt.Sprintf("must be 1 to %d (got %d)", money.MaxMinor, minor))
	}
	return money.Format(minor, cur), nil
}

// creditorAccount is CdtrAcct: the account number in Othr/Id, or a PayID in
// Prxy/Id (CONTRACT §25) beside the schema's required account id.
func (r refuser) creditorAccount(c payfile.Credit) (cashAccount, error) {
	tp, err := r.accountType("CdtrAcct/Tp/Cd", c.AccountType)
	if err != nil {
		return cashAccount{}, err
	}
	switch {
	case c.PayID != "" && c.Account != "":
		return cashAccount{}, r.refuse("PayID", "CdtrAcct/Prxy/Id", "must not be set with Account")
	case c.PayID != "":
		if err := r.text("PayID", "CdtrAcct/Prxy/Id", c.PayID, max2048Text, false); err != nil {
			return cashAccount{}, err
		}
		return cashAccount{ID: accountID{Othr: genericID{ID: noAccount}}, Tp: tp, Prxy: &proxy{ID: c.PayID}}, nil
	}
	if err := r.text("Account", "CdtrAcct/Id/Othr/Id", c.Account, max34Text, false); err != nil {
		return cashAccount{}, err
	}
	return cashAccount{ID: accountID{Othr: genericID{ID: c.Account}}, Tp: tp}, nil
}

func (r refuser) accountType(element string, t payfile.AccountType) (*accountType, error) {
	if t == "" {
		return nil, nil
	}
	code, ok := accountTypeCodes[t]
	if !ok {
		return nil, r.refuse("AccountType", element, fmt.Sprintf("must be ordinary or current (got %q)", t))
	}
	return &accountType{Cd: code}, nil
}

// agent is a financial institution known by its BIC, by its BSB (clearing
// system AUBSB, the six digits), or by its Zengin bank and branch (JPZGN,
// the seven digits), or nil when none is given (CONTRACT §25). A BIC may go
// with a clearing member id; a BSB and a Zengin code together may not.
func (r refuser) agent(element, bic, bsb, bank, branch string) (*agent, error) {
	var fi financialInstitution
	if bic != "" {
		if !bicPattern.MatchString(bic) {
			return nil, r.refuse("BIC", element+"/FinInstnId/BICFI", fmt.Sprintf("must be a BIC of 8 or 11 (got %q)", bic))
		}
		fi.BICFI = bic
	}
	switch {
	case bsb != "" && (bank != "" || branch != ""):
		return nil, r.refuse("BSB", element+"/FinInstnId/ClrSysMmbId", "must not be set with BankCode or BranchCode (one clearing system)")
	case bsb != "":
		if !bsbPattern.MatchString(bsb) {
			return nil, r.refuse("BSB", element+"/FinInstnId/ClrSysMmbId/MmbId", fmt.Sprintf("must be nnn-nnn (got %q)", bsb))
		}
		fi.ClrSysMmbID = &clearingMember{ClrSysID: clearingSystem{Cd: clearingBSB}, MmbID: strings.ReplaceAll(bsb, "-", "")}
	case bank != "" || branch != "":
		if !bankPattern.MatchString(bank) {
			return nil, r.refuse("BankCode", element+"/FinInstnId/ClrSysMmbId/MmbId", fmt.Sprintf("must be 4 digits (got %q)", bank))
		}
		if !branchPattern.MatchString(branch) {
			return nil, r.refuse("BranchCode", element+"/FinInstnId/ClrSysMmbId/MmbId", fmt.Sprintf("must be 3 digits (got %q)", branch))
		}
		fi.ClrSysMmbID = &clearingMember{ClrSysID: clearingSystem{Cd: clearingZengin}, MmbID: bank + branch}
	}
	if fi == (financialInstitution{}) {
		return nil, nil
	}
	return &agent{FinInstnID: fi}, nil
}
