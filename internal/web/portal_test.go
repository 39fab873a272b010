package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server/servertest"
	"payd/internal/web"
)

// The portal's tests run its pages over HTTP (httptest) on the services
// `payd serve` wires, on every test database (servertest.Each). This file
// holds what the route table does for every route; each page group's file
// has its own test beside it.

const password = "correct horse battery"

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// portalServer serves e's pages.
func portalServer(t *testing.T, e *servertest.Env) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(e.Pages)
	t.Cleanup(srv.Close)
	return srv
}

// browser is a client of the portal that keeps its cookies and does not
// follow redirects (their 303s are asserted).
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

// answer is one answer of the portal.
type answer struct {
	status int
	header http.Header
	body   string
}

func newBrowser(t *testing.T, srv *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: srv.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: string(raw)}
}

// csrf is the token of the forms on page.
func (b *browser) csrf(page string) string {
	b.t.Helper()
	a := b.do("GET", page, nil)
	m := csrfInput.FindStringSubmatch(a.body)
	if m == nil {
		b.t.Fatalf("GET %s: %d, no csrf_token in\n%.500s", page, a.status, a.body)
	}
	return m[1]
}

// post sends action the form of page, with page's token and fields.
func (b *browser) post(page, action string, fields map[string]string) answer {
	b.t.Helper()
	form := url.Values{"csrf_token": {b.csrf(page)}}
	for k, v := range fields {
		form.Set(k, v)
	}
	return b.do("POST", action, form)
}

// follow is the page a form's 303 sends the browser to (post/redirect/get),
// or fails the test when a is not a 303.
func (b *browser) follow(a answer) answer {
	b.t.Helper()
	to := a.header.Get("Location")
	if a.status != http.StatusSeeOther || !strings.HasPrefix(to, "/portal/") {
		b.t.Fatalf("%d to %q, want 303 to a portal page\n%.500s", a.status, to, a.body)
	}
	return b.do("GET", to, nil)
}

func (b *browser) login(email, pw string) answer {
	b.t.Helper()
	return b.post("/portal/login", "/portal/login", map[string]string{"email": email, "password": pw})
}

// signedIn adds a user with role to the merchant and signs them in.
func signedIn(t *testing.T, e *servertest.Env, srv *httptest.Server, merchantID, email string, role merchant.Role) *browser {
	t.Helper()
	if _, err := e.Merchants.CreateUser(context.Background(), merchantID, email, role, password); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, srv)
	if a := b.login(email, password); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/" {
		t.Fatalf("sign in as %s: %d %.300s", email, a.status, a.body)
	}
	return b
}

// auditActions are the actions of the merchant's audit log, newest first.
func auditActions(t *testing.T, e *servertest.Env, merchantID string) []portal.AuditAction {
	t.Helper()
	entries, _, err := e.Portal.AuditPage(context.Background(), merchantID, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []portal.AuditAction
	for _, en := range entries {
		out = append(out, en.Action)
	}
	return out
}

// routeAudit is what the route table says a success of method path appends
// to the audit log.
func routeAudit(t *testing.T, method, path string) portal.AuditAction {
	t.Helper()
	for _, rt := range web.PortalRoutes() {
		if rt.Method == method && rt.Path == path {
			return rt.Audit
		}
	}
	t.Fatalf("no portal route %s %s", method, path)
	return ""
}

// wantAudited fails unless the newest entry of the merchant's audit log is
// the one the route table declares for method path.
func wantAudited(t *testing.T, e *servertest.Env, merchantID, method, path string) {
	t.Helper()
	want := routeAudit(t, method, path)
	if got := auditActions(t, e, merchantID); want == "" || len(got) == 0 || got[0] != want {
		t.Errorf("%s %s: the audit log is %v, want %q on top", method, path, got, want)
	}
}

// concrete fills a route's wildcards with ids no record has.
func concrete(path string) string {
	return regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(strings.TrimSuffix(path, "{$}"), "none")
}

var allRoles = []merchant.Role{merchant.Admin, merchant.Finance, merchant.Developer, merchant.Viewer}

// TestPortalRoutesEnforcePermissions: every route that declares a
// permission answers 403 to each role it is not given, and to no role it
// is given (they get the route's own answer: a page, a 303, a 404 for an
// unknown id, a 422 for an empty form).
func TestPortalRoutesEnforcePermissions(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		users := map[merchant.Role]*browser{}
		for _, role := range allRoles {
			users[role] = signedIn(t, e, srv, m.MerchantID, string(role)+"@shop.example", role)
		}
		for _, rt := range web.PortalRoutes() {
			if rt.May == "" {
				continue
			}
			for _, role := range allRoles {
				t.Run(rt.Method+" "+rt.Path+" as "+string(role), func(t *testing.T) {
					b := users[role]
					var a answer
					switch rt.Method {
					case "GET":
						a = b.do("GET", concrete(rt.Path), nil)
					default:
						a = b.post("/portal/", concrete(rt.Path), nil)
					}
					given := slices.Contains(portal.Roles(rt.May), role)
					if got := a.status == http.StatusForbidden; got == given {
						t.Errorf("%s: %d (given %v)\n%.300s", role, a.status, given, a.body)
					}
				})
			}
		}
	})
}

