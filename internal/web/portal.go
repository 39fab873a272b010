package web

import (
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/payout"
	"payd/internal/portal"
	"payd/internal/proxy"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/webhook"
)

// The merchant portal (CONTRACT §13): server-rendered pages under /portal/,
// usable without JavaScript. A signed-in user is a session in the database
// (cookie payd_session); every form carries the session's csrf_token, and a
// POST without it is refused (403) before anything runs. The sign-in form,
// before any session, is protected the same way by a token in a cookie of
// its own.

//go:embed templates/portal/*.html
var portalTemplateFS embed.FS

//go:embed assets/portal.css
var portalAssetFS embed.FS

var portalTemplates = template.Must(template.ParseFS(portalTemplateFS, "templates/portal/*.html"))

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
	DB          *store.DB
	// Trust finds the client's address behind trusted proxies (the audit log's "from").
	Trust proxy.Trust
}

type portalPages struct {
	PortalDeps
	log    *slog.Logger
	secure bool // Secure cookies: the public URL is https
	base   string
}

// portalPage is every page's template data.
type portalPage struct {
	Title         string
	User          *portal.User
	CSRF          string
	Notice, Error string
	CanCreate     bool
	Data          any
}

// mountPortal mounts /portal/.
func (p *Pages) mountPortal() {
	if p.Portal.Portal == nil {
		return
	}
	h := &portalPages{PortalDeps: p.Portal, log: p.log, secure: strings.HasPrefix(p.PublicURL, "https://"), base: p.PublicURL}
	m := p.mux
	m.Handle("GET /assets/portal.css", http.FileServerFS(portalAssetFS))
	m.HandleFunc("GET /portal/login", h.loginForm)
	m.HandleFunc("POST /portal/login", h.login)
	m.HandleFunc("GET /portal/invite/{token}", h.inviteForm)
	m.HandleFunc("POST /portal/invite/{token}", h.acceptInvite)
	m.HandleFunc("POST /portal/logout", h.signedIn(h.logout))
	m.HandleFunc("GET /portal/{$}", h.signedIn(h.balances))
	m.HandleFunc("GET /portal/payins", h.signedIn(h.payins))
	m.HandleFunc("GET /portal/payouts", h.signedIn(h.payouts))
	m.HandleFunc("GET /portal/payouts/new", h.signedIn(h.payoutForm))
	m.HandleFunc("POST /portal/payouts", h.signedIn(h.createPayout))
	m.HandleFunc("GET /portal/payouts/{uuid}", h.signedIn(h.payout))
	m.HandleFunc("POST /portal/payouts/{uuid}/approve", h.signedIn(h.decide(true)))
	m.HandleFunc("POST /portal/payouts/{uuid}/reject", h.signedIn(h.decide(false)))
	m.HandleFunc("GET /portal/settlements", h.signedIn(h.settlements))
	m.HandleFunc("GET /portal/reports", h.signedIn(h.reports))
	m.HandleFunc("GET /portal/developers", h.signedIn(h.developers))
	m.HandleFunc("POST /portal/developers/apps", h.signedIn(h.createApp))
	m.HandleFunc("POST /portal/developers/apps/{app_id}/revoke", h.signedIn(h.revokeApp))
	m.HandleFunc("POST /portal/developers/webhook-secret/rotate", h.signedIn(h.rotateSecret))
	m.HandleFunc("POST /portal/developers/deliveries/{id}/resend", h.signedIn(h.resend))
	m.HandleFunc("POST /portal/developers/embed-origins", h.signedIn(h.setEmbedOrigins))
	m.HandleFunc("GET /portal/users", h.signedIn(h.users))
	m.HandleFunc("POST /portal/users", h.signedIn(h.addUser))
	m.HandleFunc("POST /portal/users/{id}/role", h.signedIn(h.setRole))
	m.HandleFunc("POST /portal/users/{id}/disable", h.signedIn(h.disableUser))
	m.HandleFunc("GET /portal/account/totp", h.signedIn(h.totpPage))
	m.HandleFunc("POST /portal/account/totp", h.signedIn(h.confirmTOTP))
	m.HandleFunc("POST /portal/account/totp/disable", h.signedIn(h.disableTOTP))
	m.HandleFunc("GET /portal/audit", h.signedIn(h.audit))
	m.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "message", portalPage{Title: "Not found", Data: "There is no such page."})
	})
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
	writePage(w, h.log, portalTemplates, name, status, page, portalHeaders)
}

