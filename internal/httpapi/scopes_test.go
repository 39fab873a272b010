package httpapi

import (
	"slices"
	"strings"
	"testing"

	"payd/internal/merchant"
)

// TestEveryRouteHasAScope: every authenticated route of the sandbox (a
// superset of production's routes) needs a scope of CONTRACT §23's
// vocabulary, or none when it is the access token exchange; a route whose
// path no resource of scopeResources holds fails here, naming it; and the
// document shows each scope as the operation's x-required-scope.
func TestEveryRouteHasAScope(t *testing.T) {
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	doc := a.buildOpenAPI()
	for _, rt := range a.routes {
		scope := scopeOf(rt)
		if rt.raw || rt.auth == authNone {
			if scope != "" {
				t.Errorf("%s %s authenticates no one but needs %q", rt.method, rt.path, scope)
			}
			continue
		}
		resource, action, _ := strings.Cut(scope, ":")
		switch {
		case unscoped[rt.path]:
			if scope != "" {
				t.Errorf("%s %s needs %q, want none", rt.method, rt.path, scope)
			}
		case !slices.Contains(merchant.Resources, resource) || (action != "read" && action != "write"):
			t.Errorf("%s %s has scope %q: give its path a resource in scopeResources", rt.method, rt.path, scope)
		case (rt.sandboxOnly || strings.Contains(rt.path, "simulate")) && scope != "sandbox:write":
			t.Errorf("%s %s is the sandbox's but needs %q", rt.method, rt.path, scope)
		case rt.method == "GET" && action != "read" && resource != "sandbox", rt.method != "GET" && action != "write":
			t.Errorf("%s %s needs %q: a GET reads, anything else writes", rt.method, rt.path, scope)
		}
		if rt.raw {
			continue
		}
		op, _ := doc.Paths[rt.path][strings.ToLower(rt.method)].(map[string]any)
		if got, _ := op["x-required-scope"].(string); got != scope {
			t.Errorf("%s %s documents x-required-scope %q, want %q", rt.method, rt.path, got, scope)
		}
	}
}
