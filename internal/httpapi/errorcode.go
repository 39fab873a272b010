package httpapi

import (
	"net/http"
	"slices"
	"sort"

	"payd/internal/contact"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/idempotency"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/portal"
	"payd/internal/report"
	"payd/internal/settlement"
)

// errorCode is one error payd can answer: its stable code (CONTRACT §3), the
// status it comes with, and what it tells a client.
type errorCode struct {
	code    string
	status  int
	meaning string
}

// errorCodes is every error payd answers, each spelled once. The OpenAPI
// document lists each operation's from here, and TestEveryErrorCodeIsInTheCatalog
// holds it to every code the code base builds. A code answered with two
// statuses has two entries; a route that declares it means the first.
var errorCodes = []errorCode{
	// Any request.
	{fault.CodeInternal, http.StatusInternalServerError, "An unexpected error: nothing is known to have been done; quote request_id when reporting it."},
	{fault.CodeUnavailable, http.StatusServiceUnavailable, "The database is unavailable for a moment (restarting, or failing over to its standby): nothing was done; retry after Retry-After seconds with the same Idempotency-Key."},
	{fault.CodeNotFound, http.StatusNotFound, "No such record, or it is another merchant's (also: a sandbox endpoint in production, an unknown path)."},
	{codeMethodNotAllowed, http.StatusMethodNotAllowed, "The path exists, but not with this method: the Allow header lists its methods."},
	{codeClockWorkRunning, http.StatusServiceUnavailable, "Sandbox clock: the clock has moved, but the work that became due was still running after " + clockWorkLimitText + "; POST {\"advance_seconds\": 0} to wait for the rest."},

	// Who is calling.
	{fault.CodeRequireLogin, http.StatusUnauthorized, "Missing or wrong app-id and secret-key, or a missing, expired or revoked access token."},
	{fault.CodeRateLimited, http.StatusTooManyRequests, "Too many requests from this merchant, or too many failed authentication attempts from this address: retry after Retry-After seconds."},
	{fault.CodeForbidden, http.StatusForbidden, "The portal user's role may not do this."},
	{codeScopeRequired, http.StatusForbidden, "The app's key lacks the scope this operation needs (x-required-scope): the message names it."},
	{codeIPNotAllowed, http.StatusForbidden, "The app's key is not accepted from the client's address (its allowed_ips)."},
	{portal.CodeLoginFailed, http.StatusUnauthorized, "Portal sign-in: the email or password is wrong."},
	{portal.CodeTOTPRequired, http.StatusUnauthorized, "Portal sign-in: the authenticator app's code is missing or wrong."},
	{portal.CodeSSORefused, http.StatusUnauthorized, "Portal single sign-on: the identity provider's answer was refused (a used or expired sign-in, another browser's, an ID token of another audience, expired, or for another sign-in): start again."},
	{portal.CodeSSORefused, http.StatusForbidden, "Portal single sign-on: the identity provider signed in someone payd does not let in (no verified email, or no invited portal user with it)."},
	{portal.CodeSSORefused, http.StatusServiceUnavailable, "Portal single sign-on: the identity provider could not be reached; try again, or sign in with the password."},
	{report.CodeLinkInvalid, http.StatusForbidden, "The report file link is not valid: wrong signature, or expired."},

	// Reading the request.
	{codeMalformedJSON, http.StatusBadRequest, "The body is not one JSON object, or could not be read."},
	{codeWrongType, http.StatusBadRequest, "A member has the wrong JSON type; the message names it."},
	{codeMalformedMultipart, http.StatusBadRequest, "The multipart/form-data body could not be read."},
	{fault.CodeTooLarge, http.StatusRequestEntityTooLarge, "The body, or one of its files, is larger than the endpoint takes."},
	{fault.CodeUnsupportedMedia, http.StatusUnsupportedMediaType, "The body's Content-Type (or an uploaded file's type) is not one the endpoint takes."},
	{fault.CodeValidation, http.StatusUnprocessableEntity, "A member, a parameter or the Idempotency-Key header is missing or wrong (a control character or broken UTF-8 in any text included): fields names each one and what is wrong with it."},
	{idempotency.CodeKeyReused, http.StatusUnprocessableEntity, "This Idempotency-Key was used with a different method, path or body."},
	{idempotency.CodeInFlight, http.StatusConflict, "A request with this Idempotency-Key is still running: retry it later."},

	// Rules of the records.
	{fault.CodeInvalidState, http.StatusConflict, "The record's state does not allow this (the message says which state it is in)."},
	{fault.CodeAlreadyExists, http.StatusConflict, "A record with this unique key already exists; the message names it."},
	{contact.CodeContactExists, http.StatusConflict, "A contact with this email already exists."},
	{contact.CodeCustomerExists, http.StatusConflict, "A customer with this external_id already exists."},
	{payout.CodeDecisionConflict, http.StatusConflict, "The held payout or transfer is no longer held: another decision ended it (a rejection, its last required approval) or it expired undecided; or an approval policy has no change waiting."},
	{policy.CodeAlreadyApproved, http.StatusConflict, "You have approved this held payout or transfer already: another allowed approver must."},
	{fault.CodeAmountOutOfRange, http.StatusUnprocessableEntity, "The amount is outside the method's limits, or more than is left (to refund)."},
	{fault.CodeCurrency, http.StatusUnprocessableEntity, "The currency is not the calling app's, or the merchant has no payments account in it."},
	{fault.CodeInsufficientFunds, http.StatusUnprocessableEntity, "The available (or withdrawable) balance is lower than the amount and its fees."},
	{fault.CodeMethodNotEnabled, http.StatusUnprocessableEntity, "The method is unknown, not enabled on this account, or does not take this currency."},
	{payin.CodeGSTNotAllowed, http.StatusUnprocessableEntity, "gst may be true only for AU merchants in AUD."},
	{payin.CodeContactRequired, http.StatusUnprocessableEntity, "The method needs a contact with this email: create it with POST /v2/contacts."},
	{payin.CodeKYCRequired, http.StatusUnprocessableEntity, "The method needs the contact's KYC approved."},
	{payin.CodeNotRefundable, http.StatusUnprocessableEntity, "Payins of this method cannot be refunded."},
	{payin.CodeNotCancellable, http.StatusUnprocessableEntity, "Payins of this method cannot be cancelled."},
	{payin.CodeOTPInvalid, http.StatusBadRequest, "The OTP is wrong, or the payin is not waiting for one."},
	{fault.CodeValidation, http.StatusBadRequest, "uuid or code is missing: the OTP confirmation answers it with 400, as it answers a wrong code."},
	{codeMixedAddressing, http.StatusUnprocessableEntity, "A v1 batch mixes PayID and BSB addressing; nothing was created."},
	{payid.CodeDeregistered, http.StatusUnprocessableEntity, "The PayID is deregistered: its request was paid, cancelled or expired."},
	{gateway.CodeCardsUnavailable, http.StatusUnprocessableEntity, "Card payments are not configured on this deployment."},
	{settlement.CodeNoBeneficiary, http.StatusUnprocessableEntity, "The account has no beneficiary: set one with PUT /v2/settlements/config."},
}

