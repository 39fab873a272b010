package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd/internal/ratelimit"
)

// servedDocument is the document env's API serves at /api/openapi.json.
func servedDocument(t *testing.T, env Environment) []byte {
	t.Helper()
	a := New(Deps{Env: env, Metrics: NewMetrics()})
	rec := httptest.NewRecorder()
	a.openAPI(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// pointerEscaper escapes a member name in a JSON pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// nullsOutsideExamples are the JSON pointers of the nulls in v, except
// inside example values, where null is a value like any other.
func nullsOutsideExamples(v any, at string) []string {
	switch v := v.(type) {
	case nil:
		return []string{at}
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k == "example" || k == "examples" {
				continue
			}
			out = append(out, nullsOutsideExamples(v[k], at+"/"+pointerEscaper.Replace(k))...)
		}
		return out
	case []any:
		var out []string
		for i, e := range v {
			out = append(out, nullsOutsideExamples(e, at+"/"+strconv.Itoa(i))...)
		}
		return out
	}
	return nil
}

// TestOpenAPIHasNoNull: the served documents have no null outside example
// values. Where OpenAPI wants an object or an array (security, required,
// enum, parameters, tags), null breaks the document ("None is not of type
// 'array'"); a member with nothing in it is left out instead.
func TestOpenAPIHasNoNull(t *testing.T) {
	for _, env := range []Environment{Sandbox, Production} {
		t.Run(string(env), func(t *testing.T) {
			var doc any
			if err := json.Unmarshal(servedDocument(t, env), &doc); err != nil {
				t.Fatal(err)
			}
			if got := nullsOutsideExamples(doc, ""); len(got) > 0 {
				t.Errorf("null at %s", strings.Join(got, ", "))
			}
		})
	}
}

// TestNullsOutsideExamples keeps TestOpenAPIHasNoNull honest.
func TestNullsOutsideExamples(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"root security", `{"openapi":"3.1.0","security":null}`, []string{"/security"}},
		{"required", `{"components":{"schemas":{"A":{"type":"object","required":null}}}}`, []string{"/components/schemas/A/required"}},
		{"in a list", `{"paths":{"/a":{"get":{"tags":[null]}}}}`, []string{"/paths/~1a/get/tags/0"}},
		{"example values", `{"examples":{"x":{"value":{"paid_at":null}}},"schema":{"examples":[null]}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
				t.Fatal(err)
			}
			if got := nullsOutsideExamples(doc, ""); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOpenAPIStatesTheThrottle: the API description states the
// authentication throttle's bounds (CONTRACT §2: 5 and 20 failures per
// client and app-id, 20 and 100 per client, in a minute), written from the
// throttle's values: other values give other words.
func TestOpenAPIStatesTheThrottle(t *testing.T) {
	var doc struct {
		Info struct{ Description string } `json:"info"`
	}
	if err := json.Unmarshal(servedDocument(t, Sandbox), &doc); err != nil {
		t.Fatal(err)
	}
	other := &ratelimit.Throttle{Window: 90 * time.Second,
		PerApp: ratelimit.Bounds{SlowAfter: 7, RefuseAfter: 31}, PerClient: ratelimit.Bounds{SlowAfter: 43, RefuseAfter: 157}}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"served document", doc.Info.Description, []string{"each over 1 minute from its first failure",
			"past 5 with one app-id, or 20 with any, each further failure is answered more slowly",
			"past 20 with one app-id, or 100 with any, the client is refused with 429 RATE_LIMITED"}},
		{"other bounds", throttleText(other), []string{"each over 1.5 minutes from its first failure",
			"past 7 with one app-id, or 43 with any, each further failure is answered more slowly",
			"past 31 with one app-id, or 157 with any, the client is refused with 429 RATE_LIMITED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.text, w) {
					t.Errorf("the text does not say %q:\n%s", w, tt.text)
				}
			}
		})
	}
}

// documentedErrors is what one error response of the served document says
// of its codes.
type documentedErrors struct {
	Description string `json:"description"`
	Content     struct {
		JSON struct {
			Schema struct {
				Properties struct {
					Errors struct {
						AllOf []struct {
							Properties struct {
								Code struct {
									Enum []string `json:"enum"`
								} `json:"code"`
							} `json:"properties"`
						} `json:"allOf"`
					} `json:"errors"`
				} `json:"properties"`
			} `json:"schema"`
			Examples map[string]struct {
				Value errorBody `json:"value"`
			} `json:"examples"`
		} `json:"application/json"`
	} `json:"content"`
}

// enum is the restriction of errors.code, wherever in the allOf it is.
func (d documentedErrors) enum() []string {
	var out []string
	for _, branch := range d.Content.JSON.Schema.Properties.Errors.AllOf {
		out = append(out, branch.Properties.Code.Enum...)
	}
	return out
}

// TestOpenAPIListsEachOperationsErrorCodes: each operation of the served
// document lists, for each error status, the codes routeErrors gives it
// (its own and those its kind shares) three ways: its description names
// each with its meaning, errors.code is restricted to exactly them, and each
// has an example answering that code.
func TestOpenAPIListsEachOperationsErrorCodes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]documentedErrors `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(servedDocument(t, Sandbox), &doc); err != nil {
		t.Fatal(err)
	}
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	for _, rt := range a.routes {
		if rt.raw {
			continue
		}
		op := doc.Paths[rt.path][strings.ToLower(rt.method)]
		for status, codes := range routeErrors(rt) {
			t.Run(operationID(rt)+"/"+strconv.Itoa(status), func(t *testing.T) {
				got, ok := op.Responses[strconv.Itoa(status)]
				if !ok {
					t.Fatalf("no %d response", status)
				}
				var want []string
				for _, c := range codes {
					want = append(want, c.code)
					if line := "- " + c.code + ": " + c.meaning; !strings.Contains(got.Description, line) {
						t.Errorf("the description does not list %q:\n%s", line, got.Description)
					}
					if ex := got.Content.JSON.Examples[c.code]; ex.Value.Errors.Code != c.code {
						t.Errorf("the example of %s answers %q", c.code, ex.Value.Errors.Code)
					}
				}
				if !slices.Equal(got.enum(), want) {
					t.Errorf("errors.code is one of %q, want %q", got.enum(), want)
				}
				if len(got.Content.JSON.Examples) != len(want) {
					t.Errorf("%d examples, want one for each of %q", len(got.Content.JSON.Examples), want)
				}
			})
		}
	}
}

// TestDocumentSpeaksToItsReader: the served document cites no document its
// reader cannot see ("CONTRACT §3"), its schema names say their package
// once (Payin, not PayinPayin), and each event is a webhook titled by it.
func TestDocumentSpeaksToItsReader(t *testing.T) {
	t.Parallel()
	for _, env := range []Environment{Sandbox, Production} {
		raw := servedDocument(t, env)
		if i := bytes.Index(raw, []byte("CONTRACT §")); i >= 0 {
			t.Errorf("%s document cites the contract: %q", env, raw[max(0, i-80):min(len(raw), i+40)])
		}
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
			Webhooks map[string]struct {
				Post struct {
					Types []string `json:"x-event-types"`
				} `json:"post"`
			} `json:"webhooks"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			for _, typ := range e.types {
				if w, ok := doc.Webhooks[typ]; !ok || len(w.Post.Types) != 1 || w.Post.Types[0] != typ {
					t.Errorf("%s document: event %s is no webhook titled by itself (%v)", env, typ, w.Post.Types)
				}
			}
		}
		stutter := regexp.MustCompile(`^([A-Z][a-z]+)([A-Z][a-z]+)`)
		for name := range doc.Components.Schemas {
			if m := stutter.FindStringSubmatch(name); m != nil && m[1] == m[2] {
				t.Errorf("%s document: schema %s says its package twice", env, name)
			}
		}
	}
}
