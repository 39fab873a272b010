package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// A card payment after it is paid: its refunds (CONTRACT §25), what a
// dispute (package dispute) reads of it, and the card network's dispute
// notices, which package dispute acts on.

// Payment types, as disputes and refunds name them (CONTRACT §22).
const (
	TypeGatewayPayment = "gateway_payment"
	TypePayinLink      = "payin_link"
)

// PaymentID is a card payment's id in a request: a gateway payment's
// number (a JSON number or string) or a payin link's uuid.
type PaymentID string

// UnmarshalJSON takes a string or a whole number.
func (p *PaymentID) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*p = PaymentID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return &json.UnmarshalTypeError{Value: string(data), Type: nil}
	}
	if _, err := n.Int64(); err != nil {
		return err
	}
	*p = PaymentID(n.String())
	return nil
}

// CardPayment is a paid card payment as its refunds and disputes see it.
type CardPayment struct {
	Type, ID, MerchantID string
	AccountID            int64
	Currency             money.Currency
	// Amount is what the customer paid, Refunded what refunds gave back.
	Amount, Refunded int64
	// ByCard: paid, and by card (a gateway payment paid by PayID is not).
	ByCard bool
	// Target is where the payment's notifications go.
	Target webhook.Target
}

// Remaining is what is neither refunded nor disputable any more.
func (c CardPayment) Remaining() int64 { return c.Amount - c.Refunded }

// LockCardPayment reads the card payment typ/id of merchantID (empty: the
// payment's own, through its global key) in tx, taking its account's ledger
// lock and then its row's, the order every ledger writer takes them. An
// unknown type is 422 naming payment_type; an unknown payment, or another
// merchant's, 404.
func (s *Service) LockCardPayment(ctx context.Context, tx *store.Tx, merchantID, typ, id string) (CardPayment, error) {
	var c CardPayment
	switch typ {
	case TypeGatewayPayment:
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n <= 0 {
			return c, fault.NotFoundf("no gateway payment %q", id)
		}
		var r row
		if merchantID == "" {
			r, err = s.getAny(ctx, tx, n, true)
		} else {
			r, err = s.get(ctx, tx, merchantID, n, true)
		}
		if err != nil {
			return c, err
		}
		c = CardPayment{Type: typ, ID: id, MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.cur, Amount: r.amount,
			ByCard: r.status == Paid && r.paidWith == "card", Target: r.target()}
	case TypePayinLink:
		if id == "" || len(id) > 64 {
			return c, linkNotFound(id)
		}
		r, err := s.getLink(ctx, tx, merchantID, id, true)
		if err != nil {
			return c, err
		}
		m, _ := LookupLinkMethod(r.method)
		c = CardPayment{Type: typ, ID: id, MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.cur, Amount: r.amount,
			ByCard: r.status == LinkPaid && m.Kind == KindCard, Target: r.target()}
	default:
		return c, fault.Field("payment_type", "must be gateway_payment or payin_link")
	}
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount), 0) FROM card_refunds
		WHERE merchant_id = $1 AND payment_type = $2 AND payment_id = $3`, c.MerchantID, typ, id).Scan(&c.Refunded)
	if err != nil {
		return c, fmt.Errorf("read refunds of %s %s: %w", typ, id, err)
	}
	return c, nil
}

// Refund is a card refund as its endpoints answer it.
type Refund struct {
	UUID        string       `json:"uuid"`
	PaymentType string       `json:"payment_type" enum:"gateway_payment,payin_link"`
	PaymentID   string       `json:"payment_id" doc:"The gateway payment's id (as a string) or the payin link's uuid."`
	Amount      money.String `json:"amount"`
	Currency    string       `json:"currency"`
	Status      string       `json:"status" enum:"done" doc:"done: the amount left available at once (a money_out refund record, reference_id the payment's id)."`
	BalanceID   string       `json:"balance_id" doc:"The refund's balance record."`
	CreatedAt   clock.Time   `json:"created_at"`
}

// RefundRequest is the body of POST /v1/payment_gateways/refund.
type RefundRequest struct {
	PaymentID PaymentID   `json:"payment_id" required:"true" doc:"The gateway payment's id." example:"1001"`
	Amount    money.Input `json:"amount,omitempty" doc:"Absent: all that is not refunded yet. At most that." example:"10.00"`
}

// LinkRefundRequest is the body of POST /v3/payin_links/refund.
type LinkRefundRequest struct {
	UUID   string      `json:"uuid" required:"true" doc:"The payin link's uuid." example:"k3j9x0c2m4q8w1e5r7t6y2u0i9"`
	Amount money.Input `json:"amount,omitempty" doc:"Absent: all that is not refunded yet. At most that." example:"10.00"`
}

// Refund gives back amount (empty: all not refunded yet) of the caller's
// card payment typ/id from its account's available balance, which must
// hold it (422 INSUFFICIENT_FUNDS). Only a payment paid by card is refunded
// here, and not one under dispute (409 INVALID_STATE both).
func (s *Service) Refund(ctx context.Context, tx *store.Tx, p merchant.Principal, typ, id string, amount money.Input) (Refund, error) {
	c, err := s.LockCardPayment(ctx, tx, p.MerchantID, typ, id)
	if err != nil {
		return Refund{}, err
	}
	if !c.ByCard {
		return Refund{}, fault.State("%s %s is not a paid card payment; only those are refunded", typ, id)
	}
	if s.disputed != nil {
		open, err := s.disputed(ctx, tx, c.MerchantID, typ, id)
		if err != nil {
			return Refund{}, err
		}
		if open {
			return Refund{}, fault.State("%s %s is disputed; the dispute decides what goes back", typ, id)
		}
	}
	if c.Remaining() == 0 {
		return Refund{}, fault.State("%s %s is refunded in full", typ, id)
	}
	minor := c.Remaining()
	if !amount.IsZero() {
		if minor, _, err = money.ParseField("amount", amount, c.Currency); err != nil {
			return Refund{}, err
		}
		if minor > c.Remaining() {
			return Refund{}, fault.Field("amount", "must be at most "+money.Format(c.Remaining(), c.Currency)+", what is not refunded yet")
		}
	}
	now, err := s.clock.Read(ctx, tx, c.MerchantID)
	if err != nil {
		return Refund{}, err
	}
	rec := ledger.Record{MerchantID: c.MerchantID, AccountID: c.AccountID, Currency: c.Currency.Code,
		RequestType: ledger.MoneyOut, TransactionType: ledger.Refund, Status: ledger.Done,
		Amount: minor, Total: minor, ReferenceID: id, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return Refund{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: c.MerchantID, Currency: c.Currency.Code, Kind: "card.refund",
		RecordID: rec.ID, At: now, Legs: []ledger.Leg{
			{Account: c.AccountID, Bucket: ledger.Available, Amount: -minor},
			{Account: c.AccountID, Bucket: ledger.External, Amount: minor},
		}}); err != nil {
		return Refund{}, err
	}
	ref := Refund{UUID: store.RandomID(store.UUIDLen), PaymentType: typ, PaymentID: id, Amount: money.StringOf(minor, c.Currency),
		Currency: c.Currency.Code, Status: "done", BalanceID: rec.ID, CreatedAt: clock.Time{T: now}}
	if _, err := tx.ExecContext(ctx, `INSERT INTO card_refunds (merchant_id, uuid, payment_type, payment_id, currency, amount, record_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.MerchantID, ref.UUID, typ, id, c.Currency.Code, minor, rec.ID, now.UnixMilli()); err != nil {
		return Refund{}, fmt.Errorf("record refund of %s %s: %w", typ, id, err)
	}
	return ref, nil
}

