package iso20022

import (
	"fmt"
	"strconv"
	"time"

	"payd/internal/money"
	"payd/internal/payfile"
)

// ReadPain001 reads a pain.001.001.10 file of the shape WritePain001 writes
// back into the File it holds, so that a test can check a written file holds
// exactly its credits: names, amounts, references and totals. Its NbOfTxs
// and CtrlSum (of the group and of the payment) must agree with its credits,
// and it must be what a File can say: one PmtInf, credit transfers (TRF)
// booked one by one, one currency, an execution date that is CreDtTm's own
// date. The Location is CreDtTm's offset as a fixed zone (the file does not
// name the rail's zone), so writing the File again gives the same bytes.
func ReadPain001(data []byte) (payfile.File, error) {
	var doc pain001Document
	if err := decodeDocument(data, NamespacePain001, &doc); err != nil {
		return payfile.File{}, fmt.Errorf("read pain.001: %w", err)
	}
	f, err := fileOf(doc.Initiation)
	if err != nil {
		return payfile.File{}, fmt.Errorf("read pain.001 %s: %w", doc.Initiation.GrpHdr.MsgID, err)
	}
	return f, nil
}

func fileOf(in pain001Initiation) (payfile.File, error) {
	if len(in.PmtInf) != 1 {
		return payfile.File{}, fmt.Errorf("%d PmtInf, want 1", len(in.PmtInf))
	}
	pi := in.PmtInf[0]
	if pi.PmtMtd != "TRF" || pi.BtchBookg != "false" {
		return payfile.File{}, fmt.Errorf("PmtMtd %q BtchBookg %q, want TRF false", pi.PmtMtd, pi.BtchBookg)
	}
	created, err := time.Parse(dateTimeLayout, in.GrpHdr.CreDtTm)
	if err != nil {
		return payfile.File{}, fmt.Errorf("CreDtTm: %w", err)
	}
	_, offset := created.Zone()
	loc := time.FixedZone("", offset)
	if got, want := pi.ReqdExctnDt.Dt, created.In(loc).Format(dateLayout); got != want {
		return payfile.File{}, fmt.Errorf("ReqdExctnDt %q, not CreDtTm's date %q", got, want)
	}
	debtor, err := debtorFrom(in.GrpHdr.InitgPty, pi)
	if err != nil {
		return payfile.File{}, err
	}
	currency, credits, err := creditsFrom(pi.CdtTrfTxInf)
	if err != nil {
		return payfile.File{}, err
	}
	f := payfile.File{
		Name:      in.GrpHdr.MsgID,
		Reference: pi.PmtInfID,
		CreatedAt: created.In(loc),
		Location:  loc,
		Currency:  currency,
		Debtor:    debtor,
		Credits:   credits,
	}
	if err := checkTotals(f, "GrpHdr", in.GrpHdr.NbOfTxs, in.GrpHdr.CtrlSum); err != nil {
		return payfile.File{}, err
	}
	if err := checkTotals(f, "PmtInf", pi.NbOfTxs, pi.CtrlSum); err != nil {
		return payfile.File{}, err
	}
	return f, nil
}

// checkTotals refuses a NbOfTxs or CtrlSum that is not the credits'.
func checkTotals(f payfile.File, where, count, ctrlSum string) error {
	if count != strconv.Itoa(len(f.Credits)) {
		return fmt.Errorf("%s/NbOfTxs %q, but %d credits", where, count, len(f.Credits))
	}
	cur := money.MustLookup(f.Currency)
	sum, err := exactAmount(ctrlSum, cur)
	if err != nil {
		return fmt.Errorf("%s/CtrlSum: %w", where, err)
	}
	if sum != f.Total() {
		return fmt.Errorf("%s/CtrlSum %s, but the credits sum to %s", where, ctrlSum, money.Format(f.Total(), cur))
	}
	return nil
}

// exactAmount is a decimal's minor units in cur, refusing one with more
// decimals than the currency has (never rounded, never a float).
func exactAmount(text string, cur money.Currency) (int64, error) {
	minor, rounded, err := money.Parse(text, cur)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", text, err)
	}
	if rounded {
		return 0, fmt.Errorf("%q has more decimals than %s", text, cur.Code)
	}
	return minor, nil
}

