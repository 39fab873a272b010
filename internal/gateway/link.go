package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// Payment Gateway 3 (CONTRACT §11, §16): a payin link. The merchant creates
// it with POST /v3/payin_links for one method; the customer pays on its
// hosted page at payment_link_url, which the merchant may show in an iframe
// on its own site; the merchant hears of every change at the link's
// webhook_notification (payin_link.<status>). A paid link credits the
// account of its currency once, whatever the number of clicks or tabs.

// LinkStatus is a payin link's status (CONTRACT §16).
type LinkStatus string

const (
	LinkPending LinkStatus = "pending"
	LinkPaid    LinkStatus = "paid"
	LinkFailed  LinkStatus = "failed"
	LinkExpired LinkStatus = "expired"
)

// PageState is what the hosted page shows and posts in its svc_payment_event
// messages: a link's status, or processing while an attempt is under way.
type PageState string

const (
	PagePending    PageState = "pending"
	PageProcessing PageState = "processing"
	PagePaid       PageState = "paid"
	PageFailed     PageState = "failed"
	PageExpired    PageState = "expired"
)

// PayinLinkLifetime is how long a payin link stays payable.
const PayinLinkLifetime = 24 * time.Hour

// Link is a payin link as GET /v3/payin_links/detail returns it and as its
// payin_link.<status> webhooks carry it.
type Link struct {
	UUID                string          `json:"uuid"`
	Status              LinkStatus      `json:"status" enum:"pending,paid,failed,expired" doc:"pending: waiting for the customer; paid: paid and the balance credited (final); failed: the last attempt was declined, the customer may retry until expires_at; expired: not paid by expires_at (final)."`
	Amount              money.String    `json:"amount"`
	Currency            string          `json:"currency" enum:"NZD,HKD,MWK,TZS,USD,UGX"`
	PayinMethodCode     string          `json:"payin_method_code" enum:"nz_card_nzd,hk_card_hkd,mw_bank_mwk,tz_bank_tzs,kh_khqr_usd,ug_bank_ugx"`
	Description         string          `json:"description"`
	RedirectURL         RedirectURL     `json:"redirect_url"`
	WebhookNotification *webhook.Target `json:"webhook_notification" doc:"Where payin_link.<status> events go; null when none was given."`
	MetaData            map[string]any  `json:"meta_data" doc:"The merchant's object, as given."`
	PaymentLinkURL      string          `json:"payment_link_url" doc:"The hosted page the customer pays on."`
	Card                *CardSummary    `json:"card" doc:"The brand and last four digits of the card of the latest attempt; null before one (card methods only)."`
	FailureReason       string          `json:"failure_reason" doc:"Why the latest attempt failed; empty otherwise."`
	Attempts            int             `json:"attempts" doc:"How many attempts the customer made."`
	BalanceID           *string         `json:"balance_id" doc:"The payment's balance record once paid."`
	ExpiresAt           clock.Time      `json:"expires_at"`
	PaidAt              *clock.Time     `json:"paid_at"`
	CreatedAt           clock.Time      `json:"created_at"`
	UpdatedAt           clock.Time      `json:"updated_at"`
}

// RedirectURL is where the hosted page sends the customer.
type RedirectURL struct {
	Success string `json:"success" required:"true" doc:"Where a paid customer goes: an absolute http(s) URL (https in production). Its origin may frame the page." example:"https://shop.example/orders/1001/paid"`
	Failure string `json:"failure,omitempty" doc:"Where a customer goes when the payment fails or is declined; without it the customer stays on the page and may retry." example:"https://shop.example/orders/1001/failed"`
}

// linkRow is a payin link as stored.
type linkRow struct {
	uuid, merchantID, method, currency  string
	cur                                 money.Currency
	accountID, amount                   int64
	description, successURL, failureURL string
	endpointURL, authorizationHeader    string
	metaData                            string
	status                              LinkStatus
	cardBrand, cardLast4, failureReason string
	attempts                            int
	balanceID                           *string
	expiresAt, createdAt, updatedAt     int64
	paidAt                              *int64
}

