package web

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/portal"
)

// Payouts (CONTRACT §13): the list (?status=held), a payout's page with its
// approval record, the form that creates one, and the decisions on a held
// one. Who may create and decide is the route's permission and, for every
// entry point, portal.Actions' and the payout service's rule: never the
// payout's own maker.

func (h *portalPages) payoutRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/payouts", handle: h.payouts},
		{method: "GET", path: "/portal/payouts/new", may: portal.CreatePayouts, handle: h.payoutForm},
		{method: "POST", path: "/portal/payouts", may: portal.CreatePayouts, audit: portal.AuditPayoutCreated, handle: h.createPayout},
		{method: "GET", path: "/portal/payouts/{uuid}", handle: h.payout},
		{method: "POST", path: "/portal/payouts/{uuid}/approve", may: portal.DecidePayouts, audit: portal.AuditPayoutApproved, handle: h.decide(true)},
		{method: "POST", path: "/portal/payouts/{uuid}/reject", may: portal.DecidePayouts, audit: portal.AuditPayoutRejected, handle: h.decide(false)},
	}
}

// payoutsData is the payouts page.
type payoutsData struct {
	Filter listFilter
	// Waiting is the held list shown (payout.WaitingForMe or
	// WaitingForOthers), "" for the filtered list.
	Waiting string
	Payouts []payout.Payout
	Pager   pager
}

// payouts lists the merchant's payouts of every currency or one, filtered
// by status, dates and search, or the held ones waiting for the user's
// approval or for others'.
func (h *portalPages) payouts(w http.ResponseWriter, r *http.Request, s portal.Session) {
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
	waiting := r.URL.Query().Get("waiting")
	if waiting != payout.WaitingForMe && waiting != payout.WaitingForOthers {
		waiting = ""
	}
	f, err := readFilter(r, "/portal/payouts", payout.Statuses, currencies, true, zone)
	if waiting != "" {
		f.Keep = map[string]string{"waiting": waiting}
	}
	page := h.page(s, payoutsTitle(waiting, f.Status), nil)
	page.Zone = zone
	if err != nil {
		page.Error, page.Data = problemText(err), payoutsData{Filter: f, Waiting: waiting, Pager: newPager(r, 1, 0)}
		h.render(w, r, http.StatusUnprocessableEntity, "payouts", page)
		return
	}
	p, _, err := h.principal(r.Context(), s, f.Currency)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	n := pageOf(r)
	list, total, err := h.Payouts.List(r.Context(), p, payout.ListQuery{Status: f.Status, From: f.from, To: f.to, Search: f.Search,
		AllCurrencies: f.Currency == "", Page: n, PerPage: portalPerPage, WaitingFor: waiting, By: payout.Decider{UserID: s.ID, Email: s.Email, Role: s.Role}})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page.Data = payoutsData{Filter: f, Waiting: waiting, Payouts: list, Pager: newPager(r, n, total)}
	h.render(w, r, http.StatusOK, "payouts", page)
}

// payoutsTitle is the payouts page's title for its list.
func payoutsTitle(waiting, status string) string {
	switch {
	case waiting == payout.WaitingForMe:
		return "Payouts waiting for my approval"
	case waiting == payout.WaitingForOthers:
		return "Payouts waiting for others' approval"
	case status == string(payout.Held):
		return "Payouts held for approval"
	}
	return "Payouts"
}

// payout is a payout's page; a held payout shows the decision forms to a
// user who may decide it (not its maker).
func (h *portalPages) payout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	po, err := h.Payouts.Get(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	d := payoutData{Payout: po, Recipients: recipientsOf(po)}
	if po.Status == payout.Held {
		d.CanDecide, d.Waiting = h.decision(r, s, po)
	}
	page := h.page(s, "Payout "+po.UUID, d)
	// Only the page's own notices are shown: a link cannot put words on it.
	page.Notice = decisionNotices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "payout", page)
}

// payoutData is a payout's page: the payout, who its transactions pay, and,
// while it is held, the decision forms or why this user is not offered them.
type payoutData struct {
	Payout     payout.Payout
	Recipients []recipient
	CanDecide  bool
	// Waiting says who must decide when the user may not (a held payout).
	Waiting string
}

// decision is whether s is offered the decision forms of the held payout
// po and, when not, who must decide: an approver sees exactly what they
// approve, and the maker is told another approver must decide rather than
// shown nothing.
func (h *portalPages) decision(r *http.Request, s portal.Session, po payout.Payout) (canDecide bool, waiting string) {
	var made, approved bool
	if po.Approval != nil {
		made, approved = po.Approval.CreatedBy == s.Email, approvedBy(po.Approval.Approvals, s.Email)
	}
	switch {
	case made:
		return false, "You made this payout: another approver must decide."
	case approved:
		return false, "You approved this payout: another approver must decide."
	case h.actions.MayDecide(r.Context(), s, po.UUID) != nil:
		return false, "Waiting for a decision: an admin or finance user other than its maker must decide."
	}
	return true, ""
}

