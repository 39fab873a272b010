package iso20022

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrCounts means a status report's counts disagree with each other or with
// the transactions it lists. Such a report is refused whole (CONTRACT §17):
// nothing of it can be trusted to be the bank's whole answer.
var ErrCounts = errors.New("status report counts disagree")

// StatusReport is a pain.002.001.11 customer payment status report: the
// bank's answer about one pain.001 file (OriginalMsgID, its MsgId, which is
// the file's name), at the group level, per payment information (the
// file's PmtInfId is its file reference) and per transaction (OrgnlEndToEndId
// is a transfer's bank reference).
type StatusReport struct {
	MsgID string
	// CreatedAt is the report's CreDtTm; one without a zone is read as UTC.
	CreatedAt time.Time
	// OriginalMsgID and OriginalMsgNameID name the message reported on
	// (OrgnlMsgId, and OrgnlMsgNmId: pain.001.001.10).
	OriginalMsgID     string
	OriginalMsgNameID string
	// OriginalCount and OriginalCtrlSum are the original message's NbOfTxs
	// and CtrlSum as the report states them: 0 and "" when it does not.
	OriginalCount   int64
	OriginalCtrlSum string
	// GroupStatus is GrpSts, "" when the report gives none; GroupReason its
	// StsRsnInf.
	GroupStatus  Status
	GroupReason  Reason
	Payments     []PaymentStatus
	Transactions []TransactionStatus
}

// PaymentStatus is one OrgnlPmtInfAndSts: a payment information's status.
type PaymentStatus struct {
	// InfoID is OrgnlPmtInfId: the file reference of a payd file.
	InfoID string
	// OriginalCount and OriginalCtrlSum are as StatusReport's, for this
	// payment information.
	OriginalCount   int64
	OriginalCtrlSum string
	// Status is PmtInfSts, "" when the report gives none.
	Status Status
	Reason Reason
}

// TransactionStatus is one TxInfAndSts: a transaction's status.
type TransactionStatus struct {
	// PaymentInfoID is the OrgnlPmtInfId it is reported under.
	PaymentInfoID string
	// EndToEndID is OrgnlEndToEndId: a transfer's bank reference.
	EndToEndID string
	Status     Status
	Reason     Reason
}

// Reason is a status's StsRsnInf: the reason code (Rsn/Cd, or Rsn/Prtry)
// and the additional information. When a status gives several reasons, Code
// is the first's and Text holds the first's AddtlInf followed by each later
// reason's code and AddtlInf, so that nothing the bank said is lost.
type Reason struct {
	Code string
	Text string
}

// FailureReason is a failed transfer's failure_reason (CONTRACT §25):
// "<Rsn/Cd> <AddtlInf>", or whichever of the two the report gives.
func (r Reason) FailureReason() string {
	return joinNonEmpty(r.Code, r.Text)
}

// The elements of pain.002.001.11 payd reads. Optional elements are
// pointers, so that a count the report does not state is told from one it
// states wrongly.
type pain002Document struct {
	Report *pain002Report `xml:"CstmrPmtStsRpt"`
}

type pain002Report struct {
	GrpHdr struct {
		MsgID   string `xml:"MsgId"`
		CreDtTm string `xml:"CreDtTm"`
	} `xml:"GrpHdr"`
	OrgnlGrpInfAndSts *originalGroup    `xml:"OrgnlGrpInfAndSts"`
	OrgnlPmtInfAndSts []originalPayment `xml:"OrgnlPmtInfAndSts"`
}

type originalGroup struct {
	OrgnlMsgID    string         `xml:"OrgnlMsgId"`
	OrgnlMsgNmID  string         `xml:"OrgnlMsgNmId"`
	OrgnlNbOfTxs  *string        `xml:"OrgnlNbOfTxs"`
	OrgnlCtrlSum  *string        `xml:"OrgnlCtrlSum"`
	GrpSts        *string        `xml:"GrpSts"`
	StsRsnInf     []statusReason `xml:"StsRsnInf"`
	NbOfTxsPerSts []perStatus    `xml:"NbOfTxsPerSts"`
}

type originalPayment struct {
	OrgnlPmtInfID string              `xml:"OrgnlPmtInfId"`
	OrgnlNbOfTxs  *string             `xml:"OrgnlNbOfTxs"`
	OrgnlCtrlSum  *string             `xml:"OrgnlCtrlSum"`
	PmtInfSts     *string             `xml:"PmtInfSts"`
	StsRsnInf     []statusReason      `xml:"StsRsnInf"`
	NbOfTxsPerSts []perStatus         `xml:"NbOfTxsPerSts"`
	TxInfAndSts   []transactionReport `xml:"TxInfAndSts"`
}

