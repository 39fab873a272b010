package web

import (
	"net/http"
	"net/url"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/transfer"
)

// Held external transfers (CONTRACT §20, §25): a transfer's page with its
// approval record, and the decisions on a held one. Who may decide is the
// route's permission and the transfer service's rule (the policy's roles,
// never the maker).

func (h *portalPages) transferRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/transfers/{uuid}", handle: h.transfer},
		{method: "POST", path: "/portal/transfers/{uuid}/approve", may: portal.DecideTransfers, audit: portal.AuditTransferApproved, handle: h.decideTransfer(true)},
		{method: "POST", path: "/portal/transfers/{uuid}/reject", may: portal.DecideTransfers, audit: portal.AuditTransferRejected, handle: h.decideTransfer(false)},
		{method: "POST", path: "/portal/settlements/beneficiary/approve", may: portal.DecideBeneficiaries, audit: portal.AuditBeneficiaryApproved, handle: h.decideBeneficiary(true)},
		{method: "POST", path: "/portal/settlements/beneficiary/reject", may: portal.DecideBeneficiaries, audit: portal.AuditBeneficiaryRejected, handle: h.decideBeneficiary(false)},
	}
}

// decideBeneficiary approves or rejects the pending beneficiary change of
// the form's currency (CONTRACT §20) and answers 303 to the settlements page.
func (h *portalPages) decideBeneficiary(approve bool) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		c, err := h.actions.DecideBeneficiary(r.Context(), s, r.PostFormValue("currency"), approve, h.client(r))
		h.done(w, r, s, err, "/portal/settlements?currency="+url.QueryEscape(c.Currency))
	}
}

func (h *portalPages) transfer(w http.ResponseWriter, r *http.Request, s portal.Session) {
	t, err := h.Transfers.Get(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	canDecide := t.Status == transfer.Held && h.actions.MayDecideTransfer(r.Context(), s, t.UUID) == nil && !approvedBy(t.Approval.Approvals, s.Email)
	page := h.page(s, "Transfer "+t.UUID, map[string]any{"Transfer": t, "CanDecide": canDecide})
	page.Notice = transferNotices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "transfer", page)
}

var transferNotices = map[string]string{"approved": "You approved the transfer.", "rejected": "You rejected the transfer: its amount is back in the available balance."}

func (h *portalPages) decideTransfer(approve bool) sessionHandler {
	done := "approved"
	if !approve {
		done = "rejected"
	}
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		uuid := r.PathValue("uuid")
		_, err := h.actions.DecideTransfer(r.Context(), s, uuid, approve, r.PostFormValue("reason"), h.client(r))
		h.done(w, r, s, err, "/portal/transfers/"+url.PathEscape(uuid)+"?done="+done)
	}
}
