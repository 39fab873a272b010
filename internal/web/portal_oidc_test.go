package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/portal/oidctest"
	"payd/internal/server/servertest"
	"payd/internal/web"
)

// ssoServer serves e's pages with single sign-on through idp.
func ssoServer(t *testing.T, e *servertest.Env, idp *oidctest.Provider) *httptest.Server {
	t.Helper()
	var pages http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { pages.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	s := e.Server
	pages = web.New(web.Deps{Sandbox: true, PublicURL: srv.URL, Portal: web.PortalDeps{Portal: s.Portal, Merchants: s.Merchants, Payouts: s.Payouts,
		Payins: s.Payins, Webhooks: s.Webhooks, Settlements: s.Settlements, Reports: s.Reports, Reconcile: s.Reconcile, Policies: s.Policies,
		Transfers: s.Transfers, DB: s.DB,
		OIDC: &web.OIDC{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret, RolesClaim: "groups",
			Roles: portal.RoleMap{"payd-admins": merchant.Admin, "accounts": merchant.Finance}}}})
	return srv
}

// ssoBrowser follows redirects, to the identity provider and back, and
// keeps its cookies.
func ssoBrowser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// ssoGet is GET url's final answer, its body ending with the path it
// came from.
func ssoGet(t *testing.T, c *http.Client, url string) answer {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: string(raw) + "\nat " + res.Request.URL.Path}
}

// TestPortalSSO: single sign-on against an identity provider on loopback
// signs an invited user in with the mapped role (audited with its method);
// each refusal is the sign-in page with why, signed out; a replayed state
// is refused even with the browser's cookie; the identity provider being
// down at the first sign-in is a page that says so, and the next sign-in
// tries again.
func TestPortalSSO(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		for _, email := range []string{"dev@shop.example", "unverified@shop.example"} {
			if _, err := e.Merchants.CreateUser(context.Background(), m.MerchantID, email, merchant.Developer, password); err != nil {
				t.Fatal(err)
			}
		}
		idp := oidctest.New(t, "payd-portal", "client-secret")
		srv := ssoServer(t, e, idp)

		idp.SetDown(true)
		down := ssoGet(t, ssoBrowser(t), srv.URL+"/portal/oidc/login")
		if down.status != http.StatusServiceUnavailable || !strings.Contains(down.body, "single sign-on is unavailable") || !strings.Contains(down.body, `name="password"`) {
			t.Errorf("the identity provider down: %d\n%.500s", down.status, down.body)
		}
		idp.SetDown(false)

		good := ssoBrowser(t)
		idp.Next(oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Groups: []string{"staff", "accounts"}})
		if a := ssoGet(t, good, srv.URL+"/portal/oidc/login"); a.status != http.StatusOK || !strings.Contains(a.body, "dev@shop.example (finance)") {
			t.Fatalf("a good sign-in: %d\n%.500s", a.status, a.body)
		}
		entries, _, err := e.Portal.AuditPage(context.Background(), m.MerchantID, 1, 1)
		if err != nil || len(entries) != 1 || entries[0].Action != portal.AuditLogin || !strings.HasPrefix(entries[0].Detail, "method oidc") {
			t.Errorf("the audit log's newest entry: %+v, %v; want a login by oidc", entries, err)
		}

		// Another browser sent the callback (login CSRF): not its sign-in.
		if a := ssoGet(t, ssoBrowser(t), idp.LastCallback()); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "not started in this browser") {
			t.Errorf("a callback without the state's cookie: %d\n%.500s", a.status, a.body)
		}
		// The callback again, with the state's cookie as the browser had it.
		replay := ssoBrowser(t)
		back, _ := url.Parse(idp.LastCallback())
		replay.Jar.SetCookies(back, []*http.Cookie{{Name: "payd_oidc_state", Value: back.Query().Get("state"), Path: "/portal/oidc/"}})
		if a := ssoGet(t, replay, back.String()); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "already used") {
			t.Errorf("a replayed state: %d\n%.500s", a.status, a.body)
		}

		refusals := []struct {
			name   string
			token  oidctest.Token
			status int
			want   string
		}{
			{"a wrong audience", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Audience: "another-client"}, 401, "not valid for payd"},
			{"an expired token", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, ExpiresIn: -time.Minute}, 401, "has expired"},
			{"a wrong nonce", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Nonce: "another"}, 401, "not issued for this sign-in"},
			{"an unverified email", oidctest.Token{Email: "unverified@shop.example"}, 403, "has not verified your email"},
			{"an uninvited user", oidctest.Token{Email: "stranger@shop.example", EmailVerified: true}, 403, "no portal user is invited"},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				c := ssoBrowser(t)
				idp.Next(tt.token)
				a := ssoGet(t, c, srv.URL+"/portal/oidc/login")
				if a.status != tt.status || !strings.Contains(a.body, tt.want) || !strings.Contains(a.body, `name="password"`) {
					t.Errorf("%d, want %d with %q and the password form\n%.600s", a.status, tt.status, tt.want, a.body)
				}
				if a := ssoGet(t, c, srv.URL+"/portal/"); !strings.HasSuffix(a.body, "at /portal/login") {
					t.Errorf("after the refusal /portal/ is not the sign-in page:\n%.300s", a.body)
				}
			})
		}
	})
}

// TestPortalLoginSSOLink: the sign-in page (plain HTML, no script) links to
// single sign-on when it is set, and not when it is not.
func TestPortalLoginSSOLink(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		link := `<a href="/portal/oidc/login" id="sso">Sign in with SSO</a>`
		with := newBrowser(t, ssoServer(t, e, oidctest.New(t, "payd-portal", "client-secret"))).do("GET", "/portal/login", nil)
		if with.status != http.StatusOK || !strings.Contains(with.body, link) || strings.Contains(with.body, "<script") {
			t.Errorf("with single sign-on: %d\n%.800s", with.status, with.body)
		}
		without := newBrowser(t, portalServer(t, e))
		if a := without.do("GET", "/portal/login", nil); a.status != http.StatusOK || strings.Contains(a.body, "/portal/oidc/login") {
			t.Errorf("without single sign-on: %d\n%.800s", a.status, a.body)
		}
		if a := without.do("GET", "/portal/oidc/login", nil); a.status != http.StatusNotFound {
			t.Errorf("GET /portal/oidc/login without single sign-on: %d, want 404", a.status)
		}
	})
}
