package e2e

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// contactFields is a complete, valid contact body.
func contactFields(email string) map[string]any {
	return map[string]any{
		"email": email, "first_name": "Jane", "last_name": "Doe", "type": "individual", "dob": "1990-02-28",
		"phone": "+61 412 345 678", "gender": "female", "street": "1 George St", "city": "Sydney",
		"postal_code": "2000", "state": "NSW", "country": "AU",
	}
}

// newContact creates a contact with body (contactFields(email) when nil) and returns it.
func (p *payd) newContact(as creds, email string, body map[string]any) map[string]any {
	p.t.Helper()
	if body == nil {
		body = contactFields(email)
	}
	r := p.post("/v2/contacts", as, body)
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// contactDetail reads GET /v2/contacts/detail and returns its record.
func (p *payd) contactDetail(as creds, email string) map[string]any {
	p.t.Helper()
	r := p.get("/v2/contacts/detail?email="+queryEscape(email), as)
	want(p.t, r, 200)
	rec := r.JSON(p.t)
	if _, ok := rec["uuid"]; !ok {
		p.t.Fatalf("detail is not the contact at the top level: %s", r.Body)
	}
	return rec
}

func queryEscape(s string) string {
	return strings.NewReplacer("+", "%2B", "@", "%40", " ", "%20", "&", "%26").Replace(s)
}

// TestContactCreateAndDetail: a created contact comes back with every member
// of the spec's Contact table plus uuid, kyc_status none, verified_at null
// and times; the detail endpoint finds it by email whatever its case and
// returns the same record.
func TestContactCreateAndDetail(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := contactFields("Jane.Doe@Example.com")
		body["country"] = "au"
		c := p.newContact(m, "", body)
		for k, v := range contactFields("Jane.Doe@Example.com") {
			if c[k] != v {
				t.Errorf("%s = %v, want %v", k, c[k], v)
			}
		}
		if !uuidPattern.MatchString(fmt.Sprint(c["uuid"])) || c["kyc_status"] != "none" || c["verified_at"] != nil || c["reg_no"] != "" {
			t.Errorf("contact = %v", c)
		}
		if !timePattern.MatchString(fmt.Sprint(c["created_at"])) || c["created_at"] != c["updated_at"] {
			t.Errorf("created_at %v, updated_at %v", c["created_at"], c["updated_at"])
		}
		if got := p.contactDetail(m, "jane.doe@EXAMPLE.COM"); !reflect.DeepEqual(got, c) {
			t.Errorf("detail = %v\nwant %v", got, c)
		}
		org := p.newContact(m, "", map[string]any{"email": "ap@acme.example", "first_name": "Acme", "last_name": "Pty Ltd",
			"type": "organization", "reg_no": "ABN 51 824 753 556"})
		if org["type"] != "organization" || org["reg_no"] != "ABN 51 824 753 556" || org["dob"] != "" || org["gender"] != "" {
			t.Errorf("organization = %v", org)
		}
		if c := p.newContact(m, "", map[string]any{"email": "min@example.com", "first_name": "Min", "last_name": "Imal"}); c["type"] != "individual" {
			t.Errorf("type defaults to %v, want individual", c["type"])
		}
		want(t, p.get("/v2/contacts/detail?email=nobody@example.com", m), 404)
		wantError(t, p.get("/v2/contacts/detail", m), 422, "VALIDATION_FAILED", "email")
		wantError(t, p.get("/v2/contacts/detail?email=%FF%40example.com", m), 422, "VALIDATION_FAILED", "email")
	})
}

