package payid

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Payment is money the New Payments Platform delivers to a PayID. A rail
// adapter calls Receive with it; in the sandbox, POST
// /v1/payment_requests/simulate_payment does.
type Payment struct {
	PayID     string      `json:"payid" required:"true" doc:"The PayID paid into: a request's request_payid or a static_payid."`
	Amount    money.Input `json:"amount" required:"true" doc:"AUD, at most 2 decimals." example:"125.50"`
	PayerName string      `json:"payer_name,omitempty" doc:"At most 140 characters. In the sandbox, a name containing [sandbox:reject] makes the payer's bank refuse a return." example:"JANE PAYER"`
	// BankReference is the key of the bank feed's entry that carried the
	// payment (CONTRACT §18), which the record it pays shows; never from
	// the API.
	BankReference string `json:"-"`
}

// Receipt is what became of a payment.
type Receipt struct {
	PayID string `json:"payid"`
	// Outcome: received (credited), returned (a wrong amount for a request:
	// sent back), static_payment (credited to a static PayID).
	Outcome        string          `json:"outcome" enum:"received,returned,static_payment"`
	PaymentRequest *PaymentRequest `json:"payment_request,omitempty"`
	StaticPayment  *StaticPayment  `json:"static_payment,omitempty"`
}

// maxPayerNameLen bounds a payer's name.
const maxPayerNameLen = 140

// sandboxReject in a payer's name makes the sandbox payer's bank refuse a
// return; sandboxExpire in a return's reason makes it time out.
const (
	sandboxReject = "[sandbox:reject]"
	sandboxExpire = "[sandbox:expire]"
)

// registered is a PayID's registry row.
type registered struct {
	merchantID, kind string
	ref              int64
	deregistered     bool
}

// Receive applies a payment to the PayID it names. A pending request paid
// its exact total is received (the money goes to incoming, then to
// available less the fee); any other amount is sent back (return_pending,
// then return_received), never credited. A static PayID takes any amount,
// each payment its own record. An unknown PayID is a 404; a deregistered
// one (cancelled, expired or already paid) a 422: the payer's bank cannot
// resolve it.
func (s *Service) Receive(ctx context.Context, tx *store.Tx, pay Payment) (Receipt, error) {
	f := fault.Fields{}
	pay.PayID = strings.ToLower(strings.TrimSpace(pay.PayID))
	if pay.PayID == "" || len(pay.PayID) > 254 {
		f.Add("payid", "is required, at most 254 characters")
	}
	if utf8.RuneCountInString(pay.PayerName) > maxPayerNameLen || !utf8.ValidString(pay.PayerName) {
		f.Add("payer_name", fmt.Sprintf("must be at most %d characters", maxPayerNameLen))
	}
	amount, _, err := money.ParseField("amount", pay.Amount, aud)
	if e, ok := fault.As(err); ok {
		for k, v := range e.Fields {
			f.Add(k, v)
		}
	}
	if err := f.Err(); err != nil {
		return Receipt{}, err
	}
	reg, err := lookupPayID(ctx, tx, pay.PayID)
	if err != nil {
		return Receipt{}, err
	}
	if reg.deregistered {
		return Receipt{}, fault.Rule(CodeDeregistered, "PayID %s is deregistered (its request was paid, cancelled or expired): the payer's bank cannot resolve it", pay.PayID)
	}
	now, err := s.clock.Read(ctx, tx, reg.merchantID)
	if err != nil {
		return Receipt{}, err
	}
	if reg.kind == "static" {
		sp, err := s.receiveStatic(ctx, tx, reg, amount, pay.PayerName, pay.BankReference, now)
		if err != nil {
			return Receipt{}, err
		}
		return Receipt{PayID: pay.PayID, Outcome: "static_payment", StaticPayment: &sp}, nil
	}
	r, err := s.get(ctx, tx, reg.merchantID, reg.ref, "", true)
	if err != nil {
		return Receipt{}, err
	}
	if r.status != Pending {
		return Receipt{}, fault.Rule(CodeDeregistered, "PayID %s is deregistered (its request is %s): the payer's bank cannot resolve it", pay.PayID, r.status)
	}
	if pay.BankReference != "" {
		ref := pay.BankReference
		r.bankReference = &ref
		if err := tx.Send(ctx, `UPDATE payment_requests SET bank_reference = $1 WHERE id = $2 AND merchant_id = $3`, ref, r.id, r.merchantID); err != nil {
			return Receipt{}, fmt.Errorf("receive into PayID %s: %w", pay.PayID, err)
		}
	}
	outcome, err := s.receiveRequest(ctx, tx, &r, amount, pay.PayerName, now)
	if err != nil {
		return Receipt{}, err
	}
	v := r.view()
	return Receipt{PayID: pay.PayID, Outcome: outcome, PaymentRequest: &v}, nil
}