const linkColumns = `uuid, merchant_id, account_id, method, currency, amount, description, success_url, failure_url, endpoint_url,
	authorization_header, meta_data, status, card_brand, card_last4, failure_reason, attempts, balance_id, expires_at, paid_at,
	created_at, updated_at`

func scanLink(sc interface{ Scan(...any) error }) (linkRow, error) {
	var r linkRow
	err := sc.Scan(&r.uuid, &r.merchantID, &r.accountID, &r.method, &r.currency, &r.amount, &r.description, &r.successURL,
		&r.failureURL, &r.endpointURL, &r.authorizationHeader, &r.metaData, &r.status, &r.cardBrand, &r.cardLast4,
		&r.failureReason, &r.attempts, &r.balanceID, &r.expiresAt, &r.paidAt, &r.createdAt, &r.updatedAt)
	if err != nil {
		return r, err
	}
	if r.cur, err = money.Lookup(r.currency); err != nil {
		return r, fmt.Errorf("payin link %s: %w", r.uuid, err)
	}
	return r, nil
}

func (r linkRow) target() webhook.Target {
	return webhook.Target{EndpointURL: r.endpointURL, AuthorizationHeader: r.authorizationHeader}
}

func (s *Service) linkView(r linkRow) Link {
	c := r.cur
	l := Link{
		UUID: r.uuid, Status: r.status, Amount: money.StringOf(r.amount, c), Currency: r.currency, PayinMethodCode: r.method,
		Description: r.description, RedirectURL: RedirectURL{Success: r.successURL, Failure: r.failureURL},
		PaymentLinkURL: s.LinkURL(r.uuid), FailureReason: r.failureReason, Attempts: r.attempts, BalanceID: r.balanceID,
		ExpiresAt: clock.Time{T: clock.FromMillis(r.expiresAt)},
		CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}, UpdatedAt: clock.Time{T: clock.FromMillis(r.updatedAt)},
	}
	if t := r.target(); !t.IsZero() {
		l.WebhookNotification = &t
	}
	json.Unmarshal([]byte(r.metaData), &l.MetaData)
	if l.MetaData == nil {
		l.MetaData = map[string]any{}
	}
	if r.cardBrand != "" {
		l.Card = &CardSummary{Brand: r.cardBrand, Last4: r.cardLast4}
	}
	if r.paidAt != nil {
		l.PaidAt = &clock.Time{T: clock.FromMillis(*r.paidAt)}
	}
	return l
}

// LinkURL is the hosted page of link uuid; its token keeps others from
// reaching it by guessing uuids.
func (s *Service) LinkURL(uuid string) string {
	return s.PublicURL + "/links/" + uuid + "?t=" + s.mac("payin_link:"+uuid)
}

// LinkFormToken is the CSRF token of the forms of link uuid's page: an
// HMAC of its own, so that the page's address alone does not post them.
func (s *Service) LinkFormToken(uuid string) string { return s.mac("payin_link_form:" + uuid) }