// TestContactValidation: every rule names the member that breaks it; a
// member of the wrong JSON type is a 400 naming it; a body that is not JSON
// is 415.
func TestContactValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change map[string]any
		status int
		code   string
		field  string
	}{
		{name: "no email", change: map[string]any{"email": ""}, status: 422, code: "VALIDATION_FAILED", field: "email"},
		{name: "not an email", change: map[string]any{"email": "jane.example.com"}, status: 422, code: "VALIDATION_FAILED", field: "email"},
		{name: "email too long", change: map[string]any{"email": strings.Repeat("a", 250) + "@x.com"}, status: 422, code: "VALIDATION_FAILED", field: "email"},
		{name: "no first name", change: map[string]any{"first_name": " "}, status: 422, code: "VALIDATION_FAILED", field: "first_name"},
		{name: "NUL in a name", change: map[string]any{"first_name": "Ja\u0000ne"}, status: 422, code: "VALIDATION_FAILED", field: "first_name"},
		{name: "last name too long", change: map[string]any{"last_name": strings.Repeat("x", 101)}, status: 422, code: "VALIDATION_FAILED", field: "last_name"},
		{name: "type", change: map[string]any{"type": "company"}, status: 422, code: "VALIDATION_FAILED", field: "type"},
		{name: "organization without reg_no", change: map[string]any{"type": "organization"}, status: 422, code: "VALIDATION_FAILED", field: "reg_no"},
		{name: "dob form", change: map[string]any{"dob": "28/02/1990"}, status: 422, code: "VALIDATION_FAILED", field: "dob"},
		{name: "dob not a day", change: map[string]any{"dob": "1990-02-30"}, status: 422, code: "VALIDATION_FAILED", field: "dob"},
		{name: "dob in the future", change: map[string]any{"dob": "2999-01-01"}, status: 422, code: "VALIDATION_FAILED", field: "dob"},
		{name: "phone", change: map[string]any{"phone": "call me"}, status: 422, code: "VALIDATION_FAILED", field: "phone"},
		{name: "gender", change: map[string]any{"gender": "unknown"}, status: 422, code: "VALIDATION_FAILED", field: "gender"},
		{name: "street too long", change: map[string]any{"street": strings.Repeat("x", 201)}, status: 422, code: "VALIDATION_FAILED", field: "street"},
		{name: "city too long", change: map[string]any{"city": strings.Repeat("x", 101)}, status: 422, code: "VALIDATION_FAILED", field: "city"},
		{name: "postal code", change: map[string]any{"postal_code": "<2000>"}, status: 422, code: "VALIDATION_FAILED", field: "postal_code"},
		{name: "state too long", change: map[string]any{"state": strings.Repeat("x", 101)}, status: 422, code: "VALIDATION_FAILED", field: "state"},
		{name: "country of three letters", change: map[string]any{"country": "AUS"}, status: 422, code: "VALIDATION_FAILED", field: "country"},
		{name: "country not assigned", change: map[string]any{"country": "ZZ"}, status: 422, code: "VALIDATION_FAILED", field: "country"},
		{name: "email of the wrong type", change: map[string]any{"email": 42}, status: 400, code: "WRONG_TYPE", field: "email"},
		{name: "dob of the wrong type", change: map[string]any{"dob": []any{1990}}, status: 400, code: "WRONG_TYPE", field: "dob"},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := contactFields(fmt.Sprintf("v%d@example.com", i))
				for k, v := range tt.change {
					body[k] = v
				}
				wantError(t, p.post("/v2/contacts", m, body), tt.status, tt.code, tt.field)
			})
		}
		t.Run("several members at once", func(t *testing.T) {
			r := p.post("/v2/contacts", m, map[string]any{"email": "x", "gender": "x"})
			wantError(t, r, 422, "VALIDATION_FAILED", "")
			for _, f := range []string{"email", "first_name", "last_name", "gender"} {
				if _, ok := r.Fields(t)[f]; !ok {
					t.Errorf("fields do not name %s: %s", f, r.Body)
				}
			}
		})
		t.Run("not JSON", func(t *testing.T) {
			r := p.do(req{method: "POST", path: "/v2/contacts", as: &m, body: "email=a@b.c", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
			wantError(t, r, 415, "UNSUPPORTED_MEDIA_TYPE", "")
		})
		if recs := p.get("/v2/contacts", m).JSON(t)["records"].([]any); len(recs) != 0 {
			t.Errorf("refused creates left %d contacts", len(recs))
		}
	})
}