// lookupCode is the catalog's first entry for code. A code missing from the
// catalog is a bug of the route table (TestRouteCodesAreInTheCatalog).
func lookupCode(code string) errorCode {
	i := slices.IndexFunc(errorCodes, func(e errorCode) bool { return e.code == code })
	if i < 0 {
		panic("httpapi: error code " + code + " is not in errorCodes")
	}
	return errorCodes[i]
}

// lookupCodeStatus is the catalog's entry for code answered with status.
func lookupCodeStatus(code string, status int) errorCode {
	i := slices.IndexFunc(errorCodes, func(e errorCode) bool { return e.code == code && e.status == status })
	if i < 0 {
		panic("httpapi: error code " + code + " is not in errorCodes with status " + http.StatusText(status))
	}
	return errorCodes[i]
}

// routeErrors are the errors a route may answer, by status: its own codes,
// and those every route of its kind shares (authentication and its
// throttle, reading and validating parameters and bodies, idempotency,
// sandbox routes in production, outages).
func routeErrors(rt route) map[int][]errorCode {
	var all []errorCode
	include := func(codes ...string) {
		for _, c := range codes {
			all = append(all, lookupCode(c))
		}
	}
	include(rt.codes...)
	if slices.Contains(rt.codes, payin.CodeOTPInvalid) {
		all = append(all, lookupCodeStatus(fault.CodeValidation, http.StatusBadRequest))
	}
	if rt.auth != authNone {
		// An app's access settings (checkAccess): the token exchange, which
		// needs no scope, is documented with the rest.
		include(fault.CodeRequireLogin, fault.CodeRateLimited, codeIPNotAllowed, codeScopeRequired)
	}
	if !rt.raw {
		// Every route refuses a query string that breaks the input rule
		// (checkQuery), whether it documents parameters or not.
		include(fault.CodeValidation)
	}
	if rt.body != nil {
		include(codeMalformedJSON, codeWrongType, fault.CodeTooLarge, fault.CodeUnsupportedMedia)
	}
	if rt.form != nil {
		include(codeMalformedMultipart, fault.CodeTooLarge, fault.CodeUnsupportedMedia)
	}
	if rt.method == http.MethodPost || rt.method == http.MethodPut {
		// The idempotency middleware reads the body, whatever its type, and
		// refuses a key it does not take (422 naming Idempotency-Key).
		include(idempotency.CodeInFlight, idempotency.CodeKeyReused, codeMalformedJSON, fault.CodeTooLarge, fault.CodeValidation)
	}
	if rt.sandboxOnly {
		include(fault.CodeNotFound) // in production
	}
	include(fault.CodeInternal, fault.CodeUnavailable)

	out := map[int][]errorCode{}
	for _, e := range all {
		if !slices.Contains(out[e.status], e) {
			out[e.status] = append(out[e.status], e)
		}
	}
	for _, codes := range out {
		sort.Slice(codes, func(i, j int) bool { return codes[i].code < codes[j].code })
	}
	return out
}
