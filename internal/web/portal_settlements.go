package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"payd/internal/portal"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/webhook"
)

// Settlements and settlement reports (CONTRACT §13): every signed-in user
// reads them; admins and finance users set the settlement config in the
// settlements page's form (issue 54 item 4).

func (h *portalPages) settlementRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/settlements", handle: h.settlements},
		{method: "POST", path: "/portal/settlements/config", may: portal.ChangeSettlements, audit: portal.AuditSettlementConfigChanged, handle: h.putSettlementConfig},
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
	pg := h.page(s, "Settlements", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Config": config, "Form": configFormOf(config), "CanChange": s.May(portal.ChangeSettlements) == nil, "Settlements": list, "Pager": newPager(r, page, total)})
	if r.URL.Query().Get("done") == "saved" {
		pg.Notice = "The settlement config is saved."
	}
	h.render(w, r, http.StatusOK, "settlements", pg)
}

// configForm is the settlement config form's values: the fields of PUT
// /v2/settlements/config (settlement.ConfigRequest), the beneficiary a
// treasury account or a bank account.
type configForm struct {
	Frequency   string
	Beneficiary string // "bank" or "treasury"
	TreasuryID  string
	Bank        settlement.BankAccount
	Webhook     webhook.Target
}

// configFrequencies are the form's frequencies.
var configFrequencies = []settlement.Frequency{settlement.EndOfDay, settlement.OnDemand}

func configFormOf(c settlement.Config) configForm {
	f := configForm{Frequency: string(c.Frequency), Beneficiary: "bank"}
	if c.TreasuryAccountID != nil {
		f.Beneficiary, f.TreasuryID = "treasury", *c.TreasuryAccountID
	}
	if c.ExternalBankAccount != nil {
		f.Bank = *c.ExternalBankAccount
	}
	if c.WebhookNotification != nil {
		f.Webhook = *c.WebhookNotification
	}
	return f
}

// Frequencies are the frequency select's options.
func (configForm) Frequencies() []settlement.Frequency { return configFrequencies }

// putSettlementConfig sets the account's config from the form through
// portal.Actions (the settlement service's PutConfig) and answers 303 back
// to the settlements page.
func (h *portalPages) putSettlementConfig(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, _, err := h.principal(r.Context(), s, r.PostFormValue("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	_, err = h.actions.PutSettlementConfig(r.Context(), s, p, configRequest(r, p.Currency), h.client(r))
	h.done(w, r, s, err, "/portal/settlements?"+url.Values{"currency": {p.Currency}, "done": {"saved"}}.Encode())
}

// configRequest is the form as PUT /v2/settlements/config's body.
func configRequest(r *http.Request, currency string) settlement.ConfigRequest {
	v := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	req := settlement.ConfigRequest{Currency: currency, Frequency: settlement.Frequency(v("frequency")),
		WebhookNotification: webhook.Target{EndpointURL: v("webhook_endpoint_url"), AuthorizationHeader: v("webhook_authorization_header")}}
	if v("beneficiary") == "treasury" {
		req.TreasuryAccountID = v("treasury_account_id")
		return req
	}
	req.ExternalBankAccount = &settlement.BankAccount{BankName: v("bank_name"), BSB: v("bsb"), BankCode: v("bank_code"), BranchCode: v("branch_code"),
		SwiftCode: v("swift_code"), AccountNumber: v("account_number"), AccountName: v("account_name"), AccountType: v("account_type")}
	return req
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
