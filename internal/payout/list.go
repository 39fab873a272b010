package payout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
)

// MethodView is a payout method as GET /v2/payouts/payout_methods lists it.
type MethodView struct {
	PayoutMethodName string       `json:"payout_method_name"`
	Currency         string       `json:"currency"`
	Description      string       `json:"description"`
	MinAmount        money.String `json:"min_amount"`
	MaxAmount        money.String `json:"max_amount"`
	FeeFixed         money.String `json:"fee_fixed" doc:"Fixed fee per transaction."`
	FeePercent       string       `json:"fee_percent" doc:"Fee per transaction as a percentage of its amount (\"0.50\" is 0.5 %)."`
	PaymentType      string       `json:"payment_type" enum:"pay_out"`
}

// MethodParamsView adds the method's fields and banks.
type MethodParamsView struct {
	MethodView
	PayoutMethodParams map[string]string `json:"payout_method_params" doc:"Each field's \"<type>:<Mandatory|Optional> <label>\"."`
	Banks              []Bank            `json:"banks" doc:"The banks the method pays into, for its bank_code; empty when it takes none."`
}

func (m Method) view() MethodView {
	c := m.currency
	return MethodView{PayoutMethodName: m.Code, Currency: m.Currency, Description: m.Description,
		MinAmount: money.StringOf(m.MinMinor, c), MaxAmount: money.StringOf(m.MaxMinor, c),
		FeeFixed: money.StringOf(m.FeeFixedMinor, c), FeePercent: fmt.Sprintf("%d.%02d", m.FeeBPS/100, m.FeeBPS%100),
		PaymentType: "pay_out"}
}

// Methods lists the payout methods enabled on the caller's account.
func (s *Service) Methods(ctx context.Context, p merchant.Principal) ([]MethodView, error) {
	acc, err := merchant.AccountByCurrency(ctx, s.db.Read(), p.MerchantID, merchant.Payments, p.Currency)
	if err != nil {
		return nil, err
	}
	out := []MethodView{}
	for m := range methods.All() {
		if enabled(m, acc.Currency, acc.Methods) {
			out = append(out, m.view())
		}
	}
	return out, nil
}

// MethodParams describes one payout method: its fields and its banks.
// A method that is not in the catalogue is a 404 naming it.
func (s *Service) MethodParams(ctx context.Context, p merchant.Principal, code string) (MethodParamsView, error) {
	m, err := Lookup(code)
	if err != nil {
		return MethodParamsView{}, fault.NotFoundf("no payout method %s: GET /v2/payouts/payout_methods lists them", code)
	}
	params := map[string]string{}
	for _, prm := range m.Params {
		params[prm.Name] = prm.Describe()
	}
	banks := []Bank{}
	if m.BankField != "" && s.banks != nil {
		banks = append(banks, s.banks.Banks(m.Code)...)
	}
	return MethodParamsView{MethodView: m.view(), PayoutMethodParams: params, Banks: banks}, nil
}

// Get reads one of the caller's payouts.
func (s *Service) Get(ctx context.Context, p merchant.Principal, uuid string) (Payout, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid)
	if err != nil {
		return Payout{}, err
	}
	return r.view(), nil
}

// ListQuery filters GET /v2/payouts/all.
type ListQuery struct {
	From, To   time.Time
	Status     string
	ExternalID string
	// Search, when set, keeps the payouts it is the uuid or external_id of,
	// or the uuid, external_id or email (in any case) of one of their
	// transactions: the portal's search box.
	Search string
	// AllCurrencies lists every currency's payouts (the portal); otherwise
	// only the caller's app's currency.
	AllCurrencies bool
	// WaitingFor, with By, lists held payouts waiting for By's approval
	// (WaitingForMe: By may approve them and has not) or for others'
	// (WaitingForOthers: By made them or has approved them): the portal's
	// two lists of held payouts.
	WaitingFor string
	By         Decider
	Page       int
	PerPage    int
}

// The held payouts' lists of ListQuery.WaitingFor.
const (
	WaitingForMe     = "me"
	WaitingForOthers = "others"
)

// approvedBy is the condition "user $n has approved the payout".
func approvedBy(n int) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM approvals a WHERE a.merchant_id = payouts.merchant_id AND a.subject_type = 'payout'
		AND a.subject_uuid = payouts.uuid AND a.user_id = $%d)`, n)
}

// searched is the condition "the payout or one of its transactions is
// the one $n names" (ListQuery.Search).
func searched(n int) string {
	return fmt.Sprintf(`(uuid = $%[1]d OR external_id = $%[1]d OR EXISTS (SELECT 1 FROM payout_transactions t
		WHERE t.merchant_id = payouts.merchant_id AND t.payout_id = payouts.id
		AND (t.uuid = $%[1]d OR t.external_id = $%[1]d OR lower(t.email) = lower($%[1]d))))`, n)
}

// waiting is q's WaitingFor condition and its arguments, numbered from n.
func (q ListQuery) waiting(n int) (string, []any) {
	held := ` AND status = 'held' AND approval_status = 'pending'`
	switch q.WaitingFor {
	case WaitingForMe:
		if !slices.Contains(DeciderRoles, q.By.Role) {
			return held + ` AND 1 = 0`, nil // a role that decides nothing waits for nothing
		}
		return held + fmt.Sprintf(` AND created_by_user <> $%d AND (approval_roles = '' OR approval_roles LIKE $%d) AND NOT `, n, n+1) + approvedBy(n),
			[]any{q.By.UserID, "%" + string(q.By.Role) + "%"}
	case WaitingForOthers:
		return held + fmt.Sprintf(` AND (created_by_user = $%d OR `, n) + approvedBy(n) + `)`, []any{q.By.UserID}
	}
	return "", nil
}

// List returns a page of the caller's payouts, newest first, and the total.
func (s *Service) List(ctx context.Context, p merchant.Principal, q ListQuery) ([]Payout, int, error) {
	var from, to int64 = 0, 1 << 62
	if !q.From.IsZero() {
		from = q.From.UnixMilli()
	}
	if !q.To.IsZero() {
		to = q.To.UnixMilli()
	}
	currency := p.Currency
	if q.AllCurrencies {
		currency = ""
	}
	db := s.db.Read()
	where := `merchant_id = $1 AND ($2 = '' OR currency = $2) AND created_at >= $3 AND created_at < $4 AND ($5 = '' OR status = $5) AND ($6 = '' OR external_id = $6)`
	args := []any{p.MerchantID, currency, from, to, q.Status, q.ExternalID}
	if q.Search != "" {
		where += ` AND ` + searched(len(args)+1)
		args = append(args, q.Search)
	}
	cond, more := q.waiting(len(args) + 1)
	where, args = where+cond, append(args, more...)
	var total int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM payouts WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list payouts: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT `+rowColumns+` FROM payouts WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT `+fmt.Sprintf("$%d OFFSET $%d", len(args)+1, len(args)+2), append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list payouts: %w", err)
	}
	var page []row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("list payouts: %w", err)
		}
		page = append(page, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list payouts: %w", err)
	}
	var held []string
	for _, r := range page {
		if r.approvalStatus != "" {
			held = append(held, r.uuid)
		}
	}
	steps, err := policy.Steps(ctx, db, p.MerchantID, policy.PayoutSubject, held)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Payout, 0, len(page))
	for _, r := range page {
		if r.txs, err = readTransactions(ctx, db, r.merchantID, r.id); err != nil {
			return nil, 0, err
		}
		r.steps = steps[r.uuid]
		out = append(out, r.view())
	}
	return out, total, nil
}
