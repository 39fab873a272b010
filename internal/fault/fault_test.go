package fault

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestStatus: each kind's HTTP status, the one mapping the API and the
// pages answer with; a refused field is 422 everywhere (CONTRACT §16).
func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind Kind
		want int
	}{
		{"invalid", Invalid, http.StatusUnprocessableEntity},
		{"malformed", Malformed, http.StatusBadRequest},
		{"not found", NotFound, http.StatusNotFound},
		{"conflict", Conflict, http.StatusConflict},
		{"forbidden", Forbidden, http.StatusForbidden},
		{"unauthenticated", Unauthenticated, http.StatusUnauthorized},
		{"too large", TooLarge, http.StatusRequestEntityTooLarge},
		{"unsupported media", UnsupportedMedia, http.StatusUnsupportedMediaType},
		{"rate limited", RateLimited, http.StatusTooManyRequests},
		{"busy", Busy, http.StatusServiceUnavailable},
		{"unknown kind", Kind(0), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Status(tt.kind); got != tt.want {
				t.Errorf("Status(%d) = %d, want %d", tt.kind, got, tt.want)
			}
		})
	}
}

// TestStatusOf: a domain error, wrapped or not, answers its kind's status;
// any other error is a bug or an outage, 500.
func TestStatusOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"field", Field("reason", "must be 5 to 500 characters"), http.StatusUnprocessableEntity},
		{"wrapped state", fmt.Errorf("decide: %w", State("payout is completed")), http.StatusConflict},
		{"not a domain error", errors.New("connection reset"), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusOf(tt.err); got != tt.want {
				t.Errorf("StatusOf(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
