package gateway

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/store"
)

// PayID on the checkout page (issue 14 item 2): the customer may pay a
// one-time PayID instead of a card. The PayID is a payment request of
// package payid, whose rules it follows (limits, expiry, the NPP's
// payments, fees); the gateway only issues it for the order, at most one
// live at a time, and settles the order when the request is received.

// PayIDOffer is what the checkout page shows of a PayID.
type PayIDOffer struct {
	PayID string
	// RequestID is the payment request behind it.
	RequestID int64
}

// OfferPayID returns the one-time PayID the customer of checkout c may pay,
// issuing it on the first call (and again after one was paid the wrong
// amount and sent back). It is nil when PayID is not offered: no PayID
// service, a payment no longer payable, or one PayID's rules refuse (an
// amount outside its limits, too little time left before expired_at).
func (s *Service) OfferPayID(ctx context.Context, c Checkout) (*PayIDOffer, error) {
	if s.payids == nil || !c.Payable || c.Currency != "AUD" {
		return nil, nil
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (*PayIDOffer, error) {
		r, err := s.getAny(ctx, tx, c.PaymentID, true)
		if err != nil {
			return nil, err
		}
		now, err := s.clock.Read(ctx, tx, r.merchantID)
		if err != nil || !payable(r, now) {
			return nil, err
		}
		p, err := merchant.PrincipalOf(ctx, tx, r.merchantID, r.currency)
		if err != nil {
			return nil, err
		}
		if r.paymentRequestID != nil {
			pr, err := s.payids.Get(ctx, p, payid.Lookup{ID: *r.paymentRequestID})
			if err != nil {
				return nil, err
			}
			if pr.Status == payid.Pending {
				return &PayIDOffer{PayID: pr.RequestPayID, RequestID: pr.ID}, nil
			}
		}
		cur := r.cur
		pr, err := s.payids.Create(ctx, tx, p, payid.CreateRequest{
			Amount: money.Input(money.Format(r.amount, cur)), Description: "Checkout order " + r.orderID,
			ExternalID: "gateway:" + strconv.FormatInt(r.id, 10), ExpiredAt: clock.Input{T: clock.FromMillis(r.expiredAt), Set: true}})
		if e, ok := fault.As(err); ok && (e.Kind == fault.Invalid || e.Kind == fault.Malformed) {
			return nil, nil // PayID's rules do not take this order: cards only
		}
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE gateway_payments SET payment_request_id = $1 WHERE id = $2 AND merchant_id = $3`,
			pr.ID, r.id, r.merchantID); err != nil {
			return nil, fmt.Errorf("offer PayID for gateway payment %d: %w", r.id, err)
		}
		return &PayIDOffer{PayID: pr.RequestPayID, RequestID: pr.ID}, nil
	})
}

// payidReceived settles the order whose PayID request id was paid its exact
// total, in the transaction that received it: the payment is paid with
// PayID, its balance record the request's (PayID's ledger entries already
// hold the money, so nothing more is posted). Requests of no order are not
// the gateway's.
func (s *Service) payidReceived(ctx context.Context, tx *store.Tx, merchantID string, requestID int64, balanceID string, now time.Time) error {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM gateway_payments WHERE merchant_id = $1 AND payment_request_id = $2`, merchantID, requestID).Scan(&id)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gateway payment of PayID request %d: %w", requestID, err)
	}
	r, err := s.get(ctx, tx, merchantID, id, true)
	if err != nil {
		return err
	}
	if !payable(r, now) {
		// Paying by card or expiring withdraws the PayID in the same
		// transaction, so a live request always has a payable order.
		return fmt.Errorf("gateway payment %d is %s but its PayID request %d was received", r.id, r.status, requestID)
	}
	paidAt := now.UnixMilli()
	r.balanceID, r.paidAt, r.failureReason, r.paidWith = &balanceID, &paidAt, "", "payid"
	return s.setStatus(ctx, tx, &r, Paid, now)
}

// withdrawPayID cancels the order's pending PayID request (its PayID is
// deregistered for good) when the order is paid otherwise or expires, so
// that no one can pay it twice.
func (s *Service) withdrawPayID(ctx context.Context, tx *store.Tx, r row) error {
	if s.payids == nil || r.paymentRequestID == nil {
		return nil
	}
	p, err := merchant.PrincipalOf(ctx, tx, r.merchantID, r.currency)
	if err != nil {
		return err
	}
	_, err = s.payids.Cancel(ctx, tx, p, payid.CancelRequest{ID: *r.paymentRequestID})
	if fault.Is(err, fault.CodeInvalidState) {
		return nil // received (wrong amount, sent back) or already ended
	}
	return err
}
