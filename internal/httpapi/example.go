package httpapi

import (
	"embed"
	"encoding/json"
	"io/fs"
	"strconv"
	"strings"
)

// exampleFiles are the OpenAPI document's examples: one real exchange per
// operation, recorded by the end-to-end tests (go test ./internal/e2e/ -args
// -update) and normalised there, as testdata/examples/<operationId>.json.
//
//go:embed testdata/examples/*.json
var exampleFiles embed.FS

// Example is one recorded exchange, as the golden files hold it (the
// end-to-end tests write them).
type Example struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	Status int    `json:"status"`
	// Request is the body sent (a multipart body as an object of its parts).
	Request  json.RawMessage `json:"request,omitempty"`
	Response json.RawMessage `json:"response"`
}

// examples reads the recorded exchanges, by operation id.
func examples() (map[string]Example, error) {
	names, err := fs.Glob(exampleFiles, "testdata/examples/*.json")
	if err != nil {
		return nil, err
	}
	out := map[string]Example{}
	for _, name := range names {
		raw, err := exampleFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var ex Example
		if err := json.Unmarshal(raw, &ex); err != nil {
			return nil, err
		}
		id := strings.TrimSuffix(name[strings.LastIndex(name, "/")+1:], ".json")
		out[id] = ex
	}
	return out, nil
}

// addExamples puts an operation's recorded exchange into its request body
// and its answer.
func addExamples(op map[string]any, ex Example) {
	summary := ex.Method + " " + ex.Path
	if ex.Query != "" {
		summary += "?" + ex.Query
	}
	if body, ok := op["requestBody"].(map[string]any); ok && ex.Request != nil {
		for _, media := range body["content"].(map[string]any) {
			media.(map[string]any)["examples"] = map[string]any{"recorded": map[string]any{"summary": summary, "value": ex.Request}}
		}
	}
	ok, _ := op["responses"].(map[string]any)[strconv.Itoa(ex.Status)].(map[string]any)
	content, _ := ok["content"].(map[string]any)
	for _, media := range content {
		media.(map[string]any)["examples"] = map[string]any{"recorded": map[string]any{"summary": summary, "value": ex.Response}}
	}
}
