package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pquerna/otp/totp"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalTOTP: the second-factor page shows a new key (and its QR code)
// each time it is shown, pending until a code of it confirms it; a
// wrong code leaves it off (422), the right one turns it on (audited); it
// turns off with a current code (audited), and signing in then needs none.
func TestPortalTOTP(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		srv := portalServer(t, e)
		u := signedIn(t, e, srv, m.MerchantID, "totp@shop.example", merchant.Finance)
		page := u.do("GET", "/portal/account/totp", nil)
		secret := between(page.body, `id="totp-secret">`, "<")
		if page.status != http.StatusOK || secret == "" || !strings.Contains(page.body, `src="data:image/png;base64,`) {
			t.Fatalf("GET /portal/account/totp: %d\n%.800s", page.status, page.body)
		}
		if a := u.post("/portal/", "/portal/account/totp", map[string]string{"code": "000000"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("a wrong code: %d, want 422", a.status)
		}
		code, err := totp.GenerateCode(secret, e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if a := u.post("/portal/", "/portal/account/totp", map[string]string{"code": code}); a.status != http.StatusSeeOther {
			t.Fatalf("turn on: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/account/totp")
		if a := u.do("GET", "/portal/account/totp", nil); !strings.Contains(a.body, `id="totp-on"`) {
			t.Errorf("after turning it on the page says\n%.500s", a.body)
		}
		if a := u.post("/portal/", "/portal/account/totp/disable", map[string]string{"code": code}); a.status != http.StatusSeeOther {
			t.Errorf("turn off: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, m.MerchantID, "POST", "/portal/account/totp/disable")
		if a := newBrowser(t, srv).login("totp@shop.example", password); a.status != http.StatusSeeOther {
			t.Errorf("sign in after turning it off: %d", a.status)
		}
	})
}
