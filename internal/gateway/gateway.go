// Package gateway is the hosted checkout of the payment gateway (v1): a shop
// creates a payment for an order (POST /v1/payment_gateways/create_payment),
// sends its customer to the checkout page at redirect_url, and hears of every
// status change at its endpoint_url. A paid order credits the merchant's AUD
// balance once, whatever the number of clicks or tabs: the pay step locks the
// account and the payment row and moves only a pending or failed payment.
//
// Ways to pay: cards go through a CardNetwork (the sandbox simulates one);
// PayID through a one-time PayID request of package payid (payid.go).
package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Status of a gateway payment (CONTRACT §11).
type Status string

const (
	Pending Status = "pending"
	Paid    Status = "paid"
	Failed  Status = "failed"
	Expired Status = "expired"
)

// Error codes of the gateway.
const (
	CodeCardsUnavailable = "CARDS_UNAVAILABLE"
)

// Currency is the currency of v1 gateway payments.
const Currency = "AUD"

// LinkLifetime is how long a checkout link stays payable.
const LinkLifetime = 24 * time.Hour

// Payment is the gateway payment record as GET /v1/payment_gateways/payment
// and every notification carry it.
type Payment struct {
	PaymentID                  int64           `json:"payment_id"`
	OrderID                    string          `json:"order_id"`
	Status                     Status          `json:"status" enum:"pending,paid,failed,expired" doc:"pending: waiting for the customer; paid: the order is paid and the balance credited (final); failed: the last attempt was declined, the customer may retry until expired_at; expired: not paid by expired_at (final)."`
	Amount                     money.String    `json:"amount"`
	Currency                   string          `json:"currency" enum:"AUD"`
	Description                string          `json:"description"`
	RedirectURL                string          `json:"redirect_url" doc:"The hosted checkout page."`
	OrderSuccessURL            string          `json:"order_success_url"`
	PaidWith                   string          `json:"paid_with" enum:",card,payid" doc:"card or payid when paid (a PayID payment follows PayID's rules: incoming, then available less the au_payid_npp_aud fee); empty otherwise."`
	Card                       *CardSummary    `json:"card" doc:"The brand and last four digits of the card of the latest attempt; null before one."`
	FailureReason              string          `json:"failure_reason"`
	BalanceID                  *string         `json:"balance_id" doc:"The payment's balance record once paid."`
	PaymentGatewayNotification *webhook.Target `json:"payment_gateway_notification"`
	OrderDetails               OrderDetails    `json:"order_details"`
	ExpiredAt                  clock.Time      `json:"expired_at"`
	PaidAt                     *clock.Time     `json:"paid_at"`
	CreatedAt                  clock.Time      `json:"created_at"`
	UpdatedAt                  clock.Time      `json:"updated_at"`
}

// CardSummary is all that is kept of a card.
type CardSummary struct {
	Brand string `json:"brand" enum:"visa,mastercard,amex"`
	Last4 string `json:"last4"`
}

// Service runs gateway payments.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	cards    CardNetwork
	payids   *payid.Service
	linkKey  []byte
	// disputed and disputeNotice are package dispute's (OnDispute).
	disputed      DisputeCheck
	disputeNotice DisputeHandler
	// PublicURL is the base of checkout links.
	PublicURL string
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	Cards    CardNetwork
	// PayIDs, when set, offers a one-time PayID on the checkout page.
	PayIDs    *payid.Service
	PublicURL string
	LinkKey   []byte
}

var jobExpire = job.NewKind[ref]("gateway.expire")

// NewService returns a Service and registers its jobs.
func NewService(d Deps) *Service {
	if d.Cards == nil {
		d.Cards = NoCards{}
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy,
		cards: d.Cards, payids: d.PayIDs, linkKey: d.LinkKey, PublicURL: d.PublicURL}
	if d.PayIDs != nil {
		d.PayIDs.OnReceived(s.payidReceived)
	}
	job.Register(d.Queue, jobExpire, s.expireJob)
	job.Register(d.Queue, jobLinkExpire, s.expireLinkJob)
	job.Register(d.Queue, jobSandboxDispute, s.sandboxDisputeJob)
	return s
}

type row struct {
	id                               int64
	merchantID                       string
	accountID                        int64
	orderID, currency                string
	cur                              money.Currency
	amount                           int64
	description, orderSuccessURL     string
	endpointURL, authorizationHeader string
	orderDetails                     string
	status                           Status
	paidWith, cardBrand, cardLast4   string
	failureReason                    string
	attempts                         int
	balanceID                        *string
	paymentRequestID                 *int64
	expiredAt                        int64
	paidAt                           *int64
	createdAt, updatedAt             int64
}

const rowColumns = `id, merchant_id, account_id, order_id, currency, amount, description, order_success_url, endpoint_url,
	authorization_header, order_details, status, paid_with, card_brand, card_last4, failure_reason, attempts, balance_id,
	payment_request_id, expired_at, paid_at, created_at, updated_at`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.merchantID, &r.accountID, &r.orderID, &r.currency, &r.amount, &r.description, &r.orderSuccessURL,
		&r.endpointURL, &r.authorizationHeader, &r.orderDetails, &r.status, &r.paidWith, &r.cardBrand, &r.cardLast4,
		&r.failureReason, &r.attempts, &r.balanceID, &r.paymentRequestID, &r.expiredAt, &r.paidAt, &r.createdAt, &r.updatedAt)
	if err != nil {
		return r, err
	}
	if r.cur, err = money.Lookup(r.currency); err != nil {
		return r, fmt.Errorf("gateway payment %d: %w", r.id, err)
	}
	return r, nil
}

