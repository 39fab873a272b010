package web

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/merchant"
	"payd/internal/payin"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/portal"
	"payd/internal/proxy"
	"payd/internal/reconcile"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/transfer"
	"payd/internal/webhook"
)

// The merchant portal (CONTRACT §13): server-rendered pages under /portal/,
// usable without JavaScript, one file per page group (portal_*.go), each
// declaring its routes. A signed-in user is a session in the database
// (cookie payd_session); every form carries the session's csrf_token, and a
// POST without it is refused (403) before anything runs. The sign-in form,
// before any session, is protected the same way by a token in a cookie of
// its own, an invitation's form by the invitation's token.
//
// The handlers hold no policy: who may see a page or send a form is the
// route's declaration (portalRoute.may, a portal.Permission), checked by the
// route's wrapper, and checked again by the service every entry point calls
// (portal.Actions, portal.Service, payout.Service.Decide).

//go:embed templates/portal/*.html
var portalTemplateFS embed.FS

//go:embed assets/portal.css
var portalAssetFS embed.FS

var portalTemplates = template.Must(template.New("portal").Funcs(timeFuncs).ParseFS(portalTemplateFS, "templates/portal/*.html"))

// Portal cookies.
const (
	sessionCookie   = "payd_session"
	loginCSRFCookie = "payd_login_csrf"
	// maxPortalForm bounds every portal form body.
	maxPortalForm = 16 << 10
	portalPerPage = 20
)

// PortalDeps are what the portal's pages need.
type PortalDeps struct {
	Portal      *portal.Service
	Merchants   *merchant.Service
	Payouts     *payout.Service
	Payins      *payin.Service
	Webhooks    *webhook.Dispatcher
	Settlements *settlement.Service
	Reports     *report.Service
	Reconcile   *reconcile.Service
	Policies    *policy.Service
	Transfers   *transfer.Service
	Disputes    *dispute.Service
	DB          *store.DB
	// Trust finds the client's address behind trusted proxies (the audit log's "from").
	Trust proxy.Trust
	// OIDC, when set, adds sign-in by OpenID Connect (portal_oidc.go).
	OIDC *OIDC
}

type portalPages struct {
	PortalDeps
	// actions are the changes portal users make to other services' records.
	actions *portal.Actions
	log     *slog.Logger
	secure  bool // Secure cookies: the public URL is https
	base    string
	// sso is the identity provider of single sign-on; nil when it is not set.
	sso *ssoClient
	// pageMay is the permission of each GET route, by path: the
	// navigation's one source of who may open a page.
	pageMay map[string]portal.Permission
}

// portalPage is every page's template data.
type portalPage struct {
	Title         string
	User          *portal.User
	CSRF          string
	Notice, Error string
	CanCreate     bool
	Data          any
	// Nav are the navigation's links the user's role may open.
	Nav []navLink
	// Zone is the signed-in merchant's time zone, every time's on the
	// page (the template function when); UTC signed out.
	Zone *time.Location
}

// sessionHandler serves a portal route; s is the signed-in user's session
// (the zero Session on a public route).
type sessionHandler func(w http.ResponseWriter, r *http.Request, s portal.Session)

// portalRoute is one page or form of the portal as its page group declares
// it; handler wraps handle in what the declaration asks for.
type portalRoute struct {
	method, path string
	handle       sessionHandler
	// public routes run without a session: the sign-in form and an
	// invitation's link.
	public bool
	// token is the csrf_token a POST must carry (sessionToken when nil).
	token formToken
	// may is the permission the user's role must be given ("" for every
	// signed-in user): a role without it is answered 403 before handle runs.
	may portal.Permission
	// audit is the entry of the audit log a success appends ("" for none).
	// The service writes it, in the change's transaction; the tests beside
	// each page group check that it does.
	audit portal.AuditAction
	// invalid answers a form whose values the input rule refuses (a
	// control character: 422, CONTRACT §24); fail when nil.
	invalid func(w http.ResponseWriter, r *http.Request, s portal.Session, err error)
	// upload, when set, is the bound of a multipart/form-data POST (a file
	// upload), read whole before its csrf_token is checked; other POSTs
	// are forms of at most maxPortalForm.
	upload int64
}

// formToken is the csrf_token a route's forms must carry.
type formToken func(r *http.Request, s portal.Session) string

// sessionToken is the signed-in session's.
func sessionToken(_ *http.Request, s portal.Session) string { return s.CSRF }

