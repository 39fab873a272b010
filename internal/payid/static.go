package payid

import (
	"context"
	"fmt"
	"regexp"
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
	"payd/internal/store"
	"payd/internal/webhook"
)

// StaticRequest is the body of POST /v1/customers/create_static_open_payid.
type StaticRequest struct {
	Name                 string         `json:"name" required:"true" doc:"The customer's name, 1 to 200 characters." example:"Jane Payer"`
	Email                string         `json:"email" required:"true" example:"jane@example.com"`
	PrefixStaticPayID    string         `json:"prefix_static_payid,omitempty" doc:"Start of the PayID's local part: 1 to 20 of a-z, 0-9 and dots (default: customer)." example:"jane"`
	Phone                string         `json:"phone,omitempty" example:"+61412345678"`
	Address              string         `json:"address,omitempty" doc:"At most 200 characters."`
	City                 string         `json:"city,omitempty" doc:"At most 100 characters."`
	State                string         `json:"state,omitempty" doc:"At most 100 characters."`
	ZipCode              string         `json:"zip_code,omitempty" doc:"At most 20 characters."`
	ExternalID           string         `json:"external_id" required:"true" doc:"The merchant's customer id, 1 to 100 characters: one static PayID per customer id (a repeat is 409 ALREADY_EXISTS naming the existing one)." example:"cus-7"`
	CustomerNotification webhook.Target `json:"customer_notification,omitempty"`
}

// StaticPayID is a customer's static open PayID.
type StaticPayID struct {
	ID                   int64           `json:"id"`
	StaticPayID          string          `json:"static_payid"`
	Status               string          `json:"status" enum:"active"`
	CustomerID           string          `json:"customer_id" doc:"The merchant's customer id (external_id of the create request)."`
	ExternalID           string          `json:"external_id"`
	Name                 string          `json:"name"`
	Email                string          `json:"email"`
	Phone                string          `json:"phone"`
	Address              string          `json:"address"`
	City                 string          `json:"city"`
	State                string          `json:"state"`
	ZipCode              string          `json:"zip_code"`
	CustomerNotification *webhook.Target `json:"customer_notification"`
	CreatedAt            clock.Time      `json:"created_at"`
}

// StaticPayment is one payment into a static PayID, as its webhook
// (static_payid.payment) carries it.
type StaticPayment struct {
	ID          int64        `json:"id"`
	StaticPayID string       `json:"static_payid"`
	CustomerID  string       `json:"customer_id"`
	Amount      money.String `json:"amount"`
	PayerName   string       `json:"payer_name"`
	ReceivedAt  clock.Time   `json:"received_at"`
	BalanceID   string       `json:"balance_id"`
	// BankReference is the key of the bank entry that paid it, when a bank
	// feed did (CONTRACT §18).
	BankReference *string `json:"bank_reference,omitempty" doc:"The key of the operator's bank entry that paid it: present only on a payment a bank feed applied."`
}

var prefixPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9.]{0,18}[a-z0-9])?$`)

// CreateStatic gives a customer a static open PayID.
func (s *Service) CreateStatic(ctx context.Context, tx *store.Tx, p merchant.Principal, r StaticRequest) (StaticPayID, error) {
	f := fault.Fields{}
	text := func(name, v string, min, max int) {
		if n := utf8.RuneCountInString(strings.TrimSpace(v)); n < min || n > max || !utf8.ValidString(v) {
			f.Add(name, fmt.Sprintf("must be %d to %d characters", min, max))
		}
	}
	text("name", r.Name, 1, 200)
	text("external_id", r.ExternalID, 1, 100)
	text("address", r.Address, 0, 200)
	text("city", r.City, 0, 100)
	text("state", r.State, 0, 100)
	text("zip_code", r.ZipCode, 0, 20)
	if problem := param.Email(r.Email); problem != "" {
		f.Add("email", problem)
	}
	if r.Phone != "" {
		if problem := param.Phone(r.Phone); problem != "" {
			f.Add("phone", problem)
		}
	}
	prefix := strings.ToLower(r.PrefixStaticPayID)
	if prefix == "" {
		prefix = "customer"
	}
	if !prefixPattern.MatchString(prefix) {
		f.Add("prefix_static_payid", "must be 1 to 20 of a-z, 0-9 and dots, starting and ending with a letter or digit")
	}
	if err := s.policy.Validate("customer_notification", r.CustomerNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	if err := f.Err(); err != nil {
		return StaticPayID{}, err
	}
	if p.Currency != currency {
		return StaticPayID{}, fault.Rule(fault.CodeCurrency, "PayID takes AUD: use the app of the merchant's AUD account, not %s", p.Currency)
	}
	var existing int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM static_payids WHERE merchant_id = $1 AND customer_id = $2`, p.MerchantID, r.ExternalID).Scan(&existing)
	if err == nil {
		return StaticPayID{}, fault.New(fault.Conflict, fault.CodeAlreadyExists, "customer %s already has the static PayID %d", r.ExternalID, existing)
	}
	if !isNoRows(err) {
		return StaticPayID{}, fmt.Errorf("create static PayID: %w", err)
	}
	now := s.clock.Of(p)
	domain := domainOf(p.MerchantID)
	payid, err := claimPayID(ctx, tx, p.MerchantID, "static", 0, func() string { return prefix + "." + newLocal()[:6] + "@" + domain }, now)
	if err != nil {
		return StaticPayID{}, fmt.Errorf("create static PayID: %w", err)
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO static_payids (merchant_id, account_id, payid, customer_id, name, email, phone, address,
		city, state, zip_code, status, endpoint_url, authorization_header, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'active', $12, $13, $14) RETURNING id`,
		p.MerchantID, p.AccountID, payid, r.ExternalID, strings.TrimSpace(r.Name), strings.ToLower(r.Email), r.Phone, r.Address,
		r.City, r.State, r.ZipCode, r.CustomerNotification.EndpointURL, r.CustomerNotification.AuthorizationHeader, now.UnixMilli()).Scan(&id)
	if store.IsUniqueViolation(err) {
		return StaticPayID{}, fault.New(fault.Conflict, fault.CodeAlreadyExists, "customer %s already has a static PayID", r.ExternalID)
	}
	if err != nil {
		return StaticPayID{}, fmt.Errorf("create static PayID: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payids SET ref_id = $1 WHERE payid = $2 AND merchant_id = $3`, id, payid, p.MerchantID); err != nil {
		return StaticPayID{}, fmt.Errorf("create static PayID: %w", err)
	}
	return s.getStatic(ctx, tx, p.MerchantID, id)
}

// staticRow is a static PayID as stored, with where its payments are credited.
type staticRow struct {
	StaticPayID
	merchantID string
	accountID  int64
}

const staticColumns = `id, merchant_id, account_id, payid, customer_id, name, email, phone, address, city, state, zip_code, status,
	endpoint_url, authorization_header, created_at`

func scanStatic(sc interface{ Scan(...any) error }) (staticRow, error) {
	var r staticRow
	var endpoint, auth string
	var created int64
	err := sc.Scan(&r.ID, &r.merchantID, &r.accountID, &r.StaticPayID.StaticPayID, &r.CustomerID, &r.Name, &r.Email, &r.Phone,
		&r.Address, &r.City, &r.State, &r.ZipCode, &r.Status, &endpoint, &auth, &created)
	r.ExternalID = r.CustomerID
	r.CreatedAt = clock.Time{T: clock.FromMillis(created)}
	if endpoint != "" {
		r.CustomerNotification = &webhook.Target{EndpointURL: endpoint, AuthorizationHeader: auth}
	}
	return r, err
}

func (s *Service) getStatic(ctx context.Context, q store.Querier, merchantID string, id int64) (StaticPayID, error) {
	r, err := scanStatic(q.QueryRowContext(ctx, `SELECT `+staticColumns+` FROM static_payids WHERE id = $1 AND merchant_id = $2`, id, merchantID))
	if isNoRows(err) {
		return StaticPayID{}, notFound(fmt.Sprintf("static PayID %d", id))
	}
	if err != nil {
		return StaticPayID{}, fmt.Errorf("read static PayID %d: %w", id, err)
	}
	return r.StaticPayID, nil
}

// StaticQuery filters GET /v1/customers/get_static_open_payids.
type StaticQuery struct {
	Email, PayID, CustomerID string
	Page, PerPage            int
}

