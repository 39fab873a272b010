package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
)

type balanceView struct {
	Currency              string       `json:"currency"`
	AvailableBalance      money.Number `json:"available_balance"`
	IncomingBalance       money.Number `json:"incoming_balance" doc:"Received but not yet cleared."`
	OutgoingBalance       money.Number `json:"outgoing_balance" doc:"On its way out (payouts, settlements, refunds in flight)."`
	RollingReserveBalance money.Number `json:"rolling_reserve_balance" doc:"Held back from payins until the account's reserve period ends."`
	WithdrawableBalance   money.Number `json:"withdrawable_balance" doc:"What may leave the account now: available less the account's minimum balance."`
}

func viewBalance(b ledger.Balance) (balanceView, error) {
	c, err := money.Lookup(b.Currency)
	if err != nil {
		return balanceView{}, fmt.Errorf("balance of account %d: %w", b.AccountID, err)
	}
	return balanceView{
		Currency:              b.Currency,
		AvailableBalance:      money.NumberOf(b.Available, c),
		IncomingBalance:       money.NumberOf(b.Incoming, c),
		OutgoingBalance:       money.NumberOf(b.Outgoing, c),
		RollingReserveBalance: money.NumberOf(b.RollingReserve, c),
		WithdrawableBalance:   money.NumberOf(b.Withdrawable, c),
	}, nil
}

type balanceList struct {
	Records []balanceView `json:"records" doc:"One entry per payments account (currency) of the merchant."`
}

type historyRecord struct {
	ID              string                  `json:"id" doc:"Balance ID."`
	Amount          money.Number            `json:"amount" doc:"Net amount."`
	Currency        string                  `json:"currency"`
	RequestType     ledger.RequestType      `json:"request_type" enum:"money_in,money_out"`
	TransactionType ledger.TransactionType  `json:"transaction_type" enum:"payment,payout,settlement,refund,top_up,withdrawal,dispute,dispute_fee,cashback_payout,transfer_in,transfer_out"`
	Status          ledger.Status           `json:"status" enum:"waiting,done,failed"`
	ReferenceID     string                  `json:"reference_id" doc:"The uuid of the record that moved the money (payin, payout, deposit, ...)."`
	BalanceDetail   historyBalanceBreakdown `json:"balance_detail"`
	CreatedAt       clock.Time              `json:"created_at"`
	UpdatedAt       clock.Time              `json:"updated_at"`
}

type historyBalanceBreakdown struct {
	Outgoing money.Number `json:"outgoing" doc:"The part that passes through the outgoing balance (money_out); 0 for money_in."`
	Fees     money.Number `json:"fees"`
	Total    money.Number `json:"total" doc:"Gross amount: amount plus fees."`
}

type historyPage struct {
	Records     []historyRecord      `json:"records"`
	AccountType merchant.AccountType `json:"account_type" enum:"aggregated,dedicated"`
	NextCursor  *string              `json:"next_cursor" doc:"Pass as cursor to get the next page; null on the last page."`
	HasMore     bool                 `json:"has_more"`
}

func viewRecord(r ledger.Record) (historyRecord, error) {
	c, err := money.Lookup(r.Currency)
	if err != nil {
		return historyRecord{}, fmt.Errorf("balance record %s: %w", r.ID, err)
	}
	return historyRecord{
		ID: r.ID, Amount: money.NumberOf(r.Amount, c), Currency: r.Currency,
		RequestType: r.RequestType, TransactionType: r.TransactionType, Status: r.Status, ReferenceID: r.ReferenceID,
		BalanceDetail: historyBalanceBreakdown{Outgoing: money.NumberOf(r.Outgoing, c), Fees: money.NumberOf(r.Fees, c), Total: money.NumberOf(r.Total, c)},
		CreatedAt:     clock.Time{T: r.CreatedAt}, UpdatedAt: clock.Time{T: r.UpdatedAt},
	}, nil
}

const (
	defaultHistorySize = 20
	maxHistorySize     = 100
)