type transactionReport struct {
	OrgnlEndToEndID *string        `xml:"OrgnlEndToEndId"`
	TxSts           *string        `xml:"TxSts"`
	StsRsnInf       []statusReason `xml:"StsRsnInf"`
}

type statusReason struct {
	Rsn *struct {
		Cd    string `xml:"Cd"`
		Prtry string `xml:"Prtry"`
	} `xml:"Rsn"`
	AddtlInf []string `xml:"AddtlInf"`
}

type perStatus struct {
	DtldNbOfTxs string  `xml:"DtldNbOfTxs"`
	DtldSts     string  `xml:"DtldSts"`
	DtldCtrlSum *string `xml:"DtldCtrlSum"`
}

// ReadPain002 reads a pain.002.001.11 status report. A document in another
// namespace (pain.002.001.03, …) is refused with ErrNamespace; one whose
// counts disagree (CONTRACT §17: "fails its own totals") with ErrCounts; one
// missing what payd needs to apply it (the original message id, a
// transaction's end-to-end id and status), carrying a status code outside
// the ISO 20022 code sets, or naming a transaction twice, with an error
// saying which. It reads the members payd uses: schema validation is the
// XSD's (the tests run every fixture through it).
//
// The counts checked, at each level that states them: the transactions
// listed are no more than NbOfTxs, and no more per status than
// NbOfTxsPerSts says; NbOfTxsPerSts sums to NbOfTxs and its DtldCtrlSums
// to CtrlSum; the payment informations' NbOfTxs and CtrlSum sum to the
// group's. A report may list only some transactions (the rejected ones,
// say): the counts then describe the whole original file.
func ReadPain002(data []byte) (StatusReport, error) {
	var doc pain002Document
	if err := decodeDocument(data, NamespacePain002, &doc); err != nil {
		return StatusReport{}, fmt.Errorf("read pain.002: %w", err)
	}
	if doc.Report == nil {
		return StatusReport{}, errors.New("read pain.002: no CstmrPmtStsRpt")
	}
	r, err := reportOf(doc.Report)
	if err != nil {
		return StatusReport{}, fmt.Errorf("read pain.002 %s: %w", doc.Report.GrpHdr.MsgID, err)
	}
	return r, nil
}

func reportOf(in *pain002Report) (StatusReport, error) {
	if in.GrpHdr.MsgID == "" {
		return StatusReport{}, errors.New("no GrpHdr/MsgId")
	}
	created, err := reportTime(in.GrpHdr.CreDtTm)
	if err != nil {
		return StatusReport{}, fmt.Errorf("GrpHdr/CreDtTm: %w", err)
	}
	g := in.OrgnlGrpInfAndSts
	if g == nil || g.OrgnlMsgID == "" {
		return StatusReport{}, errors.New("no OrgnlGrpInfAndSts/OrgnlMsgId")
	}
	if g.OrgnlMsgNmID == "" {
		return StatusReport{}, errors.New("no OrgnlGrpInfAndSts/OrgnlMsgNmId")
	}
	if !strings.HasPrefix(g.OrgnlMsgNmID, "pain.001.") {
		return StatusReport{}, fmt.Errorf("OrgnlMsgNmId %q: not a report on a pain.001", g.OrgnlMsgNmID)
	}
	r := StatusReport{MsgID: in.GrpHdr.MsgID, CreatedAt: created, OriginalMsgID: g.OrgnlMsgID, OriginalMsgNameID: g.OrgnlMsgNmID}
	if r.GroupStatus, err = statusOf(g.GrpSts); err != nil {
		return StatusReport{}, fmt.Errorf("GrpSts: %w", err)
	}
	r.GroupReason = reasonOf(g.StsRsnInf)
	group, err := countsOf("OrgnlGrpInfAndSts", g.OrgnlNbOfTxs, g.OrgnlCtrlSum, g.NbOfTxsPerSts)
	if err != nil {
		return StatusReport{}, err
	}
	r.OriginalCount, r.OriginalCtrlSum = group.stated()
	payments := make([]counts, 0, len(in.OrgnlPmtInfAndSts))
	for _, p := range in.OrgnlPmtInfAndSts {
		c, err := r.addPayment(p)
		if err != nil {
			return StatusReport{}, err
		}
		payments = append(payments, c)
	}
	if err := checkGroupCounts(group, payments, r.Transactions); err != nil {
		return StatusReport{}, err
	}
	return r, nil
}

