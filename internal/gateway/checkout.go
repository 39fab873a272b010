package gateway

import (
	"context"
	"strconv"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/store"
)

// The hosted checkout page (package web) reaches a payment by its id and the
// redirect_url's token, not by merchant credentials.

// Checkout is what the checkout page shows.
type Checkout struct {
	Payment
	MerchantName string
	// Zone is the merchant's time zone, the page's deadline's.
	Zone *time.Location
	// Payable: the customer may (still) pay: pending or failed, before expired_at.
	Payable bool
	// Now is the time on the merchant's clock (for the card expiry check).
	Now time.Time
}

// Checkout returns the payment behind a redirect_url; a wrong token answers
// as not found.
func (s *Service) Checkout(ctx context.Context, id int64, token string) (Checkout, error) {
	if !s.ValidToken(id, token) {
		return Checkout{}, notFound(id)
	}
	q := s.db.Read()
	r, err := s.getAny(ctx, q, id, false)
	if err != nil {
		return Checkout{}, err
	}
	var name, zone string
	if err := q.QueryRowContext(ctx, `SELECT name, timezone FROM merchants WHERE id = $1`, r.merchantID).Scan(&name, &zone); err != nil {
		return Checkout{}, err
	}
	now, err := s.clock.Read(ctx, q, r.merchantID)
	if err != nil {
		return Checkout{}, err
	}
	return Checkout{Payment: s.view(r), MerchantName: name, Zone: merchant.Location(zone), Now: now, Payable: payable(r, now)}, nil
}

func payable(r row, now time.Time) bool {
	return (r.status == Pending || r.status == Failed) && now.UnixMilli() < r.expiredAt
}

// Attempt is one try to pay on the checkout page: a card, or (sandbox) a
// press of the pay or decline button.
type Attempt struct {
	Card *Card
	// Sandbox is "pay" or "decline": the sandbox buttons, which stand for
	// an approved or a declined card without a card form.
	Sandbox string
}

// Pay runs one attempt. Only a payable payment moves: the account and the
// row are locked, so concurrent attempts (double clicks, two tabs) queue
// and the second finds the payment paid (409 INVALID_STATE) — a paid order
// credits the balance exactly once.
func (s *Service) Pay(ctx context.Context, id int64, token string, a Attempt) (Payment, error) {
	if !s.ValidToken(id, token) {
		return Payment{}, notFound(id)
	}
	if a.Sandbox != "" && a.Sandbox != "pay" && a.Sandbox != "decline" {
		return Payment{}, fault.Field("outcome", "must be pay or decline")
	}
	if a.Sandbox == "" && a.Card == nil {
		return Payment{}, fault.Field("cc-number", "is required")
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Payment, error) {
		r, err := s.getAny(ctx, tx, id, true)
		if err != nil {
			return Payment{}, err
		}
		now, err := s.clock.Read(ctx, tx, r.merchantID)
		if err != nil {
			return Payment{}, err
		}
		if !payable(r, now) {
			return s.view(r), fault.State("gateway payment %d is %s; it can no longer be paid", r.id, r.status)
		}
		r.attempts++
		out := Outcome{Approved: a.Sandbox == "pay", Reason: "Declined (sandbox decline button)"}
		var charge Charge
		if a.Card != nil {
			card, err := CheckCard(*a.Card, now)
			if err != nil {
				return Payment{}, err
			}
			r.cardBrand, r.cardLast4 = card.Brand, card.Last4
			charge = Charge{Reference: strconv.FormatInt(r.id, 10) + "-" + strconv.Itoa(r.attempts),
				Currency: r.currency, Amount: r.amount, Card: card}
			out, err = s.cards.Authorize(ctx, charge)
			if err != nil {
				return Payment{}, err
			}
		}
		if !out.Approved {
			r.failureReason = out.Reason
			if err := s.setStatus(ctx, tx, &r, Failed, now); err != nil {
				return Payment{}, err
			}
			return s.view(r), nil
		}
		if err := s.credit(ctx, tx, &r, now); err != nil {
			return Payment{}, err
		}
		if err := s.afterApproval(ctx, tx, r.merchantID, charge, out, now); err != nil {
			return Payment{}, err
		}
		return s.view(r), nil
	})
}

// credit records the paid order: a done payment record in balance history
// and the amount from outside into the available balance, in the same
// transaction as the status change and its notification.
func (s *Service) credit(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	balanceID, err := creditAvailable(ctx, tx, r.merchantID, r.accountID, r.currency, r.amount, strconv.FormatInt(r.id, 10), "gateway.paid", now)
	if err != nil {
		return err
	}
	paidAt := now.UnixMilli()
	r.balanceID, r.paidAt, r.failureReason = &balanceID, &paidAt, ""
	r.paidWith = "card"
	if err := s.withdrawPayID(ctx, tx, *r); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, r, Paid, now)
}

// creditAvailable writes a done payment record of amount with reference and
// posts the amount from outside into the account's available balance; it
// returns the record's Balance ID. The caller holds the account's lock.
func creditAvailable(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, currency string, amount int64,
	reference, kind string, now time.Time) (string, error) {
	rec := ledger.Record{MerchantID: merchantID, AccountID: accountID, Currency: currency,
		RequestType: ledger.MoneyIn, TransactionType: ledger.Payment, Status: ledger.Done,
		Amount: amount, Total: amount, ReferenceID: reference, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return "", err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchantID, Currency: currency, Kind: kind,
		RecordID: rec.ID, At: now, Legs: []ledger.Leg{
			{Account: accountID, Bucket: ledger.External, Amount: -amount},
			{Account: accountID, Bucket: ledger.Available, Amount: amount},
		}}); err != nil {
		return "", err
	}
	return rec.ID, nil
}
