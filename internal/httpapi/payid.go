package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"payd/internal/fault"
	"payd/internal/payid"
	"payd/internal/payin"
)

func (a *API) payidRoutes() []route {
	lookup := []param{{name: "id", typ: "integer", doc: "The request's id (wins over payid)."}, {name: "payid", typ: "string", doc: "The request's PayID."}}
	return []route{
		{method: "POST", path: "/v1/merchants/create_payment", auth: authKeys, summary: "Create a one-time PayID payment request (AUD).",
			description: createPaymentText(payid.CreateRules()),
			body:        createPaymentBody{}, response: payid.PaymentRequest{}, status: 201, codes: []string{fault.CodeCurrency, fault.CodeAmountOutOfRange, payin.CodeGSTNotAllowed, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusCreated, a.PayIDs.Create), merchantLane: true},
		{method: "GET", path: "/v1/payment_requests/status", auth: authKeys, summary: "A payment request's status, by id or PayID (id wins; neither is a 422).",
			params: lookup, response: payid.StatusView{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.paymentRequestStatus},
		{method: "GET", path: "/v1/payment_requests/detail", auth: authKeys, summary: "A whole payment request, by id or PayID (id wins): the object its webhooks carry.",
			params: lookup, response: payid.PaymentRequest{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.paymentRequestDetail},
		{method: "GET", path: "/v1/payment_requests", auth: authKeys, summary: "The merchant's payment requests, newest first, 20 a page.",
			params: append([]param{
				{name: "from_date", typ: "string", doc: "Created at or after (date or RFC 3339)."},
				{name: "to_date", typ: "string", doc: "Created before this time, or on or before this date."},
			}, pagingParams...),
			response: pageList[payid.PaymentRequest]{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.listPaymentRequests},
		{method: "POST", path: "/v1/payment_requests/cancel_payid", auth: authKeys, summary: "Cancel a pending payment request.",
			description: "The request becomes expired with cancelled_at set, and its PayID is deregistered for good (a payment into it is refused). A request that is not pending is 409 INVALID_STATE naming its status.",
			body:        payid.CancelRequest{}, response: payid.PaymentRequest{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: jsonHandler(a, http.StatusOK, a.PayIDs.Cancel), merchantLane: true},
		{method: "POST", path: "/v1/payment_requests/return", auth: authKeys, summary: "Send a received request's payment back to the payer.",
			description: "The amount paid moves from available to outgoing (422 INSUFFICIENT_FUNDS when available is short: the fee is not refunded) and the request is return_pending; when the payer's bank accepts it, return_received; when it does not in time, return_expired with the funds back in available. A request that is not received is 409 INVALID_STATE.",
			body:        payid.ReturnRequest{}, response: payid.PaymentRequest{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
			handle: jsonHandler(a, http.StatusOK, a.PayIDs.Return), merchantLane: true},
		{method: "POST", path: "/v1/payment_requests/simulate_payment", auth: authKeys, sandboxOnly: true, summary: "Sandbox: a payer pays into one of the caller's PayIDs over NPP.",
			description: "A pending request paid its exact total is received (incoming, then available less the fee). Any other amount is sent back: return_pending, then return_received (return_rejected when the payer's bank refuses it, in the sandbox when the payer's name contains [sandbox:reject]: the money then stays held in incoming, its balance record waiting, for the operator to resolve with the payer); it is never credited to available. A static PayID takes any amount, each payment its own record and static_payid.payment webhook. A PayID whose request was paid, cancelled or expired is deregistered: 422 PAYID_DEREGISTERED. An unknown PayID, or another merchant's, is a 404.",
			body:        payid.Payment{}, response: payid.Receipt{}, status: 200, codes: []string{fault.CodeNotFound, payid.CodeDeregistered, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
			handle: jsonHandler(a, http.StatusOK, a.PayIDs.SimulatePayment), merchantLane: true},
		{method: "POST", path: "/v1/customers/create_static_open_payid", auth: authKeys, summary: "Give a customer a static open PayID (AUD).",
			description: "One per merchant customer id (external_id): a repeat is 409 ALREADY_EXISTS naming the existing one. Each payment into it is credited as its own record and sent as a static_payid.payment webhook to customer_notification.",
			body:        payid.StaticRequest{}, response: payid.StaticPayID{}, status: 201, codes: []string{fault.CodeNotFound, fault.CodeCurrency, fault.CodeAlreadyExists},
			handle: jsonHandler(a, http.StatusCreated, a.PayIDs.CreateStatic), merchantLane: true},
		{method: "GET", path: "/v1/customers/get_static_open_payids", auth: authKeys, summary: "The merchant's static open PayIDs, newest first.",
			params: append([]param{
				{name: "email", typ: "string", doc: "Only the customer with this email."},
				{name: "payid", typ: "string", doc: "Only this PayID."},
				{name: "customer_id", typ: "string", doc: "Only the customer with this id (external_id)."},
			}, pagingParams...),
			response: pageList[payid.StaticPayID]{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.listStaticPayIDs},
		{method: "GET", path: "/v1/customers/static_payid_payments", auth: authKeys, summary: "Payments into the merchant's static PayIDs, newest first.",
			params: append([]param{
				{name: "payid", typ: "string", doc: "Only payments into this PayID."},
				{name: "customer_id", typ: "string", doc: "Only payments into this customer's PayID."},
			}, pagingParams...),
			response: pageList[payid.StaticPayment]{}, status: 200, handle: a.listStaticPayments},
	}
}

// createPaymentText is create_payment's description. The bounds it states
// are payid's Rules, made from the constants validate enforces, so the
// document cannot state others.
func createPaymentText(r payid.Rules) string {
	return fmt.Sprintf("The request gets a PayID of its own (request_payid), never handed out before or after. "+
		"amount is AUD with at most 2 decimals within %s (422 AMOUNT_OUT_OF_RANGE); gst (AU merchants only) adds %s; "+
		"expired_at %s on the merchant's clock (default %s); name %s, description %s, external_id %s; "+
		"emails one comma-separated string (jane@example.com,finance@example.com), as public integrations send it, or an array of strings: "+
		"%s, each a valid one (a refused address is named emails[i], counted from 0); "+
		"metadata any JSON object (%s), echoed here and in every webhook. "+
		"Every status change is a payment_request.<status> webhook to payment_request_notification, its authorization_header sent verbatim as Authorization.",
		r.Amount, r.GST, r.Expiry, r.DefaultExpiry, r.Name, r.Description, r.ExternalID, r.Emails, r.Metadata)
}

// createPaymentBody is payid.CreateRequest as the document shows it: its
// emails may be a string as well as an array, which the schema of a Go slice
// cannot say.
type createPaymentBody struct {
	payid.CreateRequest
	Emails emailsForms `json:"emails,omitempty" doc:"Addresses to tell of the request: one comma-separated string, as public integrations send them, or an array of strings." example:"jane@example.com,finance@example.com"`
}

// emailsForms documents payid.Emails: either form.
type emailsForms struct{}

func (emailsForms) oneOfShapes() []any { return []any{"", []string{}} }

// requestLookup reads id and payid (id wins; one is required).
func requestLookup(q *queryReader) payid.Lookup {
	var l payid.Lookup
	if raw := q.str("id"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			q.fields.Add("id", "must be a positive integer")
		}
		l.ID = n
	}
	l.PayID = q.str("payid")
	if l.ID == 0 && l.PayID == "" && len(q.fields) == 0 {
		q.fields.Add("id", "give id or payid")
	}
	return l
}

func (a *API) paymentRequestStatus(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	l := requestLookup(q)
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.PayIDs.Status(r.Context(), principal(r), l)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, v)
}

func (a *API) paymentRequestDetail(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	l := requestLookup(q)
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.PayIDs.Get(r.Context(), principal(r), l)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, v)
}

func (a *API) listPaymentRequests(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	page, perPage := q.paging()
	from, to := q.dateRange(a.location(p.Timezone))
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.PayIDs.List(r.Context(), p, payid.ListQuery{From: from, To: to, Page: page, PerPage: perPage})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}

func (a *API) listStaticPayIDs(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	page, perPage := q.paging()
	sq := payid.StaticQuery{Email: q.str("email"), PayID: q.str("payid"), CustomerID: q.str("customer_id"), Page: page, PerPage: perPage}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.PayIDs.ListStatic(r.Context(), principal(r), sq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}

func (a *API) listStaticPayments(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	page, perPage := q.paging()
	pq := payid.PaymentQuery{PayID: q.str("payid"), CustomerID: q.str("customer_id"), Page: page, PerPage: perPage}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.PayIDs.ListPayments(r.Context(), principal(r), pq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}