// addPayment reads one OrgnlPmtInfAndSts and its transactions into r and
// checks its own counts.
func (r *StatusReport) addPayment(p originalPayment) (counts, error) {
	where := fmt.Sprintf("OrgnlPmtInfAndSts %s", p.OrgnlPmtInfID)
	if p.OrgnlPmtInfID == "" {
		return counts{}, errors.New("an OrgnlPmtInfAndSts without OrgnlPmtInfId")
	}
	for _, seen := range r.Payments {
		if seen.InfoID == p.OrgnlPmtInfID {
			return counts{}, fmt.Errorf("%s: reported twice", where)
		}
	}
	status, err := statusOf(p.PmtInfSts)
	if err != nil {
		return counts{}, fmt.Errorf("%s: PmtInfSts: %w", where, err)
	}
	c, err := countsOf(where, p.OrgnlNbOfTxs, p.OrgnlCtrlSum, p.NbOfTxsPerSts)
	if err != nil {
		return counts{}, err
	}
	ps := PaymentStatus{InfoID: p.OrgnlPmtInfID, Status: status, Reason: reasonOf(p.StsRsnInf)}
	ps.OriginalCount, ps.OriginalCtrlSum = c.stated()
	r.Payments = append(r.Payments, ps)
	first := len(r.Transactions)
	for i, tx := range p.TxInfAndSts {
		t, err := transactionOf(p.OrgnlPmtInfID, tx)
		if err != nil {
			return counts{}, fmt.Errorf("%s: TxInfAndSts %d: %w", where, i, err)
		}
		if r.hasTransaction(t.EndToEndID) {
			return counts{}, fmt.Errorf("%s: OrgnlEndToEndId %s reported twice", where, t.EndToEndID)
		}
		r.Transactions = append(r.Transactions, t)
	}
	return c, c.checkListed(r.Transactions[first:])
}

func (r *StatusReport) hasTransaction(endToEndID string) bool {
	for _, t := range r.Transactions {
		if t.EndToEndID == endToEndID {
			return true
		}
	}
	return false
}

func transactionOf(infoID string, tx transactionReport) (TransactionStatus, error) {
	if tx.OrgnlEndToEndID == nil || *tx.OrgnlEndToEndID == "" {
		return TransactionStatus{}, errors.New("no OrgnlEndToEndId")
	}
	if tx.TxSts == nil {
		return TransactionStatus{}, fmt.Errorf("%s: no TxSts", *tx.OrgnlEndToEndID)
	}
	status, err := statusOf(tx.TxSts)
	if err != nil {
		return TransactionStatus{}, fmt.Errorf("%s: TxSts: %w", *tx.OrgnlEndToEndID, err)
	}
	return TransactionStatus{PaymentInfoID: infoID, EndToEndID: *tx.OrgnlEndToEndID, Status: status, Reason: reasonOf(tx.StsRsnInf)}, nil
}

// statusOf is a stated status code, or "" when none is stated.
func statusOf(code *string) (Status, error) {
	if code == nil {
		return "", nil
	}
	s := Status(*code)
	if !statuses[s] {
		return "", fmt.Errorf("%q is not an ISO 20022 payment status", *code)
	}
	return s, nil
}

func reasonOf(infos []statusReason) Reason {
	var r Reason
	var text []string
	for i, info := range infos {
		code := ""
		if info.Rsn != nil {
			code = joinNonEmpty(info.Rsn.Cd, info.Rsn.Prtry)
		}
		if i == 0 {
			r.Code = code
		} else if code != "" {
			text = append(text, code)
		}
		text = append(text, info.AddtlInf...)
	}
	r.Text = joinNonEmpty(text...)
	return r
}

func joinNonEmpty(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

// reportTime reads an ISODateTime: with a zone (RFC 3339), or without one,
// as many banks write it, read as UTC.
func reportTime(text string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05.999999999", text)
}

// counts are what one level of a report states of the original message's
// transactions: how many, their control sum, and how many (and how much)
// per status. Nil members are not stated.
type counts struct {
	where        string
	count        *int64
	ctrlSum      *big.Rat
	ctrlSumText  string
	perStatus    map[Status]int64
	perStatusSum *big.Rat
}

var (
	countPattern   = regexp.MustCompile(`^[0-9]{1,15}$`)
	decimalPattern = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)
)

func countsOf(where string, count, ctrlSum *string, perStatus []perStatus) (counts, error) {
	c := counts{where: where}
	var err error
	if c.count, err = countOf(count); err != nil {
		return counts{}, fmt.Errorf("%s: OrgnlNbOfTxs: %w", where, err)
	}
	if c.ctrlSum, err = decimalOf(ctrlSum); err != nil {
		return counts{}, fmt.Errorf("%s: OrgnlCtrlSum: %w", where, err)
	}
	if ctrlSum != nil {
		c.ctrlSumText = *ctrlSum
	}
	if len(perStatus) == 0 {
		return c, nil
	}
	c.perStatus = make(map[Status]int64, len(perStatus))
	c.perStatusSum = new(big.Rat)
	for _, ps := range perStatus {
		if err := c.addPerStatus(ps); err != nil {
			return counts{}, fmt.Errorf("%s: NbOfTxsPerSts %s: %w", where, ps.DtldSts, err)
		}
	}
	return c, c.checkPerStatus()
}

