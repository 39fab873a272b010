package web

import (
	"net/http"

	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/portal"
)

// The balances of every currency (/portal/) (CONTRACT §13): every
// signed-in user reads them.

func (h *portalPages) balanceRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/{$}", handle: h.balances},
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