// recipient is who one transaction of a payout pays, as its page shows it.
type recipient struct {
	payout.Transaction
	Name string
	// Fields are the method's parameters, in the method's order, then any
	// other parameter the transaction carries, by name.
	Fields []recipientField
}

// recipientField is one payout method parameter of a recipient.
type recipientField struct{ Label, Value string }

// recipientLabels are the short names of the parameters a recipient is
// read by; any other is its parameter name.
var recipientLabels = map[string]string{"bsb": "BSB", "account_number": "Account", "account_name": "Account name", "pay_id": "PayID",
	"pay_id_type": "PayID type", "swift_code": "SWIFT/BIC", "bank_code": "Bank", "branch_code": "Branch", "account_type": "Account type"}

func recipientsOf(po payout.Payout) []recipient {
	var order []string
	if m, err := payout.Lookup(po.PayoutMethodName); err == nil {
		for _, p := range m.Params {
			order = append(order, p.Name)
		}
	}
	out := make([]recipient, 0, len(po.PayoutTransactions))
	for _, tx := range po.PayoutTransactions {
		rc := recipient{Transaction: tx, Name: strings.TrimSpace(tx.FirstName + " " + tx.LastName)}
		names := slices.Sorted(maps.Keys(tx.PayoutMethodParams))
		names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(order, n) })
		for _, n := range append(slices.Clone(order), names...) {
			v, ok := tx.PayoutMethodParams[n]
			if !ok {
				continue
			}
			label := recipientLabels[n]
			if label == "" {
				label = n
			}
			rc.Fields = append(rc.Fields, recipientField{Label: label, Value: fmt.Sprint(v)})
		}
		out = append(out, rc)
	}
	return out
}

// approvedBy reports whether the user of email is among steps: a user who
// approved a held payout or transfer is not offered to approve it again.
func approvedBy(steps []policy.Step, email string) bool {
	return slices.ContainsFunc(steps, func(st policy.Step) bool { return st.DecidedBy == email })
}

// decisionNotices are the notices of a payout's page after a decision.
var decisionNotices = map[string]string{"approved": "You approved the payout.", "rejected": "You rejected the payout: its funds are back in the available balance."}

// decide approves or rejects a held payout (portal.Actions.Decide) and
// answers 303 back to its page.
func (h *portalPages) decide(approve bool) sessionHandler {
	done := "approved"
	if !approve {
		done = "rejected"
	}
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		uuid := r.PathValue("uuid")
		if _, err := h.actions.Decide(r.Context(), s, uuid, approve, r.PostFormValue("reason"), h.client(r)); err != nil {
			h.fail(w, r, s, err)
			return
		}
		h.redirect(w, r, "/portal/payouts/"+url.PathEscape(uuid)+"?done="+done)
	}
}

// The new-payout form (issue 54 item 4) is two steps that work without
// JavaScript: the method, chosen from the methods enabled on the
// merchant's accounts (GET /portal/payouts/new), then that method's fields,
// from the same param definitions the API validates them by
// (GET /portal/payouts/new?payout_method_name=…). The form posts each
// field as param.<name>; the payout service checks them as it checks the
// API's payout_method_params.

// paramField is the form prefix of a method's field.
const paramField = "param."

// payoutFormData is the new-payout form.
type payoutFormData struct {
	// Methods are the methods the merchant may pay out by, by currency.
	Methods []currencyMethods
	// Method is the chosen method (step two), nil on step one.
	Method *methodForm
	// Values are the form's values sent back after a refusal, by name.
	Values map[string]string
}

// currencyMethods are one account's enabled payout methods.
type currencyMethods struct {
	Currency string
	Methods  []payout.MethodView
}

// methodForm is a method's step of the form: what it is and its fields.
type methodForm struct {
	payout.MethodView
	Fields []methodField
}

// methodField is one parameter of a method as an input of the form.
type methodField struct {
	Name, Label string
	Mandatory   bool
	// Boolean fields are a checkbox; the others a text input, or a select
	// of Banks for the method's bank field.
	Boolean bool
	Banks   []payout.Bank
}

// Input is the field's form name.
func (f methodField) Input() string { return paramField + f.Name }

func (h *portalPages) payoutForm(w http.ResponseWriter, r *http.Request, s portal.Session) {
	d, err := h.payoutFormOf(r, s, r.URL.Query().Get("payout_method_name"))
	page := h.page(s, "New payout", d)
	if err != nil {
		page.Error = problemText(err)
		if fault.StatusOf(err) >= http.StatusInternalServerError {
			h.fail(w, r, s, err)
			return
		}
		h.render(w, r, http.StatusUnprocessableEntity, "payout_new", page)
		return
	}
	h.render(w, r, http.StatusOK, "payout_new", page)
}

