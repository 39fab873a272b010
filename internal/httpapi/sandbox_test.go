package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// TestClockMoveRefusals: a clock move that gives neither or both of
// advance_seconds and now is a 422 whose message states the rule as a
// sentence and whose fields name both members (CONTRACT §3's test clock).
func TestClockMoveRefusals(t *testing.T) {
	const rule = "give exactly one of advance_seconds (the seconds to move the clock forward) and now (the later time to move it to); "
	neither := map[string]string{"advance_seconds": "is required unless now is given", "now": "is required unless advance_seconds is given"}
	both := map[string]string{"advance_seconds": "must not be given with now", "now": "must not be given with advance_seconds"}
	tests := []struct {
		name        string
		body        string
		wantMessage string
		wantFields  map[string]string
	}{
		{"neither member", `{}`, rule + "neither was given", neither},
		{"both null", `{"advance_seconds":null,"now":null}`, rule + "neither was given", neither},
		{"both members", `{"advance_seconds":10,"now":"2099-01-01T00:00:00Z"}`, rule + "not both", both},
		{"both, advance_seconds zero", `{"advance_seconds":0,"now":"2099-01-01T00:00:00Z"}`, rule + "not both", both},
	}
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/api/v2/sandbox/clock", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			a.advanceClock(w, r)
			var got errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("answer %d %s: %v", w.Code, w.Body, err)
			}
			if w.Code != http.StatusUnprocessableEntity || got.Errors.Code != "VALIDATION_FAILED" ||
				got.Errors.Message != tt.wantMessage || !reflect.DeepEqual(got.Errors.Fields, tt.wantFields) {
				t.Errorf("answer = %d %s\nwant 422 VALIDATION_FAILED %q, fields %v", w.Code, w.Body, tt.wantMessage, tt.wantFields)
			}
		})
	}
}
