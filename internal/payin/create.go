package payin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/contact"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/param"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Request is the body of POST /v2/payins.
type Request struct {
	Currency            string            `json:"currency" doc:"Must be the currency of the calling app's account." example:"IDR"`
	GST                 bool              `json:"gst,omitempty" doc:"true only for AU merchants in AUD: adds 10 % GST."`
	Amount              money.Input       `json:"amount" required:"true" example:"100000"`
	Name                string            `json:"name,omitempty" doc:"Customer's name, at most 200 characters." example:"Jane Payer"`
	Email               string            `json:"email,omitempty" doc:"Customer's email; methods that require a contact look the contact up by it." example:"jane@example.com"`
	ExternalID          string            `json:"external_id,omitempty" doc:"The merchant's reference, at most 100 characters." example:"order-1042"`
	Description         string            `json:"description,omitempty" doc:"At most 255 characters." example:"Order 1042"`
	PayinMethodName     string            `json:"payin_method_name" required:"true" example:"id_bank_qris_idr"`
	PayinMethodParams   map[string]any    `json:"payin_method_params,omitempty" doc:"The method's fields: GET /v2/payins/payin_method/params lists them."`
	WebhookNotification webhook.Target    `json:"webhook_notification,omitempty"`
	ExpiredAt           clock.Input       `json:"expired_at,omitempty" doc:"When a pending payin expires: 1 minute to 30 days ahead; default 24 hours." example:"2025-01-31T09:00:00Z"`
	Metadata            map[string]string `json:"metadata,omitempty" doc:"Up to 50 string pairs, keys at most 40 and values at most 500 characters."`
}

// Bounds of a payin request.
const (
	maxNameLen        = 200
	maxEmailLen       = 254
	maxExternalIDLen  = 100
	maxDescriptionLen = 255
	maxMetadata       = 50
	minExpiry         = time.Minute
	maxExpiry         = 30 * 24 * time.Hour
	defaultExpiry     = 24 * time.Hour
)

// gstBPS is the Australian GST rate: 10 %.
const gstBPS = 1000

// checked is a create request once validated: its method, and its money in
// minor units.
type checked struct {
	method    Method
	currency  money.Currency
	amount    int64
	gstAmount int64
	total     int64
	expiredAt time.Time
}

// validate checks everything that needs no database: first the members'
// shapes (all reported together), then the rules that need them.
func (s *Service) validate(p merchant.Principal, r *Request, now time.Time) (checked, error) {
	f := fault.Fields{}
	s.checkMembers(f, r)
	c := checked{expiredAt: now.Add(defaultExpiry)}
	if r.ExpiredAt.Set {
		c.expiredAt = r.ExpiredAt.T
		if d := c.expiredAt.Sub(now); d < minExpiry || d > maxExpiry {
			f.Add("expired_at", "must be between 1 minute and 30 days from "+merchant.NowText(p, now))
		}
	}
	if err := f.Err(); err != nil {
		return checked{}, err
	}
	if r.Currency != p.Currency {
		return checked{}, fault.Rule(fault.CodeCurrency, "currency %s is not the currency of this app's account (%s)", r.Currency, p.Currency)
	}
	m, err := Lookup(r.PayinMethodName)
	if err != nil {
		return checked{}, fault.Field("payin_method_name", "is not a payin method: GET /v2/payins/payin_methods lists them")
	}
	if m.Currency != r.Currency {
		return checked{}, fault.Rule(fault.CodeMethodNotEnabled, "%s takes %s, not %s", m.Code, m.Currency, r.Currency)
	}
	c.method, c.currency = m, m.currency
	if err := c.checkAmount(p, r); err != nil {
		return checked{}, err
	}
	params := r.PayinMethodParams
	if params == nil {
		params = map[string]any{}
	}
	param.Validate("payin_method_params", m.Code, m.Params, m.Rules, params, f)
	return c, f.Err()
}

