package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/portal/oidctest"
	"payd/internal/server"
	"payd/internal/web"
)

// Portal sign-in by OpenID Connect (CONTRACT §23), driven in Chromium
// against an identity provider the test runs on 127.0.0.1.

// withOIDC sets payd's single sign-on to idp, the group accounts mapped to
// finance.
func withOIDC(idp *oidctest.Provider) option {
	return func(c *server.Config) {
		c.OIDC = &web.OIDC{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret, RolesClaim: "groups",
			Roles: portal.RoleMap{"accounts": merchant.Finance, "ops": merchant.Admin}}
	}
}

// ssoSignIn follows the sign-in page's "Sign in with SSO" link in tab.
func ssoSignIn(t *testing.T, tab context.Context, p *payd) {
	t.Helper()
	if status := open(t, tab, p.root+"/portal/login"); status != 200 {
		t.Fatalf("GET /portal/login = %d", status)
	}
	browse(t, tab, chromedp.Click(chromedp.CSS("#sso")))
}

// refusal waits for the sign-in page's error after a refused single
// sign-on and returns it.
func refusal(t *testing.T, tab context.Context) string {
	t.Helper()
	browse(t, tab, chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	return read(t, tab, chromedp.Text(chromedp.CSS(`p.error`)))
}

// wantSignedOut fails unless /portal/ sends tab to the sign-in page.
func wantSignedOut(t *testing.T, tab context.Context, p *payd) {
	t.Helper()
	open(t, tab, p.root+"/portal/")
	waitLocation(t, tab, p.root+"/portal/login")
}

// TestPortalSSOInBrowser: an invited user signs in by the sign-in page's
// SSO link and lands on the portal signed in, with the role of the mapped
// group; then a wrong audience, an expired token, a replayed state (with
// the browser's state cookie), a wrong nonce, an unverified email and an
// uninvited user each end on the sign-in page saying why, signed out.
func TestPortalSSOInBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	idp := oidctest.New(t, "payd-portal", "client-secret")
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, email := range []string{"dev@shop.example", "unverified@shop.example"} {
			if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, email, merchant.Developer, "correct horse battery"); err != nil {
				t.Fatal(err)
			}
		}

		good := newBrowser(t, alloc)
		idp.Next(oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Groups: []string{"everyone", "accounts"}})
		ssoSignIn(t, good, p)
		waitLocation(t, good, p.root+"/portal/")
		if got := read(t, good, chromedp.Text(chromedp.CSS(".who"))); got != "dev@shop.example (finance)" {
			t.Errorf("signed in by SSO as %q, want dev@shop.example (finance)", got)
		}
		used := idp.LastCallback()

		refused := newBrowser(t, alloc)
		tests := []struct {
			name  string
			token oidctest.Token
			want  string
		}{
			{"a wrong audience", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Audience: "another-client"}, "the identity provider's ID token is not valid for payd"},
			{"an expired token", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, ExpiresIn: -time.Minute}, "the identity provider's ID token has expired"},
			{"a wrong nonce", oidctest.Token{Email: "dev@shop.example", EmailVerified: true, Nonce: "not-the-sign-in's"}, "the identity provider's ID token was not issued for this sign-in"},
			{"an unverified email", oidctest.Token{Email: "unverified@shop.example"}, "the identity provider has not verified your email address"},
			{"an uninvited user", oidctest.Token{Email: "stranger@shop.example", EmailVerified: true}, "no portal user is invited with your email address"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				idp.Next(tt.token)
				ssoSignIn(t, refused, p)
				if got := refusal(t, refused); !strings.Contains(got, "Single sign-on failed: "+tt.want) {
					t.Errorf("the sign-in page says %q, want %q", got, tt.want)
				}
				wantSignedOut(t, refused, p)
			})
		}

		t.Run("a replayed state", func(t *testing.T) {
			// The good sign-in's callback again, with its state in the
			// browser's cookie as that browser had it: the state is used up.
			state := used[strings.Index(used, "state=")+len("state="):]
			state, _, _ = strings.Cut(state, "&")
			httpOnly := true
			browse(t, refused, chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: "payd_oidc_state", Value: state, URL: p.root + "/portal/oidc/callback",
					Path: "/portal/oidc/", HTTPOnly: &httpOnly, SameSite: network.CookieSameSiteLax})
				return chromedp.Void{}, err
			}))
			open(t, refused, used)
			if got := refusal(t, refused); !strings.Contains(got, "this single sign-on was already used or has expired") {
				t.Errorf("a replayed state: the sign-in page says %q", got)
			}
			wantSignedOut(t, refused, p)
		})

		// The first browser is still signed in, and the password form still works.
		open(t, good, p.root+"/portal/")
		if got := read(t, good, chromedp.Text(chromedp.CSS(".who"))); got != "dev@shop.example (finance)" {
			t.Errorf("after the refusals the SSO session shows %q", got)
		}
		signIn(t, newBrowser(t, alloc), p, "dev@shop.example", "correct horse battery", "")
	}, withOIDC(idp))
}

// TestPortalSSOLink: the sign-in page, as a client without JavaScript
// reads it, has the "Sign in with SSO" link when single sign-on is set and
// not when it is not; the link's route exists only then.
func TestPortalSSOLink(t *testing.T) {
	t.Parallel()
	idp := oidctest.New(t, "payd-portal", "client-secret")
	get := func(t *testing.T, url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	link := `<a href="/portal/oidc/login" id="sso">Sign in with SSO</a>`
	t.Run("set", func(t *testing.T) {
		each(t, func(t *testing.T, p *payd) {
			if status, body := get(t, p.root+"/portal/login"); status != 200 || !strings.Contains(body, link) {
				t.Errorf("with single sign-on: %d\n%.800s", status, body)
			}
		}, withOIDC(idp))
	})
	t.Run("not set", func(t *testing.T) {
		each(t, func(t *testing.T, p *payd) {
			if status, body := get(t, p.root+"/portal/login"); status != 200 || strings.Contains(body, "/portal/oidc/") {
				t.Errorf("without single sign-on: %d\n%.800s", status, body)
			}
			if status, _ := get(t, p.root+"/portal/oidc/login"); status != http.StatusNotFound {
				t.Errorf("GET /portal/oidc/login without single sign-on: %d, want 404", status)
			}
		})
	})
}

// TestPortalSSOProviderDown: payd starts while the identity provider is
// down (it is discovered at the first sign-in, not at start); a sign-in
// then is the sign-in page saying so (503), with the password form, and
// the next one, once the provider is back, goes through.
func TestPortalSSOProviderDown(t *testing.T) {
	t.Parallel()
	idp := oidctest.New(t, "payd-portal", "client-secret")
	each(t, func(t *testing.T, p *payd) {
		idp.SetDown(true)
		c := &http.Client{Timeout: 30 * time.Second}
		res, err := c.Get(p.root + "/portal/oidc/login")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "single sign-on is unavailable") || !strings.Contains(string(body), `name="password"`) {
			t.Errorf("a sign-in while the identity provider is down: %d\n%.800s", res.StatusCode, body)
		}
		idp.SetDown(false)
		// Not followed: the answer is the redirect to the provider.
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err = c.Get(p.root + "/portal/oidc/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || !strings.HasPrefix(loc, idp.URL+"/authorize?") ||
			!strings.Contains(loc, "code_challenge_method=S256") || !strings.Contains(loc, "nonce=") {
			t.Errorf("a sign-in once the identity provider is back: %d to %q", res.StatusCode, loc)
		}
	}, func(c *server.Config) {
		idp.SetDown(true) // down before payd starts
		withOIDC(idp)(c)
	})
}