// TestContactEmailIsUniquePerMerchant: a second contact with the same email,
// in any case, is 409 CONTACT_EXISTS; another merchant may have it.
func TestContactEmailIsUniquePerMerchant(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)
		wantError(t, p.post("/v2/contacts", m, contactFields("JANE@example.com")), 409, "CONTACT_EXISTS", "")
		p.newContact(other, "jane@example.com", nil)
	})
}

// TestContactTenancy: another merchant's contact answers exactly as an email
// that does not exist, on every endpoint.
func TestContactTenancy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD")["AUD"]
		b := p.merchant("AUD", "USD")["USD"]
		p.newContact(a, "jane@example.com", nil)
		for _, email := range []string{"jane@example.com", "nobody@example.com"} {
			t.Run(email, func(t *testing.T) {
				wantError(t, p.get("/v2/contacts/detail?email="+email, b), 404, "NOT_FOUND", "")
				wantError(t, p.do(req{method: "PUT", path: "/v2/contact/update_info", as: &b, body: map[string]any{"email": email, "city": "Perth"}}), 404, "NOT_FOUND", "")
				wantError(t, p.post("/v2/contacts/resend_verification", b, map[string]any{"email": email}), 404, "NOT_FOUND", "")
				wantError(t, p.submitKYC(b, kycFields(email, "N123"), kycFiles(t)), 404, "NOT_FOUND", "")
			})
		}
		if l := p.get("/v2/contacts", b).JSON(t); l["total"].(interface{ String() string }).String() != "0" {
			t.Errorf("another merchant lists %v", l)
		}
		if got := p.contactDetail(a, "jane@example.com"); got["city"] != "Sydney" || got["kyc_status"] != "none" {
			t.Errorf("another merchant changed the contact: %v", got)
		}
	})
}

// TestContactList: the page list envelope of CONTRACT §3, newest first,
// with page and per_page bounds.
func TestContactList(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		const n = 25
		for i := range n {
			p.newContact(m, fmt.Sprintf("c%02d@example.com", i), nil)
		}
		var page struct {
			PerPage   int              `json:"per_page"`
			Page      int              `json:"page"`
			TotalPage int              `json:"total_page"`
			Total     int              `json:"total"`
			Records   []map[string]any `json:"records"`
		}
		r := p.get("/v2/contacts", m)
		want(t, r, 200)
		r.Decode(t, &page)
		if page.PerPage != 20 || page.Page != 1 || page.TotalPage != 2 || page.Total != n || len(page.Records) != 20 {
			t.Fatalf("default page: per_page %d page %d total_page %d total %d, %d records", page.PerPage, page.Page, page.TotalPage, page.Total, len(page.Records))
		}
		if page.Records[0]["email"] != "c24@example.com" {
			t.Errorf("first record %v, want the newest (c24)", page.Records[0]["email"])
		}
		page.Records = nil
		p.get("/v2/contacts?per_page=10&page=3", m).Decode(t, &page)
		if page.PerPage != 10 || page.Page != 3 || page.TotalPage != 3 || len(page.Records) != 5 || page.Records[4]["email"] != "c00@example.com" {
			t.Errorf("page 3 of 10: %+v", page)
		}
		page.Records = nil
		p.get("/v2/contacts?per_page=10&page=4", m).Decode(t, &page)
		if page.Total != n || page.Records == nil || len(page.Records) != 0 {
			t.Errorf("past the last page: total %d, records %v (want an empty array)", page.Total, page.Records)
		}
		for _, q := range []string{"page=0", "page=x", "per_page=0", "per_page=101", "from_date=yesterday"} {
			wantError(t, p.get("/v2/contacts?"+q, m), 422, "VALIDATION_FAILED", strings.Split(q, "=")[0])
		}
		page.Records = nil
		p.get("/v2/contacts?from_date=2999-01-01", m).Decode(t, &page)
		if page.Total != 0 || page.TotalPage != 0 {
			t.Errorf("from_date in the future: %+v", page)
		}
	})
}

