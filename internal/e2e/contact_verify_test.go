package e2e

import (
	"regexp"
	"strings"
	"testing"

	"payd/internal/server"
)

// verifyLink finds the verification link in a message body.
var verifyLink = regexp.MustCompile(`(https://pay\.example\.test)?/verify/([A-Za-z0-9_-]{43})`)

// contactOutbox reads the sandbox outbox of one contact, newest first.
func (p *payd) contactOutbox(as creds, email string) []map[string]any {
	p.t.Helper()
	var page struct {
		Records []map[string]any `json:"records"`
	}
	r := p.get("/v2/contacts/verification_messages?email="+queryEscape(email), as)
	want(p.t, r, 200)
	r.Decode(p.t, &page)
	return page.Records
}

// verifyPage opens a verification page (method GET or POST).
func (p *payd) verifyPage(method, token string) response {
	p.t.Helper()
	r := req{method: method, path: "/verify/" + token, root: true}
	if method == "POST" {
		r.body, r.header = "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	}
	return p.do(r)
}

// wantPage checks an HTML answer of the verification pages, with the
// headers that keep it out of frames and off other origins.
func wantPage(t *testing.T, r response, status int, contains string) {
	t.Helper()
	want(t, r, status)
	h := r.Header
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("Content-Security-Policy") != "default-src 'self'" ||
		h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers %v: want text/html with CSP default-src 'self' and X-Frame-Options DENY", h)
	}
	if !strings.Contains(string(r.Body), contains) {
		t.Errorf("page does not contain %q: %s", contains, r.Body)
	}
}

const missingPage = "This link is not valid"

// TestVerificationLinkWorksOnce: resend_verification sends a link (to the
// email, or by SMS to the phone) under the public URL; the page names the
// contact; a newer link makes the older one 404; submitting the page's form
// verifies the contact once, and the link is then dead.
func TestVerificationLinkWorksOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)

		r := p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "JANE@example.com", "resend_to": "email"})
		want(t, r, 200)
		ans := r.JSON(t)
		if ans["status"] != "Ok" || !uuidPattern.MatchString(ans["message_id"].(string)) {
			t.Fatalf("resend = %s", r.Body)
		}
		out := p.contactOutbox(m, "jane@example.com")
		if len(out) != 1 || out[0]["id"] != ans["message_id"] || out[0]["channel"] != "email" || out[0]["to"] != "jane@example.com" ||
			out[0]["email"] != "jane@example.com" || !timePattern.MatchString(out[0]["created_at"].(string)) {
			t.Fatalf("outbox = %v", out)
		}
		first := verifyLink.FindStringSubmatch(out[0]["body"].(string))
		if first == nil || first[1] == "" || !strings.Contains(out[0]["body"].(string), "Jane") {
			t.Fatalf("no https://pay.example.test/verify/… link to Jane in %q", out[0]["body"])
		}
		wantPage(t, p.verifyPage("GET", first[2]), 200, "Jane Doe")

		r = p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com", "resend_to": "phone"})
		want(t, r, 200)
		out = p.contactOutbox(m, "jane@example.com")
		if len(out) != 2 || out[0]["channel"] != "sms" || out[0]["to"] != "+61 412 345 678" {
			t.Fatalf("outbox after the SMS = %v", out)
		}
		second := verifyLink.FindStringSubmatch(out[0]["body"].(string))
		if second == nil || second[2] == first[2] {
			t.Fatalf("the SMS holds no new link: %q", out[0]["body"])
		}
		wantPage(t, p.verifyPage("GET", first[2]), 404, missingPage)
		wantPage(t, p.verifyPage("POST", first[2]), 404, missingPage)
		wantPage(t, p.verifyPage("GET", second[2]), 200, `<form method="post">`)
		if got := p.contactDetail(m, "jane@example.com")["verified_at"]; got != nil {
			t.Fatalf("verified_at = %v before the form was sent", got)
		}

		wantPage(t, p.verifyPage("POST", second[2]), 200, "Identity verified")
		if got, _ := p.contactDetail(m, "jane@example.com")["verified_at"].(string); !timePattern.MatchString(got) {
			t.Errorf("verified_at = %q after verification", got)
		}
		wantPage(t, p.verifyPage("GET", second[2]), 404, missingPage)
		wantPage(t, p.verifyPage("POST", second[2]), 404, missingPage)
		wantError(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com"}), 409, "INVALID_STATE", "")
	}, func(c *server.Config) { c.PublicURL = "https://pay.example.test/" })
}

// TestVerificationRules: the phone channel needs a phone; resend_to takes
// email or phone; links expire after 7 days on the merchant's clock; a token
// payd never issued is the 404 page; the outbox is per merchant.
func TestVerificationRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		p.newContact(m, "nophone@example.com", map[string]any{"email": "nophone@example.com", "first_name": "No", "last_name": "Phone"})
		wantError(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "nophone@example.com", "resend_to": "phone"}), 422, "VALIDATION_FAILED", "resend_to")
		wantError(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "nophone@example.com", "resend_to": "fax"}), 422, "VALIDATION_FAILED", "resend_to")
		wantError(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"resend_to": "email"}), 422, "VALIDATION_FAILED", "email")
		wantError(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "nobody@example.com"}), 404, "NOT_FOUND", "")
		if out := p.contactOutbox(m, "nophone@example.com"); len(out) != 0 {
			t.Errorf("refused resends wrote %v", out)
		}

		want(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "nophone@example.com"}), 200)
		out := p.contactOutbox(m, "nophone@example.com")
		if len(out) != 1 || out[0]["channel"] != "email" {
			t.Fatalf("resend_to defaults to email: %v", out)
		}
		link := verifyLink.FindStringSubmatch(out[0]["body"].(string))
		if link == nil {
			t.Fatalf("no link in %q", out[0]["body"])
		}
		wantError(t, p.get("/v2/contacts/verification_messages?email=%FF", m), 422, "VALIDATION_FAILED", "email")
		if got := p.contactOutbox(other, ""); len(got) != 0 {
			t.Errorf("another merchant's outbox shows %v", got)
		}
		p.advance(m, 7*24*3600-60)
		wantPage(t, p.verifyPage("GET", link[2]), 200, "No Phone")
		p.advance(m, 61)
		wantPage(t, p.verifyPage("GET", link[2]), 404, missingPage)
		wantPage(t, p.verifyPage("POST", link[2]), 404, missingPage)

		for _, token := range []string{strings.Repeat("A", 43), "short", "a/b", ""} {
			wantPage(t, p.verifyPage("GET", token), 404, missingPage)
		}
	})
}

// TestVerificationProduction: production sends links too, but has no
// sandbox outbox endpoint and no message_id in the answer.
func TestVerificationProduction(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)
		r := p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com"})
		want(t, r, 200)
		if got := strings.TrimSpace(string(r.Body)); got != `{"status":"Ok"}` {
			t.Errorf("production answer %s, want {\"status\":\"Ok\"}", got)
		}
		wantError(t, p.get("/v2/contacts/verification_messages", m), 404, "NOT_FOUND", "")
	}, production)
}
