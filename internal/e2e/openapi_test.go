package e2e

import (
	"encoding/json"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// contractEndpoints are the endpoints CONTRACT requires so far, as the
// OpenAPI document names them (relative to the /api server). Grow this list
// as endpoints are added.
var contractEndpoints = []struct{ method, path string }{
	{"get", "/v1/payment_gateways/access_token"},
	{"post", "/v1/simulate_deposit"},
	{"get", "/v2/balances"},
	{"get", "/v2/balances/detail"},
	{"get", "/v2/balances/history"},
	{"get", "/v2/sandbox/clock"},
	{"post", "/v2/sandbox/clock"},
	{"get", "/v2/reports/settlements"},
}

// openAPIDoc is the part of the document the tests read.
type openAPIDoc struct {
	OpenAPI  string                                 `json:"openapi"`
	Paths    map[string]map[string]openAPIOperation `json:"paths"`
	Webhooks map[string]map[string]openAPIOperation `json:"webhooks"`
}

type openAPIOperation struct {
	RequestBody *struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// successSchema returns the application/json schema of a 2xx response.
func (op openAPIOperation) successSchema() map[string]any {
	for code, r := range op.Responses {
		if strings.HasPrefix(code, "2") && r.Content["application/json"].Schema != nil {
			return r.Content["application/json"].Schema
		}
	}
	return nil
}

// streams reports whether the operation answers an endless
// text/event-stream (GET /v2/events/stream).
func (op openAPIOperation) streams() bool {
	_, ok := op.Responses["200"].Content["text/event-stream"]
	return ok
}

// bodySchema returns the application/json schema of the request body.
func (op openAPIOperation) bodySchema() map[string]any {
	if op.RequestBody == nil {
		return nil
	}
	return op.RequestBody.Content["application/json"].Schema
}

// openAPI reads the server's OpenAPI document.
func (p *payd) openAPI() openAPIDoc {
	p.t.Helper()
	r := p.do(req{method: "GET", path: "/openapi.json"})
	want(p.t, r, 200)
	var doc openAPIDoc
	r.Decode(p.t, &doc)
	return doc
}

// TestOpenAPIDocumentsTheContract: /api/openapi.json is OpenAPI 3.1.0 and has
// each endpoint CONTRACT requires, with a JSON schema for its success answer
// and, for a POST, for its request body.
func TestOpenAPIDocumentsTheContract(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		doc := p.openAPI()
		if doc.OpenAPI != "3.1.0" {
			t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
		}
		for _, e := range contractEndpoints {
			t.Run(e.method+" "+e.path, func(t *testing.T) {
				op, ok := doc.Paths[e.path][e.method]
				hasBody := op.bodySchema() != nil
				if !ok || op.successSchema() == nil || hasBody != (e.method == "post") {
					t.Errorf("operation present %v, 2xx schema %v, request body schema %v; want present, a 2xx schema, and a body schema exactly for POST",
						ok, op.successSchema(), op.bodySchema())
				}
			})
		}
	})
}

// pathParam matches a templated path segment such as {id}.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// wantDocumentedRoutesServed calls every operation of doc and fails for each
// that the server answers with its no-such-endpoint 404, so the document lists
// nothing the server lacks. A 404 for a record (a templated id that does not
// exist) is a served route; only the router's own 404 ("no endpoint …") is not.
func wantDocumentedRoutesServed(t *testing.T, p *payd, doc openAPIDoc, as creds) {
	t.Helper()
	for docPath, ops := range doc.Paths {
		for method, op := range ops {
			// Paths are relative to the /api server; operations endpoints are written /../healthz.
			full := path.Join("/api", pathParam.ReplaceAllString(docPath, "NOSUCHID"))
			if op.streams() {
				full += "?type=%20" // a stream never ends: its refused filter shows it served
			}
			r := p.do(req{method: strings.ToUpper(method), path: full, root: true, as: &as, body: `{}`})
			var e struct {
				Errors struct{ Code, Message string } `json:"errors"`
			}
			_ = json.Unmarshal(r.Body, &e)
			if r.Status == 404 && strings.HasPrefix(e.Errors.Message, "no endpoint") {
				t.Errorf("%s %s is documented but not served: %s", method, docPath, r.Body)
			}
		}
	}
}

// TestOpenAPIListsOnlyServedRoutes: every operation in the sandbox's document
// is answered by the sandbox.
func TestOpenAPIListsOnlyServedRoutes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		wantDocumentedRoutesServed(t, p, p.openAPI(), p.merchant("AUD")["AUD"])
	})
}

// TestOpenAPIMatchesEnvironment: the sandbox documents its sandbox routes,
// and production, which does not serve them, does not document them.
func TestOpenAPIMatchesEnvironment(t *testing.T) {
	t.Parallel()
	var sandboxPaths, productionPaths []string
	each(t, func(t *testing.T, p *payd) {
		sandboxPaths = slices.Sorted(maps.Keys(p.openAPI().Paths))
	})
	each(t, func(t *testing.T, p *payd) {
		doc := p.openAPI()
		productionPaths = slices.Sorted(maps.Keys(doc.Paths))
		wantDocumentedRoutesServed(t, p, doc, p.merchant("AUD")["AUD"])
	}, production)
	got := []bool{slices.Contains(sandboxPaths, "/v2/sandbox/clock"), slices.Contains(productionPaths, "/v2/sandbox/clock")}
	if !slices.Equal(got, []bool{true, false}) {
		t.Errorf("/v2/sandbox/clock documented in sandbox %v, in production %v; want true, false", got[0], got[1])
	}
}
