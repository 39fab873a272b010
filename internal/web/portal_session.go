package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/portal"
)

// Signing in and out, and an invitation's link (CONTRACT §13): the session
// cookie is HttpOnly and SameSite=Lax (Secure behind https); wrong
// passwords are slowed, then refused for 15 minutes (portal.Service.Login).

func (h *portalPages) sessionRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/login", public: true, handle: h.loginForm},
		{method: "POST", path: "/portal/login", public: true, token: loginToken, invalid: h.loginRefused, audit: portal.AuditLogin, handle: h.login},
		{method: "POST", path: "/portal/logout", handle: h.logout},
		{method: "GET", path: "/portal/invite/{token}", public: true, handle: h.inviteForm},
		{method: "POST", path: "/portal/invite/{token}", public: true, token: inviteToken, audit: portal.AuditInviteAccepted, handle: h.acceptInvite},
	}
}

// loginView is the sign-in form's data; SSO shows the link to single
// sign-on (CONTRACT §23) when it is set.
type loginView struct {
	Email string
	SSO   bool
}

func (h *portalPages) loginView(email string) loginView {
	return loginView{Email: email, SSO: h.sso != nil}
}

func (h *portalPages) loginForm(w http.ResponseWriter, r *http.Request, _ portal.Session) {
	token := h.setLoginToken(w)
	h.render(w, r, http.StatusOK, "login", portalPage{Title: "Sign in", CSRF: token, Data: h.loginView("")})
}

// setLoginToken gives the browser a new sign-in form token and returns it.
func (h *portalPages) setLoginToken(w http.ResponseWriter) string {
	token := portal.NewToken()
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: token, Path: "/portal/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	return token
}

// loginRefused shows the sign-in form again, with the input rule's word on
// what it held.
func (h *portalPages) loginRefused(w http.ResponseWriter, r *http.Request, _ portal.Session, err error) {
	msg := err.Error()
	if e, ok := fault.As(err); ok {
		msg = e.Message
	}
	h.render(w, r, fault.StatusOf(err), "login", portalPage{Title: "Sign in", CSRF: loginToken(r, portal.Session{}), Error: msg, Data: h.loginView("")})
}

func (h *portalPages) login(w http.ResponseWriter, r *http.Request, _ portal.Session) {
	email := r.PostFormValue("email")
	s, delay, err := h.Portal.Login(r.Context(), portal.Credentials{Email: email, Password: r.PostFormValue("password"),
		TOTPCode: strings.TrimSpace(r.PostFormValue("totp_code")), Client: h.client(r)})
	if err != nil {
		h.loginFailed(w, r, email, delay, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.Token, Path: "/portal/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: "", Path: "/portal/", MaxAge: -1})
	h.redirect(w, r, "/portal/")
}

// loginFailed holds a failed sign-in's answer back by delay (the service's
// slowing of repeated failures) and shows the form again with why: 401, or
// 429 with Retry-After while the account is locked.
func (h *portalPages) loginFailed(w http.ResponseWriter, r *http.Request, email string, delay time.Duration, err error) {
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	e, ok := fault.As(err)
	if !ok {
		h.fail(w, r, portal.Session{}, err)
		return
	}
	if errors.Is(err, portal.ErrLocked) {
		w.Header().Set("Retry-After", strconv.Itoa(int(portal.LockFor/time.Second)))
	}
	h.render(w, r, fault.StatusOf(err), "login", portalPage{Title: "Sign in", CSRF: loginToken(r, portal.Session{}), Error: e.Message, Data: h.loginView(email)})
}

func (h *portalPages) logout(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if err := h.Portal.Logout(r.Context(), s); err != nil {
		h.fail(w, r, s, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/portal/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	h.redirect(w, r, "/portal/login")
}

// inviteForm is the invitation link's page: the token is its only
// credential, and the form carries it back as its CSRF token too.
func (h *portalPages) inviteForm(w http.ResponseWriter, r *http.Request, _ portal.Session) {
	h.render(w, r, http.StatusOK, "invite", portalPage{Title: "Set your password", CSRF: r.PathValue("token")})
}

func (h *portalPages) acceptInvite(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if _, err := h.Portal.AcceptInvite(r.Context(), r.PathValue("token"), r.PostFormValue("password"), h.client(r)); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirect(w, r, "/portal/login")
}
