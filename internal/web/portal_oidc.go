package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"payd/internal/fault"
	"payd/internal/portal"
)

// Portal sign-in by OpenID Connect (CONTRACT §23, §25): GET
// /portal/oidc/login sends the browser to the identity provider with the
// Authorization Code flow's request, PKCE (S256), a state and a nonce;
// GET /portal/oidc/callback takes the code back, exchanges it, verifies
// the ID token (issuer, audience, expiry and signature, by discovery and
// the provider's JWKS) and its nonce, and signs the user in through
// portal.Service.LoginOIDC, which decides who may. Every refusal is the
// sign-in page with why, where password + TOTP still works.

// OIDC is the portal's single sign-on setting (`payd serve --oidc-*`).
type OIDC struct {
	Issuer, ClientID, ClientSecret string
	// RolesClaim names the ID token's claim of the user's groups.
	RolesClaim string
	Roles      portal.RoleMap
	// Client makes the requests to the identity provider (default: one
	// with idpTimeout).
	Client *http.Client
}

// Bounds of single sign-on.
const (
	// idpTimeout bounds each request to the identity provider.
	idpTimeout = 10 * time.Second
	// ssoStateCookie holds the state of this browser's sign-in under way:
	// a callback whose state is not the browser's own was started by
	// someone else (login CSRF) and is refused.
	ssoStateCookie  = "payd_oidc_state"
	ssoCallbackPath = "/portal/oidc/callback"
)

// ssoClient is the identity provider as payd knows it: its discovery
// document is read at the first sign-in, not at start, so that payd
// serves while the identity provider is down; a failed discovery is tried
// again at the next sign-in.
type ssoClient struct {
	OIDC
	redirectURL string

	mu       sync.Mutex
	provider *oidc.Provider
}

func newSSOClient(c *OIDC, publicURL string) *ssoClient {
	if c == nil {
		return nil
	}
	s := &ssoClient{OIDC: *c, redirectURL: publicURL + ssoCallbackPath}
	if s.Client == nil {
		s.Client = &http.Client{Timeout: idpTimeout}
	}
	return s
}

// errSSOUnavailable is a discovery that failed: the page says so and
// offers the password form.
var errSSOUnavailable = fault.New(fault.Busy, portal.CodeSSORefused, "single sign-on is unavailable: the identity provider could not be reached; try again, or sign in with your password")

// ctx carries the identity provider's HTTP client to go-oidc and oauth2.
func (c *ssoClient) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, c.Client)
}

// discover returns the provider, reading its discovery document once it
// answers.
func (c *ssoClient) discover(ctx context.Context) (*oidc.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider != nil {
		return c.provider, nil
	}
	ctx, cancel := context.WithTimeout(c.ctx(ctx), idpTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, c.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", c.Issuer, err)
	}
	c.provider = p
	return p, nil
}

func (c *ssoClient) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RedirectURL: c.redirectURL, Endpoint: p.Endpoint(),
		Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// ssoRoutes are the pre-sign-in routes of single sign-on, when it is set.
func (h *portalPages) ssoRoutes() []portalRoute {
	if h.sso == nil {
		return nil
	}
	return []portalRoute{
		{method: "GET", path: "/portal/oidc/login", public: true, handle: h.ssoLogin},
		{method: "GET", path: ssoCallbackPath, public: true, audit: portal.AuditLogin, handle: h.ssoCallback},
	}
}

// ssoLogin starts a sign-in: its state, nonce and PKCE verifier are kept
// by the portal service (good once, by any process), the state also in
// this browser's cookie.
func (h *portalPages) ssoLogin(w http.ResponseWriter, r *http.Request, _ portal.Session) {
	p, err := h.sso.discover(r.Context())
	if err != nil {
		h.log.Warn("portal single sign-on", "err", err)
		h.ssoRefused(w, r, errSSOUnavailable)
		return
	}
	state, nonce, verifier := portal.NewToken(), portal.NewToken(), oauth2.GenerateVerifier()
	if err := h.Portal.BeginOIDC(r.Context(), state, nonce, verifier); err != nil {
		h.fail(w, r, portal.Session{}, err)
		return
	}
	// SameSite=Lax: the identity provider's redirect back is a top-level
	// navigation from another site, which a Strict cookie would miss.
	http.SetCookie(w, &http.Cookie{Name: ssoStateCookie, Value: state, Path: "/portal/oidc/", HttpOnly: true, Secure: h.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(portal.OIDCLoginLife / time.Second)})
	portalHeaders(w.Header())
	http.Redirect(w, r, h.sso.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusFound)
}

