package feed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Exceptions are the feed entries payd would not apply by itself (CONTRACT
// §18, §25), in bank_exceptions beside the rails' (bankfile's Exception is
// their shape, payd feed exceptions --json): unmatched, amount_mismatch, and
// the state_mismatch the bank-file rail's outcome function opens for a
// feed's contrary evidence. The operator matches one to a record (Match),
// which applies its entry once, or ignores it (Ignore); either is final.

// maxReason bounds an exception's reason.
const maxReason = 2000

// except opens an exception of kind for the entry e of the feed f's file
// sha, in tx.
func (s *Service) except(ctx context.Context, tx *store.Tx, f Feed, sha string, e statement.Entry, kind bankfile.ExceptionKind, reason string) (result, error) {
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	var key any
	if e.Key != "" {
		key = e.Key
	}
	var id int64
	// global lookup: bank_exceptions are operator records, no merchant's.
	err := tx.QueryRowContext(ctx, `INSERT INTO bank_exceptions (source_kind, source, currency, direction, amount, booking_date, value_date,
		entry_key, remittance, counterparty_name, counterparty_account, kind, status, reason, inbox_sha256, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
		string(bankfile.SourceFeed), f.Name, e.Currency, string(e.Direction), e.AmountMinor, e.BookingDate.String(), e.ValueDate.String(),
		key, e.Remittance, e.CounterpartyName, e.CounterpartyAccount, string(kind), string(bankfile.ExceptionOpen), reason, sha,
		s.Clock.Now().UnixMilli()).Scan(&id)
	if err != nil {
		return result{}, fmt.Errorf("open an exception of entry %s: %w", e.Key, err)
	}
	// Logged once the exception is there: a transaction retried or rolled
	// back would log one that never was.
	tx.AfterCommit(func() {
		s.Log.Warn("a feed entry is an exception for the operator", "feed", f.Name, "entry_key", e.Key, "kind", string(kind), "exception", id, "reason", reason)
	})
	return result{effect: EffectException, exception: id}, nil
}

// OpenExceptions counts the feeds' open exceptions (payd_feed_exceptions_open).
func OpenExceptions(ctx context.Context, q store.Querier) (int64, error) {
	var n int64
	// global lookup: bank_exceptions are operator records, no merchant's.
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM bank_exceptions WHERE source_kind = $1 AND status = $2`,
		string(bankfile.SourceFeed), string(bankfile.ExceptionOpen)).Scan(&n)
	return n, err
}

// Target is the record payd feed match names for an exception's entry:
// exactly one of them.
type Target struct {
	Payin          string // a payin's uuid
	PaymentRequest string // a PayID payment request's id
	StaticPayID    string // a static PayID's id
	Treasury       string // a treasury account's id
	Reference      string // a transfer's bank reference, or a bank file's reference
}

// Resolution is what payd feed match or ignore did to an exception.
type Resolution struct {
	Exception int64  `json:"exception"`
	Status    string `json:"status"`
	// Record names what the match moved: "payin ABCD1234 of merchant M".
	Record string `json:"record,omitempty"`
}

// exceptionRow is an exception as a resolution reads it.
type exceptionRow struct {
	id                                int64
	sourceKind, source, kind, status  string
	reason                            string
	currency, direction, remittance   string
	key, counterparty, counterAccount string
	amount                            int64
	sha                               string
}

// readException reads the exception id, its row locked (on PostgreSQL).
func (s *Service) readException(ctx context.Context, tx *store.Tx, id int64) (exceptionRow, error) {
	var r exceptionRow
	var currency, direction, remittance, key, name, account, sha *string
	var amount *int64
	// global lookup: bank_exceptions are operator records, no merchant's.
	err := tx.QueryRowContext(ctx, `SELECT id, source_kind, source, kind, status, reason, currency, direction, amount, remittance, entry_key,
		counterparty_name, counterparty_account, inbox_sha256 FROM bank_exceptions WHERE id = $1`+s.DB.ForUpdate(), id).
		Scan(&r.id, &r.sourceKind, &r.source, &r.kind, &r.status, &r.reason, &currency, &direction, &amount, &remittance, &key, &name, &account, &sha)
	if store.IsNoRows(err) {
		return exceptionRow{}, fault.NotFoundf("no exception %d", id)
	}
	if err != nil {
		return exceptionRow{}, fmt.Errorf("read exception %d: %w", id, err)
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	r.currency, r.direction, r.remittance, r.key = deref(currency), deref(direction), deref(remittance), deref(key)
	r.counterparty, r.counterAccount, r.sha = deref(name), deref(account), deref(sha)
	if amount != nil {
		r.amount = *amount
	}
	if r.status != string(bankfile.ExceptionOpen) {
		return exceptionRow{}, fault.State("exception %d is %s already: it is resolved once", id, r.status)
	}
	return r, nil
}

// entry is the exception's entry again, as the feed read it.
func (r exceptionRow) entry() statement.Entry {
	return statement.Entry{Key: r.key, AmountMinor: r.amount, Currency: r.currency, Direction: statement.Direction(r.direction),
		Status: statement.Booked, Remittance: r.remittance, CounterpartyName: r.counterparty, CounterpartyAccount: r.counterAccount}
}

// resolve marks the exception id resolved (matched or ignored) by actor.
func (s *Service) resolve(ctx context.Context, tx *store.Tx, id int64, status bankfile.ExceptionStatus, actor, reason string) error {
	// global lookup: bank_exceptions are operator records, no merchant's.
	return tx.Send(ctx, `UPDATE bank_exceptions SET status = $1, resolved_by = $2, resolved_at = $3, reason = $4 WHERE id = $5`,
		string(status), actor, s.Clock.Now().UnixMilli(), reason, id)
}

// Ignore closes the exception id: its entry is never applied (the
// operator dealt with it another way), for the operator's reason.
func (s *Service) Ignore(ctx context.Context, tx *store.Tx, id int64, actor, reason string) (Resolution, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > 500 || strings.ContainsFunc(reason, isControl) {
		return Resolution{}, fault.Field("--reason", "say why, in at most 500 characters")
	}
	r, err := s.readException(ctx, tx, id)
	if err != nil {
		return Resolution{}, err
	}
	if err := s.resolve(ctx, tx, id, bankfile.ExceptionIgnored, actor, "ignored: "+reason+" (was "+r.kind+": "+cutText(r.reason, 1000)+")"); err != nil {
		return Resolution{}, err
	}
	return Resolution{Exception: id, Status: string(bankfile.ExceptionIgnored)}, nil
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Match applies the exception id's entry to the record t names, once, by
// the domain function its rule would have used (a payin's Receive, a
// PayID's Receive, a deposit's Credit, the bank-file rail's Outcome), the
// record taking the entry's key as its bank_reference; the exception is
// then matched. A refusal of that function (a payin not pending, a credit
// not its total) changes nothing. A state_mismatch is the rail's to look
// into, not to match.
func (s *Service) Match(ctx context.Context, tx *store.Tx, id int64, t Target, actor string) (Resolution, error) {
	r, err := s.readException(ctx, tx, id)
	if err != nil {
		return Resolution{}, err
	}
	if r.sourceKind != string(bankfile.SourceFeed) || r.kind == string(bankfile.StateMismatch) {
		return Resolution{}, fault.State("exception %d is a %s of %s %s: it is looked into and ignored (payd feed ignore), not matched", id, r.kind, r.sourceKind, r.source)
	}
	res, err := s.matchTo(ctx, tx, r, t)
	if err != nil {
		return Resolution{}, err
	}
	record := fmt.Sprintf("%s %s", res.recordType, res.recordID)
	if res.owner != "" {
		record += " of merchant " + res.owner
	}
	if err := s.resolve(ctx, tx, id, bankfile.ExceptionMatched, actor, "matched to "+record+" (was "+r.kind+": "+cutText(r.reason, 1000)+")"); err != nil {
		return Resolution{}, err
	}
	if err := s.recordMatch(ctx, tx, r, res); err != nil {
		return Resolution{}, err
	}
	return Resolution{Exception: id, Status: string(bankfile.ExceptionMatched), Record: record}, nil
}

// recordMatch writes what the matched entry did in feed_entries.
func (s *Service) recordMatch(ctx context.Context, tx *store.Tx, r exceptionRow, res result) error {
	// global lookup: feed_entries are operator records, no merchant's.
	return tx.Send(ctx, `UPDATE feed_entries SET effect = $1, record_type = $2, record_owner = $3, record_id = $4
		WHERE exception_id = $5`, string(res.effect), res.recordType, res.owner, res.recordID, r.id)
}

// matchTo applies r's entry to the record t names.
func (s *Service) matchTo(ctx context.Context, tx *store.Tx, r exceptionRow, t Target) (result, error) {
	e := r.entry()
	switch {
	case t.Payin != "":
		c, ok, err := payin.ByUUID(ctx, s.DB.Read(), t.Payin)
		if err != nil {
			return result{}, err
		}
		if !ok {
			return result{}, fault.NotFoundf("no payin %s", t.Payin)
		}
		if _, err := s.Payins.Receive(ctx, tx, payin.Credit{MerchantID: c.MerchantID, UUID: c.UUID, AmountMinor: e.AmountMinor, Currency: e.Currency, BankReference: e.Key}); err != nil {
			return result{}, refusal(err)
		}
		return result{effect: EffectPayin, recordType: "payin", owner: c.MerchantID, recordID: c.UUID}, nil
	case t.PaymentRequest != "", t.StaticPayID != "":
		id, err := s.payIDOf(ctx, t)
		if err != nil {
			return result{}, err
		}
		return s.payIDMatch(ctx, tx, e, id)
	case t.Treasury != "":
		var merchantID, number, currency string
		// spans merchants: the operator names a treasury account by its id alone.
		err := s.DB.Read().QueryRowContext(ctx, `SELECT merchant_id, account_number, currency FROM accounts WHERE public_id = $1 AND kind = 'treasury'`,
			t.Treasury).Scan(&merchantID, &number, &currency)
		if store.IsNoRows(err) {
			return result{}, fault.NotFoundf("no treasury account %s", t.Treasury)
		}
		if err != nil {
			return result{}, err
		}
		d, err := s.Deposits.Credit(ctx, tx, deposit.BankCredit{MerchantID: merchantID, AccountNumber: number, AmountMinor: e.AmountMinor,
			Currency: e.Currency, RemitterName: e.CounterpartyName, Remarks: e.Remittance, BankReference: e.Key})
		if err != nil {
			return result{}, refusal(err)
		}
		return result{effect: EffectDeposit, recordType: "deposit", owner: merchantID, recordID: d.UUID}, nil
	case t.Reference != "":
		return s.referenceMatch(ctx, tx, r, e, t.Reference)
	}
	return result{}, fault.Field("--payin", "name the record: one of --payin, --payment-request, --static-payid, --treasury and --reference")
}

// payIDOf is the PayID of the payment request or static PayID t names.
func (s *Service) payIDOf(ctx context.Context, t Target) (string, error) {
	query, what, raw := `SELECT payid FROM payment_requests WHERE id = $1`, "payment request", t.PaymentRequest
	if t.StaticPayID != "" {
		query, what, raw = `SELECT payid FROM static_payids WHERE id = $1`, "static PayID", t.StaticPayID
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return "", fault.NotFoundf("no %s %s", what, raw)
	}
	var id string
	// spans merchants: the operator names the record by its id alone.
	err = s.DB.Read().QueryRowContext(ctx, query, n).Scan(&id)
	if store.IsNoRows(err) {
		return "", fault.NotFoundf("no %s %s", what, raw)
	}
	return id, err
}

// payIDMatch pays the PayID id with the exception's entry.
func (s *Service) payIDMatch(ctx context.Context, tx *store.Tx, e statement.Entry, id string) (result, error) {
	if e.Currency != "AUD" {
		return result{}, fault.State("the entry is in %s; a PayID takes AUD", e.Currency)
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
	if err != nil {
		return result{}, err
	}
	if rc.StaticPayment != nil {
		return result{effect: EffectStaticPayID, recordType: "static_payid_payment", owner: ownerOf(ctx, tx, id), recordID: fmt.Sprint(rc.StaticPayment.ID)}, nil
	}
	return result{effect: EffectPaymentRequest, recordType: "payment_request", owner: ownerOf(ctx, tx, id), recordID: fmt.Sprint(rc.PaymentRequest.ID)}, nil
}

// referenceMatch applies the entry as naming ref: a debit confirms the
// transfer (or the file) done, a credit returns the transfer.
func (s *Service) referenceMatch(ctx context.Context, tx *store.Tx, r exceptionRow, e statement.Entry, ref string) (result, error) {
	if s.Files == nil {
		return result{}, fault.State("no bank-file rail to apply a reference to")
	}
	f := Feed{Name: r.source}
	var res result
	var err error
	if e.Direction == statement.Debit {
		res, err = s.debit(ctx, tx, f, r.sha, e, ref)
	} else {
		res, err = s.transferOutcome(ctx, tx, f, r.sha, e, ref, rail.Returned, "returned by the bank (feed "+r.source+" entry "+e.Key+")")
	}
	if err != nil {
		return result{}, err
	}
	if res.effect == EffectException {
		return result{}, fault.State("reference %s does not take the entry (exception %d opened): nothing changed by the match", ref, res.exception)
	}
	return res, nil
}

// refusal is a domain function's refusal of a match as the operator reads
// it: a fault keeps its message, a payin's or a deposit's refusal becomes
// one (payd feed match exits 1 with it, nothing changed).
func refusal(err error) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	if errors.Is(err, payin.ErrAmountMismatch) || errors.Is(err, payin.ErrNotReceivable) || errors.Is(err, deposit.ErrNotTreasury) {
		return fault.State("%s", err.Error())
	}
	return err
}
