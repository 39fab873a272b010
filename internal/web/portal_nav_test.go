package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

var navLinks = regexp.MustCompile(`<a href="([^"]+)">`)

// TestPortalNavigation: the navigation shows each role only the pages its
// role may open (the route table's permissions): every link it shows opens
// (200), and the pages it leaves out answer that role 403.
func TestPortalNavigation(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "1", "AUD")["AUD"]
		srv := portalServer(t, e)
		guarded := []string{"/portal/reconciliation", "/portal/policies", "/portal/developers"}
		tests := []struct {
			role merchant.Role
			sees []string
		}{
			{merchant.Admin, []string{"/portal/reconciliation", "/portal/policies", "/portal/developers"}},
			{merchant.Finance, []string{"/portal/reconciliation"}},
			{merchant.Developer, []string{"/portal/developers"}},
			{merchant.Viewer, nil},
		}
		for _, tt := range tests {
			t.Run(string(tt.role), func(t *testing.T) {
				b := signedIn(t, e, srv, p.MerchantID, string(tt.role)+"@shop.example", tt.role)
				home := b.do("GET", "/portal/", nil)
				nav := home.body[strings.Index(home.body, "<nav>"):strings.Index(home.body, "</nav>")]
				var shown []string
				for _, m := range navLinks.FindAllStringSubmatch(nav, -1) {
					shown = append(shown, m[1])
					if a := b.do("GET", strings.ReplaceAll(m[1], "&amp;", "&"), nil); a.status != http.StatusOK {
						t.Errorf("the navigation's %s answers %d", m[1], a.status)
					}
				}
				for _, path := range guarded {
					want := strings.Contains(strings.Join(tt.sees, " "), path)
					if got := strings.Contains(nav, `href="`+path+`"`); got != want {
						t.Errorf("the navigation shows %s = %v, want %v (links %v)", path, got, want, shown)
					}
					if a := b.do("GET", path, nil); !want && a.status != http.StatusForbidden {
						t.Errorf("%s left out of the navigation answers %d, want 403", path, a.status)
					}
				}
				for _, always := range []string{"/portal/payins", "/portal/payouts", "/portal/settlements", "/portal/audit"} {
					if !strings.Contains(nav, `href="`+always+`"`) {
						t.Errorf("the navigation lacks %s (links %v)", always, shown)
					}
				}
			})
		}
	})
}

// TestPortalFavicon: every portal page's head links the favicon, an SVG of
// the portal's own assets served as image/svg+xml (no external request).
func TestPortalFavicon(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		srv := portalServer(t, e)
		b := newBrowser(t, srv)
		if a := b.do("GET", "/portal/login", nil); !strings.Contains(a.body, `<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">`) {
			t.Errorf("the sign-in page links no favicon\n%.500s", a.body)
		}
		a := b.do("GET", "/assets/favicon.svg", nil)
		if a.status != http.StatusOK || a.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(a.body, "<svg") {
			t.Errorf("GET /assets/favicon.svg: %d %s\n%.200s", a.status, a.header.Get("Content-Type"), a.body)
		}
	})
}
