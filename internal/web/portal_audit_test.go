package web_test

import (
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalAuditLog: every signed-in user reads the log, newest first,
// with who, what and from where, a page at a time; it lists only the
// merchant's own entries.
func TestPortalAuditLog(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		other := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		signedIn(t, e, srv, other.MerchantID, "elsewhere@shop.example", merchant.Admin)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		if a := newBrowser(t, srv).login("admin@shop.example", "not the password"); a.status != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d", a.status)
		}
		viewer := signedIn(t, e, srv, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		for range 25 {
			admin.post("/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://a.example"})
		}
		first := viewer.do("GET", "/portal/audit", nil)
		if first.status != http.StatusOK || !strings.Contains(first.body, "Page 1 of 2") || !strings.Contains(first.body, "embed_origins_updated") ||
			strings.Contains(first.body, "login_failed") || strings.Contains(first.body, "elsewhere@shop.example") {
			t.Errorf("the first page, newest first: %d\n%.600s", first.status, first.body)
		}
		second := viewer.do("GET", "/portal/audit?page=2", nil)
		for _, want := range []string{"login_failed", "admin@shop.example", "127.0.0.1", "Page 2 of 2"} {
			if !strings.Contains(second.body, want) {
				t.Errorf("the second page lacks %q", want)
			}
		}
	})
}
