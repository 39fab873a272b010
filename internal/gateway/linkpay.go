package gateway

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/qr"
	"payd/internal/store"
)

// The hosted page of a payin link (package web) reaches it by its uuid and
// the payment_link_url's token, not by merchant credentials.

// LinkPage is what a payin link's page shows.
type LinkPage struct {
	Link
	MerchantName string
	// Zone is the merchant's time zone, the page's deadline's.
	Zone   *time.Location
	Method LinkMethod
	// Payable: the customer may (still) pay: pending or failed, before expires_at.
	Payable bool
	// Now is the time on the merchant's clock (for the card expiry check).
	Now time.Time
	// FrameAncestors are the origins that may show the page in a frame and
	// receive its svc_payment_event messages: redirect_url.success's origin
	// and the origins the merchant lists (CONTRACT §11).
	FrameAncestors []string
	// QRString is the KHQR payload of a payable kh_khqr_usd link.
	QRString string
	// AccountNumber is the merchant's account a bank transfer goes to.
	AccountNumber string
}

// State is the page_state of the link as it stands.
func (l Link) State() PageState { return PageState(l.Status) }

// LinkPage returns the link behind a payment_link_url; a wrong token
// answers as an unknown uuid.
func (s *Service) LinkPage(ctx context.Context, uuid, token string) (LinkPage, error) {
	if !s.validLinkToken(uuid, token) {
		return LinkPage{}, linkNotFound(uuid)
	}
	q := s.db.Read()
	r, err := s.getLink(ctx, q, "", uuid, false)
	if err != nil {
		return LinkPage{}, err
	}
	var name, accountNumber, zone string
	if err := q.QueryRowContext(ctx, `SELECT m.name, a.account_number, m.timezone FROM merchants m JOIN accounts a ON a.merchant_id = m.id
		WHERE m.id = $1 AND a.id = $2`, r.merchantID, r.accountID).Scan(&name, &accountNumber, &zone); err != nil {
		return LinkPage{}, err
	}
	now, err := s.clock.Read(ctx, q, r.merchantID)
	if err != nil {
		return LinkPage{}, err
	}
	listed, err := merchant.EmbedOrigins(ctx, q, r.merchantID)
	if err != nil {
		return LinkPage{}, err
	}
	m, _ := LookupLinkMethod(r.method)
	pg := LinkPage{Link: s.linkView(r), MerchantName: name, Zone: merchant.Location(zone), Method: m, Now: now, Payable: linkPayable(r, now),
		FrameAncestors: frameAncestors(r.successURL, listed), AccountNumber: accountNumber}
	if pg.Payable && m.Kind == KindKHQR {
		if pg.QRString, err = khqrOf(r, name); err != nil {
			return LinkPage{}, err
		}
	}
	return pg, nil
}

func linkPayable(r linkRow, now time.Time) bool {
	return (r.status == LinkPending || r.status == LinkFailed) && now.UnixMilli() < r.expiresAt
}

// frameAncestors is the origin of success followed by the listed origins,
// without repeats.
func frameAncestors(success string, listed []string) []string {
	var out []string
	if u, err := url.Parse(success); err == nil {
		if o, err := merchant.CheckOrigin(u.Scheme + "://" + u.Host); err == nil {
			out = append(out, o)
		}
	}
	for _, o := range listed {
		if len(out) == 0 || o != out[0] {
			out = append(out, o)
		}
	}
	return out
}

// khqrOf is the KHQR of a kh_khqr_usd link: pay its amount in USD to the
// merchant's Bakong account (in the sandbox, one named after the merchant
// id), with the link's uuid as bill number, valid until the link expires.
func khqrOf(r linkRow, merchantName string) (string, error) {
	c := r.cur
	id := strings.ToLower(r.merchantID)
	return qr.KHQR(qr.KHQRParams{
		BakongAccountID: "payd_" + id + "@payd", MerchantID: "PAYD" + strings.ToUpper(id), AcquiringBank: "payd sandbox",
		MerchantName: khqrName(merchantName), MerchantCity: "Phnom Penh", Currency: qr.CurrencyUSD,
		Amount: money.Format(r.amount, c), AdditionalData: qr.AdditionalData{BillNumber: r.uuid},
		CreatedAt: time.UnixMilli(r.createdAt), ExpiresAt: time.UnixMilli(r.expiresAt),
	})
}

// khqrName is the merchant's name as a KHQR carries it: printable ASCII, at
// most 25 characters.
func khqrName(name string) string {
	var b strings.Builder
	for _, c := range name {
		if c >= ' ' && c <= '~' && b.Len() < 25 {
			b.WriteRune(c)
		}
	}
	if out := strings.TrimSpace(b.String()); out != "" {
		return out
	}
	return "PAYD MERCHANT"
}

// PayLink runs one attempt on a link's page: a card (card methods), or a
// press of the sandbox pay or decline button (every method). Only a payable
// link moves: the account and the row are locked, so concurrent attempts
// (double clicks, two tabs) queue and the later ones find the link paid
// (409 INVALID_STATE) — a paid link credits the balance exactly once.
func (s *Service) PayLink(ctx context.Context, uuid, token string, a Attempt) (Link, error) {
	if !s.validLinkToken(uuid, token) {
		return Link{}, linkNotFound(uuid)
	}
	if a.Sandbox != "" && a.Sandbox != "pay" && a.Sandbox != "decline" {
		return Link{}, fault.Field("outcome", "must be pay or decline")
	}
	if a.Sandbox == "" && a.Card == nil {
		return Link{}, fault.Field("cc-number", "is required")
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Link, error) {
		r, err := s.getLink(ctx, tx, "", uuid, true)
		if err != nil {
			return Link{}, err
		}
		now, err := s.clock.Read(ctx, tx, r.merchantID)
		if err != nil {
			return Link{}, err
		}
		if !linkPayable(r, now) {
			return s.linkView(r), fault.State("payin link %s is %s; it can no longer be paid", r.uuid, r.status)
		}
		m, _ := LookupLinkMethod(r.method)
		if a.Card != nil && m.Kind != KindCard {
			return Link{}, fault.Field("cc-number", "is not taken by "+m.Code)
		}
		r.attempts++
		out := Outcome{Approved: a.Sandbox == "pay", Reason: "Declined (sandbox decline button)"}
		var charge Charge
		if a.Card != nil {
			card, err := CheckCard(*a.Card, now)
			if err != nil {
				return Link{}, err
			}
			r.cardBrand, r.cardLast4 = card.Brand, card.Last4
			charge = Charge{Reference: r.uuid + "-" + strconv.Itoa(r.attempts), Currency: r.currency, Amount: r.amount, Card: card}
			out, err = s.cards.Authorize(ctx, charge)
			if err != nil {
				return Link{}, err
			}
		}
		if !out.Approved {
			r.failureReason = out.Reason
			if err := s.setLinkStatus(ctx, tx, &r, LinkFailed, now); err != nil {
				return Link{}, err
			}
			return s.linkView(r), nil
		}
		balanceID, err := creditAvailable(ctx, tx, r.merchantID, r.accountID, r.currency, r.amount, r.uuid, "payin_link.paid", now)
		if err != nil {
			return Link{}, err
		}
		paidAt := now.UnixMilli()
		r.balanceID, r.paidAt, r.failureReason = &balanceID, &paidAt, ""
		if err := s.setLinkStatus(ctx, tx, &r, LinkPaid, now); err != nil {
			return Link{}, err
		}
		if err := s.afterApproval(ctx, tx, r.merchantID, charge, out, now); err != nil {
			return Link{}, err
		}
		return s.linkView(r), nil
	})
}
