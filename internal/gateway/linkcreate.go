package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// LinkRequest is the body of POST /v3/payin_links.
type LinkRequest struct {
	Amount              money.Input    `json:"amount" required:"true" doc:"Positive, within the method's limits, with at most the currency's decimals; a JSON number or a decimal string." example:"125.50"`
	Currency            string         `json:"currency" required:"true" doc:"The method's currency; the merchant needs a payments account in it (422 CURRENCY_NOT_SUPPORTED otherwise)." example:"NZD"`
	PayinMethodCode     string         `json:"payin_method_code" required:"true" doc:"nz_card_nzd (1.00–100,000.00 NZD), hk_card_hkd (5.00–800,000.00 HKD), mw_bank_mwk (2,000–50,000,000 MWK), tz_bank_tzs (1,000–50,000,000 TZS), kh_khqr_usd (1.00–10,000.00 USD), ug_bank_ugx (15,000–36,000,000 UGX; only where the UGX account enables it)." example:"nz_card_nzd"`
	Description         string         `json:"description,omitempty" doc:"Shown on the page; at most 255 characters." example:"Order 1001 at Example Shop"`
	RedirectURL         RedirectURL    `json:"redirect_url" required:"true"`
	WebhookNotification webhook.Target `json:"webhook_notification,omitempty" doc:"Receives payin_link.<status> (failed, paid, expired) with the link record as body and authorization_header sent verbatim as Authorization."`
	MetaData            map[string]any `json:"meta_data,omitempty" doc:"Any JSON object (at most 4 KB encoded, nested at most 5 deep), echoed in the record and its webhooks."`
}

// LinkCreated is the answer of POST /v3/payin_links.
type LinkCreated struct {
	UUID           string     `json:"uuid"`
	PaymentLinkURL string     `json:"payment_link_url" doc:"The hosted page: send the customer there, or show it in an iframe on redirect_url.success's origin or an origin the merchant listed."`
	ExpiresAt      clock.Time `json:"expires_at" doc:"The link stops taking payments 24 hours after creation, on the merchant's clock, and becomes expired."`
	Status         LinkStatus `json:"status" enum:"pending"`
}

// Bounds of a link request.
const (
	maxMetaDataBytes = 4 << 10
	maxMetaDataDepth = 5
)

// checkedLink is a link request once validated.
type checkedLink struct {
	method   LinkMethod
	amount   int64
	metaData string
}

// validateLink checks every rule that needs no database: the fields first
// (VALIDATION_FAILED naming each), then the method's currency
// (METHOD_NOT_ENABLED) and its amount limits (AMOUNT_OUT_OF_RANGE).
func (s *Service) validateLink(r *LinkRequest) (checkedLink, error) {
	f := fault.Fields{}
	m, known := LookupLinkMethod(r.PayinMethodCode)
	switch {
	case r.PayinMethodCode == "":
		f.Add("payin_method_code", "is required")
	case !known:
		f.Add("payin_method_code", "is not a Payment Gateway 3 method (nz_card_nzd, hk_card_hkd, mw_bank_mwk, tz_bank_tzs, kh_khqr_usd, ug_bank_ugx)")
	}
	cur, err := money.Lookup(r.Currency)
	switch {
	case r.Currency == "":
		f.Add("currency", "is required")
	case err != nil:
		f.Add("currency", "is not an ISO 4217 currency code")
	}
	var amount int64
	if err == nil {
		amount, _, err = money.ParseField("amount", r.Amount, cur)
		if e, ok := fault.As(err); ok && e.Code == fault.CodeAmountOutOfRange {
			return checkedLink{}, err
		}
		if err != nil {
			f.Add("amount", fieldProblem(err))
		}
	} else if r.Amount.IsZero() {
		f.Add("amount", "is required")
	}
	if !textOK(r.Description, maxTextLen) {
		f.Add("description", fmt.Sprintf("must be at most %d characters without control characters", maxTextLen))
	}
	s.checkURL(f, "redirect_url.success", r.RedirectURL.Success, true)
	s.checkURL(f, "redirect_url.failure", r.RedirectURL.Failure, false)
	if err := s.policy.Validate("webhook_notification", r.WebhookNotification); err != nil {
		e, ok := fault.As(err)
		if !ok || len(e.Fields) == 0 {
			return checkedLink{}, err
		}
		for k, v := range e.Fields {
			f.Add(k, v)
		}
	}
	metaData, problem := encodeMetaData(r.MetaData)
	if problem != "" {
		f.Add("meta_data", problem)
	}
	if err := f.Err(); err != nil {
		return checkedLink{}, err
	}
	if m.Currency != cur.Code {
		return checkedLink{}, fault.Rule(fault.CodeMethodNotEnabled, "%s takes %s, not %s", m.Code, m.Currency, cur.Code)
	}
	if amount < m.MinMinor || amount > m.MaxMinor {
		return checkedLink{}, fault.Rule(fault.CodeAmountOutOfRange, "%s takes %s to %s %s",
			m.Code, money.Format(m.MinMinor, cur), money.Format(m.MaxMinor, cur), cur.Code)
	}
	return checkedLink{method: m, amount: amount, metaData: metaData}, nil
}

