package web

import (
	"net/http"

	"payd/internal/merchant"
	"payd/internal/payin"
	"payd/internal/portal"
	"payd/internal/webhook"
)

// The payins (CONTRACT §13): the list of an account's payins, filtered by
// status, dates and search, and a payin's page. Every signed-in user reads
// them.

func (h *portalPages) payinRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/payins", handle: h.payins},
		{method: "GET", path: "/portal/payins/{uuid}", handle: h.payin},
	}
}

// payinsData is the payins page.
type payinsData struct {
	Filter listFilter
	Payins []payin.Payin
	Pager  pager
}

func (h *portalPages) payins(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, currencies, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	zone, err := merchant.Zone(r.Context(), h.DB.Read(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	f, err := readFilter(r, "/portal/payins", payin.Statuses, currencies, false, zone)
	page := h.page(s, "Payins", nil)
	page.Zone = zone
	if err != nil {
		page.Error, page.Data = problemText(err), payinsData{Filter: f, Pager: newPager(r, 1, 0)}
		h.render(w, r, http.StatusUnprocessableEntity, "payins", page)
		return
	}
	p, _, err := h.principal(r.Context(), s, f.Currency)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	n := pageOf(r)
	list, total, err := h.Payins.List(r.Context(), p, payin.ListQuery{Status: f.Status, From: f.from, To: f.to, Search: f.Search, Page: n, PerPage: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page.Data = payinsData{Filter: f, Payins: list, Pager: newPager(r, n, total)}
	h.render(w, r, http.StatusOK, "payins", page)
}

// payinData is a payin's page: the payin and the webhook deliveries about it.
type payinData struct {
	Payin      payin.Detail
	Deliveries []webhook.Delivery
}

// payin is a payin's page.
func (h *portalPages) payin(w http.ResponseWriter, r *http.Request, s portal.Session) {
	d, err := h.Payins.GetDetail(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	deliveries, err := h.Webhooks.Deliveries(r.Context(), s.MerchantID, d.UUID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "payin", h.page(s, "Payin "+d.UUID, payinData{Payin: d, Deliveries: deliveries}))
}
