package httpapi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// undocumentedExamples are the operations without a recorded exchange: the
// document itself is no example of anything.
var undocumentedExamples = map[string]bool{"get_openapi_json": true}

// sandboxDocument is the sandbox's document (a superset of production's),
// loaded by kin-openapi.
func sandboxDocument(t *testing.T, edit func(doc *openAPIDoc)) (*openapi3.T, error) {
	t.Helper()
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	doc := a.buildOpenAPI()
	edit(&doc)
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	return loaded, loaded.Validate(context.Background(), openapi3.EnableExamplesValidation())
}

// TestOpenAPIExamples: every operation has a recorded exchange (internal/e2e
// records them with -update) with a request body when it takes one, and every
// example of the document, recorded or written, matches its schema.
func TestOpenAPIExamples(t *testing.T) {
	recorded, err := examples()
	if err != nil {
		t.Fatalf("read the examples: %v", err)
	}
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	ids := map[string]bool{}
	for _, rt := range a.routes {
		if rt.raw {
			continue
		}
		id := operationID(rt)
		ids[id] = true
		if undocumentedExamples[id] {
			continue
		}
		t.Run(id, func(t *testing.T) {
			ex, ok := recorded[id]
			if !ok {
				t.Fatalf("no example: run an end-to-end test that calls %s %s with go test ./internal/e2e/ -args -update", rt.method, rt.path)
			}
			if ex.Method != rt.method || ex.Path != rt.path {
				t.Errorf("the example is of %s %s, want %s %s", ex.Method, ex.Path, rt.method, rt.path)
			}
			if got, want := ex.Request != nil, rt.body != nil || rt.form != nil; got != want {
				t.Errorf("the example has a request body: %v, want %v", got, want)
			}
			if ex.Status/100 != 2 || len(ex.Response) == 0 {
				t.Errorf("the example's answer is %d %s, want a 2xx with a body", ex.Status, ex.Response)
			}
		})
	}
	for id := range recorded {
		if !ids[id] {
			t.Errorf("testdata/examples/%s.json is the example of no operation: delete it", id)
		}
	}
	if _, err := sandboxDocument(t, func(*openAPIDoc) {}); err != nil {
		t.Errorf("an example does not match its schema: %v", err)
	}
}

// TestOpenAPIExamplesAreValidated keeps TestOpenAPIExamples honest: an
// example that does not match its schema makes the document invalid.
func TestOpenAPIExamplesAreValidated(t *testing.T) {
	_, err := sandboxDocument(t, func(doc *openAPIDoc) {
		op := doc.Paths["/v2/balances/detail"]["get"].(map[string]any)
		media := op["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
		media["examples"] = map[string]any{"wrong": map[string]any{"value": map[string]any{"currency": 7}}}
	})
	if err == nil {
		t.Error("a balance example with a numeric currency passed validation")
	}
}
