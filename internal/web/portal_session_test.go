package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalSignInAndOut: the sign-in form's cookie is HttpOnly and
// strict; signing in sets an HttpOnly, SameSite=Lax session cookie and
// sends the browser to /portal/ (audited); a wrong password is 401 with the
// form again; signing out ends the session.
func TestPortalSignInAndOut(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		if _, err := e.Merchants.CreateUser(context.Background(), m.MerchantID, "finance@shop.example", merchant.Finance, password); err != nil {
			t.Fatal(err)
		}
		b := newBrowser(t, srv)
		form := b.do("GET", "/portal/login", nil)
		if c := form.header.Get("Set-Cookie"); form.status != http.StatusOK || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
			t.Errorf("the sign-in form: %d, cookie %q", form.status, c)
		}
		if a := b.login("finance@shop.example", "not the password"); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "wrong") ||
			!strings.Contains(a.body, `value="finance@shop.example"`) {
			t.Errorf("a wrong password: %d\n%.300s", a.status, a.body)
		}
		a := b.login("finance@shop.example", password)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/" {
			t.Fatalf("sign in: %d to %q", a.status, a.header.Get("Location"))
		}
		var session string
		for _, c := range a.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "payd_session=") {
				session = c
			}
		}
		if !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Lax") {
			t.Errorf("the session cookie %q is not HttpOnly and SameSite=Lax", session)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/login")
		if a := b.do("GET", "/portal/", nil); a.status != http.StatusOK || !strings.Contains(a.body, "finance@shop.example (finance)") {
			t.Errorf("signed in: %d", a.status)
		}
		if a := b.post("/portal/", "/portal/logout", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/login" {
			t.Errorf("sign out: %d to %q", a.status, a.header.Get("Location"))
		}
		if a := b.do("GET", "/portal/", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/login" {
			t.Errorf("after signing out: %d to %q, want 303 to the sign-in page", a.status, a.header.Get("Location"))
		}
	})
}

// TestPortalInvitation: the invitation's link is its own credential (its
// token is the form's); it sets the password once (audited), after which
// the new user signs in and the link is no more.
func TestPortalInvitation(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		a := admin.follow(admin.post("/portal/users", "/portal/users", map[string]string{"email": "new@shop.example", "role": "viewer"}))
		link := strings.TrimPrefix(between(a.body, `id="invite-link">`, "<"), srv.URL)
		if a.status != http.StatusOK || !strings.HasPrefix(link, "/portal/invite/") {
			t.Fatalf("add a user: %d, link %q", a.status, link)
		}
		newbie := newBrowser(t, srv)
		if a := newbie.do("POST", link, url.Values{"csrf_token": {"forged"}, "password": {"a long new password"}}); a.status != http.StatusForbidden {
			t.Errorf("the invitation's form without its token: %d, want 403", a.status)
		}
		if a := newbie.post(link, link, map[string]string{"password": "short"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("a short password: %d, want 422", a.status)
		}
		if a := newbie.post(link, link, map[string]string{"password": "a long new password"}); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/login" {
			t.Fatalf("set the password: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/invite/{token}")
		if a := newbie.post(link, link, map[string]string{"password": "another new password"}); a.status != http.StatusNotFound {
			t.Errorf("the link a second time: %d, want 404", a.status)
		}
		if a := newbie.login("new@shop.example", "a long new password"); a.status != http.StatusSeeOther {
			t.Errorf("the new user's sign-in: %d", a.status)
		}
	})
}

// between is the text of s after the first from, up to the next to.
func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, to)
	return before
}
