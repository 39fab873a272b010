// Package web serves payd's browser-facing pages: the hosted payment page of
// payins (/pay/), the identity verification page (/verify/), the hosted
// checkout of the payment gateway (/checkout/) and the merchant portal
// (/portal/). Each page mounts itself in New and adds its prefix to Prefixes. Pages are html/template with embedded assets;
// there is no front-end build step.
package web

import (
	"log/slog"
	"net/http"

	"payd/internal/contact"
	"payd/internal/gateway"
	"payd/internal/payin"
)

// Deps are the services the pages call.
type Deps struct {
	// Sandbox shows the simulation controls (Pay and Fail buttons); a
	// production deployment has a real rail and never shows them.
	Sandbox   bool
	Log       *slog.Logger
	PublicURL string
	Contacts  *contact.Service
	Payins    *payin.Service
	// Portal serves /portal/ when its service is set.
	Portal PortalDeps
	// Gateway serves the hosted checkout (/checkout/); CheckoutPayID adds PayID to it when set.
	Gateway       *gateway.Service
	CheckoutPayID CheckoutPayID
}

// Pages serves every browser-facing path (outside /api).
type Pages struct {
	Deps
	mux *http.ServeMux
}

// New returns the pages handler with every page mounted.
func New(d Deps) *Pages {
	p := &Pages{Deps: d, mux: http.NewServeMux()}
	p.mountVerify()
	p.mountPay()
	p.mountPortal()
	p.mountCheckout()
	p.mountLinks()
	return p
}

// Prefixes are the path prefixes the pages own; the API routes them here.
var Prefixes = []string{"/pay/", "/verify/", "/assets/", "/portal/", "/checkout/", "/links/"}

func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.mux.ServeHTTP(w, r) }
