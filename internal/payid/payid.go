// Package payid is AUD PayID (CONTRACT §9): one-time payment requests, each
// with a PayID of its own that the customer pays from any banking app, and
// static open PayIDs that a customer keeps. Payments arrive from the New
// Payments Platform (in the sandbox, from POST
// /v1/payment_requests/simulate_payment) through Receive; money lands in the
// ledger as payins' does (incoming, then available less the fee), wrong
// amounts are sent back, and the merchant hears of every change by webhook.
package payid

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Status of a payment request (CONTRACT §9).
type Status string

const (
	Pending        Status = "pending"
	Received       Status = "received"
	Expired        Status = "expired"
	ReturnPending  Status = "return_pending"
	ReturnReceived Status = "return_received"
	ReturnExpired  Status = "return_expired"
	ReturnRejected Status = "return_rejected"
)

// CodeDeregistered refuses a PayID that is deregistered.
const CodeDeregistered = "PAYID_DEREGISTERED"

// currency is the only currency of PayID.
const currency = "AUD"

// aud is the currency's definition.
var aud = func() money.Currency {
	c, err := money.Lookup(currency)
	if err != nil {
		panic(err)
	}
	return c
}()

// method is the payin method whose limits and fee a PayID payment takes:
// one rule for PayID money, wherever it comes in.
const method = "au_payid_npp_aud"

// Job kinds, each with its payload.
var (
	jobExpire      = job.NewKind[ref]("payid.expire")
	jobClear       = job.NewKind[ref]("payid.clear")
	jobReturn      = job.NewKind[ref]("payid.return")
	jobStaticClear = job.NewKind[staticRef]("payid.static_clear")
)

// Service runs PayID requests and static PayIDs.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	sandbox  bool
	// ReturnDelay is how long the payer's bank takes to accept a return
	// (the sandbox's answer).
	ReturnDelay time.Duration
	// received are told of each request paid its exact total.
	received []ReceivedHook
}

// ReceivedHook is told, in the transaction that receives it, that request
// id of merchantID was paid its exact total (balanceID is the payment's
// balance record). A service that issued the request for a record of its
// own (the gateway's checkout) settles that record here, so both change
// together or not at all.
type ReceivedHook func(ctx context.Context, tx *store.Tx, merchantID string, id int64, balanceID string, now time.Time) error

// OnReceived adds h to the hooks of received requests; call it while
// wiring, before any request is served.
func (s *Service) OnReceived(h ReceivedHook) { s.received = append(s.received, h) }

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	// Sandbox lets the sandbox's markers ([sandbox:reject], [sandbox:expire])
	// decide the payer's bank's answer to a return.
	Sandbox bool
}

// NewService returns the service and registers its jobs.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy, sandbox: d.Sandbox, ReturnDelay: 5 * time.Second}
	job.Register(d.Queue, jobExpire, s.expireJob)
	job.Register(d.Queue, jobClear, s.clearJob)
	job.Register(d.Queue, jobReturn, s.returnJob)
	job.Register(d.Queue, jobStaticClear, s.staticClearJob)
	return s
}

// limits are the method's bounds and fee.
func limits() payin.Method {
	m, err := payin.Lookup(method)
	if err != nil {
		panic(err) // the catalogue is checked at start; a missing method is a build error
	}
	return m
}

// domainOf is the merchant's PayID domain: every PayID payd hands out for
// the merchant is an address under it.
func domainOf(merchantID string) string {
	return strings.ToLower(merchantID) + ".payid.payd.dev"
}

// newLocal makes the random part of a PayID: 10 characters of a-z and 2-7.
func newLocal() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 10)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// claimPayID inserts a new PayID of kind for ref into the registry; make
// proposes candidates until one is free.
func claimPayID(ctx context.Context, tx *store.Tx, merchantID, kind string, ref int64, make func() string, now time.Time) (string, error) {
	id, err := store.ClaimNew(ctx, tx, store.KeyPayID, merchantID, make)
	if err != nil {
		return "", err
	}
	return id, tx.Send(ctx, `INSERT INTO payids (payid, merchant_id, kind, ref_id, created_at) VALUES ($1, $2, $3, $4, $5)`,
		id, merchantID, kind, ref, now.UnixMilli())
}

// deregister ends merchantID's one-time PayID: the payer's bank can no
// longer resolve it.
func deregister(ctx context.Context, tx *store.Tx, merchantID, payid string, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE payids SET deregistered_at = $1 WHERE payid = $2 AND merchant_id = $3 AND deregistered_at IS NULL`,
		now.UnixMilli(), payid, merchantID)
	if err != nil {
		return fmt.Errorf("deregister %s: %w", payid, err)
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func notFound(what string) error { return fault.NotFoundf("no %s", what) }
