package payid

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/param"
	"payd/internal/payin"
	"payd/internal/store"
	"payd/internal/webhook"
)

// CreateRequest is the body of POST /v1/merchants/create_payment. Its docs
// state no bound: CreateRules words them from the constants below, for the
// API document, so that what it says is what validate enforces.
type CreateRequest struct {
	Name                       string         `json:"name,omitempty" doc:"The customer's name." example:"Jane Payer"`
	GST                        bool           `json:"gst,omitempty" doc:"true only for AU merchants: adds GST to amount."`
	Amount                     money.Input    `json:"amount" required:"true" doc:"AUD, within au_payid_npp_aud's limits." example:"125.50"`
	Description                string         `json:"description,omitempty" doc:"Shown to the customer." example:"Order 1042"`
	Emails                     Emails         `json:"emails,omitempty"`
	ExternalID                 string         `json:"external_id,omitempty" doc:"The merchant's reference." example:"order-1042"`
	ExpiredAt                  clock.Input    `json:"expired_at,omitempty" doc:"When the PayID expires, on the merchant's clock." example:"2025-01-31T09:00:00Z"`
	PaymentRequestNotification webhook.Target `json:"payment_request_notification,omitempty"`
	Metadata                   map[string]any `json:"metadata,omitempty" doc:"Any JSON object, echoed in the record and in every webhook."`
}

// Bounds of a create request (CONTRACT §9).
const (
	maxNameLen        = 200
	maxDescriptionLen = 255
	maxExternalIDLen  = 100
	maxEmails         = 10
	maxMetadataBytes  = 4 << 10
	maxMetadataDepth  = 5
	minExpiry         = 15 * time.Minute
	maxExpiry         = 30 * 24 * time.Hour
	defaultExpiry     = 24 * time.Hour
	gstBPS            = 1000
)

// Rules are a create request's bounds in words, made from the constants
// above and from au_payid_npp_aud's limits, for the API document and the
// refusals: neither can say other than what validate enforces.
type Rules struct {
	// Amount is amount's range: "20.00 to 10000.00 AUD".
	Amount string
	// GST is what gst adds: "10 %".
	GST string
	// Expiry bounds expired_at: "at least 15 minutes and at most 30 days
	// ahead"; DefaultExpiry is its default, "1 day".
	Expiry, DefaultExpiry string
	// Emails bounds their number: "at most 10 addresses".
	Emails string
	// Name, Description and ExternalID bound their lengths: "at most 200 characters".
	Name, Description, ExternalID string
	// Metadata bounds the object: "at most 4096 bytes of JSON, nested at most 5 deep".
	Metadata string
}

// CreateRules are the rules of POST /v1/merchants/create_payment.
func CreateRules() Rules {
	m := limits()
	chars := func(n int) string { return fmt.Sprintf("at most %d characters", n) }
	return Rules{
		Amount:        fmt.Sprintf("%s to %s %s", money.Format(m.MinMinor, aud), money.Format(m.MaxMinor, aud), currency),
		GST:           fmt.Sprintf("%g %%", float64(gstBPS)/100),
		Expiry:        fmt.Sprintf("at least %s and at most %s ahead", durationText(minExpiry), durationText(maxExpiry)),
		DefaultExpiry: durationText(defaultExpiry),
		Emails:        fmt.Sprintf("at most %d addresses", maxEmails),
		Name:          chars(maxNameLen),
		Description:   chars(maxDescriptionLen),
		ExternalID:    chars(maxExternalIDLen),
		Metadata:      metadataText,
	}
}

// metadataText bounds a metadata object, in the refusal's words too.
var metadataText = fmt.Sprintf("at most %d bytes of JSON, nested at most %d deep", maxMetadataBytes, maxMetadataDepth)