// checkMembers checks the lengths and shapes of r's members.
func (s *Service) checkMembers(f fault.Fields, r *Request) {
	text := func(name, v string, max int) {
		if utf8.RuneCountInString(v) > max || !utf8.ValidString(v) {
			f.Add(name, fmt.Sprintf("must be at most %d characters", max))
		}
	}
	text("name", r.Name, maxNameLen)
	text("email", r.Email, maxEmailLen)
	text("external_id", r.ExternalID, maxExternalIDLen)
	text("description", r.Description, maxDescriptionLen)
	if r.Email != "" && param.Email(r.Email) != "" {
		f.Add("email", "must be an email address")
	}
	if len(r.Metadata) > maxMetadata {
		f.Add("metadata", fmt.Sprintf("has more than %d members", maxMetadata))
	}
	for k, v := range r.Metadata {
		if k == "" || len(k) > 40 {
			f.Add("metadata", "keys must be 1 to 40 characters")
		} else if utf8.RuneCountInString(v) > 500 {
			f.Add("metadata."+k, "must be at most 500 characters")
		}
	}
	if err := s.policy.Validate("webhook_notification", r.WebhookNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	if r.PayinMethodName == "" {
		f.Add("payin_method_name", "is required")
	}
	if r.Currency == "" {
		f.Add("currency", "is required")
	}
}

// checkAmount parses r's amount within the method's limits and adds GST.
func (c *checked) checkAmount(p merchant.Principal, r *Request) error {
	m, cur := c.method, c.currency
	amount, _, err := money.ParseField("amount", r.Amount, cur)
	if err != nil {
		return err
	}
	if amount < m.MinMinor || amount > m.MaxMinor {
		return fault.Rule(fault.CodeAmountOutOfRange, "%s takes %s to %s %s",
			m.Code, money.Format(m.MinMinor, cur), money.Format(m.MaxMinor, cur), cur.Code)
	}
	c.amount, c.total = amount, amount
	if r.GST {
		// Spec: the GST flag may be true only for AU merchants processing AUD.
		if p.Country != "AU" || cur.Code != "AUD" {
			return fault.Rule(CodeGSTNotAllowed, "gst may be true only for AU merchants in AUD")
		}
		c.gstAmount = money.Percent(amount, gstBPS)
		c.total = amount + c.gstAmount
	}
	return nil
}

// Create makes a payin and returns its record.
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request) (Payin, error) {
	now := s.clock.Of(p)
	c, err := s.validate(p, &r, now)
	if err != nil {
		return Payin{}, err
	}
	m := c.method
	// The principal is the payments account in the payin's currency
	// (validate), with its methods as of its authentication.
	if !isEnabled(m, p.Currency, p.Methods) {
		return Payin{}, fault.Rule(fault.CodeMethodNotEnabled, "%s is not enabled on this account", m.Code)
	}
	if err := s.checkContact(ctx, tx, p.MerchantID, m, r.Email); err != nil {
		return Payin{}, err
	}
	rw := row{
		merchantID: p.MerchantID, accountID: p.AccountID, method: m.Code, currency: r.Currency, meth: m, cur: c.currency, status: Pending,
		amount: c.amount, gst: r.GST, gstAmount: c.gstAmount, total: c.total,
		name: r.Name, email: r.Email, externalID: r.ExternalID, description: r.Description,
		endpointURL: r.WebhookNotification.EndpointURL, authorizationHeader: r.WebhookNotification.AuthorizationHeader,
		expiredAt: c.expiredAt.UnixMilli(), createdAt: now.UnixMilli(), updatedAt: now.UnixMilli(),
	}
	if m.OTP {
		rw.stage = StageAuthorizeOTP
	}
	params, _ := json.Marshal(nonNil(r.PayinMethodParams))
	metadata, _ := json.Marshal(nonNilStrings(r.Metadata))
	rw.params, rw.metadata = string(params), string(metadata)
	uuid, err := store.ClaimRandom(ctx, tx, store.KeyPayin, p.MerchantID, func() string { return store.RandomID(store.UUIDLen) })
	if err != nil {
		return Payin{}, fmt.Errorf("create payin: %w", err)
	}
	rw.uuid = uuid
	if rw.payCode, err = s.initialPayCode(m, rw); err != nil {
		return Payin{}, err
	}
	if err := tx.Send(ctx, `INSERT INTO payins (uuid, merchant_id, account_id, method, currency, status, stage,
		amount, gst, gst_amount, total, name, email, external_id, description, params, pay_code, metadata,
		endpoint_url, authorization_header, expired_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $22)`,
		uuid, rw.merchantID, rw.accountID, rw.method, rw.currency, string(rw.status), rw.stage, rw.amount, rw.gst, rw.gstAmount,
		rw.total, rw.name, rw.email, rw.externalID, rw.description, rw.params, rw.payCode, rw.metadata,
		rw.endpointURL, rw.authorizationHeader, rw.expiredAt, rw.createdAt); err != nil {
		return Payin{}, fmt.Errorf("create payin: %w", err)
	}
	if err := claimPayCode(ctx, tx, rw); err != nil {
		return Payin{}, err
	}
	if err := s.enqueueExpiry(ctx, tx, p.MerchantID, c.expiredAt); err != nil {
		return Payin{}, err
	}
	if m.Family == BankTransfer {
		if err := job.Enqueue(ctx, tx, s.queue, jobIssuePayCode, ref{MerchantID: p.MerchantID, UUID: uuid},
			job.Options{ClockOf: p.MerchantID, RunAt: now.Add(s.PayCodeDelay)}); err != nil {
			return Payin{}, err
		}
	}
	return rw.view(), nil
}

// checkContact enforces require_contact and require_kyc.
func (s *Service) checkContact(ctx context.Context, q store.Querier, merchantID string, m Method, email string) error {
	if !m.RequireContact && !m.RequireKYC {
		return nil
	}
	if strings.TrimSpace(email) == "" {
		return fault.Field("email", "is required: "+m.Code+" needs a contact with this email")
	}
	st, err := s.contacts.Standing(ctx, q, merchantID, email)
	if err != nil {
		return err
	}
	if !st.Exists {
		return fault.Rule(CodeContactRequired, "%s requires a contact with email %s: create it with POST /v2/contacts", m.Code, email)
	}
	if m.RequireKYC && st.KYC != contact.KYCApproved {
		return fault.Rule(CodeKYCRequired, "%s requires the contact's KYC to be approved (it is %q)", m.Code, st.KYC)
	}
	return nil
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilStrings(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// ref names a payin in a job's payload.
type ref struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}