// DisputeCheck reports whether a card payment has a dispute.
type DisputeCheck func(ctx context.Context, tx *store.Tx, merchantID, typ, id string) (bool, error)

// DisputeHandler acts on a card network's dispute notice about payment
// c, whose locks tx holds.
type DisputeHandler func(ctx context.Context, tx *store.Tx, c CardPayment, n DisputeNotice) error

// OnDispute sets what refunds ask (is the payment disputed?) and who acts
// on the network's dispute notices: package dispute.
func (s *Service) OnDispute(check DisputeCheck, handle DisputeHandler) {
	s.disputed, s.disputeNotice = check, handle
}

// DisputeNotice is what a card network tells of a chargeback of a charge
// it approved: the cardholder's bank opened one (Outcome empty), or decided
// one the merchant answered (Outcome won or lost).
type DisputeNotice struct {
	// Charge is the approved attempt's Charge.Reference.
	Charge     string `json:"charge"`
	Reason     string `json:"reason,omitempty"`
	ReasonCode string `json:"reason_code,omitempty"`
	// Amount is disputed (minor units; 0: all that is not refunded).
	Amount  int64  `json:"amount,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// DisputeSource is a card network that sends dispute notices of its own (an
// acquirer's notification webhook or daily file): payd serve runs its
// ListenDisputes, which hands each notice to deliver (nil once applied; an
// error means it was not, and the network should send it again).
type DisputeSource interface {
	ListenDisputes(ctx context.Context, deliver func(context.Context, DisputeNotice) error) error
}

// ListenDisputes runs the card network's dispute notices, if it sends any,
// until ctx ends.
func (s *Service) ListenDisputes(ctx context.Context) error {
	src, ok := s.cards.(DisputeSource)
	if !ok {
		return nil
	}
	return src.ListenDisputes(ctx, func(ctx context.Context, n DisputeNotice) error {
		_, err := store.Do(ctx, s.db, func(tx *store.Tx) (struct{}, error) { return struct{}{}, s.ReceiveDisputeNotice(ctx, tx, n) })
		return err
	})
}

// ReceiveDisputeNotice applies a network's notice in tx: it finds the
// payment by the charge's reference (a gateway payment's "<id>-<attempt>",
// a payin link's "<uuid>-<attempt>"), locks it and hands it to the dispute
// handler.
func (s *Service) ReceiveDisputeNotice(ctx context.Context, tx *store.Tx, n DisputeNotice) error {
	if s.disputeNotice == nil {
		return fmt.Errorf("dispute notice for charge %s: no dispute handler", n.Charge)
	}
	cut := strings.LastIndexByte(n.Charge, '-')
	if cut <= 0 {
		return fmt.Errorf("dispute notice: charge reference %q names no payment", n.Charge)
	}
	id, typ := n.Charge[:cut], TypePayinLink
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		typ = TypeGatewayPayment
	}
	c, err := s.LockCardPayment(ctx, tx, "", typ, id)
	if err != nil {
		return err
	}
	return s.disputeNotice(ctx, tx, c, n)
}

// The sandbox's self-disputing card: its network notice comes a minute
// (on the merchant's clock) after the payment, as a job.
var jobSandboxDispute = job.NewKind[DisputeNotice]("gateway.sandbox_dispute")

// SandboxCardDisputes is the test card the sandbox network disputes by
// itself a minute after it paid (CONTRACT §22), reason fraudulent.
const SandboxCardDisputes = "4000000000000259"

// sandboxDisputeDelay is how long after paying the test card is disputed.
const sandboxDisputeDelay = time.Minute

// afterApproval queues what an approved charge's outcome asks for later:
// the sandbox network's dispute notice.
func (s *Service) afterApproval(ctx context.Context, tx *store.Tx, merchantID string, c Charge, out Outcome, now time.Time) error {
	if out.DisputeAfter <= 0 {
		return nil
	}
	return job.Enqueue(ctx, tx, s.queue, jobSandboxDispute, DisputeNotice{Charge: c.Reference, Reason: "fraudulent", ReasonCode: "sandbox"},
		job.Options{ClockOf: merchantID, RunAt: now.Add(out.DisputeAfter)})
}

func (s *Service) sandboxDisputeJob(ctx context.Context, tx *store.Tx, _ job.Job, n DisputeNotice) error {
	return s.ReceiveDisputeNotice(ctx, tx, n)
}

// sandboxLinks are the card links SandboxPaidPayment makes, in the order it
// tries the merchant's currencies.
var sandboxLinks = []struct{ currency, method, amount string }{{"NZD", "nz_card_nzd", "10.00"}, {"HKD", "hk_card_hkd", "100.00"}}

// SandboxPaidPayment makes a card payment to dispute (POST
// /v2/sandbox/disputes without payment_id, which payd trigger
// dispute.created sends), paid on its page by the sandbox's test card: a
// payin link in NZD, or else HKD, or else a gateway payment in AUD that
// notifies no one. A merchant with none of these accounts is 422
// CURRENCY_NOT_SUPPORTED. It answers the payment's type and id.
func (s *Service) SandboxPaidPayment(ctx context.Context, p merchant.Principal) (string, string, error) {
	success := s.PublicURL + "/"
	if s.PublicURL == "" {
		success = "http://localhost/"
	}
	card := Card{Name: "Sandbox", Number: SandboxCardPays, Expiry: "12/99", CVC: "123"}
	for _, l := range sandboxLinks {
		created, err := store.Do(ctx, s.db, func(tx *store.Tx) (LinkCreated, error) {
			return s.CreateLink(ctx, tx, p, LinkRequest{Amount: money.Input(l.amount), Currency: l.currency, PayinMethodCode: l.method,
				Description: "Sandbox card payment to dispute", RedirectURL: RedirectURL{Success: success}})
		})
		if fault.Is(err, fault.CodeCurrency) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		if _, err := s.PayLink(ctx, created.UUID, s.mac("payin_link:"+created.UUID), Attempt{Card: &card}); err != nil {
			return "", "", err
		}
		return TypePayinLink, created.UUID, nil
	}
	created, err := store.Do(ctx, s.db, func(tx *store.Tx) (CreateResult, error) {
		return s.Create(ctx, tx, p, Request{OrderID: "sandbox-dispute-" + store.RandomID(12), Amount: "10.00",
			Description: "Sandbox card payment to dispute", OrderSuccessURL: success, noTarget: true})
	})
	if fault.Is(err, fault.CodeCurrency) {
		return "", "", fault.Rule(fault.CodeCurrency, "a sandbox card payment to dispute is a payin link in NZD or HKD or a gateway payment in AUD, and this merchant has none of these payments accounts: name a paid card payment by payment_type and payment_id")
	}
	if err != nil {
		return "", "", err
	}
	if _, err := s.Pay(ctx, created.PaymentID, s.token(created.PaymentID), Attempt{Card: &card}); err != nil {
		return "", "", err
	}
	return TypeGatewayPayment, strconv.FormatInt(created.PaymentID, 10), nil
}
