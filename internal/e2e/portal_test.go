package e2e

import (
	"context"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/merchant"
)

// portalUser is a browser-like client of the portal: cookies kept,
// redirects not followed (their 303s are asserted).
type portalUser struct {
	t     *testing.T
	p     *payd
	c     *http.Client
	email string
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// portalAnswer is one answer of the portal.
type portalAnswer struct {
	status int
	header http.Header
	body   string
}

func (u *portalUser) do(method, path string, form url.Values) portalAnswer {
	u.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u.p.root+path, body)
	if err != nil {
		u.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := u.c.Do(req)
	if err != nil {
		u.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return portalAnswer{status: res.StatusCode, header: res.Header, body: string(raw)}
}

// csrf reads the token of the forms on path.
func (u *portalUser) csrf(path string) string {
	u.t.Helper()
	a := u.do("GET", path, nil)
	m := csrfInput.FindStringSubmatch(a.body)
	if m == nil {
		u.t.Fatalf("GET %s: %d, no csrf_token in\n%.500s", path, a.status, a.body)
	}
	return m[1]
}

// post sends a form with the token of the page the form is on.
func (u *portalUser) post(page, action string, fields map[string]string) portalAnswer {
	u.t.Helper()
	form := url.Values{"csrf_token": {u.csrf(page)}}
	for k, v := range fields {
		form.Set(k, v)
	}
	return u.do("POST", action, form)
}

// follow is the page a form's 303 sends the user to (post/redirect/get).
func (u *portalUser) follow(a portalAnswer) portalAnswer {
	u.t.Helper()
	if a.status != http.StatusSeeOther {
		u.t.Fatalf("%d, want 303 to the page that shows what the form did\n%.500s", a.status, a.body)
	}
	return u.do("GET", a.header.Get("Location"), nil)
}

func (u *portalUser) login(password, code string) portalAnswer {
	u.t.Helper()
	return u.post("/portal/login", "/portal/login", map[string]string{"email": u.email, "password": password, "totp_code": code})
}

// newPortalUser adds a user with role to the merchant and signs them in.
func (p *payd) newPortalUser(t *testing.T, merchantID, email string, role merchant.Role) *portalUser {
	t.Helper()
	if _, err := p.srv.Merchants.CreateUser(context.Background(), merchantID, email, role, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	u := p.portalClient(t, email)
	if a := u.login("correct horse battery", ""); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/" {
		t.Fatalf("sign in as %s: %d %s", email, a.status, a.body)
	}
	return u
}

func (p *payd) portalClient(t *testing.T, email string) *portalUser {
	jar, _ := cookiejar.New(nil)
	return &portalUser{t: t, p: p, email: email, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// TestPortalSignInAndPages: sign-in sets a strict session cookie, every
// page answers with the security headers, and signing out ends the session.
func TestPortalSignInAndPages(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD", "JPY")["AUD"]
		p.fund(m, "250")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
		settled := str(p.post("/v2/settlements", m, map[string]any{"amount": "10"}).JSON(t), "uuid")
		admin := p.newPortalUser(t, m.MerchantID, "admin@shop.example", merchant.Admin)
		if page := admin.do("GET", "/portal/settlements?currency=AUD", nil); !strings.Contains(page.body, settled) {
			t.Errorf("the settlements page does not list %s", settled)
		}
		var session *http.Cookie
		for _, c := range admin.c.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(p.root, "http://"), Path: "/portal/"}) {
			if c.Name == "payd_session" {
				session = c
			}
		}
		if session == nil {
			t.Fatal("no payd_session cookie after sign-in")
		}
		home := admin.do("GET", "/portal/", nil)
		if home.status != 200 || !strings.Contains(home.body, "239.00") || !strings.Contains(home.body, "JPY") {
			t.Errorf("balances page: %d\n%.800s", home.status, home.body)
		}
		for _, h := range []struct{ name, want string }{
			{"Content-Security-Policy", "frame-ancestors 'none'"}, {"Cache-Control", "no-store"}, {"Referrer-Policy", "same-origin"}, {"X-Frame-Options", "DENY"},
		} {
			if !strings.Contains(home.header.Get(h.name), h.want) {
				t.Errorf("%s = %q, want %q", h.name, home.header.Get(h.name), h.want)
			}
		}
		for _, path := range []string{"/portal/payins", "/portal/payins?currency=JPY", "/portal/payouts", "/portal/payouts?status=held", "/portal/payouts/new",
			"/portal/settlements", "/portal/reports", "/portal/developers", "/portal/users", "/portal/audit", "/portal/account/totp"} {
			if a := admin.do("GET", path, nil); a.status != 200 || !strings.Contains(a.body, "csrf_token") {
				t.Errorf("GET %s: %d", path, a.status)
			}
		}
		raw := admin.do("GET", "/portal/login", nil)
		if !strings.Contains(raw.header.Get("Set-Cookie"), "HttpOnly") {
			t.Errorf("the sign-in form's cookie is not HttpOnly: %q", raw.header.Get("Set-Cookie"))
		}
		if a := admin.post("/portal/", "/portal/logout", nil); a.status != http.StatusSeeOther {
			t.Errorf("sign out: %d", a.status)
		}
		if a := admin.do("GET", "/portal/", nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/portal/login" {
			t.Errorf("after sign-out: %d to %q, want 303 to the sign-in page", a.status, a.header.Get("Location"))
		}
		anon := p.portalClient(t, "nobody@example.com")
		if a := anon.do("GET", "/portal/payouts", nil); a.status != http.StatusSeeOther {
			t.Errorf("signed out: %d, want 303", a.status)
		}
	})
}

