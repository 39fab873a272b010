// Package banktest plays the bank in tests of the bank-file rail: it
// writes the status reports a bank leaves in a rail's inbox (CONTRACT §17:
// pain.002.001.11), valid against the official XSD, so that a sandbox or
// a test can settle a file's transfers as a bank would.
package banktest

import (
	"encoding/xml"
	"strconv"
	"strings"
	"time"
)

// Report is a pain.002.001.11 customer payment status report on one bank
// file of payd's.
type Report struct {
	// MsgID is the report's own id (GrpHdr/MsgId).
	MsgID string
	// File is the bank file's name: OrgnlMsgId is it without its extension
	// (a pain.001's MsgId).
	File string
	// FileReference is the file's reference: its payment information's id
	// (OrgnlPmtInfId), which a report stating Payment names.
	FileReference string
	// Count and CtrlSum are the file's count and sum as the report states
	// them (OrgnlNbOfTxs, OrgnlCtrlSum at both levels); 0 and "" state
	// nothing.
	Count   int
	CtrlSum string
	// GroupStatus (GrpSts) and its Reason; "" states none.
	GroupStatus string
	GroupReason Reason
	// PaymentStatus (PmtInfSts) and its reason; the payment information is
	// written whenever it or a transaction is.
	PaymentStatus string
	PaymentReason Reason
	Transactions  []Transaction
	// CreatedAt is CreDtTm (default 2026-03-02 16:00 Sydney).
	CreatedAt time.Time
}

// Transaction is one transfer's status (TxInfAndSts).
type Transaction struct {
	// Reference is the transfer's bank reference (OrgnlEndToEndId).
	Reference string
	Status    string
	Reason    Reason
}

// Reason is a status's StsRsnInf: the reason code (Rsn/Cd) and its text
// (AddtlInf); both empty write none.
type Reason struct {
	Code, Text string
}

// Namespace is pain.002.001.11's.
const Namespace = "urn:iso:std:iso:20022:tech:xsd:pain.002.001.11"

type document struct {
	XMLName xml.Name `xml:"Document"`
	Xmlns   string   `xml:"xmlns,attr"`
	Report  struct {
		GrpHdr struct {
			MsgID   string `xml:"MsgId"`
			CreDtTm string `xml:"CreDtTm"`
		} `xml:"GrpHdr"`
		Group struct {
			OrgnlMsgID   string   `xml:"OrgnlMsgId"`
			OrgnlMsgNmID string   `xml:"OrgnlMsgNmId"`
			OrgnlNbOfTxs string   `xml:"OrgnlNbOfTxs,omitempty"`
			OrgnlCtrlSum string   `xml:"OrgnlCtrlSum,omitempty"`
			GrpSts       string   `xml:"GrpSts,omitempty"`
			StsRsnInf    []reason `xml:"StsRsnInf"`
		} `xml:"OrgnlGrpInfAndSts"`
		Payments []payment `xml:"OrgnlPmtInfAndSts"`
	} `xml:"CstmrPmtStsRpt"`
}

type payment struct {
	OrgnlPmtInfID string        `xml:"OrgnlPmtInfId"`
	OrgnlNbOfTxs  string        `xml:"OrgnlNbOfTxs,omitempty"`
	OrgnlCtrlSum  string        `xml:"OrgnlCtrlSum,omitempty"`
	PmtInfSts     string        `xml:"PmtInfSts,omitempty"`
	StsRsnInf     []reason      `xml:"StsRsnInf"`
	TxInfAndSts   []transaction `xml:"TxInfAndSts"`
}

type transaction struct {
	OrgnlEndToEndID string   `xml:"OrgnlEndToEndId"`
	TxSts           string   `xml:"TxSts"`
	StsRsnInf       []reason `xml:"StsRsnInf"`
}

type reason struct {
	Rsn *struct {
		Cd string `xml:"Cd"`
	} `xml:"Rsn"`
	AddtlInf string `xml:"AddtlInf,omitempty"`
}

func reasonsOf(r Reason) []reason {
	if r == (Reason{}) {
		return nil
	}
	out := reason{AddtlInf: r.Text}
	if r.Code != "" {
		out.Rsn = &struct {
			Cd string `xml:"Cd"`
		}{Cd: r.Code}
	}
	return []reason{out}
}

// XML is the report as a bank writes it.
func (r Report) XML() []byte {
	var d document
	d.Xmlns = Namespace
	created := r.CreatedAt
	if created.IsZero() {
		created = time.Date(2026, 3, 2, 5, 0, 0, 0, time.UTC)
	}
	d.Report.GrpHdr.MsgID = r.MsgID
	d.Report.GrpHdr.CreDtTm = created.Format(time.RFC3339)
	g := &d.Report.Group
	g.OrgnlMsgID = strings.TrimSuffix(r.File, fileExtension(r.File))
	g.OrgnlMsgNmID = "pain.001.001.10"
	count := ""
	if r.Count > 0 {
		count = strconv.Itoa(r.Count)
	}
	g.OrgnlNbOfTxs, g.OrgnlCtrlSum, g.GrpSts, g.StsRsnInf = count, r.CtrlSum, r.GroupStatus, reasonsOf(r.GroupReason)
	if r.PaymentStatus != "" || len(r.Transactions) > 0 {
		p := payment{OrgnlPmtInfID: r.FileReference, OrgnlNbOfTxs: count, OrgnlCtrlSum: r.CtrlSum, PmtInfSts: r.PaymentStatus,
			StsRsnInf: reasonsOf(r.PaymentReason)}
		for _, t := range r.Transactions {
			p.TxInfAndSts = append(p.TxInfAndSts, transaction{OrgnlEndToEndID: t.Reference, TxSts: t.Status, StsRsnInf: reasonsOf(t.Reason)})
		}
		d.Report.Payments = []payment{p}
	}
	out, err := xml.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err) // the document holds only strings
	}
	return append([]byte(xml.Header), append(out, '\n')...)
}

// fileExtension is the extension of a bank file's name (".aba", ".xml",
// ".txt"), "" for none.
func fileExtension(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[i:]
	}
	return ""
}
