package param_test

import (
	"maps"
	"strings"
	"testing"

	"payd/internal/fault"
	"payd/internal/param"
)

// userType is the ug_bank_ugx payout's fields and rule, in small.
var (
	userTypeFields = []param.Param{
		{Name: "user_type", Type: "string", Mandatory: true, Check: param.OneOf("individual", "business")},
		{Name: "phone", Type: "string", Check: param.Phone},
		{Name: "business_name", Type: "string", Check: param.Text(200)},
	}
	userTypeRules = []param.Rule{param.RequiredWhen("user_type", map[string][]string{
		"individual": {"phone"}, "business": {"business_name"}})}
	swiftRules = []param.Rule{param.NotTaken("bank_code", "give the recipient bank's swift_code instead")}
)

// TestValidateRules: a method's rules run after each member's check, each
// problem named by its member.
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name   string
		fields []param.Param
		rules  []param.Rule
		params map[string]any
		want   map[string]string
	}{
		{"individual with a phone", userTypeFields, userTypeRules, map[string]any{"user_type": "individual", "phone": "+256700000000"}, map[string]string{}},
		{"individual without a phone", userTypeFields, userTypeRules, map[string]any{"user_type": "individual"},
			map[string]string{"p.phone": "is required when user_type is individual"}},
		{"individual with a blank phone", userTypeFields, userTypeRules, map[string]any{"user_type": "individual", "phone": "  "},
			map[string]string{"p.phone": "must be a phone number such as +61412345678"}},
		{"business without a name", userTypeFields, userTypeRules, map[string]any{"user_type": "business", "phone": "+256700000000"},
			map[string]string{"p.business_name": "is required when user_type is business"}},
		{"an unknown user type requires nothing more", userTypeFields, userTypeRules, map[string]any{"user_type": "trust"},
			map[string]string{"p.user_type": "must be one of individual, business"}},
		{"no user type", userTypeFields, userTypeRules, map[string]any{},
			map[string]string{"p.user_type": "is required for ug_bank_ugx"}},
		{"a member the method does not take", nil, swiftRules, map[string]any{"bank_code": "KASITHBK"},
			map[string]string{"p.bank_code": "is not taken by ug_bank_ugx: give the recipient bank's swift_code instead"}},
		{"an extra member the method keeps", nil, swiftRules, map[string]any{"note": "x"}, map[string]string{}},
		{"the member's own problem comes first", nil, swiftRules, map[string]any{"bank_code": strings.Repeat("x", param.MaxBytes+1)},
			map[string]string{"p.bank_code": "is longer than 2048 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fault.Fields{}
			param.Validate("p", "ug_bank_ugx", tt.fields, tt.rules, tt.params, got)
			if !maps.Equal(got, fault.Fields(tt.want)) {
				t.Errorf("problems %v, want %v", got, tt.want)
			}
		})
	}
}
