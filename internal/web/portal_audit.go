package web

import (
	"net/http"

	"payd/internal/portal"
)

// The audit log (CONTRACT §13), newest first: every signed-in user reads it;
// nothing changes it.

func (h *portalPages) auditRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/audit", handle: h.audit},
	}
}

func (h *portalPages) audit(w http.ResponseWriter, r *http.Request, s portal.Session) {
	page := pageOf(r)
	entries, total, err := h.Portal.AuditPage(r.Context(), s.MerchantID, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "audit", h.page(s, "Audit log", map[string]any{"Entries": entries, "Pager": newPager(r, page, total)}))
}
