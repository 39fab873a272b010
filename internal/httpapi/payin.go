package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/payin"
	"payd/internal/store"
)

type payinMethodList struct {
	Records []payin.MethodView `json:"records"`
}

type payinMethodParams struct {
	Record payin.MethodParamsView `json:"record"`
}

type statusOK struct {
	Status string `json:"status" enum:"ok"`
}

func (a *API) payinRoutes() []route {
	uuidParam := []param{{name: "uuid", typ: "string", required: true, doc: "The payin's uuid."}}
	payinCodes := []string{fault.CodeNotFound, fault.CodeCurrency, fault.CodeMethodNotEnabled, fault.CodeAmountOutOfRange, payin.CodeGSTNotAllowed,
		payin.CodeContactRequired, payin.CodeKYCRequired}
	return []route{
		{method: "GET", path: "/v2/payins/payin_methods", auth: authKeys, summary: "Payin methods enabled for the calling app's currency.",
			response: payinMethodList{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.payinMethods},
		{method: "GET", path: "/v2/payins/payin_method/params", auth: authKeys, summary: "The fields to collect for a payin method.",
			params:   []param{{name: "payin_method_name", typ: "string", required: true, doc: "A method code from payin_methods."}},
			response: payinMethodParams{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeMethodNotEnabled}, handle: lookupHandler(a, "payin_method_name", a.Payins.MethodParams, func(v payin.MethodParamsView) any { return payinMethodParams{Record: v} })},
		{method: "POST", path: "/v2/payins", auth: authKeys, summary: "Create a payin.",
			description: "Rules: currency must be the app's; the method must be enabled; amount within the method's limits (422 AMOUNT_OUT_OF_RANGE); VND, JPY, XAF, KRW and XOF amounts are rounded and the recorded amount returned; gst only for AU merchants in AUD (422 GST_NOT_ALLOWED), adding 10 %; the method's mandatory payin_method_params (422 VALIDATION_FAILED naming payin_method_params.<name>); require_contact methods need a contact with that email (422 CONTACT_REQUIRED), require_kyc methods its KYC approved (422 KYC_REQUIRED). OTP methods (kr_bank_va_kyc_krw, mobile money) start at stage authorize_otp.",
			body:        payin.Request{}, response: payin.Payin{}, status: 201, codes: payinCodes, handle: jsonHandler(a, http.StatusCreated, a.Payins.Create)},
		{method: "GET", path: "/v2/payins/detail", auth: authKeys, summary: "One payin.", params: uuidParam,
			response: payin.Payin{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.Payins.Get, nil)},
		{method: "GET", path: "/v2/payins/all", auth: authKeys, summary: "The caller's payins in its currency, newest first.",
			params: append([]param{
				{name: "from_date", typ: "string", doc: "Created at or after (date or RFC 3339)."},
				{name: "to_date", typ: "string", doc: "Created before this time, or on or before this date."},
				{name: "status", typ: "string", doc: "Only payins in this status."},
				{name: "external_id", typ: "string", doc: "Only payins with this external_id."},
			}, pagingParams...),
			response: pageList[payin.Payin]{}, status: 200, handle: a.listPayins},
		{method: "POST", path: "/v2/payins/bank/confirm_otp", auth: authKeys, summary: "Confirm the OTP of a payin at stage authorize_otp.",
			description: "The right code (sandbox: 123456) clears the stage and answers the payment details, also sent by webhook (X-Event-Type payin.pay_code). A wrong code or a payin not waiting for an OTP is a 400 (OTP_INVALID); the fifth wrong code fails the payin.",
			body:        payin.OTPRequest{}, response: payin.OTPResult{}, status: 200, codes: []string{fault.CodeNotFound, payin.CodeOTPInvalid}, handle: a.confirmOTP},
		{method: "POST", path: "/v2/payins/confirm_otp", auth: authKeys, summary: "Alias of /v2/payins/bank/confirm_otp.",
			body: payin.OTPRequest{}, response: payin.OTPResult{}, status: 200, codes: []string{fault.CodeNotFound, payin.CodeOTPInvalid}, handle: a.confirmOTP},
		{method: "POST", path: "/v2/payins/simulate", auth: authKeys, sandboxOnly: true, summary: "Sandbox: complete or fail a pending payin.",
			description: "status completed → received (the money lands in incoming, then available less fees and reserve); failed → failed. A payin awaiting its OTP must be confirmed first (409).",
			body:        payin.SimulateRequest{}, response: statusOK{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds}, handle: a.simulatePayin},
		{method: "POST", path: "/v2/payins/refund", auth: authKeys, summary: "Refund a received payin, in full or in part.",
			description: "Refunds never add up to more than was paid. The payin becomes return_pending (the amount moves from available to outgoing; 422 INSUFFICIENT_FUNDS if available is short), then return_received, or return_expired with the amount back in available.",
			body:        payin.RefundRequest{}, response: payin.Payin{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, payin.CodeNotRefundable, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds}, handle: jsonHandler(a, http.StatusOK, a.Payins.Refund)},
		{method: "POST", path: "/v2/payins/cancel", auth: authKeys, summary: "Cancel a pending payin.",
			body: payin.UUIDRequest{}, response: payin.Payin{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, payin.CodeNotCancellable}, handle: jsonHandler(a, http.StatusOK, a.Payins.Cancel)},
	}
}

func (a *API) payinMethods(w http.ResponseWriter, r *http.Request) {
	list, err := a.Payins.Methods(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, payinMethodList{Records: list})
}

func (a *API) listPayins(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	loc := a.location(p.Timezone)
	page, perPage := q.paging()
	from, to := q.dateRange(loc)
	status := q.str("status")
	if status != "" && !payin.ValidStatus(status) {
		q.fields.Add("status", "is not a payin status")
	}
	lq := payin.ListQuery{From: from, To: to, Status: status,
		ExternalID: q.str("external_id"), Page: page, PerPage: perPage}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.Payins.List(r.Context(), p, lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}

// confirmOTP stores its answer with the effect, whichever it is: a wrong
// code commits its attempt count yet answers 400, so the answer is the
// outcome's (Claim.Answer), 200 with the payment details or the refusal;
// a retry after a commit whose answer was lost is replayed it.
func (a *API) confirmOTP(w http.ResponseWriter, r *http.Request) {
	var req payin.OTPRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	if c := claimOf(r); c != nil {
		c.Answer = otpAnswer
	}
	out, err := inTx(a, r, func(tx *store.Tx) (payin.OTPOutcome, error) {
		return a.Payins.ConfirmOTP(r.Context(), tx, principal(r), req)
	})
	if err == nil {
		err = out.Refusal
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, out.Result)
}

// otpAnswer is the response of an OTP confirmation's outcome, as confirmOTP
// writes it: the refusal's error envelope, or 200 with the result.
func otpAnswer(result any) (int, []byte, error) {
	out := result.(payin.OTPOutcome)
	if out.Refusal == nil {
		body, err := encodeJSON(out.Result)
		return http.StatusOK, body, err
	}
	e, ok := fault.As(out.Refusal)
	if !ok {
		return 0, nil, out.Refusal
	}
	status, body := refusal(e)
	return status, body, nil
}

func (a *API) simulatePayin(w http.ResponseWriter, r *http.Request) {
	var req payin.SimulateRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	ok := statusOK{Status: "ok"}
	expect(r, http.StatusOK, func(any) any { return ok })
	// A receipt is group-committed with the other work on its payin's slot
	// of the account, beside the other slots (payin.Lane).
	r = r.WithContext(store.WithLane(r.Context(), payin.Lane(principal(r).MerchantID, req.UUID)))
	_, err := inTx(a, r, func(tx *store.Tx) (payin.Payin, error) {
		return a.Payins.Simulate(r.Context(), tx, principal(r), req)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, ok)
}