func (c *counts) addPerStatus(ps perStatus) error {
	status, err := statusOf(&ps.DtldSts)
	if err != nil {
		return err
	}
	if _, twice := c.perStatus[status]; twice {
		return errors.New("stated twice")
	}
	n, err := countOf(&ps.DtldNbOfTxs)
	if err != nil {
		return fmt.Errorf("DtldNbOfTxs: %w", err)
	}
	c.perStatus[status] = *n
	sum, err := decimalOf(ps.DtldCtrlSum)
	switch {
	case err != nil:
		return fmt.Errorf("DtldCtrlSum: %w", err)
	case sum == nil:
		c.perStatusSum = nil // one status without a sum: the sums cannot be checked
	case c.perStatusSum != nil:
		c.perStatusSum.Add(c.perStatusSum, sum)
	}
	return nil
}

// checkPerStatus checks NbOfTxsPerSts against NbOfTxs and CtrlSum.
func (c counts) checkPerStatus() error {
	var sum int64
	for _, n := range c.perStatus {
		sum += n
	}
	if c.count != nil && sum != *c.count {
		return fmt.Errorf("%s: NbOfTxsPerSts counts %d transactions, OrgnlNbOfTxs %d: %w", c.where, sum, *c.count, ErrCounts)
	}
	if c.ctrlSum != nil && c.perStatusSum != nil && c.ctrlSum.Cmp(c.perStatusSum) != 0 {
		return fmt.Errorf("%s: the DtldCtrlSums sum to %s, OrgnlCtrlSum is %s: %w", c.where, decimalText(c.perStatusSum), c.ctrlSumText, ErrCounts)
	}
	return nil
}

// checkListed checks the transactions a level lists against its counts.
func (c counts) checkListed(listed []TransactionStatus) error {
	if c.count != nil && int64(len(listed)) > *c.count {
		return fmt.Errorf("%s: %d transactions listed, OrgnlNbOfTxs %d: %w", c.where, len(listed), *c.count, ErrCounts)
	}
	if c.perStatus == nil {
		return nil
	}
	byStatus := make(map[Status]int64)
	for _, t := range listed {
		byStatus[t.Status]++
	}
	for status, n := range byStatus {
		if stated := c.perStatus[status]; n > stated {
			return fmt.Errorf("%s: %d transactions listed %s, NbOfTxsPerSts says %d: %w", c.where, n, status, stated, ErrCounts)
		}
	}
	return nil
}

// stated are the count and control sum as StatusReport shows them.
func (c counts) stated() (int64, string) {
	if c.count == nil {
		return 0, c.ctrlSumText
	}
	return *c.count, c.ctrlSumText
}

// checkGroupCounts checks the group's counts against everything listed and
// against the payment informations' own counts when each states them.
func checkGroupCounts(group counts, payments []counts, listed []TransactionStatus) error {
	if err := group.checkListed(listed); err != nil {
		return err
	}
	if len(payments) == 0 {
		return nil
	}
	var count int64
	sum := new(big.Rat)
	allCounts, allSums := true, true
	for _, p := range payments {
		if p.count == nil {
			allCounts = false
		} else {
			count += *p.count
		}
		if p.ctrlSum == nil {
			allSums = false
		} else {
			sum.Add(sum, p.ctrlSum)
		}
	}
	if group.count != nil && allCounts && count != *group.count {
		return fmt.Errorf("the payment informations count %d transactions, OrgnlGrpInfAndSts %d: %w", count, *group.count, ErrCounts)
	}
	if group.ctrlSum != nil && allSums && sum.Cmp(group.ctrlSum) != 0 {
		return fmt.Errorf("the payment informations sum to %s, OrgnlGrpInfAndSts to %s: %w", decimalText(sum), group.ctrlSumText, ErrCounts)
	}
	return nil
}

func countOf(text *string) (*int64, error) {
	if text == nil {
		return nil, nil
	}
	if !countPattern.MatchString(*text) {
		return nil, fmt.Errorf("%q is not a count", *text)
	}
	n, err := strconv.ParseInt(*text, 10, 64)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// decimalOf is a DecimalNumber, exactly (never a float).
func decimalOf(text *string) (*big.Rat, error) {
	if text == nil {
		return nil, nil
	}
	if !decimalPattern.MatchString(*text) {
		return nil, fmt.Errorf("%q is not a decimal", *text)
	}
	r, ok := new(big.Rat).SetString(strings.TrimSuffix(*text, "."))
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal", *text)
	}
	return r, nil
}

// decimalText writes an exact decimal without trailing zeros (the sums
// compared are of decimals of at most 17 fraction digits).
func decimalText(r *big.Rat) string {
	text := r.FloatString(17)
	return strings.TrimSuffix(strings.TrimRight(text, "0"), ".")
}
