package payid_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"payd/internal/fault"
	"payd/internal/payid"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// TestEmailsJSON: emails reads as public integrations send it, one
// comma-separated string, and as a JSON array of strings (CONTRACT §24); an
// empty entry of a string stays for the rules to refuse by its index, and any
// other JSON type is a wrong type naming emails.
func TestEmailsJSON(t *testing.T) {
	tests := []struct {
		name      string
		emails    string
		want      []string
		wantField string // of a *json.UnmarshalTypeError; "" when none
	}{
		{"one string", `"a@x.com,b@y.com"`, []string{"a@x.com", "b@y.com"}, ""},
		{"one address", `"a@x.com"`, []string{"a@x.com"}, ""},
		{"spaces around addresses", `" a@x.com , b@y.com "`, []string{"a@x.com", "b@y.com"}, ""},
		{"two commas in a row", `"a@x.com,,b@y.com"`, []string{"a@x.com", "", "b@y.com"}, ""},
		{"a comma at the end", `"a@x.com,"`, []string{"a@x.com", ""}, ""},
		{"a blank string", `" "`, nil, ""},
		{"an empty string", `""`, nil, ""},
		{"an array", `["a@x.com","b@y.com"]`, []string{"a@x.com", "b@y.com"}, ""},
		{"an empty array", `[]`, []string{}, ""},
		{"null", `null`, nil, ""},
		{"a number", `5`, nil, "emails"},
		{"a boolean", `true`, nil, "emails"},
		{"an object", `{"a":"a@x.com"}`, nil, "emails"},
		{"an array of numbers", `["a@x.com",5]`, nil, "emails"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req payid.CreateRequest
			err := json.Unmarshal([]byte(`{"amount":"20","emails":`+tt.emails+`}`), &req)
			var typeErr *json.UnmarshalTypeError
			gotField := ""
			if errors.As(err, &typeErr) {
				gotField = typeErr.Field
			}
			if gotField != tt.wantField || (err != nil) != (tt.wantField != "") {
				t.Fatalf("Unmarshal(emails %s): error %v (field %q), want field %q", tt.emails, err, gotField, tt.wantField)
			}
			if got := []string(req.Emails); !slices.Equal(got, tt.want) {
				t.Errorf("emails %s read as %q, want %q", tt.emails, got, tt.want)
			}
		})
	}
}

// TestCreateEmails: a request's emails in either form are validated address
// by address, named emails[i], and kept as a list; more than the bound is
// refused whatever the form.
func TestCreateEmails(t *testing.T) {
	t.Parallel()
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf("payer%d@example.com", i)
	}
	tests := []struct {
		name      string
		emails    string
		want      []string
		wantField string // refused with VALIDATION_FAILED naming it; "" when accepted
	}{
		{"comma-separated", `"jane@example.com, finance@example.com"`, []string{"jane@example.com", "finance@example.com"}, ""},
		{"array", `["jane@example.com","finance@example.com"]`, []string{"jane@example.com", "finance@example.com"}, ""},
		{"blank string", `""`, []string{}, ""},
		{"ten in a string", `"` + strings.Join(eleven[:10], ",") + `"`, eleven[:10], ""},
		{"a bad address in a string", `"jane@example.com,not-an-email"`, nil, "emails[1]"},
		{"an empty entry", `"jane@example.com,,finance@example.com"`, nil, "emails[1]"},
		{"a comma at the start", `",jane@example.com"`, nil, "emails[0]"},
		{"eleven in a string", `"` + strings.Join(eleven, ",") + `"`, nil, "emails"},
		{"eleven in an array", `["` + strings.Join(eleven, `","`) + `"]`, nil, "emails"},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var req payid.CreateRequest
				if err := json.Unmarshal([]byte(`{"amount":"20","emails":`+tt.emails+`}`), &req); err != nil {
					t.Fatalf("Unmarshal(emails %s): %v", tt.emails, err)
				}
				got, err := storetest.Write(context.Background(), e.DB, e.PayIDs.Create, p, req)
				if tt.wantField != "" {
					if fe, _ := fault.As(err); fe == nil || fe.Code != fault.CodeValidation || fe.Fields[tt.wantField] == "" {
						t.Fatalf("Create(emails %s): error %v, want VALIDATION_FAILED naming %s", tt.emails, err, tt.wantField)
					}
					return
				}
				if err != nil {
					t.Fatalf("Create(emails %s): %v", tt.emails, err)
				}
				if !slices.Equal(got.Emails, tt.want) || got.Emails == nil {
					t.Errorf("Create(emails %s).Emails = %q, want %q", tt.emails, got.Emails, tt.want)
				}
			})
		}
	})
}
