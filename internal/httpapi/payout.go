package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/payout"
)

type payoutMethodList struct {
	Records []payout.MethodView `json:"records"`
}

type payoutMethodParams struct {
	Record payout.MethodParamsView `json:"record"`
}

func (a *API) payoutRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/payouts/payout_methods", auth: authKeys, summary: "Payout methods enabled for the calling app's currency.",
			description: "Each method's limits and fees (a fixed part plus a percentage of the amount, per transaction) are payd's; the spec fixes 1 AUD minimum for au_payid_npp_aud, 300–2,000,000 THB for th_bank_thb and 15,000–36,000,000 UGX for ug_bank_ugx.",
			response:    payoutMethodList{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.payoutMethods},
		{method: "GET", path: "/v2/payouts/payout_method/params", auth: authKeys, summary: "The fields and banks of a payout method.",
			params:   []param{{name: "payout_method_name", typ: "string", required: true, doc: "A method code from payout_methods."}},
			response: payoutMethodParams{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "payout_method_name", a.Payouts.MethodParams, func(v payout.MethodParamsView) any { return payoutMethodParams{Record: v} })},
		{method: "POST", path: "/v2/payouts", auth: authKeys, summary: "Create a payout: a batch of 1 to 1,000 transactions.",
			description: "Rules (each a 422; a refused request creates nothing and moves nothing): currency must be the app's (CURRENCY_NOT_SUPPORTED); the method must exist and be enabled (METHOD_NOT_ENABLED); description 5–255 characters; scheduled_at readable, in the future and at most " + scheduleAheadText + " ahead of the merchant's clock; 1 to 1,000 transactions; the method's payout_method_params (VALIDATION_FAILED naming payout_transaction_details[N].payout_method_params.<name>: pay_id_type in upper case, BSB of 6 digits, th_bank_thb takes swift_code and no bank_code, bank_code from the method's banks (IDR, KRW and UGX have no directory: checked by shape), payment_reason from its set, ug_bank_ugx user_type rules); amounts with the currency's precision (VND, JPY, KRW, XAF, XOF rounded) and within the method's limits (AMOUNT_OUT_OF_RANGE); amounts plus fees within the available balance (INSUFFICIENT_FUNDS); when the operator's bank-file rail pays the method (payd rail set), what its file cannot hold (VALIDATION_FAILED naming the field: an account_name outside the BECS Direct Entry characters on an ABA rail, without a half-width katakana form on a Zengin rail, a name or description over 140 characters on a pain.001 rail). Accepted, amounts and fees move from available to outgoing, and the payout is held (the account requires approval: nothing reaches the rail before an admin or finance user approves it in the portal; undecided after the account's hold window, 7 days by default, it expires), scheduled (until scheduled_at) or processing. A 2xx never means money has left: follow the status and its webhooks (payout.<status>, payout_transaction.done|failed). Each transaction's bank_reference is null until it is handed to a rail (when the payout starts processing), then what the bank and the recipient's statement name it by; on a bank-file rail it waits for the rail's next cut-off and goes out in that cut-off's file. Sandbox: a transaction to an account_number of zeros only (000000000; 0000000 for jp_bank_jpy) or to a pay_id beginning with fail fails. Approval policies (GET /v2/approval_policies): a payout whose total is at or above an active policy's min_amount (the highest that matches), or that takes its creator's payouts and external transfers of the local day above the daily limit, is held even with the account's approvals off, its approval naming the policy (approval.policy) and its required_approvals; it leaves held at the last distinct allowed approval (processing, or scheduled) or at the first rejection.",
			body:        payout.Request{}, response: payout.Payout{}, status: 201, codes: []string{fault.CodeCurrency, fault.CodeMethodNotEnabled, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusCreated, a.Payouts.Create), merchantLane: true},
		{method: "GET", path: "/v2/payouts/detail", auth: authKeys, summary: "One payout, as its webhooks carry it.",
			params:   []param{{name: "uuid", typ: "string", required: true, doc: "The payout's uuid."}},
			response: payout.Payout{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.Payouts.Get, nil)},
		{method: "GET", path: "/v2/payouts/all", auth: authKeys, summary: "The caller's payouts in its currency, newest first.",
			params: append([]param{
				{name: "from_date", typ: "string", doc: "Created at or after (date or RFC 3339)."},
				{name: "to_date", typ: "string", doc: "Created before this time, or on or before this date."},
				{name: "status", typ: "string", doc: "Only payouts in this status (held, scheduled, processing, completed, rejected, expired)."},
				{name: "external_id", typ: "string", doc: "Only payouts with this external_id."},
			}, pagingParams...),
			response: pageList[payout.Payout]{}, status: 200, handle: a.listPayouts},
	}
}

func (a *API) payoutMethods(w http.ResponseWriter, r *http.Request) {
	list, err := a.Payouts.Methods(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, payoutMethodList{Records: list})
}

func (a *API) listPayouts(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := newQuery(r)
	page, perPage := q.paging()
	from, to := q.dateRange(a.location(p.Timezone))
	status := q.str("status")
	if status != "" && !payout.ValidStatus(status) {
		q.fields.Add("status", "is not a payout status")
	}
	lq := payout.ListQuery{From: from, To: to, Status: status, ExternalID: q.str("external_id"), Page: page, PerPage: perPage}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.Payouts.List(r.Context(), p, lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}
