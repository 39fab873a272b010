package web

import (
	"net/http"

	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/portal"
)

// The balances of every currency (/portal/) and the payins (CONTRACT §13):
// every signed-in user reads them.

func (h *portalPages) balanceRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/{$}", handle: h.balances},
		{method: "GET", path: "/portal/payins", handle: h.payins},
	}
}

// balanceRow is one currency on the balances page.
type balanceRow struct {
	Currency                                             string
	Available, Incoming, Outgoing, Reserve, Withdrawable string
}

func (h *portalPages) balances(w http.ResponseWriter, r *http.Request, s portal.Session) {
	all, err := ledger.Balances(r.Context(), h.DB.Read(), s.MerchantID, string(merchant.Payments), "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	var rows []balanceRow
	for _, b := range all {
		c, err := money.Lookup(b.Currency)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		rows = append(rows, balanceRow{Currency: b.Currency, Available: money.Format(b.Available, c), Incoming: money.Format(b.Incoming, c),
			Outgoing: money.Format(b.Outgoing, c), Reserve: money.Format(b.RollingReserve, c), Withdrawable: money.Format(b.Withdrawable, c)})
	}
	h.render(w, r, http.StatusOK, "balances", h.page(s, "Balances", rows))
}

func (h *portalPages) payins(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, currencies, err := h.principal(r.Context(), s, r.URL.Query().Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	status := r.URL.Query().Get("status")
	if status != "" && !payin.ValidStatus(status) {
		status = ""
	}
	page := pageOf(r)
	list, total, err := h.Payins.List(r.Context(), p, payin.ListQuery{Status: status, Page: page, PerPage: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "payins", h.page(s, "Payins", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Status": status, "Payins": list, "Pager": newPager(r, page, total)}))
}
