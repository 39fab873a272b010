package e2e

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"payd/internal/merchant"
	"payd/internal/store/storetest"
)

// controlValues are the characters CONTRACT §24 refuses in any string: a
// NUL (which PostgreSQL cannot store), another C0 control, and a line
// break where the member is not free text.
var controlValues = []struct{ name, json, raw string }{
	{"NUL", `"a\u0000b"`, "a\x00b"},
	{"escape", `"a\u001bb"`, "a\x1bb"},
	{"line feed", `"a\nb"`, "a\nb"},
}

// stringMember is a member of a request body that holds a string, as a
// path (payout_transaction_details[0].name) and a body that sets it alone.
type stringMember struct {
	path string
	body func(value string) string
}

// stringMembers lists the string members of a body schema: its own, and
// those one level down in objects and arrays of objects.
func stringMembers(s *openapi3.Schema) []stringMember {
	var out []stringMember
	for _, name := range slices.Sorted(mapKeys(s.Properties)) {
		prop := s.Properties[name].Value
		key := quoteKey(name)
		switch {
		case prop.Type.Includes("string") && len(prop.Enum) == 0 && name != "description" && name != "remarks" && name != "reason":
			out = append(out, stringMember{name, func(v string) string { return "{" + key + ":" + v + "}" }})
		case prop.Type.Includes("object"):
			for _, inner := range stringMembers(prop) {
				out = append(out, stringMember{name + "." + inner.path, func(v string) string { return "{" + key + ":" + inner.body(v) + "}" }})
			}
		case prop.Type.Includes("array") && prop.Items != nil && prop.Items.Value.Type.Includes("object"):
			for _, inner := range stringMembers(prop.Items.Value) {
				out = append(out, stringMember{name + "[0]." + inner.path, func(v string) string { return "{" + key + ":[" + inner.body(v) + "]}" }})
			}
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestControlCharactersAreRefused sends, on every database, a NUL, another
// control character and a line break in each string member of every JSON
// body the OpenAPI document lists, in each query parameter of every
// operation, in multipart parts, in a CSV cell, and in the portal's and the
// hosted pages' paths, queries and forms: each is a 422 VALIDATION_FAILED
// naming what held it (CONTRACT §24), never a 5xx, and nothing is written.
func TestControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "IDR")
		aud := apps["AUD"]
		r := p.do(req{method: "GET", path: "/v1/payment_gateways/access_token", as: &aud})
		want(t, r, 200)
		token := str(r.JSON(t), "access_token")
		doc, err := openapi3.NewLoader().LoadFromData(p.do(req{method: "GET", path: "/openapi.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		u := p.newPortalUser(t, aud.MerchantID, "finance@shop.example", merchant.Admin)
		before, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		send := func(t *testing.T, method, path string, body []byte, contentType string) response {
			t.Helper()
			header := map[string]string{"access-token": token}
			if contentType != "" {
				header["Content-Type"] = contentType
			}
			r := p.do(req{method: method, path: path, as: &aud, body: body, header: header, fuzzed: true})
			if r.Status >= 500 {
				t.Fatalf("%s %s answered %d: %s", method, path, r.Status, r.Body)
			}
			return r
		}
		for _, path := range slices.Sorted(mapKeys(doc.Paths.Map())) {
			for method, op := range doc.Paths.Value(path).Operations() {
				op := op
				t.Run(method+" "+path, func(t *testing.T) {
					for _, c := range controlValues {
						for _, prm := range op.Parameters {
							if prm.Value.In != "query" {
								continue
							}
							r := send(t, method, path+"?"+prm.Value.Name+"="+url.QueryEscape(c.raw), nil, "")
							wantError(t, r, 422, "VALIDATION_FAILED", prm.Value.Name)
						}
						r := send(t, method, path+"?unknown_param="+url.QueryEscape(c.raw), nil, "")
						wantError(t, r, 422, "VALIDATION_FAILED", "unknown_param")
						if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
							continue
						}
						for _, m := range stringMembers(op.RequestBody.Value.Content.Get("application/json").Schema.Value) {
							r := send(t, method, path, []byte(m.body(c.json)), "application/json")
							if r.Status != 422 || r.ErrorCode(t) != "VALIDATION_FAILED" || len(r.Fields(t)) != 1 || r.Fields(t)[m.path] == nil {
								t.Errorf("%s in %s: %d %s, want 422 VALIDATION_FAILED naming %s alone", c.name, m.path, r.Status, r.Body, m.path)
							}
						}
					}
				})
			}
		}
		t.Run("free text takes line breaks", func(t *testing.T) {
			r := send(t, "POST", "/v2/payins/refund", []byte(`{"uuid":"none","description":"line one\r\nline two\tend"}`), "application/json")
			wantError(t, r, 404, "NOT_FOUND", "")
			r = send(t, "POST", "/v2/payins/refund", []byte(`{"uuid":"none","description":"a\u0000"}`), "application/json")
			wantError(t, r, 422, "VALIDATION_FAILED", "description")
		})
		t.Run("multipart", func(t *testing.T) {
			for _, tt := range []struct{ path, part, value, field string }{
				{"/v2/contacts/submit_kyc", "email", "a\x00@example.com", "email"},
				{"/v2/contacts/submit_kyc", "webhook_notification", `{"endpoint_url":"https://a.example/\u0000"}`, "webhook_notification.endpoint_url"},
				{"/v1/payouts/file", "external_id", "x\x00", "external_id"},
				{"/v1/payouts/file", "file", "payee,amount\nJane\x00 Doe,10\n", "rows[2].payee"},
				{"/v1/payouts/file", "file", "payee,amount\nJane\tDoe,10\n", "rows[2].payee"},
			} {
				var b bytes.Buffer
				w := multipart.NewWriter(&b)
				w.WriteField("description", "control characters")
				if tt.part == "file" {
					fw, _ := w.CreateFormFile("file", "batch.csv")
					fw.Write([]byte(tt.value))
				} else {
					w.WriteField(tt.part, tt.value)
				}
				w.Close()
				r := send(t, "POST", tt.path, b.Bytes(), w.FormDataContentType())
				wantError(t, r, 422, "VALIDATION_FAILED", tt.field)
			}
		})
		t.Run("headers", func(t *testing.T) {
			// A header may carry bytes that are not UTF-8; the app-id is
			// looked up and counted by the throttle, in text columns.
			for _, appID := range []string{"\xff\xfe", "a" + strings.Repeat("é", 40)} {
				r := p.do(req{method: "GET", path: "/v2/balances", header: map[string]string{"app-id": appID, "secret-key": "wrong"}})
				if r.Status != 401 || string(bytes.TrimSpace(r.Body)) != notAuthorised {
					t.Errorf("app-id %q: %d %s, want 401 %s", appID, r.Status, r.Body, notAuthorised)
				}
			}
		})
		t.Run("portal", func(t *testing.T) {
			for _, path := range []string{"/portal/payouts/%00", "/portal/payouts?status=%00", "/portal/payins?currency=%1b", "/portal/audit?page=%0a"} {
				if a := u.do("GET", path, nil); a.status != 422 || !strings.Contains(a.body, "control characters") {
					t.Errorf("GET %s: %d, want 422 saying so\n%.400s", path, a.status, a.body)
				}
			}
			form := map[string]string{"currency": "AUD", "payout_method_name": "au_bank_aud", "description": "ok", "first_name": "Jane\x00", "last_name": "Doe", "amount": "1", "param.bsb": "062000", "param.account_number": "12345678"}
			if a := u.post("/portal/payouts/new", "/portal/payouts", form); a.status != 422 || !strings.Contains(a.body, "first_name") {
				t.Errorf("a NUL in a form field: %d, want 422 naming it\n%.400s", a.status, a.body)
			}
			anon := p.portalClient(t, "x\x00@shop.example")
			if a := anon.login("correct horse battery", ""); a.status != 422 {
				t.Errorf("a NUL in the sign-in email: %d, want 422", a.status)
			}
		})
		t.Run("hosted pages", func(t *testing.T) {
			for _, path := range []string{"/pay/%00", "/pay/abc?t=%00", "/checkout/1?t=%1f", "/links/%00", "/verify/%00"} {
				r := p.do(req{method: "GET", path: path, root: true})
				if r.Status != 422 {
					t.Errorf("GET %s: %d, want 422\n%.300s", path, r.Status, r.Body)
				}
			}
		})
		after, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		if changed := before.changed(after); len(changed) > 0 {
			t.Errorf("refused requests wrote rows: %v", changed)
		}
	})
}

// TestWrongTypeNamesTheIndex: a member of the wrong JSON type inside an
// array is named with its index, as every other refusal names it
// (payout_transaction_details[1].amount, not payout_transaction_details.amount).
func TestWrongTypeNamesTheIndex(t *testing.T) {
	t.Parallel()
	p := start(t, storetest.SQLiteDSN(t))
	aud := p.merchant("AUD")["AUD"]
	body := `{"currency":"AUD","payout_method_name":"au_bank_aud","description":"two","payout_transaction_details":[` +
		`{"first_name":"A","last_name":"B","amount":"1.00","payout_method_params":{}},` +
		`{"first_name":"C","last_name":"D","amount":{"value":1},"payout_method_params":{}}]}`
	r := p.do(req{method: "POST", path: "/v2/payouts", as: &aud, body: body, fuzzed: true})
	wantError(t, r, 400, "WRONG_TYPE", "payout_transaction_details[1].amount")
}