// durationText says d in the largest whole unit of days, hours and minutes.
func durationText(d time.Duration) string {
	n, unit := int64(d/time.Minute), "minute"
	switch {
	case d%(24*time.Hour) == 0:
		n, unit = int64(d/(24*time.Hour)), "day"
	case d%time.Hour == 0:
		n, unit = int64(d/time.Hour), "hour"
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// PaymentRequest is a one-time PayID payment request as the API returns it
// and as its webhooks carry it.
type PaymentRequest struct {
	ID                         int64           `json:"id" doc:"The request's integer id."`
	RequestPayID               string          `json:"request_payid" doc:"The PayID the customer pays: this request's alone, never handed out again."`
	Name                       string          `json:"name"`
	Description                string          `json:"description"`
	ExternalID                 string          `json:"external_id"`
	Emails                     []string        `json:"emails"`
	Currency                   string          `json:"currency" enum:"AUD"`
	GST                        bool            `json:"gst"`
	Amount                     money.String    `json:"amount"`
	GSTAmount                  money.String    `json:"gst_amount"`
	Total                      money.String    `json:"total" doc:"amount + gst_amount: what the customer must pay, exactly."`
	Status                     Status          `json:"status" enum:"pending,received,expired,return_pending,return_received,return_expired,return_rejected"`
	PaidAmount                 money.String    `json:"paid_amount" doc:"What the customer paid in (0 until a payment arrives)."`
	PayerName                  string          `json:"payer_name"`
	PaidAt                     *clock.Time     `json:"paid_at"`
	ExpiredAt                  clock.Time      `json:"expired_at"`
	CancelledAt                *clock.Time     `json:"cancelled_at" doc:"When the merchant cancelled the request (its status is then expired)."`
	ReturnReason               string          `json:"return_reason" doc:"Why the money was sent back: a payment of the wrong amount, or the merchant's reason."`
	PaymentRequestNotification *webhook.Target `json:"payment_request_notification"`
	Metadata                   map[string]any  `json:"metadata"`
	BankReference              *string         `json:"bank_reference,omitempty" doc:"The key of the operator's bank entry that paid it: present only on a request a bank feed paid."`
	CreatedAt                  clock.Time      `json:"created_at"`
	UpdatedAt                  clock.Time      `json:"updated_at"`
}

// StatusView is the answer of GET /v1/payment_requests/status.
type StatusView struct {
	ID           int64        `json:"id"`
	RequestPayID string       `json:"request_payid"`
	Status       Status       `json:"status" enum:"pending,received,expired,return_pending,return_received,return_expired,return_rejected"`
	Amount       money.String `json:"amount"`
	UpdatedAt    clock.Time   `json:"updated_at"`
}

// row is a payment request as stored.
type row struct {
	id, accountID                           int64
	merchantID, payid, name, description    string
	externalID, emails, metadata            string
	gst                                     bool
	amount, gstAmount, total, fee, paid     int64
	status                                  Status
	endpoint, auth, payerName, returnReason string
	expiredAt, createdAt, updatedAt         int64
	cancelledAt, paidAt                     *int64
	balanceID, returnBalanceID              *string
	bankReference                           *string
}

const rowColumns = `id, account_id, merchant_id, payid, name, description, external_id, emails, metadata, gst, amount, gst_amount,
	total, fee, paid_amount, status, endpoint_url, authorization_header, payer_name, return_reason, expired_at, created_at, updated_at,
	cancelled_at, paid_at, balance_id, return_balance_id, bank_reference`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.accountID, &r.merchantID, &r.payid, &r.name, &r.description, &r.externalID, &r.emails, &r.metadata,
		&r.gst, &r.amount, &r.gstAmount, &r.total, &r.fee, &r.paid, &r.status, &r.endpoint, &r.auth, &r.payerName, &r.returnReason,
		&r.expiredAt, &r.createdAt, &r.updatedAt, &r.cancelledAt, &r.paidAt, &r.balanceID, &r.returnBalanceID, &r.bankReference)
	return r, err
}

func (r row) view() PaymentRequest {
	v := PaymentRequest{ID: r.id, RequestPayID: r.payid, Name: r.name, Description: r.description, ExternalID: r.externalID,
		Currency: currency, GST: r.gst, Amount: money.StringOf(r.amount, aud), GSTAmount: money.StringOf(r.gstAmount, aud),
		Total: money.StringOf(r.total, aud), Status: r.status, PaidAmount: money.StringOf(r.paid, aud), PayerName: r.payerName,
		ExpiredAt: clock.Time{T: clock.FromMillis(r.expiredAt)}, ReturnReason: r.returnReason,
		CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}, UpdatedAt: clock.Time{T: clock.FromMillis(r.updatedAt)},
		BankReference: r.bankReference}
	json.Unmarshal([]byte(r.emails), &v.Emails)
	if v.Emails == nil {
		v.Emails = []string{}
	}
	json.Unmarshal([]byte(r.metadata), &v.Metadata)
	if v.Metadata == nil {
		v.Metadata = map[string]any{}
	}
	if r.cancelledAt != nil {
		v.CancelledAt = &clock.Time{T: clock.FromMillis(*r.cancelledAt)}
	}
	if r.paidAt != nil {
		v.PaidAt = &clock.Time{T: clock.FromMillis(*r.paidAt)}
	}
	if r.endpoint != "" {
		v.PaymentRequestNotification = &webhook.Target{EndpointURL: r.endpoint, AuthorizationHeader: r.auth}
	}
	return v
}