// loginToken is the one in the sign-in form's cookie.
func loginToken(r *http.Request, _ portal.Session) string {
	c, err := r.Cookie(loginCSRFCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// inviteToken is the invitation's own token, in the path: another site
// cannot know it.
func inviteToken(r *http.Request, _ portal.Session) string { return r.PathValue("token") }

// mountPortal mounts /portal/.
func (p *Pages) mountPortal() {
	if p.Portal.Portal == nil {
		return
	}
	h := &portalPages{PortalDeps: p.Portal, log: p.log, secure: strings.HasPrefix(p.PublicURL, "https://"), base: p.PublicURL,
		sso: newSSOClient(p.Portal.OIDC, p.PublicURL),
		actions: p.Portal.Portal.Actions(portal.ActionDeps{Merchants: p.Portal.Merchants, Payouts: p.Portal.Payouts, Webhooks: p.Portal.Webhooks,
			Policies: p.Portal.Policies, Transfers: p.Portal.Transfers, Settlements: p.Portal.Settlements, Disputes: p.Portal.Disputes})}
	p.mux.Handle("GET /assets/portal.css", http.FileServerFS(portalAssetFS))
	h.pageMay = map[string]portal.Permission{}
	for _, rt := range h.routes() {
		p.mux.HandleFunc(rt.method+" "+rt.path, h.handler(rt))
		if rt.method == http.MethodGet {
			h.pageMay[rt.path] = rt.may
		}
	}
	p.mux.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "message", portalPage{Title: "Not found", Data: "There is no such page."})
	})
}

// routes is the portal's route table, by page group.
func (h *portalPages) routes() []portalRoute {
	var out []portalRoute
	out = append(out, h.sessionRoutes()...)
	out = append(out, h.ssoRoutes()...)
	out = append(out, h.balanceRoutes()...)
	out = append(out, h.payinRoutes()...)
	out = append(out, h.payoutRoutes()...)
	out = append(out, h.settlementRoutes()...)
	out = append(out, h.developerRoutes()...)
	out = append(out, h.endpointRoutes()...)
	out = append(out, h.userRoutes()...)
	out = append(out, h.accountRoutes()...)
	out = append(out, h.auditRoutes()...)
	out = append(out, h.policyRoutes()...)
	out = append(out, h.transferRoutes()...)
	out = append(out, h.reconcileRoutes()...)
	out = append(out, h.exportRoutes()...)
	out = append(out, h.disputeRoutes()...)
	return out
}

// multilineFields are the portal's textareas of one entry a line, which may
// hold line breaks besides the free text of input.FreeText.
var multilineFields = []string{"embed_origins"}

// handler runs rt.handle for a signed-in user (without a session it sends
// the browser to the sign-in page), after a POST's checks: its body bound,
// its csrf_token (403, nothing runs), its values' input rule; then the
// route's permission.
func (h *portalPages) handler(rt portalRoute) http.HandlerFunc {
	token, invalid := rt.token, rt.invalid
	if token == nil {
		token = sessionToken
	}
	if invalid == nil {
		invalid = h.fail
	}
	return func(w http.ResponseWriter, r *http.Request) {
		var s portal.Session
		if !rt.public {
			var ok bool
			if s, ok = h.session(w, r); !ok {
				return
			}
		}
		if r.Method == http.MethodPost {
			if err := parsePortalForm(w, r, rt.upload); err != nil || !portal.CSRFMatches(token(r, s), r.PostFormValue("csrf_token")) {
				h.render(w, r, http.StatusForbidden, "message", h.page(s, "Refused", "The form was refused: reload the page and try again."))
				return
			}
			if err := input.Values(r.PostForm, multilineFields...); err != nil {
				invalid(w, r, s, err)
				return
			}
		}
		if rt.may != "" {
			if err := s.May(rt.may); err != nil {
				h.fail(w, r, s, err)
				return
			}
		}
		rt.handle(w, r, s)
	}
}

// parsePortalForm reads a POST's form within its bound: a multipart body of
// at most upload bytes when the route takes a file and is sent one, else a
// form of at most maxPortalForm.
func parsePortalForm(w http.ResponseWriter, r *http.Request, upload int64) error {
	if upload == 0 || !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
		return r.ParseForm()
	}
	r.Body = http.MaxBytesReader(w, r.Body, upload)
	return r.ParseMultipartForm(upload)
}

// session is the request's signed-in session; false when it has answered
// (to the sign-in page when there is none or it has ended).
func (h *portalPages) session(w http.ResponseWriter, r *http.Request) (portal.Session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		h.redirect(w, r, "/portal/login")
		return portal.Session{}, false
	}
	s, err := h.Portal.Authenticate(r.Context(), c.Value)
	if fault.Is(err, fault.CodeRequireLogin) {
		h.redirect(w, r, "/portal/login")
		return portal.Session{}, false
	}
	if err != nil {
		h.fail(w, r, portal.Session{}, err)
		return portal.Session{}, false
	}
	return s, true
}

// portalHeaders are every portal answer's security headers.
func portalHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' data:; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