func (r row) target() webhook.Target {
	return webhook.Target{EndpointURL: r.endpointURL, AuthorizationHeader: r.authorizationHeader}
}

func (s *Service) view(r row) Payment {
	c := r.cur
	p := Payment{
		PaymentID: r.id, OrderID: r.orderID, Status: r.status, Amount: money.StringOf(r.amount, c), Currency: r.currency,
		Description: r.description, RedirectURL: s.CheckoutURL(r.id), OrderSuccessURL: r.orderSuccessURL,
		PaidWith: r.paidWith, FailureReason: r.failureReason, BalanceID: r.balanceID,
		ExpiredAt: clock.Time{T: clock.FromMillis(r.expiredAt)},
		CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}, UpdatedAt: clock.Time{T: clock.FromMillis(r.updatedAt)},
	}
	if r.cardBrand != "" {
		p.Card = &CardSummary{Brand: r.cardBrand, Last4: r.cardLast4}
	}
	if r.paidAt != nil {
		p.PaidAt = &clock.Time{T: clock.FromMillis(*r.paidAt)}
	}
	if t := r.target(); !t.IsZero() {
		p.PaymentGatewayNotification = &t
	}
	json.Unmarshal([]byte(r.orderDetails), &p.OrderDetails)
	if p.OrderDetails.Items == nil {
		p.OrderDetails.Items = []Item{}
	}
	return p
}

// CheckoutURL is the hosted checkout page of payment id; its token keeps
// others from reaching it by counting ids.
func (s *Service) CheckoutURL(id int64) string {
	return s.PublicURL + "/checkout/" + strconv.FormatInt(id, 10) + "?t=" + s.token(id)
}

func (s *Service) token(id int64) string {
	mac := hmac.New(sha256.New, s.linkKey)
	mac.Write([]byte("checkout:" + strconv.FormatInt(id, 10)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// ValidToken reports whether token is the checkout token of payment id.
func (s *Service) ValidToken(id int64, token string) bool {
	return hmac.Equal([]byte(s.token(id)), []byte(token))
}

func notFound(id int64) error {
	return fault.NotFoundf("no gateway payment %d", id)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// get reads merchantID's payment id; lock (for a change) locks its account
// first, then the row, as every ledger writer does.
func (s *Service) get(ctx context.Context, q store.Querier, merchantID string, id int64, lock bool) (row, error) {
	query := `SELECT ` + rowColumns + ` FROM gateway_payments WHERE id = $1 AND merchant_id = $2`
	if tx, ok := q.(*store.Tx); ok && lock {
		var accountID int64
		var currency string
		err := tx.QueryRowContext(ctx, `SELECT account_id, currency FROM gateway_payments WHERE id = $1 AND merchant_id = $2`, id, merchantID).Scan(&accountID, &currency)
		if isNoRows(err) {
			return row{}, notFound(id)
		}
		if err != nil {
			return row{}, fmt.Errorf("read gateway payment %d: %w", id, err)
		}
		if err := ledger.LockAccount(ctx, tx, merchantID, accountID, currency); err != nil {
			return row{}, err
		}
		query += s.db.ForUpdate()
	}
	r, err := scanRow(q.QueryRowContext(ctx, query, id, merchantID))
	if isNoRows(err) {
		return row{}, notFound(id)
	}
	if err != nil {
		return row{}, fmt.Errorf("read gateway payment %d: %w", id, err)
	}
	return r, nil
}

// getAny reads a payment by id alone (for token-authorised pages and jobs).
func (s *Service) getAny(ctx context.Context, q store.Querier, id int64, lock bool) (row, error) {
	merchantID, err := store.KeyOwner(ctx, q, store.KeyGatewayPayment, strconv.FormatInt(id, 10))
	if err != nil {
		if isNoRows(err) {
			return row{}, notFound(id)
		}
		return row{}, err
	}
	return s.get(ctx, q, merchantID, id, lock)
}

// Get returns the caller's payment id (GET /v1/payment_gateways/payment).
func (s *Service) Get(ctx context.Context, p merchant.Principal, id int64) (Payment, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, id, false)
	if err != nil {
		return Payment{}, err
	}
	return s.view(r), nil
}

// setStatus writes r's changed columns and emits gateway_payment.<status>.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, r *row, to Status, at time.Time) error {
	r.status, r.updatedAt = to, at.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE gateway_payments SET status = $1, paid_with = $2, card_brand = $3, card_last4 = $4,
		failure_reason = $5, attempts = $6, balance_id = $7, paid_at = $8, updated_at = $9 WHERE id = $10 AND merchant_id = $11`,
		string(r.status), r.paidWith, r.cardBrand, r.cardLast4, r.failureReason, r.attempts, r.balanceID, r.paidAt, r.updatedAt, r.id,
		r.merchantID); err != nil {
		return fmt.Errorf("update gateway payment %d: %w", r.id, err)
	}
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: "gateway_payment." + string(to),
		RecordUUID: strconv.FormatInt(r.id, 10), Target: r.target(), Payload: s.view(*r), At: at})
	return err
}

type ref struct {
	MerchantID string `json:"merchant_id"`
	ID         int64  `json:"id"`
}

// expireJob expires a payment not paid by its expired_at.
func (s *Service) expireJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	r, err := s.get(ctx, tx, rf.MerchantID, rf.ID, true)
	if err != nil || (r.status != Pending && r.status != Failed) {
		return err
	}
	now, err := s.clock.Read(ctx, tx, r.merchantID)
	if err != nil {
		return err
	}
	if err := s.withdrawPayID(ctx, tx, r); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, &r, Expired, now)
}
