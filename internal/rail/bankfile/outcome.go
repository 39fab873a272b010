package bankfile

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/rail"
	"payd/internal/store"
)

// Evidence is what the bank said of one transfer, known by its bank
// reference, and what said it.
type Evidence struct {
	BankReference string
	Verdict       rail.Verdict
	// Reason is a failure's or a return's reason: the transfer's
	// failure_reason ("<Rsn/Cd> <AddtlInf>" from a pain.002).
	Reason string
	Source Source
}

// Source is what carried evidence, as an exception names it.
type Source struct {
	Kind SourceKind
	// Name is the rail's or the feed's; "" is the transfer's own rail (an
	// operator's word, payd bankfile outcome).
	Name string
	// Document says what said it: "pain.002 STS-0001", "payd bankfile
	// outcome (alice)".
	Document string
	// InboxFile is the SHA-256 of the inbox file that held it, "" for none.
	InboxFile string
}

// Result is what evidence did to its transfer.
type Result struct {
	// Transfer is the transfer, its Status the record's after.
	Transfer Transfer
	Effect   rail.Effect
	// Was is the record's status before.
	Was string
	// Exception is the state_mismatch exception a contrary outcome opened;
	// 0 for none.
	Exception int64
}

// ErrUnknownReference is the failure of evidence whose reference names no
// transfer of a bank-file rail: it changes nothing, and the caller reports
// it (errors.Is).
var ErrUnknownReference = errors.New("no transfer of a bank-file rail has the bank reference")

type unknownReference struct{ ref string }

func (e *unknownReference) Error() string {
	return fmt.Sprintf("no transfer of a bank-file rail has bank reference %s", e.ref)
}
func (e *unknownReference) Is(target error) bool { return target == ErrUnknownReference }

// referenceShape is what a bank reference can look like (CONTRACT §17: at
// most 18 [A-Z0-9]); anything else names no transfer and is not looked up.
var referenceShape = regexp.MustCompile(`^[A-Z0-9]{1,18}$`)

// Outcome applies evidence of one transfer in tx, in the outcome order of
// CONTRACT §25 (rail.Judge): the one function the inbox, payd bankfile
// outcome and the bank feeds apply what the bank says with. It finds the
// transfer's merchant by its reference (global_keys) and hands the outcome
// to the listener of its key, which applies it once; the same outcome again
// changes nothing. A contrary outcome changes nothing either, and opens an
// exception of kind state_mismatch for the operator (in tx, so that it
// commits with the rest of what the caller does). A transfer still waiting
// for its cut-off leaves the waiting set when it is done or failed: it is
// then in no file, ever. A reference that names no transfer of a bank-file
// rail is ErrUnknownReference.
func (f *Files) Outcome(ctx context.Context, tx *store.Tx, ev Evidence) (Result, error) {
	sub, err := findSubmission(ctx, tx, ev.BankReference)
	if err != nil {
		return Result{}, err
	}
	return f.outcome(ctx, tx, sub, ev)
}

// outcome is Outcome of the transfer sub, found already.
func (f *Files) outcome(ctx context.Context, tx *store.Tx, sub submission, ev Evidence) (Result, error) {
	res, err := f.apply(ctx, tx, sub, ev.Verdict, ev.Reason)
	if err != nil || res.Effect != rail.Contrary {
		return res, err
	}
	src := ev.Source
	if src.Name == "" {
		src.Kind, src.Name = SourceRail, sub.rail
	}
	reason := fmt.Sprintf("%s %s of merchant %s is %s: %s says %s", res.Transfer.Type, res.Transfer.UUID, res.Transfer.MerchantID, res.Was,
		src.Document, verdictText(ev.Verdict, ev.Reason))
	res.Exception, err = openStateMismatch(ctx, tx, src, res.Transfer, sub.currency, sub.amount, reason, f.Clock.Now().UnixMilli())
	if err != nil {
		return Result{}, err
	}
	f.Log.Warn("the bank's evidence contradicts a transfer's state: an exception is open for the operator", "exception", res.Exception,
		"bank_reference", sub.bankReference, "reason", reason)
	return res, nil
}

// verdictText is a verdict as an exception's reason tells it.
func verdictText(v rail.Verdict, reason string) string {
	if reason == "" {
		return string(v)
	}
	return fmt.Sprintf("%s (%s)", v, reason)
}

// submission is a transfer of a bank-file rail, as rail_submissions holds it.
type submission struct {
	merchantID, key, rail, currency, bankReference string
	amount                                         int64
}

// findSubmission finds the transfer of a bank-file rail whose bank
// reference is ref.
func findSubmission(ctx context.Context, q store.Querier, ref string) (submission, error) {
	if !referenceShape.MatchString(ref) {
		return submission{}, &unknownReference{ref: fmt.Sprintf("%q", ref)}
	}
	merchantID, err := store.KeyOwner(ctx, q, rail.KeyBankReference, ref)
	if store.IsNoRows(err) {
		return submission{}, &unknownReference{ref: ref}
	}
	if err != nil {
		return submission{}, fmt.Errorf("outcome of %s: %w", ref, err)
	}
	s := submission{merchantID: merchantID, bankReference: ref}
	err = q.QueryRowContext(ctx, `SELECT key, rail, currency, amount FROM rail_submissions WHERE merchant_id = $1 AND bank_reference = $2 AND rail <> $3`,
		merchantID, ref, sandboxRail).Scan(&s.key, &s.rail, &s.currency, &s.amount)
	if store.IsNoRows(err) {
		return submission{}, &unknownReference{ref: ref}
	}
	if err != nil {
		return submission{}, fmt.Errorf("outcome of %s: %w", ref, err)
	}
	return s, nil
}