// SimulatePayment is the sandbox NPP: a payer pays into one of the caller's
// PayIDs. Another merchant's PayID is answered as an unknown one.
func (s *Service) SimulatePayment(ctx context.Context, tx *store.Tx, p merchant.Principal, pay Payment) (Receipt, error) {
	id := strings.ToLower(strings.TrimSpace(pay.PayID))
	if id != "" {
		reg, err := lookupPayID(ctx, tx, id)
		if err == nil && reg.merchantID != p.MerchantID {
			return Receipt{}, notFound("PayID " + id + " is registered")
		}
	}
	return s.Receive(ctx, tx, pay)
}

func lookupPayID(ctx context.Context, q store.Querier, payid string) (registered, error) {
	var r registered
	var dereg *int64
	merchantID, err := store.KeyOwner(ctx, q, store.KeyPayID, payid)
	if err == nil {
		err = q.QueryRowContext(ctx, `SELECT merchant_id, kind, ref_id, deregistered_at FROM payids WHERE merchant_id = $1 AND payid = $2`, merchantID, payid).
			Scan(&r.merchantID, &r.kind, &r.ref, &dereg)
	}
	if isNoRows(err) {
		return registered{}, notFound("PayID " + payid + " is registered")
	}
	if err != nil {
		return registered{}, fmt.Errorf("resolve PayID %s: %w", payid, err)
	}
	r.deregistered = dereg != nil
	return r, nil
}

// receiveRequest applies a payment of amount to a pending request r: it is
// received when amount is the total, otherwise returned. Either way the
// PayID takes no more payments.
func (s *Service) receiveRequest(ctx context.Context, tx *store.Tx, r *row, amount int64, payer string, now time.Time) (string, error) {
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: currency, RequestType: ledger.MoneyIn,
		TransactionType: ledger.Payment, Status: ledger.Waiting, Amount: amount, Total: amount, ReferenceID: fmt.Sprint(r.id), CreatedAt: now}
	exact := amount == r.total
	if exact {
		m := limits()
		r.fee = min(amount, money.Percent(amount, m.FeeBPS)+m.FeeFixedMinor)
		rec.Amount, rec.Fees = amount-r.fee, r.fee
	}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return "", err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: currency, Kind: "payid.receive", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.External, Amount: -amount},
			{Account: r.accountID, Bucket: ledger.Incoming, Amount: amount},
		}}); err != nil {
		return "", err
	}
	at := now.UnixMilli()
	r.paid, r.payerName, r.paidAt, r.balanceID = amount, payer, &at, &rec.ID
	if err := deregister(ctx, tx, r.merchantID, r.payid, now); err != nil {
		return "", err
	}
	if !exact {
		r.returnReason = fmt.Sprintf("%s AUD was paid where the request asks for exactly %s AUD: the payment is sent back",
			money.Format(amount, aud), money.Format(r.total, aud))
		if err := job.Enqueue(ctx, tx, s.queue, jobReturn, ref{MerchantID: r.merchantID, ID: r.id}, job.Options{ClockOf: r.merchantID, RunAt: now.Add(s.ReturnDelay)}); err != nil {
			return "", err
		}
		return "returned", s.setStatus(ctx, tx, r, ReturnPending, now)
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobClear, ref{MerchantID: r.merchantID, ID: r.id}, job.Options{ClockOf: r.merchantID, RunAt: now}); err != nil {
		return "", err
	}
	if err := s.setStatus(ctx, tx, r, Received, now); err != nil {
		return "", err
	}
	for _, h := range s.received {
		if err := h(ctx, tx, r.merchantID, r.id, *r.balanceID, now); err != nil {
			return "", err
		}
	}
	return "received", nil
}

