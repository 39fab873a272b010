package e2e

import (
	"context"
	"payd/internal/store/storetest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIDocumentIsValid loads the served document with kin-openapi and
// validates it as an OpenAPI 3.1 document.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	p := start(t, storetest.SQLiteDSN(t))
	r := p.do(req{method: "GET", path: "/openapi.json"})
	want(t, r, 200)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.Body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}