// checked is a create request once validated.
type checked struct {
	amount, gstAmount, total int64
	expiredAt                time.Time
	emails, metadata         string
}

// validate checks every rule of §9 that needs no database.
func (s *Service) validate(p merchant.Principal, r *CreateRequest, now time.Time) (checked, error) {
	f := fault.Fields{}
	text := func(name, v string, max int) {
		if utf8.RuneCountInString(v) > max || !utf8.ValidString(v) {
			f.Add(name, fmt.Sprintf("must be at most %d characters", max))
		}
	}
	text("name", r.Name, maxNameLen)
	text("description", r.Description, maxDescriptionLen)
	text("external_id", r.ExternalID, maxExternalIDLen)
	checkEmails(f, r.Emails)
	c := checked{expiredAt: now.Add(defaultExpiry)}
	if r.ExpiredAt.Set {
		c.expiredAt = r.ExpiredAt.T
		if d := c.expiredAt.Sub(now); d < minExpiry || d > maxExpiry {
			f.Add("expired_at", "must be "+CreateRules().Expiry+" on the merchant's clock (now "+clock.Format(now)+")")
		}
	}
	metadata, problem := encodeMetadata(r.Metadata)
	if problem != "" {
		f.Add("metadata", problem)
	}
	if err := s.policy.Validate("payment_request_notification", r.PaymentRequestNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	amount, _, err := money.ParseField("amount", r.Amount, aud)
	if err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	if err := f.Err(); err != nil {
		return checked{}, err
	}
	if p.Currency != currency {
		return checked{}, fault.Rule(fault.CodeCurrency, "PayID takes AUD: use the app of the merchant's AUD account, not %s", p.Currency)
	}
	m := limits()
	if amount < m.MinMinor || amount > m.MaxMinor {
		return checked{}, fault.Rule(fault.CodeAmountOutOfRange, "a PayID request takes %s", CreateRules().Amount)
	}
	c.amount, c.total = amount, amount
	if r.GST {
		if p.Country != "AU" {
			return checked{}, fault.Rule(payin.CodeGSTNotAllowed, "gst may be true only for AU merchants")
		}
		c.gstAmount = money.Percent(amount, gstBPS)
		c.total += c.gstAmount
	}
	emails := []string(r.Emails)
	if emails == nil {
		emails = []string{}
	}
	raw, _ := json.Marshal(emails)
	c.emails, c.metadata = string(raw), metadata
	return c, nil
}

// checkEmails refuses more addresses than the bound, and each address of
// the first that the bound allows that is not one, naming it emails[i].
func checkEmails(f fault.Fields, emails Emails) {
	if len(emails) > maxEmails {
		f.Add("emails", fmt.Sprintf("has more than %d addresses", maxEmails))
		emails = emails[:maxEmails]
	}
	for i, e := range emails {
		problem := param.Email(e)
		if e == "" {
			problem = "must be an email address, not empty"
		}
		if problem != "" {
			f.Add(fmt.Sprintf("emails[%d]", i), problem)
		}
	}
}

// encodeMetadata bounds and encodes a metadata object.
func encodeMetadata(m map[string]any) (string, string) {
	if m == nil {
		return "{}", ""
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", "must be a JSON object"
	}
	if len(raw) > maxMetadataBytes || depth(m) > maxMetadataDepth {
		return "", "must be " + metadataText
	}
	return string(raw), ""
}

func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// Create makes a payment request with a PayID of its own, and schedules its
// expiry on the merchant's clock.
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, r CreateRequest) (PaymentRequest, error) {
	now := s.clock.Of(p)
	c, err := s.validate(p, &r, now)
	if err != nil {
		return PaymentRequest{}, err
	}
	domain := domainOf(p.MerchantID)
	payid, err := claimPayID(ctx, tx, p.MerchantID, "request", 0, func() string { return "pr." + newLocal() + "@" + domain }, now)
	if err != nil {
		return PaymentRequest{}, fmt.Errorf("create payment request: %w", err)
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO payment_requests (merchant_id, account_id, payid, name, description, external_id, emails,
		gst, amount, gst_amount, total, status, endpoint_url, authorization_header, metadata, expired_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING id`,
		p.MerchantID, p.AccountID, payid, r.Name, r.Description, r.ExternalID, c.emails, r.GST, c.amount, c.gstAmount, c.total,
		string(Pending), r.PaymentRequestNotification.EndpointURL, r.PaymentRequestNotification.AuthorizationHeader, c.metadata,
		c.expiredAt.UnixMilli(), now.UnixMilli()).Scan(&id)
	if err != nil {
		return PaymentRequest{}, fmt.Errorf("create payment request: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payids SET ref_id = $1 WHERE payid = $2 AND merchant_id = $3`, id, payid, p.MerchantID); err != nil {
		return PaymentRequest{}, fmt.Errorf("create payment request: %w", err)
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobExpire, ref{MerchantID: p.MerchantID, ID: id}, job.Options{ClockOf: p.MerchantID, RunAt: c.expiredAt}); err != nil {
		return PaymentRequest{}, err
	}
	rw, err := s.get(ctx, tx, p.MerchantID, id, "", false)
	if err != nil {
		return PaymentRequest{}, err
	}
	if err := s.emit(ctx, tx, rw, now); err != nil {
		return PaymentRequest{}, err
	}
	return rw.view(), nil
}

// ref names a request in a job.
type ref struct {
	MerchantID string `json:"merchant_id"`
	ID         int64  `json:"id"`
}

// get reads the merchant's request by id, or by PayID when id is 0;
// lock takes the account's ledger lock first, then the row's.
func (s *Service) get(ctx context.Context, q store.Querier, merchantID string, id int64, payid string, lock bool) (row, error) {
	where, key := `id = $1`, any(id)
	if id == 0 {
		where, key = `payid = $1`, strings.ToLower(payid)
	}
	query := `SELECT ` + rowColumns + ` FROM payment_requests WHERE ` + where + ` AND merchant_id = $2`
	if tx, ok := q.(*store.Tx); ok && lock {
		var accountID int64
		err := tx.QueryRowContext(ctx, `SELECT account_id FROM payment_requests WHERE `+where+` AND merchant_id = $2`, key, merchantID).Scan(&accountID)
		if isNoRows(err) {
			return row{}, requestNotFound(id, payid)
		}
		if err != nil {
			return row{}, fmt.Errorf("read payment request: %w", err)
		}
		if err := ledger.LockAccount(ctx, tx, merchantID, accountID, currency); err != nil {
			return row{}, err
		}
		query += s.db.ForUpdate()
	}
	r, err := scanRow(q.QueryRowContext(ctx, query, key, merchantID))
	if isNoRows(err) {
		return row{}, requestNotFound(id, payid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read payment request: %w", err)
	}
	return r, nil
}

func requestNotFound(id int64, payid string) error {
	if id != 0 {
		return notFound(fmt.Sprintf("payment request %d", id))
	}
	return notFound("payment request with PayID " + payid)
}

// emit sends the request's current state to its notification endpoint
// (and to the events log and webhook endpoints, which every event reaches).
func (s *Service) emit(ctx context.Context, tx *store.Tx, r row, now time.Time) error {
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: "payment_request." + string(r.status),
		RecordUUID: fmt.Sprint(r.id), Target: webhook.Target{EndpointURL: r.endpoint, AuthorizationHeader: r.auth}, Payload: r.view(), At: now})
	return err
}

