package e2e

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func customerFields(externalID string) map[string]any {
	return map[string]any{
		"first_name": "Jane", "last_name": "Doe", "email": "Jane@Example.com", "phone": "+61412345678",
		"external_id": externalID, "street": "1 George St", "city": "Sydney", "postal_code": "2000", "state": "NSW",
		"country": "AU", "metadata": map[string]any{"tier": "gold", "crm_id": "42"},
	}
}

func (p *payd) newCustomer(as creds, body map[string]any) map[string]any {
	p.t.Helper()
	r := p.post("/v2/customers", as, body)
	want(p.t, r, 201)
	return r.JSON(p.t)
}

func (p *payd) putCustomer(as creds, body any) response {
	p.t.Helper()
	return p.do(req{method: "PUT", path: "/v2/customers/update", as: &as, body: body})
}

// TestCustomerCreateDetailUpdate: a customer is created with its members and
// metadata, found by its uuid, and changed member by member.
func TestCustomerCreateDetailUpdate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		c := p.newCustomer(m, customerFields("cus_1"))
		for k, v := range customerFields("cus_1") {
			if !reflect.DeepEqual(c[k], v) {
				t.Errorf("%s = %v, want %v", k, c[k], v)
			}
		}
		id, _ := c["uuid"].(string)
		if !uuidPattern.MatchString(id) || !timePattern.MatchString(fmt.Sprint(c["created_at"])) {
			t.Fatalf("customer = %v", c)
		}
		r := p.get("/v2/customers/detail?id="+id, m)
		want(t, r, 200)
		if got := r.JSON(t); !reflect.DeepEqual(got, c) {
			t.Errorf("detail = %v\nwant %v", got, c)
		}

		p.advance(m, 60)
		r = p.putCustomer(m, map[string]any{"id": id, "city": "Melbourne", "phone": "", "last_name": nil, "metadata": map[string]any{"tier": "silver"}})
		want(t, r, 200)
		u := r.JSON(t)
		for k, v := range map[string]any{"city": "Melbourne", "phone": "", "last_name": "Doe", "email": "Jane@Example.com", "uuid": id,
			"created_at": c["created_at"], "metadata": map[string]any{"tier": "silver"}} {
			if !reflect.DeepEqual(u[k], v) {
				t.Errorf("after update %s = %v, want %v", k, u[k], v)
			}
		}
		if u["updated_at"] == c["updated_at"] {
			t.Errorf("updated_at did not move")
		}
		if got := p.get("/v2/customers/detail?id="+id, m).JSON(t); !reflect.DeepEqual(got, u) {
			t.Errorf("detail after update = %v\nwant %v", got, u)
		}
		r = p.putCustomer(m, map[string]any{"id": id, "metadata": map[string]any{}})
		want(t, r, 200)
		if got := r.JSON(t)["metadata"]; !reflect.DeepEqual(got, map[string]any{}) {
			t.Errorf("metadata {} left %v", got)
		}
		bare := p.newCustomer(m, map[string]any{"first_name": "Bo", "last_name": "Li", "email": "bo@example.com"})
		if bare["external_id"] != "" || !reflect.DeepEqual(bare["metadata"], map[string]any{}) {
			t.Errorf("minimal customer = %v", bare)
		}
	})
}

