package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalUsers: an admin adds a user by a one-time link, changes a role
// and disables a user (each audited), but never removes the last admin; a
// developer sees the list without the forms.
func TestPortalUsers(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		dev := signedIn(t, e, srv, m.MerchantID, "dev@shop.example", merchant.Developer)
		added := admin.post("/portal/users", "/portal/users", map[string]string{"email": "new@shop.example", "role": "viewer"})
		if a := admin.follow(added); a.status != http.StatusOK || !strings.Contains(a.body, "/portal/invite/") {
			t.Fatalf("add a user: %d\n%.500s", a.status, a.body)
		}
		if a := admin.follow(added); strings.Contains(a.body, "/portal/invite/") {
			t.Error("a reload of the users page shows the one-time link again")
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/users")
		ids := map[string]string{}
		members, err := e.Portal.Members(context.Background(), m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range members {
			ids[u.Email] = u.ID
		}
		if a := admin.post("/portal/users", "/portal/users/"+ids["admin@shop.example"]+"/role", map[string]string{"role": "viewer"}); a.status != http.StatusConflict {
			t.Errorf("demoting the last admin: %d, want 409", a.status)
		}
		if a := admin.post("/portal/users", "/portal/users/"+ids["dev@shop.example"]+"/role", map[string]string{"role": "finance"}); a.status != http.StatusSeeOther {
			t.Errorf("change a role: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/users/{id}/role")
		if a := dev.do("GET", "/portal/users", nil); a.status != http.StatusOK || strings.Contains(a.body, `action="/portal/users"`) ||
			strings.Contains(a.body, "/disable") || !strings.Contains(a.body, "new@shop.example") {
			t.Errorf("the users page of a non-admin: %d\n%.800s", a.status, a.body)
		}
		if a := admin.post("/portal/users", "/portal/users/"+ids["dev@shop.example"]+"/disable", nil); a.status != http.StatusSeeOther {
			t.Errorf("disable a user: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/users/{id}/disable")
		if a := dev.do("GET", "/portal/", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/login" {
			t.Errorf("a disabled user's session: %d, want 303 to the sign-in page", a.status)
		}
	})
}