// TestPortalRefusesForgedForms: a POST without the session's csrf_token, or
// with another, is 403 and changes nothing.
func TestPortalRefusesForgedForms(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.requireApprovals(m)
		p.fund(m, "100")
		po := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), "uuid")
		finance := p.newPortalUser(t, m.MerchantID, "finance@shop.example", merchant.Finance)
		for name, form := range map[string]url.Values{"no token": {}, "wrong token": {"csrf_token": {"forged"}}} {
			if a := finance.do("POST", "/portal/payouts/"+po+"/approve", form); a.status != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", name, a.status)
			}
		}
		if a := finance.do("POST", "/portal/users", url.Values{"email": {"x@example.com"}, "role": {"admin"}}); a.status != http.StatusForbidden {
			t.Errorf("forged user add: %d", a.status)
		}
		if got := str(p.get("/v2/payouts/detail?uuid="+po, m).JSON(t), "status"); got != "held" {
			t.Errorf("payout after forged approvals: %s, want held", got)
		}
		anon := p.portalClient(t, "finance@shop.example")
		if a := anon.do("POST", "/portal/login", url.Values{"email": {"finance@shop.example"}, "password": {"correct horse battery"}}); a.status != http.StatusForbidden {
			t.Errorf("sign-in without the form's token: %d, want 403", a.status)
		}
	})
}

// TestPortalLockout: ten wrong passwords lock the account for 15 minutes,
// the right password included; an unknown email is answered alike.
func TestPortalLockout(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "victim@shop.example", merchant.Finance, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		for _, email := range []string{"victim@shop.example", "ghost@shop.example"} {
			u := p.portalClient(t, email)
			var statuses []int
			for range 10 {
				statuses = append(statuses, u.login("wrong password!", "").status)
			}
			want := []int{401, 401, 401, 401, 401, 401, 401, 401, 401, 429}
			if !slicesEqual(statuses, want) {
				t.Errorf("%s: ten wrong passwords answered %v, want %v", email, statuses, want)
			}
			if a := u.login("correct horse battery", ""); a.status != http.StatusTooManyRequests {
				t.Errorf("%s: the right password while locked: %d, want 429", email, a.status)
			}
		}
	})
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPortalSessionExpiry: a session idle for 30 minutes on the merchant's
// clock has ended.
func TestPortalSessionExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		u := p.newPortalUser(t, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		p.advance(m, 29*60)
		if a := u.do("GET", "/portal/", nil); a.status != 200 {
			t.Errorf("after 29 idle minutes: %d, want 200", a.status)
		}
		p.advance(m, 30*60)
		if a := u.do("GET", "/portal/", nil); a.status != http.StatusSeeOther {
			t.Errorf("after 30 idle minutes: %d, want 303 to sign in", a.status)
		}
	})
}

