package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/gateway"
)

func (a *API) gatewayRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/payment_gateways/create_payment", auth: authTokenHeader,
			summary: "Create a hosted checkout payment for an order (payment gateway v1).",
			description: "Authenticated by the access-token header (GET /v1/payment_gateways/access_token); an expired or revoked token is 401. " +
				"Rules: order_id 1–100 characters, unique among the merchant's gateway payments (a repeat is 409 ALREADY_EXISTS whose message names the existing payment_id); " +
				"amount in AUD, positive, at most 2 decimals, at most 99,999,999.99 (422 AMOUNT_OUT_OF_RANGE); the merchant needs an AUD payments account (422 CURRENCY_NOT_SUPPORTED); " +
				"order_success_url and payment_gateway_notification.endpoint_url are required absolute http(s) URLs (https only in production); " +
				"order_details.items at most 100, quantity a positive decimal string (at most 4 decimals), price a decimal string (at most 2 decimals), image_url an absolute http(s) URL; every text member at most 255 characters. " +
				"The payment starts pending; redirect_url opens the hosted checkout page (card form; in the sandbox also pay and decline buttons, and the test cards 4242 4242 4242 4242 (paid) and 4000 0000 0000 0002 (declined)). " +
				"A declined attempt makes it failed; the customer may retry until expired_at (24 hours after creation), when an unpaid payment becomes expired. " +
				"Paid credits the merchant's AUD available balance once (a payment balance record) and returns the customer to order_success_url. " +
				"Every status change is POSTed to endpoint_url as gateway_payment.<status> with the payment record (GET /v1/payment_gateways/payment) as body and authorization_header sent verbatim as Authorization.",
			body: gateway.Request{}, response: gateway.CreateResult{}, status: 200, codes: []string{fault.CodeAlreadyExists, fault.CodeAmountOutOfRange, fault.CodeCurrency, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusOK, a.Gateway.Create)},
		{method: "GET", path: "/v1/payment_gateways/payment", auth: authKeys, summary: "One gateway payment, by payment_id.",
			description: "The same record every gateway notification carries.",
			params:      []param{{name: "payment_id", typ: "integer", required: true, doc: "The payment_id create_payment answered."}},
			response:    gateway.Payment{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.gatewayPayment},
	}
}

func (a *API) gatewayPayment(w http.ResponseWriter, r *http.Request) {
	id, err := gateway.ParseID(r.URL.Query().Get("payment_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p, err := a.Gateway.Get(r.Context(), principal(r), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, p)
}
