// Package httpapi is payd's HTTP API: the route table (which also produces
// the OpenAPI document), the middleware every request passes through
// (request id, logging, metrics, authentication, idempotency, body limits),
// the error envelope, and thin handlers that decode, call a service, and encode.
package httpapi

import (
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"payd/internal/apidocs"
	"payd/internal/bank"
	"payd/internal/clock"
	"payd/internal/contact"
	"payd/internal/deposit"
	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/idempotency"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/proxy"
	"payd/internal/ratelimit"
	"payd/internal/reconcile"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/transfer"
	"payd/internal/treasury"
	"payd/internal/web"
	"payd/internal/webhook"
)

// Environment is a deployment's kind: the sandbox routes its simulation
// endpoints and test clock; production does not (they answer 404 there).
type Environment string

const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// Deps are the services the API calls.
type Deps struct {
	Env       Environment
	PublicURL string
	DB        *store.DB
	Clock     clock.Clock
	// MerchantClock tells each caller's time (its sandbox test clock).
	MerchantClock merchant.Clock
	Log           *slog.Logger
	Metrics       *Metrics
	Queue         *job.Queue
	Merchants     *merchant.Service
	Deposits      *deposit.Service
	Webhooks      *webhook.Dispatcher
	Contacts      *contact.Service
	Payins        *payin.Service
	Payouts       *payout.Service
	PayIDs        *payid.Service
	Banks         *bank.Directory
	Settlements   *settlement.Service
	Treasury      *treasury.Service
	Transfers     *transfer.Service
	Policies      *policy.Service
	Reports       *report.Service
	Reconcile     *reconcile.Service
	Disputes      *dispute.Service
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// Forwarded headers name the client (none by default).
	TrustedProxies proxy.Trust
	Gateway        *gateway.Service
	// Pages serves the browser-facing paths of web.Prefixes.
	Pages http.Handler
	// ClockWorkLimit bounds how long a sandbox clock advance waits for the
	// work that became due (DefaultClockWorkLimit when zero).
	ClockWorkLimit time.Duration
}

// API serves payd's HTTP interface.
type API struct {
	Deps
	log     *slog.Logger
	metrics *Metrics
	keeper  *idempotency.Keeper
	// throttle answers repeated authentication failures; limiter holds
	// each merchant to its request rates.
	throttle *ratelimit.Throttle
	limiter  *ratelimit.Limiter
	refusals *refusalLog
	routes   []route
	mux      *http.ServeMux

	openAPIOnce sync.Once
	openAPIBody []byte
}

// New builds the API and its routes.
func New(d Deps) *API {
	a := &API{Deps: d, log: d.Log, metrics: d.Metrics, keeper: idempotency.NewKeeper(d.DB, d.Clock), throttle: ratelimit.NewThrottle(d.DB, d.Clock), limiter: ratelimit.NewLimiter(d.DB, d.Clock),
		refusals: &refusalLog{log: d.Log}, mux: http.NewServeMux()}
	if a.ClockWorkLimit <= 0 {
		a.ClockWorkLimit = DefaultClockWorkLimit
	}
	for _, rt := range a.table() {
		if rt.sandboxOnly && d.Env != Sandbox {
			continue
		}
		a.add(rt)
	}
	if d.Pages != nil {
		for _, prefix := range web.Prefixes {
			a.mux.Handle(prefix, d.Pages)
		}
	}
	a.addFallbacks()
	return a
}

// Handler returns the root handler.
func (a *API) Handler() http.Handler { return a.outer(a.mux) }

// route is one endpoint: how it is served and how it is documented.
type route struct {
	method, path string
	summary      string
	description  string
	auth         authMode
	sandboxOnly  bool
	// maxBody bounds the request body (default maxJSONBodyBytes).
	maxBody int64
	params  []param
	// form documents a multipart/form-data body (instead of body).
	form []formPart
	// headers are set on every answer of the route, replays and errors included.
	headers map[string]string
	// body and response are zero values of the request and response types, for the OpenAPI document.
	body     any
	response any
	// contentType is the success answer's media type (default application/json).
	contentType string
	status      int
	// repeatStatus is a second success status with the same answer (a
	// repeated upload's 200 beside a new one's 201); 0 for none.
	repeatStatus int
	// codes are the error codes of the route's own rules (see errorCodes);
	// routeErrors adds those every route of its kind shares. The document's
	// error statuses derive from them.
	codes  []string
	handle http.HandlerFunc
	// raw routes (health, metrics) are not under /api and answer plain text.
	raw bool
	// merchantLane group-commits the route's transactions with the caller's
	// other writes of this kind: they contend on its balance rows (see
	// store.WithLane).
	merchantLane bool
}

// formPart is one part of a multipart/form-data body.
type formPart struct {
	name, doc string
	file      bool
	required  bool
}

type param struct {
	name, doc string
	typ       string // "string", "integer"
	required  bool
}