// TestPortalDecisions: a finance user creates a payout in the portal and
// may not decide it; a viewer may not either; two checkers deciding at once
// get one 303 and one 409; a rejection returns the funds; the audit log
// holds every step.
func TestPortalDecisions(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.requireApprovals(m)
		p.fund(m, "500")
		maker := p.newPortalUser(t, m.MerchantID, "maker@shop.example", merchant.Finance)
		checkers := []*portalUser{p.newPortalUser(t, m.MerchantID, "checker@shop.example", merchant.Finance),
			p.newPortalUser(t, m.MerchantID, "boss@shop.example", merchant.Admin)}
		viewer := p.newPortalUser(t, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		create := func() string {
			a := maker.post("/portal/payouts/new", "/portal/payouts", map[string]string{"currency": "AUD", "payout_method_name": "au_bank_aud",
				"description": "supplier run", "amount": "100", "param.bsb": "062000", "param.account_number": "12345678", "param.account_name": "Jane Doe"})
			if a.status != http.StatusSeeOther {
				t.Fatalf("create a payout in the portal: %d\n%.600s", a.status, a.body)
			}
			return strings.TrimPrefix(a.header.Get("Location"), "/portal/payouts/")
		}
		po := create()
		if got := str(p.get("/v2/payouts/detail?uuid="+po, m).JSON(t), "status"); got != "held" {
			t.Fatalf("the portal payout is %s, want held", got)
		}
		page := "/portal/payouts/" + po
		if a := maker.post(page, page+"/approve", nil); a.status != http.StatusForbidden {
			t.Errorf("the maker's approval: %d, want 403", a.status)
		}
		if a := viewer.do("GET", page, nil); strings.Contains(a.body, `id="approve"`) {
			t.Error("a viewer sees the decision forms")
		}
		if a := viewer.post(page, page+"/approve", nil); a.status != http.StatusForbidden {
			t.Errorf("a viewer's approval: %d, want 403", a.status)
		}
		tokens := []string{checkers[0].csrf(page), checkers[1].csrf(page)}
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, c := range checkers {
			wg.Go(func() { statuses[i] = c.do("POST", page+"/approve", url.Values{"csrf_token": {tokens[i]}}).status })
		}
		wg.Wait()
		if !(statuses[0] == 303 && statuses[1] == 409) && !(statuses[0] == 409 && statuses[1] == 303) {
			t.Errorf("two approvals at once: %v, want one 303 and one 409", statuses)
		}
		if a := checkers[0].post(page, page+"/reject", map[string]string{"reason": "too late"}); a.status != http.StatusConflict || !strings.Contains(a.body, "already approved") {
			t.Errorf("a decision on a decided payout: %d\n%.300s", a.status, a.body)
		}
		if got := str(p.get("/v2/payouts/detail?uuid="+po, m).JSON(t), "status"); got != "processing" {
			t.Errorf("approved payout is %s, want processing", got)
		}
		rejected := create()
		page = "/portal/payouts/" + rejected
		if a := checkers[0].post(page, page+"/reject", map[string]string{"reason": "no"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("a reason under 5 characters: %d, want 422", a.status)
		}
		if a := checkers[0].post(page, page+"/reject", map[string]string{"reason": "not this supplier"}); a.status != http.StatusSeeOther {
			t.Errorf("reject: %d", a.status)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 50000-10050 {
			t.Errorf("available after one approval and one rejection = %s, want 399.50", b.Available)
		}
		audit := checkers[1].do("GET", "/portal/audit", nil).body
		for _, action := range []string{"payout_created", "payout_approved", "payout_rejected", "login"} {
			if !strings.Contains(audit, action) {
				t.Errorf("the audit log lacks %s", action)
			}
		}
	})
}

// TestPortalUsersAndKeys: an admin adds a user by a one-time link, changes
// roles but never removes the last admin; keys are created (the secret
// shown once) and revoked; every step is audited.
func TestPortalUsersAndKeys(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		admin := p.newPortalUser(t, m.MerchantID, "admin@shop.example", merchant.Admin)
		a := admin.follow(admin.post("/portal/users", "/portal/users", map[string]string{"email": "new@shop.example", "role": "developer"}))
		link := regexp.MustCompile(`id="invite-link">([^<]+)<`).FindStringSubmatch(a.body)
		if a.status != 200 || link == nil {
			t.Fatalf("add user: %d\n%.500s", a.status, a.body)
		}
		invite := strings.TrimPrefix(link[1], p.root)
		newbie := p.portalClient(t, "new@shop.example")
		if a := newbie.post(invite, invite, map[string]string{"password": "a long new password"}); a.status != http.StatusSeeOther {
			t.Fatalf("set password: %d %.300s", a.status, a.body)
		}
		if a := newbie.post(invite, invite, map[string]string{"password": "another new password"}); a.status == http.StatusSeeOther {
			t.Error("the one-time link worked twice")
		}
		if a := newbie.login("a long new password", ""); a.status != http.StatusSeeOther {
			t.Fatalf("the invited user's sign-in: %d", a.status)
		}
		dev := newbie.follow(newbie.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD"}))
		secret := regexp.MustCompile(`id="new-secret">([^<]+)<`).FindStringSubmatch(dev.body)
		if dev.status != 200 || secret == nil {
			t.Fatalf("create an app: %d", dev.status)
		}
		if again := newbie.do("GET", "/portal/developers", nil); strings.Contains(again.body, secret[1]) {
			t.Error("the new secret is shown twice")
		}
		appID := regexp.MustCompile(`New app <code>([^<]+)</code>`).FindStringSubmatch(dev.body)
		if appID == nil {
			t.Fatal("the new app's id is not shown")
		}
		if a := p.get("/v2/balances", creds{AppID: appID[1], SecretKey: secret[1]}); a.Status != 200 {
			t.Fatalf("the new app's keys: %d", a.Status)
		}
		if a := newbie.post("/portal/developers", "/portal/developers/apps/"+appID[1]+"/revoke", nil); a.status != http.StatusSeeOther {
			t.Errorf("revoke the app: %d %.300s", a.status, a.body)
		}
		if a := p.get("/v2/balances", creds{AppID: appID[1], SecretKey: secret[1]}); a.Status != 401 {
			t.Errorf("a revoked app's keys: %d, want 401", a.Status)
		}
		before, _ := p.srv.Merchants.WebhookSecret(context.Background(), m.MerchantID, false)
		if a := admin.post("/portal/developers", "/portal/developers/webhook-secret/rotate", nil); a.status != http.StatusSeeOther {
			t.Errorf("rotate the signing secret: %d", a.status)
		}
		if after, _ := p.srv.Merchants.WebhookSecret(context.Background(), m.MerchantID, false); after == before {
			t.Error("the signing secret did not change")
		}
		if a := newbie.post("/portal/users", "/portal/users", map[string]string{"email": "x@shop.example", "role": "admin"}); a.status != http.StatusForbidden {
			t.Errorf("a developer adding a user: %d, want 403", a.status)
		}
		members, _ := p.srv.Portal.Members(context.Background(), m.MerchantID)
		var adminID string
		for _, u := range members {
			if u.Email == "admin@shop.example" {
				adminID = u.ID
			}
		}
		if a := admin.post("/portal/users", "/portal/users/"+adminID+"/role", map[string]string{"role": "viewer"}); a.status != http.StatusConflict {
			t.Errorf("demoting the last admin: %d, want 409", a.status)
		}
		recv := newHookReceiver(t, false)
		ping := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL})
		want(t, ping, 201)
		event := str(ping.JSON(t), "id")
		waitUntil(t, "a failed attempt logged", 10*time.Second, func() bool {
			return strings.Contains(admin.do("GET", "/portal/developers?status=pending", nil).body, "503")
		})
		recv.healthy.Store(true)
		if a := admin.post("/portal/developers", "/portal/developers/deliveries/"+event+"/resend", nil); a.status != http.StatusSeeOther {
			t.Errorf("resend: %d", a.status)
		}
		waitUntil(t, "the resent event delivered", 10*time.Second, func() bool { return recv.count(event) == 1 })
		var newbieID string
		for _, u := range members {
			if u.Email == "new@shop.example" {
				newbieID = u.ID
			}
		}
		if a := admin.post("/portal/users", "/portal/users/"+newbieID+"/role", map[string]string{"role": "viewer"}); a.status != http.StatusSeeOther {
			t.Errorf("change a role: %d %.300s", a.status, a.body)
		}
		if a := admin.post("/portal/users", "/portal/users/"+newbieID+"/disable", nil); a.status != http.StatusSeeOther {
			t.Errorf("disable a user: %d %.300s", a.status, a.body)
		}
		if a := p.portalClient(t, "admin@shop.example").login("not the password", ""); a.status == http.StatusSeeOther {
			t.Error("a wrong password signed in")
		}
		audit := admin.do("GET", "/portal/audit", nil).body
		for _, action := range []string{"user_added", "invite_accepted", "app_created", "app_revoked", "webhook_secret_rotated", "role_changed",
			"user_disabled", "login", "login_failed", "webhook_resent"} {
			if !strings.Contains(audit, action) {
				t.Errorf("the audit log lacks %s", action)
			}
		}
	})
}