// setStatus moves a request to a new status and tells the merchant.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, r *row, to Status, now time.Time) error {
	r.status, r.updatedAt = to, now.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE payment_requests SET status = $1, paid_amount = $2, payer_name = $3, paid_at = $4,
		balance_id = $5, return_balance_id = $6, return_reason = $7, cancelled_at = $8, fee = $9, updated_at = $10
		WHERE id = $11 AND merchant_id = $12`,
		string(to), r.paid, r.payerName, r.paidAt, r.balanceID, r.returnBalanceID, r.returnReason, r.cancelledAt, r.fee, r.updatedAt, r.id,
		r.merchantID); err != nil {
		return fmt.Errorf("payment request %d: %w", r.id, err)
	}
	return s.emit(ctx, tx, *r, now)
}

// Lookup is the id or PayID of a request (id wins).
type Lookup struct {
	ID    int64
	PayID string
}

// Status answers GET /v1/payment_requests/status.
func (s *Service) Status(ctx context.Context, p merchant.Principal, l Lookup) (StatusView, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, l.ID, l.PayID, false)
	if err != nil {
		return StatusView{}, err
	}
	v := r.view()
	return StatusView{ID: v.ID, RequestPayID: v.RequestPayID, Status: v.Status, Amount: v.Amount, UpdatedAt: v.UpdatedAt}, nil
}

// Get is one request.
func (s *Service) Get(ctx context.Context, p merchant.Principal, l Lookup) (PaymentRequest, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, l.ID, l.PayID, false)
	if err != nil {
		return PaymentRequest{}, err
	}
	return r.view(), nil
}

// ListQuery filters GET /v1/payment_requests.
type ListQuery struct {
	From, To      time.Time
	Page, PerPage int
}

// List is a page of the merchant's requests, newest first, and the count of all that match.
func (s *Service) List(ctx context.Context, p merchant.Principal, q ListQuery) ([]PaymentRequest, int, error) {
	where := `merchant_id = $1 AND created_at >= $2 AND created_at < $3`
	from, to := int64(0), int64(1)<<62
	if !q.From.IsZero() {
		from = q.From.UnixMilli()
	}
	if !q.To.IsZero() {
		to = q.To.UnixMilli()
	}
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM payment_requests WHERE `+where, p.MerchantID, from, to).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count payment requests: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+rowColumns+` FROM payment_requests WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`, p.MerchantID, from, to, q.PerPage, (q.Page-1)*q.PerPage)
	if err != nil {
		return nil, 0, fmt.Errorf("list payment requests: %w", err)
	}
	defer rows.Close()
	var out []PaymentRequest
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r.view())
	}
	return out, total, rows.Err()
}