func (h *portalPages) render(w http.ResponseWriter, r *http.Request, status int, name string, page portalPage) {
	if page.User != nil && page.Zone == nil {
		zone, err := merchant.Zone(r.Context(), h.DB.Read(), page.User.MerchantID)
		if err != nil {
			h.log.Error("portal", "path", r.URL.Path, "err", err)
		}
		page.Zone = zone
	}
	writePage(w, h.log, portalTemplates, name, status, page, portalHeaders)
}

// redirect answers with 303 to the page at to.
func (h *portalPages) redirect(w http.ResponseWriter, r *http.Request, to string) {
	portalHeaders(w.Header())
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// done answers a form whose action returned err: with err's page, or with
// 303 to the page at to.
func (h *portalPages) done(w http.ResponseWriter, r *http.Request, s portal.Session, err error, to string) {
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, to)
}

// client is the request's address, for the audit log.
func (h *portalPages) client(r *http.Request) string { return h.Trust.Client(r).String() }

// page is the template data of a page of s (signed out: without the
// navigation).
func (h *portalPages) page(s portal.Session, title string, data any) portalPage {
	if s.ID == "" {
		return portalPage{Title: title, Data: data}
	}
	u := s.User
	return portalPage{Title: title, User: &u, CSRF: s.CSRF, Data: data, CanCreate: s.May(portal.CreatePayouts) == nil, Nav: h.nav(s)}
}

// navLink is a link of the navigation.
type navLink struct{ Href, Label string }

// navPages are the navigation's links, each with the route (GET path) it
// opens: a link is shown to a user whose role the route's may permits, so
// who sees it is the route table's rule, never a second list of roles.
var navPages = []struct{ route, href, label string }{
	{"/portal/{$}", "/portal/", "Balances"},
	{"/portal/payins", "/portal/payins", "Payins"},
	{"/portal/payouts", "/portal/payouts", "Payouts"},
	{"/portal/payouts", "/portal/payouts?status=held", "Held"},
	{"/portal/settlements", "/portal/settlements", "Settlements"},
	{"/portal/reports", "/portal/reports", "Reports"},
	{"/portal/transfers", "/portal/transfers?status=held", "Transfers"},
	{"/portal/reconciliation", "/portal/reconciliation", "Reconciliation"},
	{"/portal/disputes", "/portal/disputes", "Disputes"},
	{"/portal/policies", "/portal/policies", "Approval policies"},
	{"/portal/developers", "/portal/developers", "Developers"},
	{"/portal/users", "/portal/users", "Users"},
	{"/portal/audit", "/portal/audit", "Audit"},
	{"/portal/account/totp", "/portal/account/totp", "Second factor"},
}

// nav is the navigation of s: the links of pages its role may open.
func (h *portalPages) nav(s portal.Session) []navLink {
	var out []navLink
	for _, n := range navPages {
		may, ok := h.pageMay[n.route]
		if ok && (may == "" || s.May(may) == nil) {
			out = append(out, navLink{Href: n.href, Label: n.label})
		}
	}
	return out
}

// fail answers a domain error as a page with its status (fault.StatusOf).
func (h *portalPages) fail(w http.ResponseWriter, r *http.Request, s portal.Session, err error) {
	status, msg := fault.StatusOf(err), "Something went wrong; try again."
	if e, ok := fault.As(err); ok {
		msg = e.Message
		for k, v := range e.Fields {
			msg += " (" + k + ": " + v + ")"
		}
	} else {
		h.log.Error("portal", "path", r.URL.Path, "err", err)
	}
	h.render(w, r, status, "message", h.page(s, http.StatusText(status), msg))
}

// pager is a page list's navigation.
type pager struct {
	Page, Pages int
	Prev, Next  string
}

func newPager(r *http.Request, page, total int) pager {
	pages := max((total+portalPerPage-1)/portalPerPage, 1)
	link := func(n int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		return r.URL.Path + "?" + q.Encode()
	}
	return pager{Page: page, Pages: pages, Prev: link(page - 1), Next: link(page + 1)}
}

func pageOf(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 || n > 1_000_000 {
		return 1
	}
	return n
}

// principal is the merchant's account in currency (or its first), as the
// domain services take their caller.
func (h *portalPages) principal(ctx context.Context, s portal.Session, currency string) (merchant.Principal, []string, error) {
	currencies, err := h.Merchants.Currencies(ctx, s.MerchantID)
	if err != nil {
		return merchant.Principal{}, nil, err
	}
	if len(currencies) == 0 {
		return merchant.Principal{}, nil, fault.NotFoundf("the merchant has no account")
	}
	if currency == "" {
		currency = currencies[0]
	}
	p, err := h.Merchants.AccountPrincipal(ctx, s.MerchantID, currency)
	return p, currencies, err
}