// TestContactUpdateInfoDeprecated: PUT /v2/contact/update_info answers with
// Deprecation: true, changes only the members present, and answers a blank
// email with the contract's exact body.
func TestContactUpdateInfoDeprecated(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		before := p.newContact(m, "jane@example.com", nil)
		put := func(body any) response {
			t.Helper()
			r := p.do(req{method: "PUT", path: "/v2/contact/update_info", as: &m, body: body})
			if r.Header.Get("Deprecation") != "true" {
				t.Errorf("answer %d without Deprecation: true (headers %v)", r.Status, r.Header)
			}
			return r
		}
		p.advance(m, 60)
		r := put(map[string]any{"email": "JANE@example.com", "city": "Melbourne", "state": "VIC", "postal_code": "3000", "phone": "", "last_name": nil})
		want(t, r, 200)
		if got := strings.TrimSpace(string(r.Body)); got != `{"status":"Ok"}` {
			t.Errorf("body = %s, want {\"status\":\"Ok\"}", got)
		}
		after := p.contactDetail(m, "jane@example.com")
		for k, v := range map[string]any{"city": "Melbourne", "state": "VIC", "postal_code": "3000", "phone": "", "last_name": "Doe",
			"first_name": "Jane", "street": "1 George St", "dob": "1990-02-28", "email": "jane@example.com", "uuid": before["uuid"], "created_at": before["created_at"]} {
			if after[k] != v {
				t.Errorf("after update %s = %v, want %v", k, after[k], v)
			}
		}
		if after["updated_at"] == before["updated_at"] {
			t.Errorf("updated_at did not move: %v", after["updated_at"])
		}

		const blank = `{"errors":{"code":"VALIDATION_FAILED","message":"Email can't be blank"}}`
		for _, body := range []any{map[string]any{"city": "Perth"}, map[string]any{"email": ""}, map[string]any{"email": "  "}, map[string]any{"email": nil}} {
			r := put(body)
			want(t, r, 422)
			if got := strings.TrimSpace(string(r.Body)); got != blank {
				t.Errorf("blank email %v: body %s, want %s", body, got, blank)
			}
		}
		wantError(t, put(map[string]any{"email": "nobody@example.com", "city": "Perth"}), 404, "NOT_FOUND", "")
		wantError(t, put(map[string]any{"email": "jane@example.com", "gender": "x"}), 422, "VALIDATION_FAILED", "gender")
		wantError(t, put(map[string]any{"email": "jane@example.com", "type": "organization"}), 422, "VALIDATION_FAILED", "reg_no")
		wantError(t, put(map[string]any{"email": "jane@example.com", "first_name": ""}), 422, "VALIDATION_FAILED", "first_name")
		wantError(t, put(map[string]any{"email": "jane@example.com", "city": 7}), 400, "WRONG_TYPE", "city")
		want(t, put(map[string]any{"email": "jane@example.com", "type": "organization", "reg_no": "ACN 000 000 019"}), 200)
		if got := p.contactDetail(m, "jane@example.com"); got["type"] != "organization" || got["reg_no"] != "ACN 000 000 019" || got["city"] != "Melbourne" {
			t.Errorf("after the second update: %v", got)
		}
		want(t, p.do(req{method: "PUT", path: "/v2/contact/update_info", body: map[string]any{"email": "jane@example.com"}}), 401)
	})
}

// TestContactCreateIdempotent: a create replayed with its Idempotency-Key
// returns the first answer and makes one contact.
func TestContactCreateIdempotent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		send := func() response {
			return p.do(req{method: "POST", path: "/v2/contacts", as: &m, body: contactFields("jane@example.com"),
				header: map[string]string{"Idempotency-Key": "contact-1"}})
		}
		first, second := send(), send()
		want(t, first, 201)
		want(t, second, 201)
		if second.Header.Get("Idempotent-Replayed") != "true" || string(first.Body) != string(second.Body) {
			t.Errorf("replay: %s %s, want the first body replayed", second.Header.Get("Idempotent-Replayed"), second.Body)
		}
	})
}