func (s *Service) mac(msg string) string {
	m := hmac.New(sha256.New, s.linkKey)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

func (s *Service) validLinkToken(uuid, token string) bool {
	return hmac.Equal([]byte(s.mac("payin_link:"+uuid)), []byte(token))
}

// ValidLinkForm reports whether token is the form token of link uuid.
func (s *Service) ValidLinkForm(uuid, token string) bool {
	return hmac.Equal([]byte(s.LinkFormToken(uuid)), []byte(token))
}

func linkNotFound(uuid string) error { return fault.NotFoundf("no payin link %s", uuid) }

// getLink reads merchantID's link uuid; lock (for a change) takes its
// account's ledger lock first, then the row's, as every ledger writer does.
// An empty merchantID reads by uuid alone (the page, whose token is its
// credential), through the uuid's global key.
func (s *Service) getLink(ctx context.Context, q store.Querier, merchantID, uuid string, lock bool) (linkRow, error) {
	if merchantID == "" {
		owner, err := store.KeyOwner(ctx, q, store.KeyPayinLink, uuid)
		if isNoRows(err) {
			return linkRow{}, linkNotFound(uuid)
		}
		if err != nil {
			return linkRow{}, err
		}
		merchantID = owner
	}
	const byMerchant = `uuid = $1 AND merchant_id = $2`
	where, args, forUpdate := byMerchant, []any{uuid, merchantID}, ""
	if tx, ok := q.(*store.Tx); ok && lock {
		var accountID int64
		var currency string
		err := tx.QueryRowContext(ctx, `SELECT account_id, currency FROM payin_links WHERE `+where, args...).
			Scan(&accountID, &currency)
		if isNoRows(err) {
			return linkRow{}, linkNotFound(uuid)
		}
		if err != nil {
			return linkRow{}, fmt.Errorf("read payin link %s: %w", uuid, err)
		}
		if err := ledger.LockAccount(ctx, tx, merchantID, accountID, currency); err != nil {
			return linkRow{}, err
		}
		forUpdate = s.db.ForUpdate()
	}
	r, err := scanLink(q.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM payin_links WHERE `+where+forUpdate, args...))
	if isNoRows(err) {
		return linkRow{}, linkNotFound(uuid)
	}
	if err != nil {
		return linkRow{}, fmt.Errorf("read payin link %s: %w", uuid, err)
	}
	return r, nil
}

// GetLink returns the caller's link uuid (GET /v3/payin_links/detail);
// another merchant's answers as an unknown uuid.
func (s *Service) GetLink(ctx context.Context, p merchant.Principal, uuid string) (Link, error) {
	if uuid == "" {
		return Link{}, fault.Field("uuid", "is required")
	}
	if len(uuid) > 64 {
		return Link{}, linkNotFound(uuid)
	}
	r, err := s.getLink(ctx, s.db.Read(), p.MerchantID, uuid, false)
	if err != nil {
		return Link{}, err
	}
	return s.linkView(r), nil
}

// setLinkStatus writes r's changed columns and emits payin_link.<status>
// in the same transaction.
func (s *Service) setLinkStatus(ctx context.Context, tx *store.Tx, r *linkRow, to LinkStatus, at time.Time) error {
	r.status, r.updatedAt = to, at.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE payin_links SET status = $1, card_brand = $2, card_last4 = $3, failure_reason = $4,
		attempts = $5, balance_id = $6, paid_at = $7, updated_at = $8 WHERE uuid = $9 AND merchant_id = $10`,
		string(r.status), r.cardBrand, r.cardLast4, r.failureReason, r.attempts, r.balanceID, r.paidAt, r.updatedAt, r.uuid, r.merchantID); err != nil {
		return fmt.Errorf("update payin link %s: %w", r.uuid, err)
	}
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: "payin_link." + string(to),
		RecordUUID: r.uuid, Target: r.target(), Payload: s.linkView(*r), At: at})
	return err
}

var jobLinkExpire = job.NewKind[linkRef]("gateway.link_expire")

type linkRef struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// expireLinkJob expires a link not paid by its expires_at, on the
// merchant's clock.
func (s *Service) expireLinkJob(ctx context.Context, tx *store.Tx, _ job.Job, rf linkRef) error {
	r, err := s.getLink(ctx, tx, rf.MerchantID, rf.UUID, true)
	if err != nil || (r.status != LinkPending && r.status != LinkFailed) {
		return err
	}
	now, err := s.clock.Read(ctx, tx, r.merchantID)
	if err != nil {
		return err
	}
	return s.setLinkStatus(ctx, tx, &r, LinkExpired, now)
}
