package payin

import (
	"context"
	"fmt"
	"time"

	"payd/internal/merchant"
	"payd/internal/money"
)

// MethodView is a method as GET /v2/payins/payin_methods lists it.
type MethodView struct {
	PayinMethodName string       `json:"payin_method_name"`
	Currency        string       `json:"currency"`
	Description     string       `json:"description"`
	Symbol          string       `json:"symbol"`
	MinAmount       money.String `json:"min_amount"`
	MaxAmount       money.String `json:"max_amount"`
	IsRefundable    bool         `json:"is_refundable"`
	IsCancellable   bool         `json:"is_cancellable"`
	RequireContact  bool         `json:"require_contact"`
	RequireKYC      bool         `json:"require_kyc"`
	PaymentType     string       `json:"payment_type" enum:"pay_in"`
}

// MethodParamsView adds the method's fields to collect.
type MethodParamsView struct {
	MethodView
	PayinMethodParams map[string]string `json:"payin_method_params" doc:"Each field's \"<type>:<Mandatory|Optional> <label>\"."`
}

func (m Method) view() MethodView {
	c := m.currency
	return MethodView{PayinMethodName: m.Code, Currency: m.Currency, Description: m.Description, Symbol: c.Symbol,
		MinAmount: money.StringOf(m.MinMinor, c), MaxAmount: money.StringOf(m.MaxMinor, c),
		IsRefundable: m.Refundable, IsCancellable: m.Cancellable, RequireContact: m.RequireContact, RequireKYC: m.RequireKYC,
		PaymentType: "pay_in"}
}

// Methods lists the methods enabled on the caller's account.
func (s *Service) Methods(ctx context.Context, p merchant.Principal) ([]MethodView, error) {
	acc, err := merchant.AccountByCurrency(ctx, s.db.Read(), p.MerchantID, merchant.Payments, p.Currency)
	if err != nil {
		return nil, err
	}
	out := []MethodView{}
	for _, m := range Enabled(acc.Currency, acc.Methods) {
		out = append(out, m.view())
	}
	return out, nil
}

// MethodParams describes one enabled method's fields.
func (s *Service) MethodParams(ctx context.Context, p merchant.Principal, code string) (MethodParamsView, error) {
	acc, err := merchant.AccountByCurrency(ctx, s.db.Read(), p.MerchantID, merchant.Payments, p.Currency)
	if err != nil {
		return MethodParamsView{}, err
	}
	m, err := Lookup(code)
	if err != nil || !isEnabled(m, acc.Currency, acc.Methods) {
		return MethodParamsView{}, notEnabled(code)
	}
	params := map[string]string{}
	for _, prm := range m.Params {
		params[prm.Name] = prm.Describe()
	}
	return MethodParamsView{MethodView: m.view(), PayinMethodParams: params}, nil
}

// Get reads one of the caller's payins.
func (s *Service) Get(ctx context.Context, p merchant.Principal, uuid string) (Payin, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid, readOnly)
	if err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}

// Detail is a payin as the portal's page of it shows it: the API's record
// and what the API does not answer (the fee and reserve it was charged,
// the balance record it was credited by).
type Detail struct {
	Payin
	Fee, Reserve, Refunded money.String
	// BalanceID is the balance record of its receipt; "" before one.
	BalanceID string
}

// GetDetail reads one of the caller's payins with its fee, reserve and
// balance record.
func (s *Service) GetDetail(ctx context.Context, p merchant.Principal, uuid string) (Detail, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid, readOnly)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Payin: r.view(), Fee: money.StringOf(r.fee, r.cur), Reserve: money.StringOf(r.reserve, r.cur), Refunded: money.StringOf(r.refunded, r.cur)}
	if r.balanceID != nil {
		d.BalanceID = *r.balanceID
	}
	return d, nil
}

// ListQuery filters GET /v2/payins/all.
type ListQuery struct {
	From, To   time.Time
	Status     string
	ExternalID string
	// Search, when set, keeps the payins it is the uuid, external_id or
	// email (in any case) of: the portal's search box.
	Search  string
	Page    int
	PerPage int
}

// List returns a page of the caller's payins, newest first, and the total.
func (s *Service) List(ctx context.Context, p merchant.Principal, q ListQuery) ([]Payin, int, error) {
	var from, to int64 = 0, 1 << 62
	if !q.From.IsZero() {
		from = q.From.UnixMilli()
	}
	if !q.To.IsZero() {
		to = q.To.UnixMilli()
	}
	where := `merchant_id = $1 AND currency = $2 AND created_at >= $3 AND created_at < $4 AND ($5 = '' OR status = $5) AND ($6 = '' OR external_id = $6)
		AND ($7 = '' OR uuid = $7 OR external_id = $7 OR lower(email) = lower($7))`
	args := []any{p.MerchantID, p.Currency, from, to, q.Status, q.ExternalID, q.Search}
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM payins WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list payins: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+rowColumns+` FROM payins WHERE `+where+`
		ORDER BY created_at DESC, uuid DESC LIMIT $8 OFFSET $9`, append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list payins: %w", err)
	}
	defer rows.Close()
	out := []Payin{}
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list payins: %w", err)
		}
		out = append(out, r.view())
	}
	return out, total, rows.Err()
}
