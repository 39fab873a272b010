package web

import (
	"net/http"
	"net/url"
	"time"

	"payd/internal/portal"
	"payd/internal/report"
)

// Settlements and settlement reports (CONTRACT §13): every signed-in user
// reads them.

func (h *portalPages) settlementRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/settlements", handle: h.settlements},
		{method: "GET", path: "/portal/reports", handle: h.reports},
	}
}

func (h *portalPages) settlements(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, currencies, err := h.principal(r.Context(), s, r.URL.Query().Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page := pageOf(r)
	list, total, err := h.Settlements.List(r.Context(), p, p.Currency, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	config, err := h.Settlements.GetConfig(r.Context(), p, p.Currency)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "settlements", h.page(s, "Settlements", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Config": config, "Settlements": list, "Pager": newPager(r, page, total)}))
}

// reports lists the account's settlement reports, latest first, each with
// a download link signed for this page (valid three minutes).
func (h *portalPages) reports(w http.ResponseWriter, r *http.Request, s portal.Session) {
	query := r.URL.Query()
	p, currencies, err := h.principal(r.Context(), s, query.Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	frequency := query.Get("frequency")
	if frequency != string(report.Daily) && frequency != string(report.Monthly) {
		frequency = ""
	}
	list, err := h.Reports.List(r.Context(), p, report.ListQuery{Currency: p.Currency, Frequency: frequency, Cursor: query.Get("cursor"), Size: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	next := ""
	if list.HasMore {
		q := url.Values{"currency": {p.Currency}, "cursor": {*list.NextCursor}}
		if frequency != "" {
			q.Set("frequency", frequency)
		}
		next = "/portal/reports?" + q.Encode()
	}
	h.render(w, r, http.StatusOK, "reports", h.page(s, "Reports", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Frequency": frequency, "Reports": list.Records, "Next": next, "LinkMinutes": int(report.LinkTTL / time.Minute)}))
}
