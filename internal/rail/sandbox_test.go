package rail

import (
	"context"
	"testing"

	"payd/internal/store"
)

// TestSandboxFailure: the sandbox network refuses all-zero account numbers
// and PayIDs beginning with "fail", and pays everything else.
func TestSandboxFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		fails  bool
	}{
		{"an account", map[string]any{"account_number": "12345678"}, false},
		{"nine zeros", map[string]any{"account_number": "000000000"}, true},
		{"seven zeros (Japan)", map[string]any{"account_number": "0000000"}, true},
		{"six zeros is too short to be an account", map[string]any{"account_number": "000000"}, false},
		{"zeros inside a number", map[string]any{"account_number": "10000000"}, false},
		{"a PayID", map[string]any{"pay_id": "jane@example.com"}, false},
		{"a failing PayID", map[string]any{"pay_id": "FAIL@example.com"}, true},
		{"nothing", map[string]any{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SandboxFailure(tt.params) != ""; got != tt.fails {
				t.Errorf("SandboxFailure(%v) fails = %v, want %v", tt.params, got, tt.fails)
			}
		})
	}
}

// TestSandboxRoutesByLongestPrefix: an outcome goes to the listener whose
// prefix is the longest that matches its key ("" takes the rest).
func TestSandboxRoutesByLongestPrefix(t *testing.T) {
	t.Parallel()
	s := &Sandbox{handlers: map[string]OutcomeHandler{}}
	var got string
	listen := func(prefix string) {
		s.Listen(prefix, func(context.Context, *store.Tx, Outcome) (Applied, error) { got = prefix; return Applied{}, nil })
	}
	listen("")
	listen("stl_")
	listen("stl_x")
	listen("trf_")
	tests := []struct{ key, want string }{
		{"PAYOUTTX1", ""},
		{"stl_ABC", "stl_"},
		{"stl_xyz", "stl_x"},
		{"trf_123", "trf_"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got = "unset"
			if _, err := s.handler(tt.key)(context.Background(), nil, Outcome{Key: tt.key}); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("key %s went to %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}
