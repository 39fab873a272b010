package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/portal"
)

// Approval policies (CONTRACT §20, §25): the policies page, admins only,
// where one admin proposes a policy, a change, a deletion, a daily limit or
// the beneficiary approval switch and another admin approves or rejects
// it. The rules (who may change, never the proposer approving, one policy
// per currency and min_amount) are the policy service's.

func (h *portalPages) policyRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/policies", may: portal.ChangePolicies, handle: h.policies},
		{method: "POST", path: "/portal/policies", may: portal.ChangePolicies, audit: portal.AuditPolicyProposed, handle: h.proposePolicy},
		{method: "POST", path: "/portal/policies/daily_limit", may: portal.ChangePolicies, audit: portal.AuditPolicyProposed, handle: h.proposeDailyLimit},
		{method: "POST", path: "/portal/policies/beneficiary_approval", may: portal.ChangePolicies, audit: portal.AuditPolicyProposed, handle: h.proposeBeneficiaryApproval},
		{method: "POST", path: "/portal/policies/{id}/update", may: portal.ChangePolicies, audit: portal.AuditPolicyProposed, handle: h.updatePolicy},
		{method: "POST", path: "/portal/policies/{id}/delete", may: portal.ChangePolicies, audit: portal.AuditPolicyProposed, handle: h.deletePolicy},
		{method: "POST", path: "/portal/policies/{id}/approve", may: portal.ChangePolicies, audit: portal.AuditPolicyApproved, handle: h.decidePolicy(true)},
		{method: "POST", path: "/portal/policies/{id}/reject", may: portal.ChangePolicies, audit: portal.AuditPolicyRejected, handle: h.decidePolicy(false)},
	}
}

// policyNotices are the page's notices after a form (a link cannot put
// other words on it).
var policyNotices = map[string]string{
	"proposed": "Your change is pending: another admin must approve it.",
	"approved": "You approved the change: it applies from now.",
	"rejected": "You rejected the change.",
}

func (h *portalPages) policies(w http.ResponseWriter, r *http.Request, s portal.Session) {
	rules, err := h.Policies.List(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	currencies, err := h.Merchants.Currencies(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page := h.page(s, "Approval policies", map[string]any{"Rules": rules, "Currencies": currencies, "Me": s.Email,
		"Roles": policy.PolicyRoles, "MaxApprovals": policy.MaxApprovals})
	page.Notice = policyNotices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "policies", page)
}

// policyInput is the policy form: name, currency, min_amount, approvals and
// roles (repeated).
func policyInput(r *http.Request) policy.Input {
	in := policy.Input{Name: r.PostFormValue("name"), Currency: r.PostFormValue("currency"),
		MinAmount: money.Input(strings.TrimSpace(r.PostFormValue("min_amount")))}
	in.Approvals, _ = strconv.Atoi(strings.TrimSpace(r.PostFormValue("approvals")))
	roles := r.PostForm["roles"]
	if len(roles) > 4 {
		roles = roles[:4]
	}
	for _, role := range roles {
		in.Roles = append(in.Roles, merchant.Role(role))
	}
	return in
}

func (h *portalPages) proposePolicy(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, err := h.actions.ProposePolicy(r.Context(), s, policyInput(r), h.client(r))
	h.done(w, r, s, err, "/portal/policies?done=proposed")
}

func (h *portalPages) updatePolicy(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, err := h.actions.UpdatePolicy(r.Context(), s, r.PathValue("id"), policyInput(r), h.client(r))
	h.done(w, r, s, err, "/portal/policies?done=proposed")
}

func (h *portalPages) deletePolicy(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, err := h.actions.DeletePolicy(r.Context(), s, r.PathValue("id"), h.client(r))
	h.done(w, r, s, err, "/portal/policies?done=proposed")
}

func (h *portalPages) decidePolicy(approve bool) sessionHandler {
	done := "approved"
	if !approve {
		done = "rejected"
	}
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		_, err := h.actions.DecidePolicy(r.Context(), s, r.PathValue("id"), approve, h.client(r))
		h.done(w, r, s, err, "/portal/policies?done="+url.QueryEscape(done))
	}
}

// proposeDailyLimit takes currency and amount (empty removes the limit).
func (h *portalPages) proposeDailyLimit(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, err := h.actions.ProposeDailyLimit(r.Context(), s, r.PostFormValue("currency"), money.Input(strings.TrimSpace(r.PostFormValue("amount"))), h.client(r))
	h.done(w, r, s, err, "/portal/policies?done=proposed")
}

// proposeBeneficiaryApproval takes on (true or false).
func (h *portalPages) proposeBeneficiaryApproval(w http.ResponseWriter, r *http.Request, s portal.Session) {
	_, err := h.actions.ProposeBeneficiaryApproval(r.Context(), s, r.PostFormValue("on") == "true", h.client(r))
	h.done(w, r, s, err, "/portal/policies?done=proposed")
}
