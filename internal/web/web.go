// Package web serves payd's browser-facing pages: the hosted payment page of
// payins (/pay/), the identity verification page (/verify/), the hosted
// checkout of the payment gateway (/checkout/) and the merchant portal
// (/portal/). Each page mounts itself in New and adds its prefix to Prefixes. Pages are html/template with embedded assets;
// there is no front-end build step.
package web

import (
	"log/slog"
	"net/http"
	"strings"

	"payd/internal/contact"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/input"
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
	log *slog.Logger
	mux *http.ServeMux
}

// New returns the pages handler with every page mounted.
func New(d Deps) *Pages {
	p := &Pages{Deps: d, log: orDiscard(d.Log), mux: http.NewServeMux()}
	// Every page's icon, the portal's and the hosted pages'.
	p.mux.HandleFunc("GET /assets/favicon.svg", serveAsset("assets/favicon.svg"))
	p.mountVerify()
	p.mountPay()
	p.mountPortal()
	p.mountCheckout()
	p.mountLinks()
	return p
}

// Prefixes are the path prefixes the pages own; the API routes them here.
var Prefixes = []string{"/pay/", "/verify/", "/assets/", "/portal/", "/checkout/", "/links/"}

// ServeHTTP refuses a path or query string that breaks the input rule (a
// control character or broken UTF-8: 422 naming the path's wildcard or the
// parameter, CONTRACT §24) before any page reads it; forms are checked
// where each page parses its own.
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := p.checkRequest(r); err != nil {
		p.refuse(w, r, err)
		return
	}
	p.mux.ServeHTTP(w, r)
}

func (p *Pages) checkRequest(r *http.Request) error {
	if input.Problem("path", r.URL.Path) != "" {
		_, pattern := p.mux.Handler(r)
		return input.Check(wildcardAt(pattern, r.URL.Path))
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	return input.Values(r.URL.Query())
}

// wildcardAt finds the first segment of path that breaks the input rule and
// names it by the wildcard of pattern ("GET /portal/payouts/{uuid}") it
// falls in, or "path" when it falls in none.
func wildcardAt(pattern, path string) (name, segment string) {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	want, got := strings.Split(pattern, "/"), strings.Split(path, "/")
	for i, seg := range got {
		if input.Problem("path", seg) == "" {
			continue
		}
		if i < len(want) && strings.HasPrefix(want[i], "{") {
			return strings.TrimSuffix(strings.Trim(want[i], "{}"), "..."), seg
		}
		return "path", seg
	}
	return "path", path
}

// refuse answers a request the input rule refused with the error page of
// the pages its path belongs to: the portal's, or the hosted pages'.
func (p *Pages) refuse(w http.ResponseWriter, r *http.Request, err error) {
	msg := err.Error()
	if e, ok := fault.As(err); ok {
		msg = e.Message
	}
	status := fault.StatusOf(err)
	if strings.HasPrefix(r.URL.Path, "/portal/") {
		writePage(w, p.log, portalTemplates, "message", status, portalPage{Title: "Request not understood", Data: msg}, portalHeaders)
		return
	}
	writePage(w, p.log, hostedTemplates, "pay_error.html", status, payErrorView{"Request not understood", "The link is damaged: " + msg + "."}, strictHeaders)
}