func (a *API) balanceRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/balances", auth: authKeys, summary: "Balances of every currency of the merchant.",
			response: balanceList{}, status: 200, handle: a.listBalances},
		{method: "GET", path: "/v2/balances/detail", auth: authKeys, summary: "Balances of one currency.",
			params: []param{{name: "currency", typ: "string", doc: "ISO 4217 code; defaults to the currency of the calling app, or of the account when account is given."},
				{name: "account", typ: "string", doc: "A treasury account's id: its balances instead of the payments account's."}},
			response: balanceView{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.balanceDetail},
		{method: "GET", path: "/v2/balances/history", auth: authKeys, summary: "Every movement of a currency's balance, newest first.",
			description: "Cursor paging: pass next_cursor back as cursor while has_more is true. Dates: from_date is inclusive, to_date exclusive; a bare date (YYYY-MM-DD or DD/MM/YY) is read in the merchant's time zone, and a bare to_date includes that whole day.",
			params: []param{
				{name: "currency", typ: "string", doc: "ISO 4217 code; defaults to the currency of the calling app, or of the account when account is given."},
				{name: "account", typ: "string", doc: "A treasury account's id: its balances instead of the payments account's."},
				{name: "from_date", typ: "string", doc: "Inclusive lower bound: RFC 3339 time, YYYY-MM-DD or DD/MM/YY."},
				{name: "to_date", typ: "string", doc: "Upper bound: RFC 3339 time (exclusive), or a date whose whole day is included."},
				{name: "cursor", typ: "string", doc: "next_cursor of the previous page."},
				{name: "size", typ: "integer", doc: "Records per page, 1 to 100 (default 20)."},
			},
			response: historyPage{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.balanceHistory},
	}
}

func (a *API) listBalances(w http.ResponseWriter, r *http.Request) {
	bs, err := ledger.Balances(r.Context(), a.DB.Read(), principal(r).MerchantID, string(merchant.Payments), "")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := balanceList{Records: make([]balanceView, 0, len(bs))}
	for _, b := range bs {
		v, err := viewBalance(b)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		out.Records = append(out.Records, v)
	}
	a.writeJSON(w, r, http.StatusOK, out)
}

// currencyParam reads the currency query parameter, defaulting to the app's.
func currencyParam(q *queryReader, p merchant.Principal) string {
	c := strings.ToUpper(q.str("currency"))
	if c == "" {
		return p.Currency
	}
	if _, err := money.Lookup(c); err != nil {
		q.fields.Add("currency", "is not a supported ISO 4217 currency code")
	}
	return c
}

func (a *API) balanceDetail(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	acc, err := a.balanceAccount(r, q, p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	bs, err := ledger.Balances(r.Context(), a.DB.Read(), p.MerchantID, string(acc.Kind), acc.Currency)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	for _, b := range bs {
		if b.AccountID != acc.ID {
			continue
		}
		v, err := viewBalance(b)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		a.writeJSON(w, r, http.StatusOK, v)
		return
	}
	a.fail(w, r, fault.NotFoundf("the merchant has no %s account", acc.Currency))
}

// balanceAccount is the account a balance query reads: the payments account
// of the currency, or the treasury account named by account (CONTRACT §15).
// It reports bad parameters itself, with any others q has gathered.
func (a *API) balanceAccount(r *http.Request, q *queryReader, p merchant.Principal) (merchant.Account, error) {
	id := q.str("account")
	explicit := q.str("currency") != ""
	cur := currencyParam(q, p)
	if err := q.err(); err != nil {
		return merchant.Account{}, err
	}
	if id == "" {
		acc, err := merchant.AccountByCurrency(r.Context(), a.DB.Read(), p.MerchantID, merchant.Payments, cur)
		if err != nil {
			return merchant.Account{}, fault.NotFoundf("the merchant has no %s account", cur)
		}
		return acc, nil
	}
	acc, err := merchant.AccountByPublicID(r.Context(), a.DB.Read(), p.MerchantID, id)
	if err != nil {
		return merchant.Account{}, err
	}
	if explicit && acc.Currency != cur {
		return merchant.Account{}, fault.Field("currency", fmt.Sprintf("treasury account %s holds %s, not %s", id, acc.Currency, cur))
	}
	return acc, nil
}

func (a *API) balanceHistory(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	loc := a.location(p.Timezone)
	from, to := q.dateRange(loc)
	hq := ledger.HistoryQuery{
		MerchantID: p.MerchantID,
		From:       from,
		To:         to,
		Cursor:     q.str("cursor"),
		Size:       q.intIn("size", defaultHistorySize, 1, maxHistorySize),
	}
	acc, err := a.balanceAccount(r, q, p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	hq.AccountID = acc.ID
	page, err := ledger.History(r.Context(), a.DB.Read(), hq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := historyPage{Records: make([]historyRecord, 0, len(page.Records)), AccountType: acc.AccountType, HasMore: page.HasMore}
	for _, rec := range page.Records {
		v, err := viewRecord(rec)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		out.Records = append(out.Records, v)
	}
	if page.HasMore {
		out.NextCursor = &page.NextCursor
	}
	a.writeJSON(w, r, http.StatusOK, out)
}