// TestPortalRefusesForgedForms: a POST to any route without the token its
// forms carry, or with another, is 403 and changes nothing: the audit log
// stays as it was.
func TestPortalRefusesForgedForms(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		before := auditActions(t, e, m.MerchantID)
		for _, rt := range web.PortalRoutes() {
			if rt.Method != "POST" {
				continue
			}
			for name, form := range map[string]url.Values{"no token": {"email": {"admin@shop.example"}}, "another token": {"csrf_token": {"forged"}}} {
				if a := admin.do("POST", concrete(rt.Path), form); a.status != http.StatusForbidden || !strings.Contains(a.body, "refused") {
					t.Errorf("POST %s, %s: %d\n%.300s", rt.Path, name, a.status, a.body)
				}
			}
		}
		if a := admin.do("GET", "/portal/", nil); a.status != http.StatusOK {
			t.Errorf("the session after the forged forms: %d, want 200", a.status)
		}
		if got := auditActions(t, e, m.MerchantID); !slices.Equal(got, before) {
			t.Errorf("forged forms wrote the audit log: %v, was %v", got, before)
		}
	})
}

// TestPortalRefusesControlCharacters: a form value with a control character
// is 422 naming its field, before the route runs (CONTRACT §24); the
// portal's textareas of one entry a line take line breaks.
func TestPortalRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		tests := []struct {
			name, page, action string
			fields             map[string]string
			want               int
			wantBody           string
		}{
			{"a NUL in a payout's name", "/portal/payouts/new", "/portal/payouts", map[string]string{"first_name": "Jane\x00"}, 422, "first_name"},
			{"an escape in a user's email", "/portal/users", "/portal/users", map[string]string{"email": "a\x1b@shop.example", "role": "viewer"}, 422, "email"},
			{"line breaks in the embedding origins", "/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://a.example\r\nhttps://b.example"}, 303, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := admin.post(tt.page, tt.action, tt.fields)
				if a.status != tt.want || !strings.Contains(a.body, tt.wantBody) {
					t.Errorf("%d, want %d naming %q\n%.300s", a.status, tt.want, tt.wantBody, a.body)
				}
			})
		}
		anon := newBrowser(t, srv)
		if a := anon.login("x\x00@shop.example", password); a.status != 422 || !strings.Contains(a.body, `name="password"`) {
			t.Errorf("a NUL in the sign-in email: %d, want 422 with the form again\n%.300s", a.status, a.body)
		}
	})
}

// TestPortalPagesAndHeaders: every page answers with the portal's security
// headers, signed out to the sign-in page, an unknown path or a wrong
// method with the not-found page.
func TestPortalPagesAndHeaders(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		anon := newBrowser(t, srv)
		for _, rt := range web.PortalRoutes() {
			if rt.Method != "GET" || strings.Contains(rt.Path, "{") && !strings.HasSuffix(rt.Path, "{$}") {
				continue
			}
			path := concrete(rt.Path)
			t.Run(path, func(t *testing.T) {
				a := admin.do("GET", path, nil)
				if a.status != http.StatusOK || a.header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(a.body, "</html>") {
					t.Errorf("GET %s: %d %q", path, a.status, a.header.Get("Content-Type"))
				}
				for name, want := range map[string]string{"Content-Security-Policy": "frame-ancestors 'none'", "Cache-Control": "no-store",
					"Referrer-Policy": "same-origin", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
					if got := a.header.Get(name); !strings.Contains(got, want) {
						t.Errorf("GET %s: %s = %q, want %q", path, name, got, want)
					}
				}
				out := anon.do("GET", path, nil)
				if wantLogin := !rt.Public; wantLogin != (out.status == http.StatusSeeOther && out.header.Get("Location") == "/portal/login") {
					t.Errorf("GET %s signed out: %d to %q", path, out.status, out.header.Get("Location"))
				}
			})
		}
		for _, tt := range []struct{ method, path string }{{"GET", "/portal/nothing"}, {"GET", "/portal/logout"}, {"PUT", "/portal/payouts"}} {
			if a := admin.do(tt.method, tt.path, nil); a.status != http.StatusNotFound || a.header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s %s: %d, want the 404 page", tt.method, tt.path, a.status)
			}
		}
	})
}
