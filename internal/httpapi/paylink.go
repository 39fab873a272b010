package httpapi

import (
	"net/http"

	"payd/internal/fault"
	"payd/internal/gateway"
)

// linkPageDoc documents what the hosted page of a payin link does, for the
// merchant who embeds it (CONTRACT §11, §16).
const linkPageDoc = "The page at payment_link_url shows the amount and the method's way to pay: a card form (inputs with autocomplete cc-name, cc-number, cc-exp as MM/YY, cc-csc; Luhn, length, brand, expiry and CVC checked in the page and again by payd; " +
	"only the brand and last four digits are kept), the merchant's account and the link's uuid as reference (bank transfers), or a KHQR code (kh_khqr_usd). The sandbox adds buttons with ids pay and decline, and the test cards 4242 4242 4242 4242 (paid) and 4000 0000 0000 0002 (declined). " +
	"The page may be framed only by the origin of redirect_url.success and the origins the merchant lists (portal developers page, or payd merchant update --embed-origins); Content-Security-Policy frame-ancestors refuses any other. " +
	"Framed, it posts to its parent, with that origin as targetOrigin, messages {\"type\":\"svc_payment_event\",\"page_state\",\"uuid\",\"redirect_url\"}: page_state pending, processing (an attempt is under way), paid, failed or expired, as it loads and as it changes; " +
	"redirect_url is redirect_url.success when paid, redirect_url.failure (null when none was given) when failed or expired, null otherwise. " +
	"Paid sends the customer's top window to redirect_url.success; failed to redirect_url.failure when given, otherwise the customer stays on the page and may retry until expires_at."

func (a *API) payinLinkRoutes() []route {
	return []route{
		{method: "POST", path: "/v3/payin_links", auth: authKeys, summary: "Create a Payment Gateway 3 payin link.",
			description: "Authenticated like v2 (app-id and secret-key, or a Bearer access token); any app of the merchant may create a link in any currency the merchant holds a payments account in (422 CURRENCY_NOT_SUPPORTED otherwise). " +
				"Refusals, each 422: VALIDATION_FAILED naming each wrong member (an unknown payin_method_code, an amount with more decimals than the currency has, a missing or relative redirect_url.success, a relative redirect_url.failure, a bad webhook_notification, meta_data over 4 KB or 5 levels); " +
				"METHOD_NOT_ENABLED for a method of another currency, or ug_bank_ugx on a UGX account that does not enable it (payd account update --methods ug_bank_ugx); AMOUNT_OUT_OF_RANGE outside the method's limits (mw_bank_mwk at least 2,000 MWK; ug_bank_ugx 15,000–36,000,000 UGX). " +
				"The link is pending and expires 24 hours later on the merchant's clock. A paid link credits the available balance of its currency once (a payment balance record whose reference_id is the uuid), whatever the number of clicks or tabs. " +
				"Each change (failed, paid, expired) is a payin_link.<status> webhook to webhook_notification with the link record (GET /v3/payin_links/detail) as body. " + linkPageDoc,
			body: gateway.LinkRequest{}, response: gateway.LinkCreated{}, status: 201, codes: []string{fault.CodeCurrency, fault.CodeMethodNotEnabled, fault.CodeAmountOutOfRange, fault.CodeNotFound},
			handle: jsonHandler(a, http.StatusCreated, a.Gateway.CreateLink)},
		{method: "GET", path: "/v3/payin_links/detail", auth: authKeys, summary: "One payin link: the object its webhooks carry.",
			params:   []param{{name: "uuid", typ: "string", required: true, doc: "The link's uuid."}},
			response: gateway.Link{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.payinLinkDetail},
	}
}

func (a *API) payinLinkDetail(w http.ResponseWriter, r *http.Request) {
	l, err := a.Gateway.GetLink(r.Context(), principal(r), r.URL.Query().Get("uuid"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, l)
}