// TestPortalTenancy: a portal user never reaches another merchant's
// payouts, transfers, disputes, apps or users, by any id.
func TestPortalTenancy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD")["AUD"]
		p.requireApprovals(a)
		p.fund(a, "100")
		po := str(p.createPayout(a, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), "uuid")
		aUser, err := p.srv.Merchants.CreateUser(context.Background(), a.MerchantID, "a-admin@shop.example", merchant.Admin, "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		recv := newHookReceiver(t, true)
		ping := p.post("/v2/webhooks/test", a, map[string]any{"endpoint_url": recv.URL})
		want(t, ping, 201)
		aEvent := str(ping.JSON(t), "id")
		// A's held external transfer (approvals on hold it) and A's card dispute.
		tre, err := p.srv.Merchants.OpenTreasury(context.Background(), a.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		in := p.post("/v2/transfers", a, map[string]any{"amount": "20", "description": "to treasury", "treasury_account_id": tre.PublicID})
		want(t, in, 201)
		want(t, p.post("/v2/transfers/simulate", a, map[string]any{"uuid": str(in.JSON(t), "uuid"), "status": "completed"}), 200)
		dispute := str(p.openDispute(t, a, map[string]any{}), "uuid")
		b := p.merchant("AUD")["AUD"]
		bAdmin := p.newPortalUser(t, b.MerchantID, "b-admin@shop.example", merchant.Admin)
		for path, status := range map[string]int{"/portal/payouts/" + po: 404, "/portal/transfers/" + str(in.JSON(t), "uuid"): 404,
			"/portal/disputes/" + dispute: 404, "/portal/disputes/" + dispute + "/files/none": 404} {
			if got := bAdmin.do("GET", path, nil); got.status != status {
				t.Errorf("GET %s: %d, want %d", path, got.status, status)
			}
		}
		for _, action := range []struct{ path, field, value string }{
			{"/portal/payouts/" + po + "/approve", "", ""},
			{"/portal/payouts/" + po + "/reject", "reason", "not mine at all"},
			{"/portal/developers/apps/" + a.AppID + "/revoke", "", ""},
			{"/portal/users/" + aUser.UserID + "/role", "role", "viewer"},
			{"/portal/users/" + aUser.UserID + "/disable", "", ""},
			{"/portal/developers/deliveries/" + aEvent + "/resend", "", ""},
			{"/portal/transfers/" + str(in.JSON(t), "uuid") + "/approve", "", ""},
			{"/portal/disputes/" + dispute + "/accept", "", ""},
			{"/portal/disputes/" + dispute + "/evidence", "uncategorized_text", "not mine"},
		} {
			fields := map[string]string{}
			if action.field != "" {
				fields[action.field] = action.value
			}
			if got := bAdmin.post("/portal/", action.path, fields); got.status != http.StatusNotFound {
				t.Errorf("POST %s: %d, want 404", action.path, got.status)
			}
		}
		if got := str(p.get("/v2/payouts/detail?uuid="+po, a).JSON(t), "status"); got != "held" {
			t.Errorf("A's payout is %s after B's tries", got)
		}
		want(t, p.get("/v2/balances", a), 200) // A's app still works
		if list := bAdmin.do("GET", "/portal/payouts", nil).body; strings.Contains(list, po) {
			t.Error("B's payouts page lists A's payout")
		}
		if list := bAdmin.do("GET", "/portal/transfers", nil).body; strings.Contains(list, str(in.JSON(t), "uuid")) {
			t.Error("B's transfers page lists A's transfer")
		}
		if list := bAdmin.do("GET", "/portal/disputes", nil).body; strings.Contains(list, dispute) {
			t.Error("B's disputes page lists A's dispute")
		}
		if got := str(p.get("/v2/disputes/detail?uuid="+dispute, a).JSON(t), "status"); got != "needs_response" {
			t.Errorf("A's dispute is %s after B's tries", got)
		}
	})
}

