package httpapi

import (
	"net/http"

	"payd/internal/deposit"
	"payd/internal/fault"
)

func (a *API) depositRoutes() []route {
	return []route{{
		method: "POST", path: "/v1/simulate_deposit", auth: authKeys, sandboxOnly: true,
		summary:     "Sandbox: credit a simulated inbound bank transfer.",
		description: "The amount lands in the account's incoming balance with a waiting balance record (transaction_type top_up) and clears to available shortly after (a job; POST /v2/sandbox/clock runs it at once). The account may be any payments or treasury account of the caller.",
		body:        deposit.Request{}, response: deposit.Deposit{}, status: 201, codes: []string{fault.CodeNotFound, fault.CodeAmountOutOfRange, fault.CodeInsufficientFunds},
		handle: jsonHandler(a, http.StatusCreated, a.Deposits.Simulate), merchantLane: true,
	}}
}