// clearJob moves a received payment from incoming to available, less the fee.
func (s *Service) clearJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	r, now, err := s.jobRequest(ctx, tx, rf)
	if err != nil || r.balanceID == nil {
		return err
	}
	return clear(ctx, tx, r.merchantID, r.accountID, *r.balanceID, r.paid, r.fee, now)
}

// clear credits a payment waiting in incoming to available, less fee, and
// marks its balance record done.
func clear(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, balanceID string, paid, fee int64, now time.Time) error {
	rec, err := ledger.GetRecord(ctx, tx, merchantID, balanceID)
	if err != nil || rec.Status != ledger.Waiting {
		return err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchantID, Currency: currency, Kind: "payid.clear", RecordID: balanceID, At: now,
		Legs: []ledger.Leg{
			{Account: accountID, Bucket: ledger.Incoming, Amount: -paid},
			{Account: accountID, Bucket: ledger.Available, Amount: paid - fee},
			{Account: accountID, Bucket: ledger.Fees, Amount: fee},
		}}); err != nil {
		return err
	}
	return ledger.Finish(ctx, tx, merchantID, balanceID, ledger.Done, now)
}

// ReturnRequest is the body of POST /v1/payment_requests/return.
type ReturnRequest struct {
	ID     int64  `json:"id" required:"true" doc:"The received request to send back." example:"1042"`
	Reason string `json:"reason" required:"true" doc:"5 to 255 characters. In the sandbox, a reason containing [sandbox:expire] makes the payer's bank not accept the return in time (return_expired, funds back to available)." example:"Order cancelled by the customer"`
}

// Return sends a received request's payment back to the payer: the amount
// moves from available to outgoing now, and leaves when the payer's bank
// accepts it (return_received), or comes back to available when it does not
// in time (return_expired). The fee is not refunded.
func (s *Service) Return(ctx context.Context, tx *store.Tx, p merchant.Principal, req ReturnRequest) (PaymentRequest, error) {
	f := fault.Fields{}
	if req.ID <= 0 {
		f.Add("id", "must be a payment request's id")
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(req.Reason)); n < 5 || n > 255 {
		f.Add("reason", "must be 5 to 255 characters")
	}
	if err := f.Err(); err != nil {
		return PaymentRequest{}, err
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.ID, "", true)
	if err != nil {
		return PaymentRequest{}, err
	}
	if r.status != Received {
		return PaymentRequest{}, fault.State("payment request %d is %s; only a received request can be returned", r.id, r.status)
	}
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: currency, RequestType: ledger.MoneyOut,
		TransactionType: ledger.Refund, Status: ledger.Waiting, Amount: r.paid, Outgoing: r.paid, Total: r.paid,
		ReferenceID: fmt.Sprint(r.id), CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return PaymentRequest{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: currency, Kind: "payid.return", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Available, Amount: -r.paid},
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: r.paid},
		}}); err != nil {
		if fault.Is(err, fault.CodeInsufficientFunds) {
			return PaymentRequest{}, fault.Rule(fault.CodeInsufficientFunds, "the available balance is lower than the %s AUD to send back (the fee is not refunded)", money.Format(r.paid, aud))
		}
		return PaymentRequest{}, err
	}
	r.returnBalanceID, r.returnReason = &rec.ID, strings.TrimSpace(req.Reason)
	if err := job.Enqueue(ctx, tx, s.queue, jobReturn, ref{MerchantID: r.merchantID, ID: r.id}, job.Options{ClockOf: r.merchantID, RunAt: now.Add(s.ReturnDelay)}); err != nil {
		return PaymentRequest{}, err
	}
	if err := s.setStatus(ctx, tx, &r, ReturnPending, now); err != nil {
		return PaymentRequest{}, err
	}
	return r.view(), nil
}

