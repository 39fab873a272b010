package feed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/rail"
	"payd/internal/rail/bankfile"
	"payd/internal/statement"
	"payd/internal/store"
)

// Effect is what an entry did, as feed_entries and inbox_entries record it.
type Effect string

const (
	EffectPayin          Effect = "payin"
	EffectPaymentRequest Effect = "payment_request"
	EffectStaticPayID    Effect = "static_payid"
	EffectDeposit        Effect = "deposit"
	EffectTransfer       Effect = "transfer"
	EffectBankFile       Effect = "bank_file"
	// EffectException: the entry is an exception for the operator.
	EffectException Effect = "exception"
	// EffectDuplicate: an entry of its key was applied in its account
	// before (a notification, then the statement): nothing applied twice.
	EffectDuplicate Effect = "duplicate"
)

// result is what applying an entry did: its effect, the record it moved
// (type, merchant, id) or the exception it opened.
type result struct {
	effect                      Effect
	recordType, owner, recordID string
	exception                   int64
}

// maxTokens bounds the words of a remittance text that are looked up.
const maxTokens = 32

// tokens are what an entry's credit may be addressed to: details (the
// credited account and proxy, then the words of the remittance text, as
// payment details, PayIDs and account numbers are written) and the
// remittance's alphanumeric runs (CONTRACT §25: "split on
// non-alphanumerics, any case"), where a payin's uuid is looked for.
type tokens struct {
	proxy          string
	details, alnum []string
}

func tokensOf(e statement.Entry) tokens {
	t := tokens{proxy: strings.ToLower(strings.TrimSpace(e.CreditedProxy))}
	add := func(list *[]string, s string) {
		if s == "" || len(*list) >= maxTokens || utf8.RuneCountInString(s) > 254 || containsString(*list, s) {
			return
		}
		*list = append(*list, s)
	}
	add(&t.details, e.CreditedAccount)
	add(&t.details, e.CreditedProxy)
	for _, w := range strings.FieldsFunc(e.Remittance, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;:/()[]<>\"'", r) }) {
		add(&t.details, strings.TrimRight(w, ".!?"))
	}
	for _, w := range strings.FieldsFunc(e.Remittance, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		add(&t.alnum, strings.ToLower(w))
	}
	return t
}

// match applies a booked entry where it belongs, in §18's order (CONTRACT
// §18, §25): a return or a debit naming a transfer's bank reference (or a
// debit of a file's reference) goes to the bank-file rail's outcome
// function; a credit to a payin, else a PayID, else a treasury account;
// anything else is an exception.
func (s *Service) match(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry) (result, error) {
	switch {
	case e.Return:
		ref := e.ReturnedReference
		if ref == "" {
			ref = e.Reference
		}
		reason := e.ReturnReason
		if reason == "" {
			reason = "returned by the bank (" + f.Name + " entry " + e.Key + ")"
		}
		return s.transferOutcome(ctx, tx, f, sha, e, ref, rail.Returned, reason)
	case e.Direction == statement.Debit:
		return s.debit(ctx, tx, f, sha, e, e.Reference)
	}
	return s.credit(ctx, tx, f, sha, e)
}

// debit applies a booked debit naming ref: a bank file's reference (banks
// book an ABA or Zengin file as one debit) confirms the file's transfers,
// a transfer's bank reference confirms it done.
func (s *Service) debit(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, ref string) (result, error) {
	if s.Files == nil || ref == "" {
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, "a debit that names no bank reference of a transfer or file")
	}
	name, err := bankfile.FileByReference(ctx, tx, ref)
	if err != nil {
		return result{}, err
	}
	if name != "" {
		if _, err := s.Files.ConfirmFile(ctx, tx, name); err != nil {
			return result{}, err
		}
		return result{effect: EffectBankFile, recordType: "bank_file", recordID: name}, nil
	}
	return s.transferOutcome(ctx, tx, f, sha, e, ref, rail.Done, "")
}

