package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestEveryAnswerHasRequestID: every answer, success or error, in the
// envelope or plain text, carries an X-Request-Id; unknown paths are 404
// NOT_FOUND and known paths with the wrong method 405 with an Allow header,
// both in the errors envelope; the operations endpoints answer.
func TestEveryAnswerHasRequestID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		tests := []struct {
			name   string
			r      req
			status int
			code   string // errors.code, when the answer is an error
			allow  string
			body   string // contained in the body
		}{
			{name: "authenticated GET", r: req{method: "GET", path: "/v2/balances", as: &m}, status: 200, body: `"records":`},
			{name: "no credentials", r: req{method: "GET", path: "/v2/balances"}, status: 401, code: "REQUIRE_LOGIN"},
			{name: "unknown path under /api", r: req{method: "GET", path: "/v9/nothing", as: &m}, status: 404, code: "NOT_FOUND"},
			{name: "unknown path at the root", r: req{method: "GET", path: "/nothing", root: true}, status: 404, code: "NOT_FOUND"},
			{name: "trailing slash is another path", r: req{method: "GET", path: "/v2/balances/", as: &m}, status: 404, code: "NOT_FOUND"},
			{name: "POST to a GET endpoint", r: req{method: "POST", path: "/v2/balances", as: &m, body: `{}`}, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET"},
			{name: "DELETE on the clock", r: req{method: "DELETE", path: "/v2/sandbox/clock", as: &m}, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET, POST"},
			{name: "GET on simulate_deposit", r: req{method: "GET", path: "/v1/simulate_deposit", as: &m}, status: 405, code: "METHOD_NOT_ALLOWED", allow: "POST"},
			{name: "POST to healthz", r: req{method: "POST", path: "/healthz", root: true}, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET"},
			{name: "healthz", r: req{method: "GET", path: "/healthz", root: true}, status: 200, body: "ok"},
			{name: "readyz", r: req{method: "GET", path: "/readyz", root: true}, status: 200, body: "ready"},
			{name: "metrics", r: req{method: "GET", path: "/metrics", root: true}, status: 200, body: "payd_http_requests_total"},
			{name: "openapi", r: req{method: "GET", path: "/openapi.json"}, status: 200, body: `"openapi"`},
			{name: "validation error", r: req{method: "POST", path: "/v2/sandbox/clock", as: &m, body: `{}`}, status: 422, code: "VALIDATION_FAILED"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(tt.r)
				want(t, r, tt.status)
				gotCode := codeOf(r)
				if gotCode != tt.code || r.Header.Get("Allow") != tt.allow || !strings.Contains(string(r.Body), tt.body) || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("code %q, Allow %q, X-Request-Id %q, body %.200s; want code %q, Allow %q, a request id, a body containing %q",
						gotCode, r.Header.Get("Allow"), r.Header.Get("X-Request-Id"), r.Body, tt.code, tt.allow, tt.body)
				}
			})
		}
		metrics := string(p.do(req{method: "GET", path: "/metrics", root: true}).Body)
		if want := `payd_http_requests_total{route="GET /api/v2/balances",status="200"} 1`; !strings.Contains(metrics, want) {
			t.Errorf("metrics do not count the balances request: want a line %q", want)
		}
	})
}

// codeOf is errors.code of an answer, or "" when it is not the errors envelope.
func codeOf(r response) string {
	var e struct {
		Errors struct {
			Code string `json:"code"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Errors.Code
}

// TestRequestIDEcho: a sane X-Request-Id sent by the caller is used and
// echoed; anything else is replaced by a fresh id.
func TestRequestIDEcho(t *testing.T) {
	t.Parallel()
	fresh := `^req_[0-9A-Z]{16}$`
	tests := []struct {
		name string
		sent string
		want string // pattern of the answer's X-Request-Id
	}{
		{name: "sane id", sent: "abc-123.DEF:9_x", want: `^abc-123\.DEF:9_x$`},
		{name: "a uuid", sent: "0f8fad5b-d9cb-469f-a165-70867728950e", want: `^0f8fad5b-d9cb-469f-a165-70867728950e$`},
		{name: "128 characters", sent: strings.Repeat("a", 128), want: "^a{128}$"},
		{name: "none", sent: "", want: fresh},
		{name: "129 characters", sent: strings.Repeat("a", 129), want: fresh},
		{name: "spaces", sent: "has space", want: fresh},
		{name: "log injection", sent: `x" level=ERROR msg="forged`, want: fresh},
		{name: "non-ASCII", sent: "ｲﾄﾞ", want: fresh},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(req{method: "GET", path: "/v2/balances", as: &m, header: map[string]string{"X-Request-Id": tt.sent}})
				want(t, r, 200)
				if got := r.Header.Get("X-Request-Id"); !regexp.MustCompile(tt.want).MatchString(got) {
					t.Errorf("sent X-Request-Id %q, got %q, want a match of %s", tt.sent, got, tt.want)
				}
			})
		}
	})
}

// TestLookupsNameTheirParameter: an endpoint that reads what one query
// parameter names answers 422 VALIDATION_FAILED naming the parameter when
// it is missing or too long, and what it documents when the caller has
// nothing by that name.
func TestLookupsNameTheirParameter(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		long := strings.Repeat("x", 300)
		for _, tt := range []struct {
			path, param, unknown string
			status               int
			code                 string // errors.code of the answer to unknown
		}{
			{"/v2/payins/detail", "uuid", "NOSUCH1", 404, "NOT_FOUND"},
			{"/v2/payins/payin_method/params", "payin_method_name", "no_such_method", 422, "METHOD_NOT_ENABLED"},
			{"/v2/payouts/detail", "uuid", "NOSUCH1", 404, "NOT_FOUND"},
			{"/v2/payouts/payout_method/params", "payout_method_name", "no_such_method", 404, "NOT_FOUND"},
			{"/v2/settlements/detail", "uuid", "NOSUCH1", 404, "NOT_FOUND"},
			{"/v2/transfers/detail", "uuid", "NOSUCH1", 404, "NOT_FOUND"},
			{"/v2/webhooks/deliveries", "uuid", "NOSUCH1", 200, ""}, // no events about it
			{"/v2/banks/branches", "bank_code", "9999", 404, "NOT_FOUND"},
		} {
			t.Run(tt.path, func(t *testing.T) {
				for _, c := range []struct{ query, problem string }{{"", "is required"}, {"?" + tt.param + "=" + long, "is too long"}} {
					r := p.do(req{method: "GET", path: tt.path + c.query, as: &m})
					want(t, r, 422)
					var e struct {
						Errors struct {
							Code   string            `json:"code"`
							Fields map[string]string `json:"fields"`
						} `json:"errors"`
					}
					if err := json.Unmarshal(r.Body, &e); err != nil || e.Errors.Code != "VALIDATION_FAILED" || e.Errors.Fields[tt.param] != c.problem {
						t.Errorf("GET %s%.20s: %s; want VALIDATION_FAILED with %s %q", tt.path, c.query, r.Body, tt.param, c.problem)
					}
				}
				r := p.do(req{method: "GET", path: tt.path + "?" + tt.param + "=" + tt.unknown, as: &m})
				if r.Status != tt.status || codeOf(r) != tt.code {
					t.Errorf("GET %s with an unknown %s: %d %s; want %d %s", tt.path, tt.param, r.Status, r.Body, tt.status, tt.code)
				}
			})
		}
	})
}