func debtorFrom(initiator party, pi paymentInstruction) (payfile.Debtor, error) {
	if initiator.Nm != pi.Dbtr.Nm {
		return payfile.Debtor{}, fmt.Errorf("InitgPty/Nm %q is not Dbtr/Nm %q", initiator.Nm, pi.Dbtr.Nm)
	}
	d := payfile.Debtor{Name: pi.Dbtr.Nm, Account: pi.DbtrAcct.ID.Othr.ID}
	if initiator.ID != nil {
		if len(initiator.ID.OrgID.Othr) != 1 {
			return payfile.Debtor{}, fmt.Errorf("InitgPty: %d organisation ids, want 1", len(initiator.ID.OrgID.Othr))
		}
		d.OriginatorID = initiator.ID.OrgID.Othr[0].ID
	}
	if pi.DbtrAcct.Prxy != nil {
		return payfile.Debtor{}, fmt.Errorf("DbtrAcct/Prxy: a debtor account is not a proxy")
	}
	var err error
	if d.AccountType, err = accountTypeFrom(pi.DbtrAcct.Tp); err != nil {
		return payfile.Debtor{}, fmt.Errorf("DbtrAcct: %w", err)
	}
	ids, err := agentFrom(&pi.DbtrAgt)
	if err != nil {
		return payfile.Debtor{}, fmt.Errorf("DbtrAgt: %w", err)
	}
	d.BIC, d.BSB, d.BankCode, d.BranchCode = ids.bic, ids.bsb, ids.bank, ids.branch
	return d, nil
}

// creditsFrom reads the credit transfers and their one currency.
func creditsFrom(txs []creditTransfer) (string, []payfile.Credit, error) {
	if len(txs) == 0 {
		return "", nil, fmt.Errorf("no CdtTrfTxInf")
	}
	code := txs[0].Amt.InstdAmt.Ccy
	cur, err := money.Lookup(code)
	if err != nil {
		return "", nil, fmt.Errorf("InstdAmt/@Ccy: %w", err)
	}
	credits := make([]payfile.Credit, 0, len(txs))
	for i, tx := range txs {
		c, err := creditFrom(tx, cur)
		if err != nil {
			return "", nil, fmt.Errorf("CdtTrfTxInf %d (%s): %w", i, tx.PmtID.EndToEndID, err)
		}
		credits = append(credits, c)
	}
	return code, credits, nil
}

func creditFrom(tx creditTransfer, cur money.Currency) (payfile.Credit, error) {
	if tx.Amt.InstdAmt.Ccy != cur.Code {
		return payfile.Credit{}, fmt.Errorf("InstdAmt/@Ccy %s in a %s file", tx.Amt.InstdAmt.Ccy, cur.Code)
	}
	minor, err := exactAmount(tx.Amt.InstdAmt.Value, cur)
	if err != nil {
		return payfile.Credit{}, fmt.Errorf("InstdAmt: %w", err)
	}
	c := payfile.Credit{
		BankReference: tx.PmtID.EndToEndID,
		AmountMinor:   minor,
		Name:          tx.Cdtr.Nm,
		Account:       tx.CdtrAcct.ID.Othr.ID,
	}
	if tx.CdtrAcct.Prxy != nil {
		if c.Account != noAccount {
			return payfile.Credit{}, fmt.Errorf("CdtrAcct: both an account %q and a proxy", c.Account)
		}
		c.Account, c.PayID = "", tx.CdtrAcct.Prxy.ID
	}
	if c.AccountType, err = accountTypeFrom(tx.CdtrAcct.Tp); err != nil {
		return payfile.Credit{}, fmt.Errorf("CdtrAcct: %w", err)
	}
	ids, err := agentFrom(tx.CdtrAgt)
	if err != nil {
		return payfile.Credit{}, fmt.Errorf("CdtrAgt: %w", err)
	}
	c.BIC, c.BSB, c.BankCode, c.BranchCode = ids.bic, ids.bsb, ids.bank, ids.branch
	if tx.UltmtDbtr != nil {
		c.Remitter = tx.UltmtDbtr.Nm
	}
	if tx.RmtInf != nil {
		if len(tx.RmtInf.Ustrd) != 1 {
			return payfile.Credit{}, fmt.Errorf("RmtInf: %d Ustrd, want 1", len(tx.RmtInf.Ustrd))
		}
		c.Description = tx.RmtInf.Ustrd[0]
	}
	return c, nil
}

func accountTypeFrom(tp *accountType) (payfile.AccountType, error) {
	if tp == nil {
		return "", nil
	}
	for t, code := range accountTypeCodes {
		if code == tp.Cd {
			return t, nil
		}
	}
	return "", fmt.Errorf("Tp/Cd %q is not an account type payd writes", tp.Cd)
}

// agentIDs are an agent's identifiers as payfile holds them.
type agentIDs struct {
	bic, bsb, bank, branch string
}

func agentFrom(a *agent) (agentIDs, error) {
	if a == nil {
		return agentIDs{}, nil
	}
	ids := agentIDs{bic: a.FinInstnID.BICFI}
	m := a.FinInstnID.ClrSysMmbID
	switch {
	case m == nil:
	case m.ClrSysID.Cd == clearingBSB && len(m.MmbID) == 6:
		ids.bsb = m.MmbID[:3] + "-" + m.MmbID[3:]
	case m.ClrSysID.Cd == clearingZengin && len(m.MmbID) == 7:
		ids.bank, ids.branch = m.MmbID[:4], m.MmbID[4:]
	default:
		return agentIDs{}, fmt.Errorf("ClrSysMmbId %s %q is not a BSB or a Zengin bank and branch", m.ClrSysID.Cd, m.MmbID)
	}
	return ids, nil
}