// redirect answers a form with 303 to the page at to.
func (h *portalPages) redirect(w http.ResponseWriter, r *http.Request, to string) {
	portalHeaders(w.Header())
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// client is the request's address, for the audit log.
func (h *portalPages) client(r *http.Request) string { return h.Trust.Client(r).String() }

// multilineFields are the portal's textareas of one entry a line, which may
// hold line breaks besides the free text of input.FreeText.
var multilineFields = []string{"params", "embed_origins"}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s portal.Session)

// signedIn runs next for a signed-in user, after the CSRF check of a POST;
// without a session it sends the browser to the sign-in page.
func (h *portalPages) signedIn(next sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil {
			h.toLogin(w, r)
			return
		}
		s, err := h.Portal.Authenticate(r.Context(), c.Value)
		if err != nil {
			if fault.Is(err, fault.CodeRequireLogin) {
				h.toLogin(w, r)
				return
			}
			h.fail(w, r, portal.Session{}, err)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
			if err := r.ParseForm(); err != nil || !portal.CSRFMatches(s.CSRF, r.PostFormValue("csrf_token")) {
				h.render(w, r, http.StatusForbidden, "message", h.page(s, "Refused", "The form was refused: reload the page and try again."))
				return
			}
			if err := input.Values(r.PostForm, multilineFields...); err != nil {
				h.fail(w, r, s, err)
				return
			}
		}
		next(w, r, s)
	}
}

func (h *portalPages) toLogin(w http.ResponseWriter, r *http.Request) {
	h.redirect(w, r, "/portal/login")
}

func (h *portalPages) page(s portal.Session, title string, data any) portalPage {
	u := s.User
	return portalPage{Title: title, User: &u, CSRF: s.CSRF, Data: data,
		CanCreate: u.Role == merchant.Admin || u.Role == merchant.Finance}
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
	page := portalPage{Title: http.StatusText(status), Data: msg}
	if s.ID != "" {
		page = h.page(s, http.StatusText(status), msg)
	}
	h.render(w, r, status, "message", page)
}

func (h *portalPages) loginForm(w http.ResponseWriter, r *http.Request) {
	token := portal.NewToken()
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: token, Path: "/portal/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	h.render(w, r, http.StatusOK, "login", portalPage{Title: "Sign in", CSRF: token, Data: struct{ Email string }{}})
}

func (h *portalPages) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
	c, err := r.Cookie(loginCSRFCookie)
	if err := r.ParseForm(); err != nil || c == nil || !portal.CSRFMatches(c.Value, r.PostFormValue("csrf_token")) {
		h.render(w, r, http.StatusForbidden, "message", portalPage{Title: "Refused", Data: "The form was refused: reload the sign-in page and try again."})
		return
	}
	_ = err
	email := r.PostFormValue("email")
	if err := input.Values(r.PostForm); err != nil {
		e, _ := fault.As(err)
		h.render(w, r, http.StatusUnprocessableEntity, "login", portalPage{Title: "Sign in", CSRF: c.Value, Error: e.Message, Data: struct{ Email string }{}})
		return
	}
	s, delay, err := h.Portal.Login(r.Context(), portal.Credentials{Email: email, Password: r.PostFormValue("password"),
		TOTPCode: strings.TrimSpace(r.PostFormValue("totp_code")), Client: h.client(r)})
	if err != nil {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
			}
		}
		status := http.StatusUnauthorized
		if errors.Is(err, portal.ErrLocked) {
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", strconv.Itoa(int(portal.LockFor/time.Second)))
		}
		e, _ := fault.As(err)
		msg := "Sign-in failed."
		if e != nil {
			msg = e.Message
		}
		h.render(w, r, status, "login", portalPage{Title: "Sign in", CSRF: c.Value, Error: msg, Data: struct{ Email string }{email}})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.Token, Path: "/portal/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: "", Path: "/portal/", MaxAge: -1})
	h.redirect(w, r, "/portal/")
}

