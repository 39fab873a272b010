package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCreatePaymentEmailsForms: POST /v1/merchants/create_payment takes
// emails as public integrations send it, one comma-separated string, and as
// a JSON array of strings (CONTRACT §24); the answer lists the addresses as
// an array either way, each is checked and named emails[i], and the bound on
// their number holds for both forms. The document accepts both forms too
// (the harness checks every exchange against it).
func TestCreatePaymentEmailsForms(t *testing.T) {
	t.Parallel()
	eleven := strings.TrimSuffix(strings.Repeat("payer@example.com,", 11), ",")
	tests := []struct {
		name       string
		emails     any
		wantStatus int
		wantCode   string // of a refusal
		wantField  string // named by a refusal
		want       []string
	}{
		{"comma-separated", "jane@example.com,finance@example.com", 201, "", "", []string{"jane@example.com", "finance@example.com"}},
		{"comma-separated with spaces", " jane@example.com , finance@example.com ", 201, "", "", []string{"jane@example.com", "finance@example.com"}},
		{"one address", "jane@example.com", 201, "", "", []string{"jane@example.com"}},
		{"an array", []string{"jane@example.com", "finance@example.com"}, 201, "", "", []string{"jane@example.com", "finance@example.com"}},
		{"a bad address", "jane@example.com,not-an-email", 422, "VALIDATION_FAILED", "emails[1]", nil},
		{"an empty entry", "jane@example.com,,finance@example.com", 422, "VALIDATION_FAILED", "emails[1]", nil},
		{"a comma at the end", "jane@example.com,", 422, "VALIDATION_FAILED", "emails[1]", nil},
		{"eleven addresses", eleven, 422, "VALIDATION_FAILED", "emails", nil},
		{"a number", 7, 400, "WRONG_TYPE", "emails", nil},
		{"an array of numbers", []int{7}, 400, "WRONG_TYPE", "emails", nil},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.post("/v1/merchants/create_payment", m, map[string]any{"amount": "20.00", "emails": tt.emails})
				if tt.wantCode != "" {
					wantError(t, r, tt.wantStatus, tt.wantCode, tt.wantField)
					return
				}
				want(t, r, tt.wantStatus)
				var got struct {
					ID     json.Number `json:"id"`
					Emails []string    `json:"emails"`
				}
				r.Decode(t, &got)
				if !slices.Equal(got.Emails, tt.want) {
					t.Errorf("emails %q answered %q, want %q", tt.emails, got.Emails, tt.want)
				}
				p.get("/v1/payment_requests/detail?id="+got.ID.String(), m).Decode(t, &got)
				if !slices.Equal(got.Emails, tt.want) {
					t.Errorf("emails %q: the detail lists %q, want %q", tt.emails, got.Emails, tt.want)
				}
			})
		}
	})
}
