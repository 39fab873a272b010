package web

import (
	"net/http"
	"net/url"
	"slices"

	"payd/internal/fault"
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
		{method: "GET", path: "/portal/transfers", handle: h.transfers},
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

// heldTransfer is a row of the transfers list: the transfer, and whether
// the signed-in user may decide it now.
type heldTransfer struct {
	transfer.Transfer
	Mine bool
}

// transfers lists the merchant's transfers (held ones first offered:
// ?status=held), each held one saying whether it waits for the signed-in
// user's approval or for others'.
func (h *portalPages) transfers(w http.ResponseWriter, r *http.Request, s portal.Session) {
	status := transfer.Status(r.URL.Query().Get("status"))
	if status != "" && !slices.Contains(transfer.Statuses, status) {
		h.fail(w, r, s, fault.Field("status", "must be one of held, processing, completed, failed, returned, rejected, expired"))
		return
	}
	page := pageOf(r)
	list, total, err := h.Transfers.List(r.Context(), s.MerchantID, status, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	rows := make([]heldTransfer, len(list))
	for i, t := range list {
		rows[i] = heldTransfer{Transfer: t, Mine: t.Status == transfer.Held && h.actions.MayDecideTransfer(r.Context(), s, t.UUID) == nil &&
			(t.Approval == nil || !approvedBy(t.Approval.Approvals, s.Email))}
	}
	h.render(w, r, http.StatusOK, "transfers", h.page(s, "Transfers", map[string]any{"Transfers": rows, "Statuses": transfer.Statuses,
		"Status": status, "Pager": newPager(r, page, total)}))
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
