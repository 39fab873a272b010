package dispute

import (
	"context"
	"fmt"
	"slices"
	"time"

	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Opening is what a dispute opens with: the network's reason and the
// amount (0: all of the payment that is not refunded).
type Opening struct {
	Reason, ReasonCode string
	Amount             int64
}

// Open opens a dispute of card payment c, whose locks tx holds: its amount
// leaves available for outgoing (available may go below zero, by this
// alone), a waiting dispute money_out record, dispute.created, and the
// deadline's job. A payment not paid by card, refunded in full, or with a
// dispute already is 409 INVALID_STATE.
func (s *Service) Open(ctx context.Context, tx *store.Tx, c gateway.CardPayment, o Opening) (Dispute, error) {
	if !c.ByCard {
		return Dispute{}, fault.State("%s %s is not a paid card payment; only those are disputed", c.Type, c.ID)
	}
	if _, ok, err := s.ofPayment(ctx, tx, c.MerchantID, c.Type, c.ID); err != nil || ok {
		if err == nil {
			err = fault.State("%s %s is disputed already", c.Type, c.ID)
		}
		return Dispute{}, err
	}
	if c.Remaining() == 0 {
		return Dispute{}, fault.State("%s %s is refunded in full; nothing is left to dispute", c.Type, c.ID)
	}
	if o.Reason == "" {
		o.Reason = "general"
	}
	if !slices.Contains(Reasons, o.Reason) {
		return Dispute{}, fault.Field("reason", "must be one of fraudulent, duplicate, product_not_received, product_unacceptable, credit_not_processed, general")
	}
	if len(o.ReasonCode) > 32 {
		return Dispute{}, fault.Field("reason_code", "must be at most 32 characters")
	}
	amount := o.Amount
	if amount == 0 {
		amount = c.Remaining()
	}
	if amount < 0 || amount > c.Remaining() {
		return Dispute{}, fault.Field("amount", "must be more than 0 and at most "+money.Format(c.Remaining(), c.Currency)+", what is not refunded")
	}
	now, err := s.clock.Read(ctx, tx, c.MerchantID)
	if err != nil {
		return Dispute{}, err
	}
	r := row{merchantID: c.MerchantID, uuid: store.RandomID(store.UUIDLen), paymentType: c.Type, paymentID: c.ID, accountID: c.AccountID,
		currency: c.Currency.Code, cur: c.Currency, amount: amount, reason: o.Reason, reasonCode: o.ReasonCode, status: NeedsResponse,
		dueBy: now.Add(ResponseWindow).UnixMilli(), endpointURL: c.Target.EndpointURL, authorizationHeader: c.Target.AuthorizationHeader,
		createdAt: now.UnixMilli(), updatedAt: now.UnixMilli()}
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.currency, RequestType: ledger.MoneyOut,
		TransactionType: ledger.Dispute, Status: ledger.Waiting, Amount: amount, Outgoing: amount, Total: amount, ReferenceID: r.uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return Dispute{}, err
	}
	r.recordID = rec.ID
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "dispute.open", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Available, Amount: -amount, MayGoNegative: true},
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: amount},
		}}); err != nil {
		return Dispute{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO disputes (`+columns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, NULL, $13, NULL, $14, $15, $16, $17)`,
		r.merchantID, r.uuid, r.paymentType, r.paymentID, r.accountID, r.currency, r.amount, r.reason, r.reasonCode, string(r.status), r.dueBy,
		`{"files":[]}`, r.recordID, r.endpointURL, r.authorizationHeader, r.createdAt, r.updatedAt); err != nil {
		return Dispute{}, fmt.Errorf("open dispute of %s %s: %w", c.Type, c.ID, err)
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobDeadline, ref{MerchantID: r.merchantID, UUID: r.uuid},
		job.Options{ClockOf: r.merchantID, RunAt: time.UnixMilli(r.dueBy)}); err != nil {
		return Dispute{}, err
	}
	if err := s.emit(ctx, tx, r, EventCreated, now); err != nil {
		return Dispute{}, err
	}
	return r.view(), nil
}

// notice acts on a card network's dispute notice about payment c: opens a
// dispute, or decides the payment's open one.
func (s *Service) notice(ctx context.Context, tx *store.Tx, c gateway.CardPayment, n gateway.DisputeNotice) error {
	if n.Outcome == "" {
		_, err := s.Open(ctx, tx, c, Opening{Reason: n.Reason, ReasonCode: n.ReasonCode, Amount: n.Amount})
		return err
	}
	outcome, err := outcomeOf(n.Outcome)
	if err != nil {
		return err // a word payd does not know is refused, decided or not
	}
	r, ok, err := s.ofPayment(ctx, tx, c.MerchantID, c.Type, c.ID)
	if err != nil {
		return err
	}
	if !ok {
		return fault.NotFoundf("no dispute of %s %s", c.Type, c.ID)
	}
	if r.status != NeedsResponse && r.status != UnderReview {
		return nil // decided already: a repeated notice
	}
	now, err := s.clock.Read(ctx, tx, r.merchantID)
	if err != nil {
		return err
	}
	return s.close(ctx, tx, &r, outcome, now)
}

func outcomeOf(text string) (Status, error) {
	switch Status(text) {
	case Won, Lost:
		return Status(text), nil
	}
	return "", fault.Field("outcome", "must be won or lost")
}

// change runs fn on the caller's dispute uuid in tx, locked, and answers
// the dispute as fn left it.
func (s *Service) change(ctx context.Context, tx *store.Tx, p merchant.Principal, uuid string, fn func(r *row, now time.Time) error) (Dispute, error) {
	r, err := s.get(ctx, tx, p.MerchantID, uuid, true)
	if err != nil {
		return Dispute{}, err
	}
	now, err := s.clock.Read(ctx, tx, r.merchantID)
	if err != nil {
		return Dispute{}, err
	}
	if err := fn(&r, now); err != nil {
		return Dispute{}, err
	}
	return r.view(), nil
}

func (r row) needsResponse() error {
	if r.status != NeedsResponse {
		return fault.State("dispute %s is %s; it takes no answer any more", r.uuid, r.status)
	}
	return nil
}

// Accept gives the dispute up (POST /v2/disputes/accept): lost, with the fee.
func (s *Service) Accept(ctx context.Context, tx *store.Tx, p merchant.Principal, req UUIDRequest) (Dispute, error) {
	return s.change(ctx, tx, p, req.UUID, func(r *row, now time.Time) error {
		if err := r.needsResponse(); err != nil {
			return err
		}
		return s.close(ctx, tx, r, Lost, now)
	})
}

// Resolve decides a dispute under review (POST /v2/sandbox/disputes/resolve,
// standing for the network's decision).
func (s *Service) Resolve(ctx context.Context, tx *store.Tx, p merchant.Principal, req ResolveRequest) (Dispute, error) {
	to, err := outcomeOf(req.Outcome)
	if err != nil {
		return Dispute{}, err
	}
	return s.change(ctx, tx, p, req.UUID, func(r *row, now time.Time) error {
		if r.status != UnderReview {
			return fault.State("dispute %s is %s; only one under review is decided", r.uuid, r.status)
		}
		return s.close(ctx, tx, r, to, now)
	})
}

// deadlineJob loses a dispute still unanswered at due_by (staged evidence
// is no answer): once, whichever process runs it, and again after a
// restart it finds the dispute decided and does nothing.
func (s *Service) deadlineJob(ctx context.Context, tx *store.Tx, j job.Job, target ref) error {
	r, err := s.get(ctx, tx, target.MerchantID, target.UUID, true)
	if err != nil || r.status != NeedsResponse {
		return err
	}
	now, err := s.clock.OfJob(ctx, tx, j, r.merchantID)
	if err != nil {
		return err
	}
	if now.UnixMilli() < r.dueBy {
		return fmt.Errorf("dispute %s: deadline job ran before due_by", r.uuid)
	}
	return s.close(ctx, tx, &r, Lost, now)
}

// close decides r: won brings the amount back to available (the dispute
// record failed); lost sends it out of payd (the record done) and debits
// the account's dispute fee, which may take available below zero. Then
// dispute.closed.
func (s *Service) close(ctx context.Context, tx *store.Tx, r *row, to Status, now time.Time) error {
	out := ledger.Outflow{MerchantID: r.merchantID, Currency: r.currency, Operation: "dispute", RecordID: r.recordID, Reference: r.uuid,
		From: r.accountID, Amount: r.amount}
	if err := ledger.Land(ctx, tx, out, to == Lost, now); err != nil {
		return err
	}
	if to == Lost {
		if err := s.chargeFee(ctx, tx, r, now); err != nil {
			return err
		}
	}
	r.status, r.updatedAt = to, now.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE disputes SET status = $1, fee = $2, fee_record_id = $3, updated_at = $4
		WHERE merchant_id = $5 AND uuid = $6`, string(r.status), r.fee, r.feeRecordID, r.updatedAt, r.merchantID, r.uuid); err != nil {
		return fmt.Errorf("close dispute %s: %w", r.uuid, err)
	}
	return s.emit(ctx, tx, *r, EventClosed, now)
}

// chargeFee debits the account's dispute fee for lost dispute r.
func (s *Service) chargeFee(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	var stored *int64
	if err := tx.QueryRowContext(ctx, `SELECT dispute_fee FROM accounts WHERE merchant_id = $1 AND id = $2`, r.merchantID, r.accountID).Scan(&stored); err != nil {
		return fmt.Errorf("dispute fee of account %d: %w", r.accountID, err)
	}
	fee := merchant.DefaultDisputeFee(r.currency)
	if stored != nil {
		fee = *stored
	}
	r.fee = &fee
	if fee == 0 {
		return nil
	}
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.currency, RequestType: ledger.MoneyOut,
		TransactionType: ledger.DisputeFee, Status: ledger.Done, Amount: fee, Total: fee, ReferenceID: r.uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return err
	}
	r.feeRecordID = &rec.ID
	_, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "dispute.fee", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Available, Amount: -fee, MayGoNegative: true},
			{Account: r.accountID, Bucket: ledger.Fees, Amount: fee},
		}})
	return err
}

// saveEvidence writes r's evidence.
func saveEvidence(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	body, err := encodeEvidence(r.evidence)
	if err != nil {
		return err
	}
	r.updatedAt = now.UnixMilli()
	_, err = tx.ExecContext(ctx, `UPDATE disputes SET evidence = $1, evidence_submitted_at = $2, status = $3, updated_at = $4
		WHERE merchant_id = $5 AND uuid = $6`, body, r.submittedAt, string(r.status), r.updatedAt, r.merchantID, r.uuid)
	if err != nil {
		return fmt.Errorf("save evidence of dispute %s: %w", r.uuid, err)
	}
	return nil
}