// transferOutcome applies the bank's word v on the transfer of bank
// reference ref through the bank-file rail's outcome function: a contrary
// word opens its state_mismatch exception there, an unknown reference is
// unmatched here.
func (s *Service) transferOutcome(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, ref string, v rail.Verdict, reason string) (result, error) {
	if s.Files == nil || ref == "" {
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, "names no bank reference of a transfer")
	}
	res, err := s.Files.Outcome(ctx, tx, bankfile.Evidence{BankReference: ref, Verdict: v, Reason: reason,
		Source: bankfile.Source{Kind: bankfile.SourceFeed, Name: f.Name, Document: "feed " + f.Name + " entry " + e.Key, InboxFile: sha}})
	if errors.Is(err, bankfile.ErrUnknownReference) {
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, err.Error())
	}
	if err != nil {
		return result{}, err
	}
	if res.Effect == rail.Contrary {
		return result{effect: EffectException, exception: res.Exception}, nil
	}
	return result{effect: EffectTransfer, recordType: string(res.Transfer.Type), owner: res.Transfer.MerchantID, recordID: res.Transfer.UUID}, nil
}

// credit applies a booked credit: to the one payin it names (its payment
// details, or its uuid in the remittance text), else to the one PayID,
// else to the one treasury account; none, or two of a kind, is unmatched.
func (s *Service) credit(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry) (result, error) {
	t := tokensOf(e)
	payins, err := payinCandidates(ctx, tx, t)
	if err != nil {
		return result{}, err
	}
	switch {
	case len(payins) > 1:
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, fmt.Sprintf("it names %d payins (%s): which one is the operator's to say", len(payins), candidateList(payins)))
	case len(payins) == 1:
		return s.receivePayin(ctx, tx, f, sha, e, payins[0])
	}
	ids, err := payidCandidates(ctx, tx, t)
	if err != nil {
		return result{}, err
	}
	switch {
	case len(ids) > 1:
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, fmt.Sprintf("it names %d PayIDs (%s): which one is the operator's to say", len(ids), strings.Join(ids, ", ")))
	case len(ids) == 1:
		return s.payPayID(ctx, tx, f, sha, e, ids[0])
	}
	accounts, err := treasuryCandidates(ctx, tx, t, e.Currency)
	if err != nil {
		return result{}, err
	}
	switch {
	case len(accounts) > 1:
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, fmt.Sprintf("it names %d treasury accounts: which one is the operator's to say", len(accounts)))
	case len(accounts) == 1:
		return s.deposit(ctx, tx, f, sha, e, accounts[0])
	}
	return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, "it names no payin, PayID or treasury account of payd's")
}

func candidateList(cs []payin.Candidate) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.UUID
	}
	return strings.Join(names, ", ")
}

// detailShaped reports whether d can be a payin's payment detail, which is
// looked up: an account number (digits, with spaces or dashes, at least
// minDetailDigits of them) or a PayID (with an @). The other words of a
// remittance text are not looked for, a query each saved.
func detailShaped(d string) bool {
	n := payin.NormalizeDetail(d)
	return strings.Contains(n, "@") || (len(n) >= minDetailDigits && digitsOf(n) == n)
}

// minDetailDigits is the fewest digits of an account number a credit is
// addressed to (a jp_bank_jpy account number has 7).
const minDetailDigits = 6

// payinCandidates are the payins t names, each once.
func payinCandidates(ctx context.Context, q store.Querier, t tokens) ([]payin.Candidate, error) {
	var out []payin.Candidate
	add := func(c payin.Candidate) {
		for _, o := range out {
			if o == c {
				return
			}
		}
		out = append(out, c)
	}
	for _, d := range t.details {
		if !detailShaped(d) {
			continue
		}
		cs, err := payin.ByPayCode(ctx, q, d)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			add(c)
		}
	}
	for _, w := range t.alnum {
		c, ok, err := payin.ByUUID(ctx, q, w)
		if err != nil {
			return nil, err
		}
		if ok {
			add(c)
		}
	}
	return out, nil
}

// receivePayin receives the payin c with e, as the sandbox's simulate does
// (payin.Service.Receive); a payin that cannot take it is unmatched, a
// credit that is not its total an amount_mismatch (CONTRACT §25).
func (s *Service) receivePayin(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, c payin.Candidate) (result, error) {
	_, err := s.Payins.Receive(ctx, tx, payin.Credit{MerchantID: c.MerchantID, UUID: c.UUID, AmountMinor: e.AmountMinor, Currency: e.Currency, BankReference: e.Key})
	switch {
	case errors.Is(err, payin.ErrAmountMismatch):
		return s.except(ctx, tx, f, sha, e, bankfile.AmountMismatch, err.Error())
	case errors.Is(err, payin.ErrNotReceivable), fault.Is(err, fault.CodeNotFound):
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, err.Error())
	case err != nil:
		return result{}, err
	}
	return result{effect: EffectPayin, recordType: "payin", owner: c.MerchantID, recordID: c.UUID}, nil
}