// encodeMetaData bounds and encodes the merchant's meta_data object.
func encodeMetaData(m map[string]any) (string, string) {
	if m == nil {
		return "{}", ""
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", "must be a JSON object"
	}
	if len(raw) > maxMetaDataBytes {
		return "", fmt.Sprintf("must be at most %d bytes of JSON", maxMetaDataBytes)
	}
	if depthOf(m) > maxMetaDataDepth {
		return "", fmt.Sprintf("must be nested at most %d deep", maxMetaDataDepth)
	}
	return string(raw), ""
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
	default:
		return 0
	}
	return d + 1
}

// CreateLink makes a payin link (POST /v3/payin_links) in the merchant's
// payments account of the request's currency, and schedules its expiry on
// the merchant's clock.
func (s *Service) CreateLink(ctx context.Context, tx *store.Tx, p merchant.Principal, req LinkRequest) (LinkCreated, error) {
	c, err := s.validateLink(&req)
	if err != nil {
		return LinkCreated{}, err
	}
	m := c.method
	acc, err := merchant.AccountByCurrency(ctx, tx, p.MerchantID, merchant.Payments, m.Currency)
	if fault.Is(err, fault.CodeNotFound) {
		return LinkCreated{}, fault.Rule(fault.CodeCurrency, "this merchant has no %s payments account, which %s needs", m.Currency, m.Code)
	}
	if err != nil {
		return LinkCreated{}, err
	}
	if !m.enabledOn(acc.Methods) {
		return LinkCreated{}, fault.Rule(fault.CodeMethodNotEnabled, "%s is not enabled on this merchant's %s account", m.Code, m.Currency)
	}
	now := s.clock.Of(p)
	expiresAt := now.Add(PayinLinkLifetime)
	uuid, err := store.ClaimRandom(ctx, tx, store.KeyPayinLink, p.MerchantID, func() string { return store.RandomID(store.UUIDLen) })
	if err == nil {
		err = tx.Send(ctx, `INSERT INTO payin_links (uuid, merchant_id, account_id, method, currency, amount,
			description, success_url, failure_url, endpoint_url, authorization_header, meta_data, status, expires_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)`,
			uuid, p.MerchantID, acc.ID, m.Code, m.Currency, c.amount, strings.TrimSpace(req.Description), req.RedirectURL.Success,
			req.RedirectURL.Failure, req.WebhookNotification.EndpointURL, req.WebhookNotification.AuthorizationHeader, c.metaData,
			string(LinkPending), expiresAt.UnixMilli(), now.UnixMilli())
	}
	if err != nil {
		return LinkCreated{}, fmt.Errorf("create payin link: %w", err)
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobLinkExpire, linkRef{MerchantID: p.MerchantID, UUID: uuid},
		job.Options{ClockOf: p.MerchantID, RunAt: expiresAt, UniqueKey: jobLinkExpire.String() + ":" + uuid}); err != nil {
		return LinkCreated{}, err
	}
	return LinkCreated{UUID: uuid, PaymentLinkURL: s.LinkURL(uuid), ExpiresAt: clock.Time{T: expiresAt}, Status: LinkPending}, nil
}