// TestCustomerRules: each wrong member is named; external_id is unique per
// merchant; another merchant's customer is 404 like an unknown id.
func TestCustomerRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change map[string]any
		status int
		code   string
		field  string
	}{
		{name: "no first name", change: map[string]any{"first_name": ""}, status: 422, code: "VALIDATION_FAILED", field: "first_name"},
		{name: "no last name", change: map[string]any{"last_name": nil}, status: 422, code: "VALIDATION_FAILED", field: "last_name"},
		{name: "no email", change: map[string]any{"email": " "}, status: 422, code: "VALIDATION_FAILED", field: "email"},
		{name: "email", change: map[string]any{"email": "jane"}, status: 422, code: "VALIDATION_FAILED", field: "email"},
		{name: "phone", change: map[string]any{"phone": "12"}, status: 422, code: "VALIDATION_FAILED", field: "phone"},
		{name: "external id too long", change: map[string]any{"external_id": strings.Repeat("x", 65)}, status: 422, code: "VALIDATION_FAILED", field: "external_id"},
		{name: "country", change: map[string]any{"country": "Australia"}, status: 422, code: "VALIDATION_FAILED", field: "country"},
		{name: "metadata value too long", change: map[string]any{"metadata": map[string]any{"note": strings.Repeat("x", 501)}}, status: 422, code: "VALIDATION_FAILED", field: "metadata.note"},
		{name: "metadata not strings", change: map[string]any{"metadata": map[string]any{"n": 1}}, status: 400, code: "WRONG_TYPE"},
		{name: "metadata not an object", change: map[string]any{"metadata": "x"}, status: 400, code: "WRONG_TYPE", field: "metadata"},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := customerFields(fmt.Sprintf("rule-%d", i))
				for k, v := range tt.change {
					body[k] = v
				}
				wantError(t, p.post("/v2/customers", m, body), tt.status, tt.code, tt.field)
			})
		}
		c := p.newCustomer(m, customerFields("cus_1"))
		id := c["uuid"].(string)
		wantError(t, p.post("/v2/customers", m, customerFields("cus_1")), 409, "CUSTOMER_EXISTS", "")
		second := p.newCustomer(m, customerFields("cus_2"))
		wantError(t, p.putCustomer(m, map[string]any{"id": second["uuid"], "external_id": "cus_1"}), 409, "CUSTOMER_EXISTS", "")
		want(t, p.putCustomer(m, map[string]any{"id": id, "external_id": "cus_1"}), 200)
		p.newCustomer(other, customerFields("cus_1"))

		wantError(t, p.putCustomer(m, map[string]any{"id": id, "email": "nope"}), 422, "VALIDATION_FAILED", "email")
		wantError(t, p.putCustomer(m, map[string]any{"id": id, "first_name": ""}), 422, "VALIDATION_FAILED", "first_name")
		wantError(t, p.putCustomer(m, map[string]any{"city": "Perth"}), 422, "VALIDATION_FAILED", "id")
		wantError(t, p.get("/v2/customers/detail", m), 422, "VALIDATION_FAILED", "id")
		for _, unknown := range []string{id, "ZZZZZZZZ"} {
			wantError(t, p.get("/v2/customers/detail?id="+unknown, other), 404, "NOT_FOUND", "")
			wantError(t, p.putCustomer(other, map[string]any{"id": unknown, "city": "Perth"}), 404, "NOT_FOUND", "")
		}
		if got := p.get("/v2/customers/detail?id="+id, m).JSON(t)["city"]; got != "Sydney" {
			t.Errorf("another merchant's update changed city to %v", got)
		}
	})
}

// TestCustomerList: the page list envelope, newest first, filtered by email
// (whatever its case) and by external_id, only the merchant's own.
func TestCustomerList(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.merchant("AUD")["AUD"]
		for i := range 5 {
			body := customerFields(fmt.Sprintf("cus_%d", i))
			body["email"] = fmt.Sprintf("c%d@example.com", i%2)
			p.newCustomer(m, body)
		}
		p.newCustomer(other, customerFields("cus_0"))
		type page struct {
			PerPage   int              `json:"per_page"`
			Page      int              `json:"page"`
			TotalPage int              `json:"total_page"`
			Total     int              `json:"total"`
			Records   []map[string]any `json:"records"`
		}
		list := func(query string) page {
			t.Helper()
			var pg page
			r := p.get("/v2/customers?"+query, m)
			want(t, r, 200)
			r.Decode(t, &pg)
			return pg
		}
		if pg := list(""); pg.Total != 5 || pg.TotalPage != 1 || pg.PerPage != 20 || pg.Page != 1 || pg.Records[0]["external_id"] != "cus_4" {
			t.Errorf("all: %+v", pg)
		}
		if pg := list("per_page=2&page=2"); pg.TotalPage != 3 || len(pg.Records) != 2 || pg.Records[0]["external_id"] != "cus_2" {
			t.Errorf("page 2 of 2: %+v", pg)
		}
		if pg := list("email=C1%40EXAMPLE.com"); pg.Total != 2 || pg.Records[0]["external_id"] != "cus_3" || pg.Records[1]["external_id"] != "cus_1" {
			t.Errorf("by email: %+v", pg)
		}
		if pg := list("external_id=cus_0"); pg.Total != 1 || pg.Records[0]["email"] != "c0@example.com" {
			t.Errorf("by external_id: %+v", pg)
		}
		if pg := list("external_id=cus_9"); pg.Total != 0 || pg.Records == nil {
			t.Errorf("no match: %+v", pg)
		}
		for _, q := range []string{"page=0", "per_page=101", "to_date=never", "email=%FF", "external_id=%FF%FE"} {
			wantError(t, p.get("/v2/customers?"+q, m), 422, "VALIDATION_FAILED", strings.Split(q, "=")[0])
		}
	})
}