// payidCandidates are the registered PayIDs t names, each once.
func payidCandidates(ctx context.Context, q store.Querier, t tokens) ([]string, error) {
	var out []string
	for _, d := range t.details {
		id := strings.ToLower(strings.TrimSpace(d))
		if (id != t.proxy && !strings.ContainsAny(id, "@+")) || containsString(out, id) {
			continue
		}
		_, err := store.KeyOwner(ctx, q, store.KeyPayID, id)
		if store.IsNoRows(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// payPayID pays the PayID id with e, as the sandbox's simulate_payment
// does (payid.Service.Receive, §9: a request paid its exact total is
// received, another amount sent back; a static PayID takes any amount).
func (s *Service) payPayID(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, id string) (result, error) {
	if e.Currency != "AUD" {
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, fmt.Sprintf("it names the PayID %s, which takes AUD, and is in %s", id, e.Currency))
	}
	aud, err := money.Lookup("AUD")
	if err != nil {
		return result{}, err
	}
	payer := e.CounterpartyName
	if utf8.RuneCountInString(payer) > 140 {
		payer = string([]rune(payer)[:140])
	}
	rc, err := s.PayIDs.Receive(ctx, tx, payid.Payment{PayID: id, Amount: money.Input(money.Format(e.AmountMinor, aud)), PayerName: payer, BankReference: e.Key})
	switch {
	case fault.Is(err, fault.CodeNotFound), fault.Is(err, payid.CodeDeregistered):
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, refusalText(err))
	case err != nil:
		return result{}, err
	}
	if rc.StaticPayment != nil {
		return result{effect: EffectStaticPayID, recordType: "static_payid_payment", owner: ownerOf(ctx, tx, id), recordID: fmt.Sprint(rc.StaticPayment.ID)}, nil
	}
	return result{effect: EffectPaymentRequest, recordType: "payment_request", owner: ownerOf(ctx, tx, id), recordID: fmt.Sprint(rc.PaymentRequest.ID)}, nil
}

// ownerOf is the merchant of the PayID id ("" if it cannot be read).
func ownerOf(ctx context.Context, q store.Querier, id string) string {
	m, _ := store.KeyOwner(ctx, q, store.KeyPayID, id)
	return m
}

func refusalText(err error) string {
	if e, ok := fault.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// treasuryAccount is a treasury account a credit names.
type treasuryAccount struct {
	merchantID, number string
}

// treasuryCandidates are the treasury accounts in currency that t names,
// each once (payments accounts are not a feed's to credit).
func treasuryCandidates(ctx context.Context, q store.Querier, t tokens, currency string) ([]treasuryAccount, error) {
	var out []treasuryAccount
	for _, d := range t.details {
		number := digitsOf(d)
		if len(number) < minDetailDigits || number != d {
			continue
		}
		merchantID, err := store.KeyOwner(ctx, q, store.KeyAccountNumber, number)
		if store.IsNoRows(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var kind, cur string
		err = q.QueryRowContext(ctx, `SELECT kind, currency FROM accounts WHERE merchant_id = $1 AND account_number = $2`, merchantID, number).Scan(&kind, &cur)
		if store.IsNoRows(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if kind == "treasury" && cur == currency {
			out = append(out, treasuryAccount{merchantID: merchantID, number: number})
		}
	}
	return out, nil
}

// deposit credits the treasury account a with e, as simulate_deposit
// does (deposit.Service.Credit).
func (s *Service) deposit(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, a treasuryAccount) (result, error) {
	d, err := s.Deposits.Credit(ctx, tx, deposit.BankCredit{MerchantID: a.merchantID, AccountNumber: a.number, AmountMinor: e.AmountMinor,
		Currency: e.Currency, RemitterName: e.CounterpartyName, Remarks: e.Remittance, BankReference: e.Key})
	switch {
	case errors.Is(err, deposit.ErrNotTreasury), fault.Is(err, fault.CodeNotFound):
		return s.except(ctx, tx, f, sha, e, bankfile.Unmatched, refusalText(err))
	case err != nil:
		return result{}, err
	}
	return result{effect: EffectDeposit, recordType: "deposit", owner: a.merchantID, recordID: d.UUID}, nil
}
