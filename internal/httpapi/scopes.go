package httpapi

import (
	"net/http"
	"strings"

	"payd/internal/fault"
	"payd/internal/merchant"
)

// The refusals of an app's access settings (CONTRACT §23).
const (
	codeScopeRequired = "SCOPE_REQUIRED"
	codeIPNotAllowed  = "IP_NOT_ALLOWED"
)

// scopeResources say which resource of merchant.Resources each path's
// operations act on (CONTRACT §23, §25): a route's scope is its resource
// with read for GET and write otherwise. A sandbox-only route, and every
// simulate one, needs sandbox:write.
var scopeResources = []struct {
	resource string
	prefixes []string
}{
	{"payins", []string{"/v2/payins"}},
	{"payouts", []string{"/v2/payouts", "/v1/payouts", "/v2/approval_policies"}},
	{"contacts", []string{"/v2/contacts", "/v2/contact", "/v2/customers", "/v2/kyc"}},
	{"balances", []string{"/v2/balances"}},
	{"payid", []string{"/v1/payment_requests", "/v1/merchants/create_payment", "/v1/customers"}},
	{"gateway", []string{"/v1/payment_gateways", "/v3/payin_links"}},
	{"settlements", []string{"/v2/settlements"}},
	{"treasury", []string{"/v2/treasury_accounts"}},
	{"transfers", []string{"/v2/transfers"}},
	{"reports", []string{"/v2/reports"}},
	{"banks", []string{"/v2/banks"}},
	{"webhooks", []string{"/v2/webhooks", "/v2/webhook_endpoints"}},
	{"events", []string{"/v2/events"}},
	{"disputes", []string{"/v2/disputes"}},
	{"reconciliation", []string{"/v2/reconciliation"}},
	{"exports", []string{"/v2/exports"}},
}

// unscoped are the authenticated routes any app may call: the access token
// exchange (CONTRACT §25: it needs no scope; the token carries the app's).
var unscoped = map[string]bool{"/v1/payment_gateways/access_token": true}

// scopeOf is the scope rt's caller needs: "" for a route that
// authenticates no one or needs none, "?" for an authenticated route whose
// path no resource holds (TestEveryRouteHasAScope fails on it; only an app
// of every scope may call it).
func scopeOf(rt route) string {
	if rt.auth == authNone || rt.raw || unscoped[rt.path] {
		return ""
	}
	if rt.sandboxOnly || strings.Contains(rt.path, "simulate") {
		return "sandbox:write"
	}
	action := "write"
	if rt.method == http.MethodGet || rt.method == http.MethodHead {
		action = "read"
	}
	for _, r := range scopeResources {
		for _, p := range r.prefixes {
			if rt.path == p || strings.HasPrefix(rt.path, p+"/") || strings.HasPrefix(rt.path, p+".") {
				return r.resource + ":" + action
			}
		}
	}
	return "?"
}

// checkAccess refuses a caller that its app's access settings keep from
// this route (CONTRACT §23): past its expiry 401 REQUIRE_LOGIN, from an
// address it does not allow 403 IP_NOT_ALLOWED (the client address as the
// trusted-proxy rules find it), without the route's scope 403
// SCOPE_REQUIRED naming it. A caller that is no app passes.
func (a *API) checkAccess(r *http.Request, p merchant.Principal, scope string) error {
	access := p.Access
	if access.Expired(a.Clock.Now()) {
		return &fault.Error{Kind: fault.Unauthenticated, Code: fault.CodeRequireLogin, Message: "this key expired at " + access.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z") + ": issue a new one"}
	}
	if client := clientOf(r); client.IsValid() && !access.From(client) {
		return fault.New(fault.Forbidden, codeIPNotAllowed, "this key is not accepted from %s", client)
	}
	if !access.Allows(scope) {
		return fault.New(fault.Forbidden, codeScopeRequired, "this key lacks %s", scope)
	}
	return nil
}