func (rt route) pattern() string {
	if rt.raw {
		return rt.method + " " + rt.path
	}
	return rt.method + " /api" + rt.path
}

func (a *API) add(rt route) {
	if rt.maxBody == 0 {
		rt.maxBody = maxJSONBodyBytes
	}
	h := rt.handle
	if rt.merchantLane {
		inner := h
		h = func(w http.ResponseWriter, r *http.Request) {
			lane := store.WithLane(r.Context(), store.MerchantLane(principal(r).MerchantID))
			inner(w, r.WithContext(lane))
		}
	}
	if rt.method == http.MethodPost || rt.method == http.MethodPut {
		h = a.idempotent(rt.maxBody, h)
	}
	if !rt.raw {
		h = a.checkQuery(h)
	}
	h = a.authenticate(rt.auth, scopeOf(rt), h)
	limit := rt.maxBody
	next := h
	h = func(w http.ResponseWriter, r *http.Request) {
		for k, v := range rt.headers {
			w.Header().Set(k, v)
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next(w, r)
	}
	a.mux.HandleFunc(rt.pattern(), h)
	a.routes = append(a.routes, rt)
}

// codeMethodNotAllowed is the 405 of a known path asked with another method.
const codeMethodNotAllowed = "METHOD_NOT_ALLOWED"

// addFallbacks answers unknown paths (404) and known paths with the wrong
// method (405) in the errors envelope instead of the mux's plain text.
func (a *API) addFallbacks() {
	methods := map[string][]string{}
	for _, rt := range a.routes {
		p := rt.path
		if !rt.raw {
			p = "/api" + rt.path
		}
		methods[p] = append(methods[p], rt.method)
	}
	for p, ms := range methods {
		sort.Strings(ms)
		allow := strings.Join(ms, ", ")
		a.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			body, _ := encodeJSON(errorBody{Errors: errorDetail{Code: codeMethodNotAllowed, Message: r.Method + " is not allowed here; use " + allow}})
			writeBody(w, http.StatusMethodNotAllowed, body)
		})
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, r, fault.NotFoundf("no endpoint %s %s", r.Method, r.URL.Path))
	})
}

// table lists every endpoint. Handlers live beside their resource
// (balance.go, deposit.go, ...).
func (a *API) table() []route {
	var out []route
	out = append(out, a.opsRoutes()...)
	out = append(out, a.authRoutes()...)
	out = append(out, a.balanceRoutes()...)
	out = append(out, a.depositRoutes()...)
	out = append(out, a.sandboxRoutes()...)
	out = append(out, a.webhookRoutes()...)
	out = append(out, a.webhookEndpointRoutes()...)
	out = append(out, a.eventRoutes()...)
	out = append(out, a.contactRoutes()...)
	out = append(out, a.payinRoutes()...)
	out = append(out, a.payoutRoutes()...)
	out = append(out, a.payoutV1Routes()...)
	out = append(out, a.payidRoutes()...)
	out = append(out, a.bankRoutes()...)
	out = append(out, a.settlementRoutes()...)
	out = append(out, a.treasuryRoutes()...)
	out = append(out, a.transferRoutes()...)
	out = append(out, a.reportRoutes()...)
	out = append(out, a.gatewayRoutes()...)
	out = append(out, a.policyRoutes()...)
	out = append(out, a.payinLinkRoutes()...)
	out = append(out, a.disputeRoutes()...)
	out = append(out, a.reconcileRoutes()...)
	out = append(out, a.exportRoutes()...)
	return out
}

func (a *API) opsRoutes() []route {
	return []route{
		{method: "GET", path: "/healthz", raw: true, summary: "Liveness: the process is up.", status: 200, handle: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("ok\n"))
		}},
		{method: "GET", path: "/readyz", raw: true, summary: "Readiness: the database answers.", status: 200, handle: a.readyz},
		{method: "GET", path: "/metrics", raw: true, summary: "Prometheus metrics.", status: 200,
			handle: promhttp.HandlerFor(a.metrics.Registry, promhttp.HandlerOpts{}).ServeHTTP},
		{method: "GET", path: "/openapi.json", summary: "This OpenAPI document.", status: 200, handle: a.openAPI},
		{method: "GET", path: "/api/docs", raw: true, summary: "The API reference: this document in a browser.", status: 200, handle: apidocs.Handler().ServeHTTP},
		{method: "GET", path: "/api/docs/{file}", raw: true, summary: "The API reference's files.", status: 200, handle: apidocs.Handler().ServeHTTP},
	}
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if err := a.DB.Ping(r.Context()); err != nil {
		a.log.Warn("not ready", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("database unreachable\n"))
		return
	}
	w.Write([]byte("ready\n"))
}

// location returns a merchant's time zone (for bare dates in filters).
func (a *API) location(name string) *time.Location { return merchant.Location(name) }
