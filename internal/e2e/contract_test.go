package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The OpenAPI document is a tested contract (issue: the document and the
// server cannot drift apart): every request the end-to-end tests send
// through the harness, and every answer payd gives, is checked against the
// document payd serves. An answer must match the document's schema for its
// status code (an undocumented status fails too). A request the document
// refuses may be refused by payd too (tests send bad input on purpose), but
// payd must never accept one with a 2xx: then the document is wrong. Fuzzed
// requests (arbitrary bytes, content types and member spellings, which payd
// reads leniently: a missing Content-Type, null as absent, member names
// without regard to case) are exempt from that rule; their answers are not.

// contract is the sandbox document (a superset of production's), loaded once
// from the first sandbox server that answers a test.
var contract struct {
	once   sync.Once
	err    error
	router routers.Router
	// events maps each X-Event-Type to the schema of its body.
	events map[string]*openapi3.SchemaRef
}

// loadContract reads the document from the sandbox server at base() (called
// only by the first caller).
func loadContract(base func() string) (routers.Router, error) {
	contract.once.Do(func() {
		res, err := http.Get(base() + "/openapi.json")
		if err != nil {
			contract.err = err
			return
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			contract.err = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			contract.err = fmt.Errorf("load the OpenAPI document: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contract.err = fmt.Errorf("the OpenAPI document is invalid: %w", err)
			return
		}
		contract.events = map[string]*openapi3.SchemaRef{}
		for _, item := range doc.Webhooks {
			op := item.Post
			var types []string
			if raw, ok := op.Extensions["x-event-types"].([]any); ok {
				for _, t := range raw {
					types = append(types, fmt.Sprint(t))
				}
			}
			for _, t := range types {
				contract.events[t] = op.RequestBody.Value.Content["application/json"].Schema
			}
		}
		doc.Servers = nil // paths are matched without the /api prefix
		contract.router, contract.err = gorillamux.NewRouter(doc)
	})
	return contract.router, contract.err
}

// violation is how an exchange breaks the document, or "" when it does not.
// path is the request's path under /api.
func violation(router routers.Router, method, path string, header http.Header, reqBody []byte, fuzzed bool,
	status int, resHeader http.Header, resBody []byte) string {
	hr, err := http.NewRequest(method, "http://payd"+path, bytes.NewReader(reqBody))
	if err != nil {
		return ""
	}
	hr.Header = header.Clone()
	route, params, err := router.FindRoute(hr)
	if err != nil {
		return "" // not a documented operation: the 404/405 fallbacks answer it
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if status/100 == 2 && reqErr != nil && !fuzzed {
		return fmt.Sprintf("payd answered %d to a request the document refuses: %v", status, reqErr)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: resHeader,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(resBody)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Sprintf("the %d answer does not match the document: %v", status, err)
	}
	return ""
}

// checkContract reports, as a test error, an exchange of p's that breaks
// the document.
func (p *payd) checkContract(r req, hr *http.Request, reqBody []byte, status int, resHeader http.Header, resBody []byte) {
	if r.root || strings.HasPrefix(r.path, "/openapi.json") {
		return
	}
	router, err := loadContract(p.sandboxBase)
	if err != nil {
		p.t.Errorf("contract: %v", err)
		return
	}
	if v := violation(router, r.method, r.path, hr.Header, reqBody, r.fuzzed, status, resHeader, resBody); v != "" {
		p.t.Errorf("%s %s breaks the OpenAPI document: %s\nrequest body: %.500s\nanswer body: %.500s", r.method, r.path, v, reqBody, resBody)
		return
	}
	if !r.fuzzed {
		p.recordExample(router, hr, reqBody, status, resHeader, resBody)
	}
}

// sandboxBase is the address of a sandbox server: p's, or, when p is a
// production server, a fresh one's.
func (p *payd) sandboxBase() string {
	if !p.production {
		return p.base
	}
	return start(p.t, "sqlite:"+p.t.TempDir()+"/contract.db").base
}

// TestContractCheckCatchesDrift keeps the check honest: a wrong answer shape,
// an undocumented status, an error code the operation does not document for
// its status and an accepted request the document refuses are all caught; a
// right exchange is not.
func TestContractCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	p := start(t, "sqlite:"+t.TempDir()+"/c.db")
	router, err := loadContract(p.sandboxBase)
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	okBody := []byte(`{"currency":"AUD","available_balance":1.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":1.00}`)
	tests := []struct {
		name          string
		method, path  string
		reqBody       string
		status        int
		resBody       []byte
		wantViolation bool
	}{
		{"right shape", "GET", "/v2/balances/detail", "", 200, okBody, false},
		{"wrapped in record", "GET", "/v2/balances/detail", "", 200, []byte(`{"record":` + string(okBody) + `}`), true},
		{"amount as a string", "GET", "/v2/balances/detail", "", 200, bytes.Replace(okBody, []byte(`1.00,"incoming`), []byte(`"1.00","incoming`), 1), true},
		{"undocumented status", "GET", "/v2/balances/detail", "", 418, []byte(`{"errors":{"code":"TEAPOT","message":"no"}}`), true},
		{"accepted a body the document refuses", "POST", "/v2/sandbox/clock", `{"advance_seconds":"soon"}`, 200, []byte(`{"now":"2024-07-29T15:51:28.071Z"}`), true},
		{"refused a body the document refuses", "POST", "/v2/sandbox/clock", `{"advance_seconds":"soon"}`, 400, []byte(`{"errors":{"code":"WRONG_TYPE","message":"advance_seconds must be a number"}}`), false},
		{"documented error code", "GET", "/v2/balances/detail", "", 404, []byte(`{"errors":{"code":"NOT_FOUND","message":"the merchant has no XXX account"}}`), false},
		{"error code not documented for the operation", "GET", "/v2/balances/detail", "", 422, []byte(`{"errors":{"code":"INSUFFICIENT_FUNDS","message":"no"}}`), true},
		{"error code documented for another status", "GET", "/v2/balances/detail", "", 404, []byte(`{"errors":{"code":"VALIDATION_FAILED","message":"no"}}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violation(router, tt.method, tt.path, json, []byte(tt.reqBody), false, tt.status, json, tt.resBody)
			if (got != "") != tt.wantViolation {
				t.Errorf("violation = %q, want one: %v", got, tt.wantViolation)
			}
		})
	}
}

// eventViolation is how a delivered webhook body breaks the document's
// schema for its event type, or "" when it does not.
func eventViolation(eventType string, body []byte) string {
	if contract.router == nil {
		return "" // no document loaded yet
	}
	schema, ok := contract.events[eventType]
	if !ok {
		return "the document has no webhook for X-Event-Type " + eventType
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "the body is not JSON: " + err.Error()
	}
	if err := schema.Value.VisitJSON(v); err != nil {
		return err.Error()
	}
	return ""
}
