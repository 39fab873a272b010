package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/transfer"
	"payd/internal/treasury"
)

func (a *API) treasuryRoutes() []route {
	return []route{
		{method: "POST", path: "/v2/treasury_accounts", auth: authKeys, summary: "Open a treasury account.",
			description: "AUD opens active at once, with an account number (and the BSB the operator configured); send only currency. USD goes through review: the account is in_review with no account number until an operator approves it (payd treasury review; in the sandbox POST /v2/sandbox/treasury_accounts/review). Its business details (business_name, business_number, address, country, contact_name, contact_email; all six, or none) may come with it as its first submission, or later through POST /v2/treasury_accounts/submissions: {\"currency\":\"USD\"} alone opens it with submissions empty, and there is nothing to review until they come. Other currencies are 422. One treasury account per currency: a second is 409 ALREADY_EXISTS naming the first.",
			body:        treasury.CreateRequest{}, response: treasury.Account{}, status: 201, codes: []string{fault.CodeAlreadyExists, fault.CodeInvalidState, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusCreated, a.Treasury.Create)},
		{method: "GET", path: "/v2/treasury_accounts", auth: authKeys, summary: "The merchant's treasury accounts, with their submissions.",
			response: treasury.List{}, status: 200, handle: a.listTreasury},
		{method: "POST", path: "/v2/treasury_accounts/submissions", auth: authKeys, summary: "Send a treasury account's business details for review: the first time, or again.",
			description: "For an account in_review or rejected: adds a submission (the first of an account opened with currency alone) and puts the account in review; earlier submissions stay listed (one still unreviewed becomes superseded). An active account is 409 INVALID_STATE.",
			body:        treasury.SubmissionRequest{}, response: treasury.Account{}, status: 201, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: jsonHandler(a, http.StatusCreated, a.Treasury.Submit)},
		{method: "POST", path: "/v2/sandbox/treasury_accounts/review", auth: authKeys, sandboxOnly: true, summary: "Sandbox: decide a treasury account's review.",
			description: "approved makes the account active and shows its account number; rejected leaves it rejected (with the reason on its submission) until the merchant submits again. An account not in review, or in review with no submission yet (nothing to decide), is 409 INVALID_STATE.",
			body:        treasury.ReviewRequest{}, response: treasury.Account{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState},
			handle: jsonHandler(a, http.StatusOK, a.Treasury.SandboxReview)},
	}
}

func (a *API) listTreasury(w http.ResponseWriter, r *http.Request) {
	list, err := a.Treasury.List(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, list)
}

func (a *API) transferRoutes() []route {
	return []route{
		{method: "POST", path: "/v2/transfers", auth: authKeys, summary: "Move money between the merchant's accounts, or out to a bank account.",
			description: "With treasury_account_id: from the payments account into that active treasury account of the same currency, or back with direction out. With external_bank_account: out of the merchant's active treasury account in the currency to that bank account (validated as a settlement beneficiary is). The amount leaves the source's available balance for outgoing as one balance record (transfer_out) whose Balance ID is the transfer's uuid; more than withdrawable is 422 INSUFFICIENT_FUNDS. The transfer is processing until it completes (the money arrives: a transfer_in record on the treasury or payments account; or it leaves for the bank) or fails (the money returns). Sandbox: it waits for POST /v2/transfers/simulate, unless the operator's bank-file rail serves the currency's external transfers (then as in production). Production: an internal transfer completes at once; an external one when the payment network confirms it (on a bank-file rail it goes out in the file of the rail's next cut-off). An external transfer has its bank_reference from its creation (16 upper-case letters and digits; 10 digits on a Zengin rail), what the beneficiary's statement shows; an internal one has none (null). On a bank-file rail, an external_bank_account.account_name or description its file cannot hold (outside the BECS set on an aba rail, without a half-width katakana form on a zengin rail, over pain.001's widths on a pain001 rail) is 422 VALIDATION_FAILED naming the field. Each change is a transfer.<status> webhook to webhook_notification. An external transfer that an approval policy (GET /v2/approval_policies) or the daily limit catches answers 201 with status held and an approval like a payout's (required_approvals, approvals, policy): its amount leaves available at once, it waits for that many distinct approvals by the policy's roles in the portal (POST /portal/transfers/{uuid}/approve), and a rejection or the end of the hold window returns the amount (rejected, expired; events transfer.held, transfer.rejected, transfer.expired). Internal transfers are never held.",
			body:        transfer.Request{}, response: transfer.Transfer{}, status: 201, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
			handle: jsonHandler(a, http.StatusCreated, a.Transfers.Create), merchantLane: true},
		{method: "GET", path: "/v2/transfers/detail", auth: authKeys, summary: "One transfer: the object its webhooks carry.",
			params:   []param{{name: "uuid", typ: "string", required: true, doc: "The transfer's uuid (its Balance ID)."}},
			response: transfer.Transfer{}, status: 200, codes: []string{fault.CodeNotFound}, handle: lookupHandler(a, "uuid", a.Transfers.Get, nil)},
		{method: "POST", path: "/v2/transfers/simulate", auth: authKeys, sandboxOnly: true, summary: "Sandbox: complete or fail a processing transfer.",
			description: "completed moves the money to its destination; failed returns it to the source's available balance. A finished transfer is 409 INVALID_STATE, and so is one handed to the operator's bank-file rail (the bank's answer ends it).",
			body:        transfer.SimulateRequest{}, response: transfer.Transfer{}, status: 200, codes: []string{fault.CodeNotFound, fault.CodeInvalidState, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
			handle: jsonHandler(a, http.StatusOK, a.Transfers.Simulate), merchantLane: true},
	}
}