// TestAuditLogIsAppendOnly: nothing in payd's code updates or deletes audit
// rows.
func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	forbidden := regexp.MustCompile(`(?i)(update|delete\s+from)\s+audit_log`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".sql")) || strings.HasSuffix(path, "_test.go") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if forbidden.Match(raw) {
			t.Errorf("%s changes audit_log rows", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPortalTOTPQRCode: the enrolment page's QR code is a readable image of
// the otpauth URI of the key shown beside it.
func TestPortalTOTPQRCode(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		u := p.newPortalUser(t, m.MerchantID, "totp@shop.example", merchant.Finance)
		page := u.do("GET", "/portal/account/totp", nil)
		img := regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`).FindStringSubmatch(page.body)
		secret := regexp.MustCompile(`id="totp-secret">([^<]+)<`).FindStringSubmatch(page.body)
		if page.status != 200 || img == nil || secret == nil {
			t.Fatalf("GET /portal/account/totp: %d, no QR image or key in\n%.800s", page.status, page.body)
		}
		raw, err := base64.StdEncoding.DecodeString(html.UnescapeString(img[1]))
		if err != nil {
			t.Fatalf("the QR image is not base64: %v", err)
		}
		text := decodeQRImage(t, raw)
		uri, err := url.Parse(text)
		if err != nil || uri.Scheme != "otpauth" || uri.Host != "totp" || uri.Query().Get("secret") != secret[1] {
			t.Errorf("the QR code reads %q, want an otpauth://totp URI with secret %s", text, secret[1])
		}
	})
}
