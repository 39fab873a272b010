package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/settlement"
)

func (a *API) settlementRoutes() []route {
	currency := param{name: "currency", typ: "string", doc: "Absent: the calling app's currency."}
	return []route{
		{method: "GET", path: "/v2/settlements/config", auth: authKeys, summary: "A payments account's settlement config.",
			description: "on_demand with no beneficiary until it is first set.",
			params:      []param{currency}, response: settlement.Config{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.settlementConfig},
		{method: "PUT", path: "/v2/settlements/config", auth: authKeys, summary: "Set a payments account's settlement frequency and beneficiary.",
			description: "Any payments account currency. frequency end_of_day settles everything withdrawable at the end of each local day in the merchant's time zone (once a day, DST included; a day missed while payd was down is settled when it starts), on_demand only when asked. Exactly one beneficiary: the merchant's treasury account of the same currency (treasury_account_id: its account number), or an external_bank_account validated per currency (AUD: bsb; JPY: Zengin bank_code and branch_code from the directory, account_type; VND: the NAPAS BIN as bank_code; others: swift_code). When the operator's bank-file rail serves the currency's settlements, an account_name its file cannot hold (outside the BECS set on an aba rail, without a half-width katakana form on a zengin rail, over 140 characters on a pain001 rail) is 422 VALIDATION_FAILED naming external_bank_account.account_name. A change applies to later settlements only: a settlement keeps the beneficiary it was submitted with. With the merchant's beneficiary_approval on (GET /v2/approval_policies), a change to another external bank account does not apply: the answer is 200 with the beneficiary as it was and pending_change (a newer PUT replaces it), and settlements go to the old beneficiary until an admin or finance user other than its maker approves it in the portal; a switch to a treasury account applies at once.",
			body:        settlement.ConfigRequest{}, response: settlement.Config{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: jsonHandler(a, http.StatusOK, a.Settlements.PutConfig), merchantLane: true},
		{method: "POST", path: "/v2/settlements", auth: authKeys, summary: "Settle now.",
			description: "amount, or all of the withdrawable balance less the fee when absent, plus the fee (AUD 1.00, USD 5.00, JPY 250; others none) moves from available to outgoing as one balance record (transaction_type settlement): more than withdrawable is 422 INSUFFICIENT_FUNDS; no beneficiary set is 422 NO_BENEFICIARY. The settlement is processing; JPY, VND, IDR and INR first wait for the funding check (sandbox: an hour on the merchant's clock), AUD never. Into a treasury account it completes at once (a transfer_in record there); to a bank account when the rail confirms (completed) or refuses (failed: amount and fee back to available; sandbox: account_number 000000000 fails). Each change is a settlement.<status> webhook to the config's webhook_notification. Every settlement has its bank_reference from its creation (16 upper-case letters and digits; 10 digits when the operator's Zengin rail pays the currency's settlements): what the beneficiary's statement shows. A settlement to a bank account that the operator's bank-file rail serves goes out in the file of the rail's next cut-off.",
			body:        settlement.SubmitRequest{}, response: settlement.Settlement{}, status: 201, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, settlement.CodeNoBeneficiary, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
			handle: jsonHandler(a, http.StatusCreated, a.Settlements.Submit), merchantLane: true},
		{method: "GET", path: "/v2/settlements", auth: authKeys, summary: "The account's settlements, newest first.",
			params:   append([]param{currency}, pagingParams...),
			response: pageList[settlement.Settlement]{}, status: 200, handle: a.listSettlements},
		{method: "GET", path: "/v2/settlements/detail", auth: authKeys, summary: "One settlement: the object its webhooks carry.",
			params:   []param{{name: "uuid", typ: "string", required: true, doc: "The settlement's uuid."}},
			response: settlement.Settlement{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.Settlements.Get, nil)},
	}
}

func (a *API) settlementConfig(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	currency := q.str("currency")
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	c, err := a.Settlements.GetConfig(r.Context(), principal(r), currency)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, c)
}

func (a *API) listSettlements(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	currency := q.str("currency")
	page, perPage := q.paging()
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	list, total, err := a.Settlements.List(r.Context(), principal(r), currency, page, perPage)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}