// ssoCallback finishes a sign-in the identity provider sent back.
func (h *portalPages) ssoCallback(w http.ResponseWriter, r *http.Request, _ portal.Session) {
	http.SetCookie(w, &http.Cookie{Name: ssoStateCookie, Value: "", Path: "/portal/oidc/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	id, err := h.ssoIdentity(r)
	if err != nil {
		h.ssoRefused(w, r, err)
		return
	}
	s, err := h.Portal.LoginOIDC(r.Context(), id, h.sso.Roles)
	if err != nil {
		h.ssoRefused(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.Token, Path: "/portal/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: loginCSRFCookie, Value: "", Path: "/portal/", MaxAge: -1})
	h.redirect(w, r, "/portal/")
}

// Refusals of the identity provider's answer.
var (
	errSSOBrowser  = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "this single sign-on was not started in this browser: start again")
	errSSODenied   = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "the identity provider did not sign you in")
	errSSOExchange = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "the identity provider did not accept this sign-in: start again")
	errSSOToken    = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "the identity provider's ID token is not valid for payd")
	errSSOExpired  = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "the identity provider's ID token has expired: start again")
	errSSONonce    = fault.New(fault.Unauthenticated, portal.CodeSSORefused, "the identity provider's ID token was not issued for this sign-in")
)

// ssoIdentity is who the callback's ID token says signed in, once the
// state is this browser's and unused, and the token the identity
// provider's for this sign-in (ssoVerify).
func (h *portalPages) ssoIdentity(r *http.Request) (portal.Identity, error) {
	q := r.URL.Query()
	nonce, verifier, err := h.ssoState(r)
	if err != nil {
		return portal.Identity{}, err
	}
	if q.Get("error") != "" {
		h.log.Info("portal single sign-on denied", "error", q.Get("error"), "description", q.Get("error_description"))
		return portal.Identity{}, errSSODenied
	}
	p, err := h.sso.discover(r.Context())
	if err != nil {
		h.log.Warn("portal single sign-on", "err", err)
		return portal.Identity{}, errSSOUnavailable
	}
	idToken, err := h.ssoVerify(r.Context(), p, q.Get("code"), verifier, nonce)
	if err != nil {
		return portal.Identity{}, err
	}
	return h.ssoClaims(idToken, h.client(r))
}

// ssoState takes the callback's state, once: it must be the one this
// browser's cookie holds (else another site sent the browser here with its
// own sign-in: login CSRF) and still kept by the portal service (else it
// was used, or has expired).
func (h *portalPages) ssoState(r *http.Request) (nonce, verifier string, err error) {
	state := r.URL.Query().Get("state")
	if c, err := r.Cookie(ssoStateCookie); err != nil || !portal.CSRFMatches(c.Value, state) {
		return "", "", errSSOBrowser
	}
	return h.Portal.TakeOIDC(r.Context(), state)
}

// ssoVerify exchanges code with its PKCE verifier and verifies the ID token
// that comes back: issuer, audience (payd's client id), expiry and
// signature (the provider's JWKS) by go-oidc, then the nonce of the
// sign-in, which ties the token to this browser's request.
func (h *portalPages) ssoVerify(ctx context.Context, p *oidc.Provider, code, verifier, nonce string) (*oidc.IDToken, error) {
	ctx, cancel := context.WithTimeout(h.sso.ctx(ctx), idpTimeout)
	defer cancel()
	tok, err := h.sso.oauth(p).Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		h.log.Warn("portal single sign-on: code exchange", "err", err)
		return nil, errSSOExchange
	}
	raw, _ := tok.Extra("id_token").(string)
	idToken, err := p.Verifier(&oidc.Config{ClientID: h.sso.ClientID}).Verify(ctx, raw)
	var expired *oidc.TokenExpiredError
	switch {
	case errors.As(err, &expired):
		return nil, errSSOExpired
	case err != nil:
		h.log.Warn("portal single sign-on: ID token", "err", err)
		return nil, errSSOToken
	case !portal.CSRFMatches(nonce, idToken.Nonce):
		return nil, errSSONonce
	}
	return idToken, nil
}

// ssoClaims reads the email, its verification and the groups of a
// verified ID token. The groups claim may be a list or one string.
func (h *portalPages) ssoClaims(t *oidc.IDToken, client string) (portal.Identity, error) {
	var claims map[string]json.RawMessage
	if err := t.Claims(&claims); err != nil {
		return portal.Identity{}, errSSOToken
	}
	id := portal.Identity{Client: client}
	_ = json.Unmarshal(claims["email"], &id.Email)
	_ = json.Unmarshal(claims["email_verified"], &id.EmailVerified)
	if g := claims[h.sso.RolesClaim]; g != nil {
		var one string
		if json.Unmarshal(g, &id.Groups) != nil && json.Unmarshal(g, &one) == nil {
			id.Groups = []string{one}
		}
	}
	return id, nil
}

// ssoRefused shows the sign-in page with why single sign-on failed (its
// password form works as ever).
func (h *portalPages) ssoRefused(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := fault.As(err)
	if !ok {
		h.fail(w, r, portal.Session{}, err)
		return
	}
	token := loginToken(r, portal.Session{})
	if token == "" {
		token = h.setLoginToken(w)
	}
	h.render(w, r, fault.StatusOf(err), "login", portalPage{Title: "Sign in", CSRF: token, Error: "Single sign-on failed: " + e.Message + ".", Data: h.loginView("")})
}