func (h *portalPages) logout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.Logout(r.Context(), s); err != nil {
		h.fail(w, r, s, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/portal/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	h.redirect(w, r, "/portal/login")
}

// balanceRow is one currency on the balances page.
type balanceRow struct {
	Currency                                             string
	Available, Incoming, Outgoing, Reserve, Withdrawable string
}

func (h *portalPages) balances(w http.ResponseWriter, r *http.Request, s portal.Session) {
	all, err := ledger.Balances(r.Context(), h.DB.Read(), s.MerchantID, string(merchant.Payments), "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	var rows []balanceRow
	for _, b := range all {
		c, err := money.Lookup(b.Currency)
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		rows = append(rows, balanceRow{Currency: b.Currency, Available: money.Format(b.Available, c), Incoming: money.Format(b.Incoming, c),
			Outgoing: money.Format(b.Outgoing, c), Reserve: money.Format(b.RollingReserve, c), Withdrawable: money.Format(b.Withdrawable, c)})
	}
	h.render(w, r, http.StatusOK, "balances", h.page(s, "Balances", rows))
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

func (h *portalPages) payins(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, currencies, err := h.principal(r.Context(), s, r.URL.Query().Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	status := r.URL.Query().Get("status")
	if status != "" && !payin.ValidStatus(status) {
		status = ""
	}
	page := pageOf(r)
	list, total, err := h.Payins.List(r.Context(), p, payin.ListQuery{Status: status, Page: page, PerPage: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "payins", h.page(s, "Payins", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Status": status, "Payins": list, "Pager": newPager(r, page, total)}))
}

func (h *portalPages) payouts(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, _, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	status := r.URL.Query().Get("status")
	if len(status) > 20 {
		status = ""
	}
	page := pageOf(r)
	list, total, err := h.Payouts.List(r.Context(), p, payout.ListQuery{Status: status, AllCurrencies: true, Page: page, PerPage: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	title := "Payouts"
	if status == string(payout.Held) {
		title = "Payouts held for approval"
	}
	h.render(w, r, http.StatusOK, "payouts", h.page(s, title, map[string]any{"Payouts": list, "Pager": newPager(r, page, total)}))
}

func (h *portalPages) payout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	po, err := h.Payouts.Get(r.Context(), merchant.Principal{MerchantID: s.MerchantID}, r.PathValue("uuid"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	// The maker of a portal payout sees no decision forms: they may not decide it.
	canDecide := po.Status == payout.Held && (s.Role == merchant.Admin || s.Role == merchant.Finance) &&
		(po.Approval == nil || po.Approval.CreatedBy != s.Email)
	page := h.page(s, "Payout "+po.UUID, map[string]any{"Payout": po, "CanDecide": canDecide})
	// Only the page's own notices are shown: a link cannot put words on it.
	page.Notice = decisionNotices[r.URL.Query().Get("done")]
	h.render(w, r, http.StatusOK, "payout", page)
}

// decisionNotices are the notices of a payout's page after a decision.
var decisionNotices = map[string]string{"approved": "You approved the payout.", "rejected": "You rejected the payout: its funds are back in the available balance."}

// decide approves or rejects a held payout through the payout engine's one
// decision rule, and records it in the audit log in the same transaction.
func (h *portalPages) decide(approve bool) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		uuid := r.PathValue("uuid")
		d := payout.Decision{MerchantID: s.MerchantID, PayoutUUID: uuid, Approve: approve, Reason: r.PostFormValue("reason"),
			By: payout.Decider{UserID: s.ID, Email: s.Email, Role: s.Role}}
		_, err := store.Do(r.Context(), h.DB, func(tx *store.Tx) (payout.Payout, error) {
			po, err := h.Payouts.Decide(r.Context(), tx, d)
			if err != nil {
				return po, err
			}
			action, detail := "payout_approved", ""
			if !approve {
				action, detail = "payout_rejected", strings.TrimSpace(d.Reason)
			}
			return po, portal.Audit(r.Context(), tx, portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: action, Subject: uuid,
				Detail: detail, Client: h.client(r), At: po.UpdatedAt.T})
		})
		if err != nil {
			h.fail(w, r, s, err)
			return
		}
		done := "approved"
		if !approve {
			done = "rejected"
		}
		h.redirect(w, r, "/portal/payouts/"+url.PathEscape(uuid)+"?done="+done)
	}
}

func (h *portalPages) payoutForm(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Finance {
		h.fail(w, r, s, portal.Forbidden("create payouts"))
		return
	}
	_, currencies, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "payout_new", h.page(s, "New payout", map[string]any{"Currencies": currencies}))
}

// createPayout makes a payout through the same domain service as the API;
// its creator is recorded (and may not decide it).
func (h *portalPages) createPayout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Finance {
		h.fail(w, r, s, portal.Forbidden("create payouts"))
		return
	}
	p, _, err := h.principal(r.Context(), s, r.PostFormValue("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	params := map[string]any{}
	for _, line := range strings.Split(r.PostFormValue("params"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			params[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	req := payout.Request{Currency: p.Currency, PayoutMethodName: r.PostFormValue("payout_method_name"), Description: r.PostFormValue("description"),
		PayoutTransactionDetails: []payout.TransactionRequest{{FirstName: r.PostFormValue("first_name"), LastName: r.PostFormValue("last_name"),
			Amount: money.Input(strings.TrimSpace(r.PostFormValue("amount"))), PayoutMethodParams: params}}}
	po, err := store.Do(r.Context(), h.DB, func(tx *store.Tx) (payout.Payout, error) {
		po, err := h.Payouts.CreateBy(r.Context(), tx, p, req, payout.Maker{Label: s.Email, UserID: s.ID})
		if err != nil {
			return po, err
		}
		return po, portal.Audit(r.Context(), tx, portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "payout_created", Subject: po.UUID,
			Detail: po.TotalAmount.String() + " " + po.Currency, Client: h.client(r), At: po.CreatedAt.T})
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/payouts/"+url.PathEscape(po.UUID))
}

func (h *portalPages) settlements(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, currencies, err := h.principal(r.Context(), s, r.URL.Query().Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	page := pageOf(r)
	list, total, err := h.Settlements.List(r.Context(), p, p.Currency, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	config, err := h.Settlements.GetConfig(r.Context(), p, p.Currency)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "settlements", h.page(s, "Settlements", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Config": config, "Settlements": list, "Pager": newPager(r, page, total)}))
}

// reports lists the account's settlement reports, latest first, each with
// a download link signed for this page (valid three minutes).
func (h *portalPages) reports(w http.ResponseWriter, r *http.Request, s portal.Session) {
	query := r.URL.Query()
	p, currencies, err := h.principal(r.Context(), s, query.Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	frequency := query.Get("frequency")
	if frequency != string(report.Daily) && frequency != string(report.Monthly) {
		frequency = ""
	}
	list, err := h.Reports.List(r.Context(), p, report.ListQuery{Currency: p.Currency, Frequency: frequency, Cursor: query.Get("cursor"), Size: portalPerPage})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	next := ""
	if list.HasMore {
		q := url.Values{"currency": {p.Currency}, "cursor": {*list.NextCursor}}
		if frequency != "" {
			q.Set("frequency", frequency)
		}
		next = "/portal/reports?" + q.Encode()
	}
	h.render(w, r, http.StatusOK, "reports", h.page(s, "Reports", map[string]any{"Currencies": currencies, "Currency": p.Currency,
		"Frequency": frequency, "Reports": list.Records, "Next": next, "LinkMinutes": int(report.LinkTTL / time.Minute)}))
}

func (h *portalPages) empty(title, text string) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		h.render(w, r, http.StatusOK, "empty", h.page(s, title, text))
	}
}

func (h *portalPages) developers(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.developersPage(w, r, s, "", "")
}

func (h *portalPages) developersPage(w http.ResponseWriter, r *http.Request, s portal.Session, newApp, newSecret string) {
	if s.Role != merchant.Admin && s.Role != merchant.Developer {
		h.fail(w, r, s, portal.Forbidden("see the developers page"))
		return
	}
	apps, err := h.Merchants.Apps(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	currencies, err := h.Merchants.Currencies(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	secret := ""
	if s.Role == merchant.Admin {
		if secret, err = h.Merchants.WebhookSecret(r.Context(), s.MerchantID, false); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	status := webhook.Status(r.URL.Query().Get("status"))
	if status != webhook.Pending && status != webhook.Delivered && status != webhook.Failed {
		status = ""
	}
	deliveries, err := h.Webhooks.Recent(r.Context(), s.MerchantID, status, 50)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	origins, err := merchant.EmbedOrigins(r.Context(), h.DB.Read(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "developers", h.page(s, "Developers", map[string]any{"Apps": apps, "Currencies": currencies,
		"Secret": secret, "IsAdmin": s.Role == merchant.Admin, "CanManage": true, "NewApp": newApp, "NewSecret": newSecret,
		"Deliveries": deliveries, "Status": string(status), "EmbedOrigins": strings.Join(origins, "\n")}))
}

// resend queues a webhook event for another attempt now.
func (h *portalPages) resend(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Developer {
		h.fail(w, r, s, portal.Forbidden("resend webhooks"))
		return
	}
	id := r.PathValue("id")
	_, err := store.Do(r.Context(), h.DB, func(tx *store.Tx) (webhook.Delivery, error) {
		dl, err := h.Webhooks.Resend(r.Context(), tx, s.MerchantID, id)
		if err != nil {
			return dl, err
		}
		return dl, portal.Audit(r.Context(), tx, portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "webhook_resent", Subject: id,
			Client: h.client(r), At: dl.CreatedAt.T})
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/developers")
}

// setEmbedOrigins replaces the origins that may frame the merchant's
// Payment Gateway 3 pages (CONTRACT §11): one per line or comma-separated.
func (h *portalPages) setEmbedOrigins(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Developer {
		h.fail(w, r, s, portal.Forbidden("change the embedding origins"))
		return
	}
	raw := strings.NewReplacer("\r\n", ",", "\n", ",").Replace(r.PostFormValue("embed_origins"))
	var list []string
	for _, o := range strings.Split(raw, ",") {
		list = append(list, strings.TrimSpace(o))
	}
	// The change commits with its audit entry, or neither does.
	err := h.Portal.Change(r.Context(), func(tx *store.Tx) (portal.Entry, error) {
		origins, err := merchant.WriteEmbedOrigins(r.Context(), tx, s.MerchantID, list)
		return portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "embed_origins_updated",
			Subject: s.MerchantID, Detail: strings.Join(origins, ","), Client: h.client(r)}, err
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/developers")
}

func (h *portalPages) createApp(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Developer {
		h.fail(w, r, s, portal.Forbidden("create apps"))
		return
	}
	var app merchant.NewApp
	err := h.Portal.Change(r.Context(), func(tx *store.Tx) (e portal.Entry, err error) {
		app, err = h.Merchants.CreateAppIn(r.Context(), tx, s.MerchantID, r.PostFormValue("currency"))
		return portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "app_created", Subject: app.AppID, Detail: app.Currency, Client: h.client(r)}, err
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	// The secret is shown once, on this answer; it is not stored but as a hash.
	h.developersPage(w, r, s, app.AppID, app.SecretKey)
}

func (h *portalPages) revokeApp(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin && s.Role != merchant.Developer {
		h.fail(w, r, s, portal.Forbidden("revoke apps"))
		return
	}
	id := r.PathValue("app_id")
	err := h.Portal.Change(r.Context(), func(tx *store.Tx) (portal.Entry, error) {
		return portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "app_revoked", Subject: id, Client: h.client(r)},
			h.Merchants.RevokeAppIn(r.Context(), tx, s.MerchantID, id)
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/developers")
}

func (h *portalPages) rotateSecret(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.Role != merchant.Admin {
		h.fail(w, r, s, portal.Forbidden("rotate the signing secret"))
		return
	}
	err := h.Portal.Change(r.Context(), func(tx *store.Tx) (portal.Entry, error) {
		_, err := h.Merchants.WebhookSecretIn(r.Context(), tx, s.MerchantID, true)
		return portal.Entry{MerchantID: s.MerchantID, Actor: s.Email, Action: "webhook_secret_rotated", Subject: s.MerchantID, Client: h.client(r)}, err
	})
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/developers")
}

func (h *portalPages) users(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.usersPage(w, r, s, "")
}

func (h *portalPages) usersPage(w http.ResponseWriter, r *http.Request, s portal.Session, invite string) {
	members, err := h.Portal.Members(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "users", h.page(s, "Users", map[string]any{"Members": members, "IsAdmin": s.Role == merchant.Admin, "InviteLink": invite}))
}

func (h *portalPages) addUser(w http.ResponseWriter, r *http.Request, s portal.Session) {
	token, err := h.Portal.Invite(r.Context(), s, r.PostFormValue("email"), merchant.Role(r.PostFormValue("role")), h.client(r))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.usersPage(w, r, s, h.base+"/portal/invite/"+token)
}

func (h *portalPages) setRole(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.SetRole(r.Context(), s, r.PathValue("id"), merchant.Role(r.PostFormValue("role")), h.client(r)); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/users")
}

func (h *portalPages) disableUser(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.Disable(r.Context(), s, r.PathValue("id"), h.client(r)); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/users")
}

// The invitation link: the token is its only credential, and the form
// carries it back as its CSRF token too (another site cannot know it).
func (h *portalPages) inviteForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "invite", portalPage{Title: "Set your password", CSRF: r.PathValue("token")})
}

func (h *portalPages) acceptInvite(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
	token := r.PathValue("token")
	if err := r.ParseForm(); err != nil || !portal.CSRFMatches(token, r.PostFormValue("csrf_token")) {
		h.render(w, r, http.StatusForbidden, "message", portalPage{Title: "Refused", Data: "The form was refused."})
		return
	}
	if err := input.Values(r.PostForm); err != nil {
		h.fail(w, r, portal.Session{}, err)
		return
	}
	if _, err := h.Portal.AcceptInvite(r.Context(), token, r.PostFormValue("password"), h.client(r)); err != nil {
		h.fail(w, r, portal.Session{}, err)
		return
	}
	h.redirect(w, r, "/portal/login")
}

func (h *portalPages) totpPage(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.HasTOTP {
		h.render(w, r, http.StatusOK, "totp", h.page(s, "Second factor", map[string]any{"Enabled": true}))
		return
	}
	uri, secret, err := h.Portal.BeginTOTP(r.Context(), s)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	png, err := qrPNG(uri)
	if err != nil {
		h.fail(w, r, s, fmt.Errorf("draw the TOTP key's QR code: %w", err))
		return
	}
	h.render(w, r, http.StatusOK, "totp", h.page(s, "Second factor", map[string]any{"Enabled": false,
		"QR": base64.StdEncoding.EncodeToString(png), "Secret": secret}))
}

func (h *portalPages) confirmTOTP(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.ConfirmTOTP(r.Context(), s, strings.TrimSpace(r.PostFormValue("code")), h.client(r)); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/account/totp")
}

func (h *portalPages) disableTOTP(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.DisableTOTP(r.Context(), s, strings.TrimSpace(r.PostFormValue("code")), h.client(r)); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/account/totp")
}

func (h *portalPages) audit(w http.ResponseWriter, r *http.Request, s portal.Session) {
	page := pageOf(r)
	entries, total, err := h.Portal.AuditPage(r.Context(), s.MerchantID, page, portalPerPage)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "audit", h.page(s, "Audit log", map[string]any{"Entries": entries, "Pager": newPager(r, page, total)}))
}