// ListStatic is a page of the merchant's static PayIDs, newest first.
func (s *Service) ListStatic(ctx context.Context, p merchant.Principal, q StaticQuery) ([]StaticPayID, int, error) {
	where := `merchant_id = $1 AND ($2 = '' OR email = $2) AND ($3 = '' OR payid = $3) AND ($4 = '' OR customer_id = $4)`
	args := []any{p.MerchantID, strings.ToLower(q.Email), strings.ToLower(q.PayID), q.CustomerID}
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM static_payids WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count static PayIDs: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+staticColumns+` FROM static_payids WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list static PayIDs: %w", err)
	}
	defer rows.Close()
	var out []StaticPayID
	for rows.Next() {
		r, err := scanStatic(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r.StaticPayID)
	}
	return out, total, rows.Err()
}

// PaymentQuery filters GET /v1/customers/static_payid_payments.
type PaymentQuery struct {
	PayID, CustomerID string
	Page, PerPage     int
}

// ListPayments is a page of the payments into the merchant's static PayIDs, newest first.
func (s *Service) ListPayments(ctx context.Context, p merchant.Principal, q PaymentQuery) ([]StaticPayment, int, error) {
	where := `p.merchant_id = $1 AND ($2 = '' OR sp.payid = $2) AND ($3 = '' OR sp.customer_id = $3)`
	args := []any{p.MerchantID, strings.ToLower(q.PayID), q.CustomerID}
	from := ` FROM static_payid_payments p JOIN static_payids sp ON sp.id = p.static_id AND sp.merchant_id = p.merchant_id WHERE `
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*)`+from+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count static PayID payments: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT p.id, sp.payid, sp.customer_id, p.amount, p.payer_name, p.received_at, p.balance_id, p.bank_reference`+
		from+where+` ORDER BY p.received_at DESC, p.id DESC LIMIT $4 OFFSET $5`, append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list static PayID payments: %w", err)
	}
	defer rows.Close()
	var out []StaticPayment
	for rows.Next() {
		var sp StaticPayment
		var amount, at int64
		if err := rows.Scan(&sp.ID, &sp.StaticPayID, &sp.CustomerID, &amount, &sp.PayerName, &at, &sp.BalanceID, &sp.BankReference); err != nil {
			return nil, 0, err
		}
		sp.Amount, sp.ReceivedAt = money.StringOf(amount, aud), clock.Time{T: clock.FromMillis(at)}
		out = append(out, sp)
	}
	return out, total, rows.Err()
}

// receiveStatic credits a payment into a static PayID: its own balance
// record, its own row, and a static_payid.payment webhook.
func (s *Service) receiveStatic(ctx context.Context, tx *store.Tx, reg registered, amount int64, payer, bankRef string, now time.Time) (StaticPayment, error) {
	sr, err := scanStatic(tx.QueryRowContext(ctx, `SELECT `+staticColumns+` FROM static_payids WHERE id = $1 AND merchant_id = $2`, reg.ref, reg.merchantID))
	if err != nil {
		return StaticPayment{}, fmt.Errorf("static PayID %d: %w", reg.ref, err)
	}
	if err := ledger.LockAccount(ctx, tx, reg.merchantID, sr.accountID, currency); err != nil {
		return StaticPayment{}, err
	}
	m := limits()
	fee := min(amount, money.Percent(amount, m.FeeBPS)+m.FeeFixedMinor)
	rec := ledger.Record{MerchantID: reg.merchantID, AccountID: sr.accountID, Currency: currency, RequestType: ledger.MoneyIn,
		TransactionType: ledger.Payment, Status: ledger.Waiting, Amount: amount - fee, Fees: fee, Total: amount,
		ReferenceID: sr.StaticPayID.StaticPayID, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return StaticPayment{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: reg.merchantID, Currency: currency, Kind: "payid.static_receive", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: sr.accountID, Bucket: ledger.External, Amount: -amount},
			{Account: sr.accountID, Bucket: ledger.Incoming, Amount: amount},
		}}); err != nil {
		return StaticPayment{}, err
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO static_payid_payments (merchant_id, static_id, amount, fee, payer_name, balance_id, received_at, bank_reference)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, reg.merchantID, sr.ID, amount, fee, payer, rec.ID, now.UnixMilli(), nullable(bankRef)).Scan(&id); err != nil {
		return StaticPayment{}, fmt.Errorf("record static PayID payment: %w", err)
	}
	sp := StaticPayment{ID: id, StaticPayID: sr.StaticPayID.StaticPayID, CustomerID: sr.CustomerID, Amount: money.StringOf(amount, aud),
		PayerName: payer, ReceivedAt: clock.Time{T: now}, BalanceID: rec.ID}
	if bankRef != "" {
		sp.BankReference = &bankRef
	}
	if err := job.Enqueue(ctx, tx, s.queue, jobStaticClear, staticRef{MerchantID: reg.merchantID, PaymentID: id}, job.Options{ClockOf: reg.merchantID, RunAt: now}); err != nil {
		return StaticPayment{}, err
	}
	var target webhook.Target
	if sr.CustomerNotification != nil {
		target = *sr.CustomerNotification
	}
	if _, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: reg.merchantID, Type: "static_payid.payment", RecordUUID: fmt.Sprint(sr.ID),
		Target: target, Payload: sp, At: now}); err != nil {
		return StaticPayment{}, err
	}
	return sp, nil
}
