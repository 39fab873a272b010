package web_test

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalApps: a developer creates an app and revokes it, each audited;
// the keys work, then do not. The form answers 303 (post/redirect/get) to
// the developers page, whose first view shows the secret key; a reload of
// that page shows it no more and creates nothing: one app was made.
func TestPortalApps(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		ctx := context.Background()
		before, err := e.Merchants.Apps(ctx, m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		dev := signedIn(t, e, portalServer(t, e), m.MerchantID, "dev@shop.example", merchant.Developer)
		created := dev.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD"})
		if created.status != http.StatusSeeOther || created.header.Get("Location") != "/portal/developers" || strings.Contains(created.body, "sk_") {
			t.Fatalf("create an app: %d to %q, want 303 to /portal/developers without the secret\n%.500s", created.status, created.header.Get("Location"), created.body)
		}
		a := dev.follow(created)
		appID, secret := between(a.body, "New app <code>", "<"), between(a.body, `id="new-secret">`, "<")
		if a.status != http.StatusOK || appID == "" || secret == "" {
			t.Fatalf("the page after creating an app: %d\n%.500s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/developers/apps")
		if again := dev.follow(created); strings.Contains(again.body, secret) || strings.Contains(again.body, `id="new-secret"`) || !strings.Contains(again.body, appID) {
			t.Error("a reload of the developers page shows the new secret again, or not the app")
		}
		if after, _ := e.Merchants.Apps(ctx, m.MerchantID); len(after) != len(before)+1 {
			t.Errorf("%d apps after one form and two views, %d before: want one more", len(after), len(before))
		}
		if _, err := e.Merchants.Authenticate(ctx, appID, secret); err != nil {
			t.Fatalf("the new app's keys: %v", err)
		}
		if a := dev.post("/portal/developers", "/portal/developers/apps/"+appID+"/revoke", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/developers" {
			t.Errorf("revoke: %d to %q", a.status, a.header.Get("Location"))
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/developers/apps/{app_id}/revoke")
		if _, err := e.Merchants.Authenticate(ctx, appID, secret); err == nil {
			t.Error("a revoked app's keys still work")
		}
	})
}

// TestPortalScopedApp: the developers page's key form takes scopes, an
// expiry and allowed addresses (CONTRACT §23): the app gets them, the
// apps list shows them, and the key is refused outside its scope; a form
// with a scope that is none is refused naming the field, and no app is
// made.
func TestPortalScopedApp(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		dev := signedIn(t, e, portalServer(t, e), m.MerchantID, "dev@shop.example", merchant.Developer)
		a := dev.follow(dev.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD", "scopes": "payouts:write, balances:read",
			"expires_at": "2099-01-31T00:00:00Z", "allowed_ips": "127.0.0.1"}))
		appID, secret := between(a.body, "New app <code>", "<"), between(a.body, `id="new-secret">`, "<")
		if a.status != http.StatusOK || appID == "" || secret == "" {
			t.Fatalf("create a scoped app: %d\n%.500s", a.status, a.body)
		}
		p, err := e.Merchants.Authenticate(context.Background(), appID, secret)
		if err != nil || !p.Access.Allows("payouts:read") || p.Access.Allows("payins:read") || p.Access.ExpiresAt.Year() != 2099 || len(p.Access.AllowedIPs) != 1 {
			t.Errorf("the app's access: %+v (%v)", p.Access, err)
		}
		page := html.UnescapeString(dev.do("GET", "/portal/developers", nil).body)
		for _, want := range []string{"balances:read, payouts:write", "2099-01-31 11:00 AEDT", "127.0.0.1/32"} {
			if !strings.Contains(page, want) {
				t.Errorf("the apps list lacks %q", want)
			}
		}
		before, _ := e.Merchants.Apps(context.Background(), m.MerchantID)
		bad := dev.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD", "scopes": "payouts:delete"})
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(bad.body), "is not a scope") {
			t.Errorf("a scope that is none: %d\n%.300s", bad.status, bad.body)
		}
		if after, _ := e.Merchants.Apps(context.Background(), m.MerchantID); len(after) != len(before) {
			t.Errorf("%d apps after a refused form, %d before", len(after), len(before))
		}
	})
}

// TestPortalSigningSecret: admins and developers see and rotate the
// webhook signing secret (audited; CONTRACT §25).
func TestPortalSigningSecret(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		admin := signedIn(t, e, srv, m.MerchantID, "admin@shop.example", merchant.Admin)
		dev := signedIn(t, e, srv, m.MerchantID, "dev@shop.example", merchant.Developer)
		ctx := context.Background()
		before, err := e.Merchants.WebhookSecret(ctx, m.MerchantID, false)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name           string
			user           *browser
			secret, rotate bool
		}{{"admin", admin, true, true}, {"developer", dev, true, true}}
		for _, tt := range tests {
			a := tt.user.do("GET", "/portal/developers", nil)
			shown, form := strings.Contains(html.UnescapeString(a.body), before), strings.Contains(a.body, "webhook-secret/rotate")
			if shown != tt.secret || form != tt.rotate {
				t.Errorf("%s: secret shown %v (want %v), rotate form %v (want %v)", tt.name, shown, tt.secret, form, tt.rotate)
			}
		}
		if a := dev.post("/portal/developers", "/portal/developers/webhook-secret/rotate", nil); a.status != http.StatusSeeOther {
			t.Errorf("rotate: %d", a.status)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/developers/webhook-secret/rotate")
		if after, _ := e.Merchants.WebhookSecret(ctx, m.MerchantID, false); after == before {
			t.Error("the signing secret did not change")
		}
	})
}

// TestPortalEmbedOriginsAndResend: a developer sets the embedding origins
// (one a line; audited) and the page shows them; a bad origin is 422 and
// changes nothing; resending an event the merchant does not have is 404.
func TestPortalEmbedOriginsAndResend(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "NZD")["NZD"]
		dev := signedIn(t, e, portalServer(t, e), m.MerchantID, "dev@shop.example", merchant.Developer)
		if a := dev.post("/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://shop.example/path"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("an origin with a path: %d, want 422", a.status)
		}
		a := dev.post("/portal/developers", "/portal/developers/embed-origins", map[string]string{"embed_origins": "https://A.example\r\nhttps://b.example:8443\r\n"})
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/developers" {
			t.Fatalf("save origins: %d %.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/developers/embed-origins")
		if body := dev.do("GET", "/portal/developers", nil).body; !strings.Contains(body, "https://a.example\nhttps://b.example:8443</textarea>") {
			t.Errorf("the form does not show the stored origins")
		}
		if a := dev.post("/portal/developers", "/portal/developers/deliveries/evt_none/resend", nil); a.status != http.StatusNotFound {
			t.Errorf("resend an unknown event: %d, want 404", a.status)
		}
	})
}

// TestPortalDeliveriesUnknownStatus: a delivery status the page's links do
// not offer is a 422 naming it, not every delivery.
func TestPortalDeliveriesUnknownStatus(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "1", "AUD")["AUD"]
		dev := signedIn(t, e, portalServer(t, e), p.MerchantID, "dev@shop.example", merchant.Developer)
		a := dev.do("GET", "/portal/developers?status=delivred", nil)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "there is no delivery status &#34;delivred&#34;") {
			t.Errorf("an unknown delivery status: %d\n%.1500s", a.status, a.body)
		}
	})
}