// apply hands the outcome v of sub to its key's listener, in tx, and says
// what it did; it opens no exception. A done or failed transfer leaves the
// waiting set first (its row locked so, before a cut-off could take it).
func (f *Files) apply(ctx context.Context, tx *store.Tx, sub submission, v rail.Verdict, reason string) (Result, error) {
	c, err := money.Lookup(sub.currency)
	if err != nil {
		return Result{}, err
	}
	typ, uuid := recordOf(sub.key)
	t := Transfer{BankReference: sub.bankReference, Type: typ, MerchantID: sub.merchantID, UUID: uuid, Amount: money.StringOf(sub.amount, c)}
	h := f.handler(sub.key)
	if h == nil {
		return Result{}, fmt.Errorf("outcome of %s: nobody listens to %s", sub.bankReference, sub.key)
	}
	if v != rail.Returned {
		if err := tx.Send(ctx, `UPDATE rail_submissions SET waiting = $1 WHERE merchant_id = $2 AND key = $3 AND waiting`,
			false, sub.merchantID, sub.key); err != nil {
			return Result{}, fmt.Errorf("outcome of %s: %w", sub.bankReference, err)
		}
	}
	applied, err := h(ctx, tx, rail.Outcome{Key: sub.key, MerchantID: sub.merchantID, Verdict: v, Reason: reason})
	if err != nil {
		return Result{}, fmt.Errorf("outcome of %s: %w", sub.bankReference, err)
	}
	t.Status = applied.Status
	return Result{Transfer: t, Effect: applied.Effect, Was: applied.Was}, nil
}

// Confirmed is what a file's confirmation did to its transfers.
type Confirmed struct {
	File string `json:"file"`
	// Done counts the transfers it made done; Already those done before;
	// Left those failed or returned, which it left as they are.
	Done    int `json:"done"`
	Already int `json:"already"`
	Left    int `json:"left"`
}

// ConfirmFile applies a booked debit of the bank file name's reference
// (CONTRACT §25: banks book an ABA or Zengin file as one debit): every
// transfer of the file still pending is done, in tx; a done one stays done,
// and a failed or returned one is left as it is (the debit confirms what
// the bank paid of the file, not what it refused), with no exception. The
// transfers are taken in the order of their merchants, so that two
// confirmations lock the merchants' accounts in one order.
func (f *Files) ConfirmFile(ctx context.Context, tx *store.Tx, name string) (Confirmed, error) {
	var exists int
	// global lookup: bank_files are operator records, no merchant's.
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM bank_files WHERE name = $1`, name).Scan(&exists)
	if store.IsNoRows(err) {
		return Confirmed{}, fault.NotFoundf("no bank file %s", name)
	}
	if err != nil {
		return Confirmed{}, fmt.Errorf("confirm bank file %s: %w", name, err)
	}
	subs, err := fileSubmissions(ctx, tx, name)
	if err != nil {
		return Confirmed{}, err
	}
	out := Confirmed{File: name}
	for _, sub := range subs {
		res, err := f.apply(ctx, tx, sub, rail.Done, "")
		if err != nil {
			return Confirmed{}, err
		}
		switch res.Effect {
		case rail.Changed:
			out.Done++
		case rail.Same:
			out.Already++
		default:
			out.Left++
		}
	}
	return out, nil
}

// fileSubmissions are the transfers of the bank file name, by merchant and
// key.
func fileSubmissions(ctx context.Context, q store.Querier, name string) ([]submission, error) {
	// spans merchants: a file holds every merchant's transfers of its cut-off.
	rows, err := q.QueryContext(ctx, `SELECT merchant_id, key, rail, currency, bank_reference, amount FROM rail_submissions WHERE bank_file = $1
		ORDER BY merchant_id, key`, name)
	if err != nil {
		return nil, fmt.Errorf("read the transfers of %s: %w", name, err)
	}
	defer rows.Close()
	var out []submission
	for rows.Next() {
		var s submission
		if err := rows.Scan(&s.merchantID, &s.key, &s.rail, &s.currency, &s.bankReference, &s.amount); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// FileByReference is the name of the bank file whose file reference is ref
// (a booked debit names a file so), or "" when none is.
func FileByReference(ctx context.Context, q store.Querier, ref string) (string, error) {
	var name string
	// global lookup: bank_files are operator records, no merchant's.
	err := q.QueryRowContext(ctx, `SELECT name FROM bank_files WHERE file_reference = $1`, ref).Scan(&name)
	if store.IsNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the bank file of reference %s: %w", ref, err)
	}
	return name, nil
}