// payoutFormOf is the form of the merchant's enabled methods and, when code
// names one, its fields; a code that names none of them is a validation
// error naming payout_method_name (with step one's data).
func (h *portalPages) payoutFormOf(r *http.Request, s portal.Session, code string) (payoutFormData, error) {
	_, currencies, err := h.principal(r.Context(), s, "")
	if err != nil {
		return payoutFormData{}, err
	}
	var d payoutFormData
	var chosen *payout.MethodView
	var account merchant.Principal
	for _, c := range currencies {
		p, _, err := h.principal(r.Context(), s, c)
		if err != nil {
			return payoutFormData{}, err
		}
		methods, err := h.Payouts.Methods(r.Context(), p)
		if err != nil {
			return payoutFormData{}, err
		}
		d.Methods = append(d.Methods, currencyMethods{Currency: c, Methods: methods})
		for i := range methods {
			if methods[i].PayoutMethodName == code {
				chosen, account = &methods[i], p
			}
		}
	}
	if code == "" {
		return d, nil
	}
	if chosen == nil {
		return d, fault.Field("payout_method_name", fmt.Sprintf("%q is not a payout method enabled on your accounts: choose one of the list", clipText(code)))
	}
	form, err := h.methodFormOf(r, account, *chosen)
	d.Method = &form
	return d, err
}

// methodFormOf is the method's step of the form: its fields in the
// catalogue's order, from payout.Lookup's param definitions.
func (h *portalPages) methodFormOf(r *http.Request, p merchant.Principal, view payout.MethodView) (methodForm, error) {
	m, err := payout.Lookup(view.PayoutMethodName)
	if err != nil {
		return methodForm{}, err
	}
	desc, err := h.Payouts.MethodParams(r.Context(), p, view.PayoutMethodName)
	if err != nil {
		return methodForm{}, err
	}
	form := methodForm{MethodView: view}
	for _, prm := range m.Params {
		f := methodField{Name: prm.Name, Label: sentenceCase(prm.Label), Mandatory: prm.Mandatory, Boolean: prm.Type == "boolean"}
		if prm.Name == m.BankField {
			f.Banks = desc.Banks
		}
		form.Fields = append(form.Fields, f)
	}
	return form, nil
}

// sentenceCase is a param's label ("account number") as a form's label
// ("Account number").
func sentenceCase(label string) string {
	r, n := utf8.DecodeRuneInString(label)
	return string(unicode.ToUpper(r)) + label[n:]
}

// createPayout makes a payout of one transaction from the form, through the
// same payout service as the API (portal.Actions.CreatePayout); a request
// the service refuses shows the form again with what is wrong.
func (h *portalPages) createPayout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	code := r.PostFormValue("payout_method_name")
	d, err := h.payoutFormOf(r, s, code)
	if err == nil && d.Method == nil {
		err = fault.Field("payout_method_name", "choose a payout method")
	}
	if err == nil {
		var p merchant.Principal
		if p, _, err = h.principal(r.Context(), s, d.Method.Currency); err == nil {
			var po payout.Payout
			if po, err = h.actions.CreatePayout(r.Context(), s, p, payoutRequest(r, p.Currency, d.Method.Fields), h.client(r)); err == nil {
				h.redirect(w, r, "/portal/payouts/"+url.PathEscape(po.UUID))
				return
			}
		}
	}
	if fault.StatusOf(err) != http.StatusUnprocessableEntity {
		h.fail(w, r, s, err)
		return
	}
	d.Values = map[string]string{}
	for k := range r.PostForm {
		if k != "csrf_token" {
			d.Values[k] = r.PostFormValue(k)
		}
	}
	page := h.page(s, "New payout", d)
	page.Error = problemText(err)
	h.render(w, r, http.StatusUnprocessableEntity, "payout_new", page)
}

// payoutRequest is the payouts/new form as the payout service takes it: one
// transaction paid by the method whose fields are fields, each posted as
// param.<name> (a checkbox is true when sent, false when not; an empty
// text is left out, for the service to refuse when it is mandatory).
func payoutRequest(r *http.Request, currency string, fields []methodField) payout.Request {
	params := map[string]any{}
	for _, f := range fields {
		v := strings.TrimSpace(r.PostFormValue(f.Input()))
		switch {
		case f.Boolean:
			params[f.Name] = v != ""
		case v != "":
			params[f.Name] = v
		}
	}
	tx := payout.TransactionRequest{FirstName: strings.TrimSpace(r.PostFormValue("first_name")), LastName: strings.TrimSpace(r.PostFormValue("last_name")),
		Email: strings.TrimSpace(r.PostFormValue("email")), Amount: money.Input(strings.TrimSpace(r.PostFormValue("amount"))), PayoutMethodParams: params}
	if ref := strings.TrimSpace(r.PostFormValue("external_id")); ref != "" {
		tx.ExternalID = &ref
	}
	return payout.Request{Currency: currency, PayoutMethodName: r.PostFormValue("payout_method_name"), Description: r.PostFormValue("description"),
		PayoutTransactionDetails: []payout.TransactionRequest{tx}}
}