// CancelRequest is the body of POST /v1/payment_requests/cancel_payid.
type CancelRequest struct {
	ID    int64  `json:"id,omitempty" doc:"The request's id; wins over payid." example:"1042"`
	PayID string `json:"payid,omitempty" doc:"The request's PayID."`
}

// Cancel ends a pending request: it is expired with cancelled_at set, and
// its PayID is deregistered for good. Anything but a pending request is a
// 409 INVALID_STATE naming its status.
func (s *Service) Cancel(ctx context.Context, tx *store.Tx, p merchant.Principal, req CancelRequest) (PaymentRequest, error) {
	if req.ID == 0 && req.PayID == "" {
		return PaymentRequest{}, fault.Field("id", "give id or payid")
	}
	if req.ID < 0 {
		return PaymentRequest{}, fault.Field("id", "must be a positive integer")
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.ID, req.PayID, true)
	if err != nil {
		return PaymentRequest{}, err
	}
	if r.status != Pending {
		return PaymentRequest{}, fault.State("payment request %d is %s; only a pending request can be cancelled", r.id, r.status)
	}
	at := now.UnixMilli()
	r.cancelledAt = &at
	if err := deregister(ctx, tx, r.merchantID, r.payid, now); err != nil {
		return PaymentRequest{}, err
	}
	if err := s.setStatus(ctx, tx, &r, Expired, now); err != nil {
		return PaymentRequest{}, err
	}
	return r.view(), nil
}

// expireJob expires a request still pending at its expired_at.
func (s *Service) expireJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	r, now, err := s.jobRequest(ctx, tx, rf)
	if err != nil || r.status != Pending {
		return err
	}
	if err := deregister(ctx, tx, r.merchantID, r.payid, now); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, &r, Expired, now)
}

// jobRequest reads the request a job names, locked, and its merchant's time.
func (s *Service) jobRequest(ctx context.Context, tx *store.Tx, rf ref) (row, time.Time, error) {
	r, err := s.get(ctx, tx, rf.MerchantID, rf.ID, "", true)
	if err != nil {
		return row{}, time.Time{}, err
	}
	now, err := s.clock.Read(ctx, tx, rf.MerchantID)
	return r, now, err
}
