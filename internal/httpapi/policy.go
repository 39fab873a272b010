package httpapi

import (
	"net/http"

	"payd/internal/policy"
)

func (a *API) policyRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/approval_policies", auth: authKeys, summary: "The merchant's approval policies, daily limits and beneficiary approval switch (read only).",
			description: "Admins set them in the portal (/portal/policies); a new, changed or deleted policy is pending until a second admin approves it. A payout whose total, or an external transfer whose amount, is at or above an active policy's min_amount (the highest that matches) is held at its creation, even with the account's approvals off, until approvals distinct users of the policy's roles approve it (never its maker); the policy's name and version are recorded as approval.policy. daily_limits: a creator's (app or user) payouts and external transfers created one local day, not rejected or expired, above the limit are held (the one crossing it and every later one), for max(policy's, 1) approvals by admin or finance. Every currency's are listed, whatever the calling app's.",
			response:    policy.Rules{}, status: 200, handle: a.listPolicies},
	}
}

func (a *API) listPolicies(w http.ResponseWriter, r *http.Request) {
	rules, err := a.Policies.List(r.Context(), principal(r).MerchantID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, rules)
}