// returnJob is the payer's bank answering a return: a wrong amount leaves
// incoming (or, refused by the payer's bank, is credited after all); a
// merchant's return leaves outgoing (or comes back to available).
func (s *Service) returnJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	r, now, err := s.jobRequest(ctx, tx, rf)
	if err != nil || r.status != ReturnPending {
		return err
	}
	if r.returnBalanceID == nil {
		return s.returnWrongAmount(ctx, tx, &r, now)
	}
	id := *r.returnBalanceID
	to, legs, final := ReturnReceived, []ledger.Leg{
		{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -r.paid},
		{Account: r.accountID, Bucket: ledger.External, Amount: r.paid},
	}, ledger.Done
	if s.sandbox && strings.Contains(r.returnReason, sandboxExpire) {
		to, legs, final = ReturnExpired, []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -r.paid},
			{Account: r.accountID, Bucket: ledger.Available, Amount: r.paid},
		}, ledger.Failed
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: currency, Kind: "payid.return_" + string(to), RecordID: id, At: now, Legs: legs}); err != nil {
		return err
	}
	if err := ledger.Finish(ctx, tx, r.merchantID, id, final, now); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, &r, to, now)
}

// returnWrongAmount sends a payment of the wrong amount back from incoming.
// When the payer's bank refuses it (return_rejected), the money is never
// credited to available (issue 13): it stays held in incoming, its balance
// record waiting, for the operator to resolve with the payer.
func (s *Service) returnWrongAmount(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	if r.balanceID == nil {
		return fmt.Errorf("payment request %d: a return without its payment's record", r.id)
	}
	if s.sandbox && strings.Contains(r.payerName, sandboxReject) {
		return s.setStatus(ctx, tx, r, ReturnRejected, now)
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: currency, Kind: "payid.return_wrong_amount", RecordID: *r.balanceID, At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Incoming, Amount: -r.paid},
			{Account: r.accountID, Bucket: ledger.External, Amount: r.paid},
		}}); err != nil {
		return err
	}
	if err := ledger.Finish(ctx, tx, r.merchantID, *r.balanceID, ledger.Failed, now); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, r, ReturnReceived, now)
}

// staticRef names a static PayID payment in a job.
type staticRef struct {
	MerchantID string `json:"merchant_id"`
	PaymentID  int64  `json:"payment_id"`
}

// staticClearJob credits a static PayID payment to available, less the fee.
func (s *Service) staticClearJob(ctx context.Context, tx *store.Tx, _ job.Job, rf staticRef) error {
	var (
		accountID, amount, fee int64
		balanceID              string
	)
	err := tx.QueryRowContext(ctx, `SELECT sp.account_id, p.amount, p.fee, p.balance_id FROM static_payid_payments p
		JOIN static_payids sp ON sp.id = p.static_id AND sp.merchant_id = p.merchant_id WHERE p.id = $1 AND p.merchant_id = $2`, rf.PaymentID, rf.MerchantID).
		Scan(&accountID, &amount, &fee, &balanceID)
	if err != nil {
		return fmt.Errorf("static PayID payment %d: %w", rf.PaymentID, err)
	}
	if err := ledger.LockAccount(ctx, tx, rf.MerchantID, accountID, currency); err != nil {
		return err
	}
	now, err := s.clock.Read(ctx, tx, rf.MerchantID)
	if err != nil {
		return err
	}
	return clear(ctx, tx, rf.MerchantID, accountID, balanceID, amount, fee, now)
}

// nullable is s, or NULL for "".
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
