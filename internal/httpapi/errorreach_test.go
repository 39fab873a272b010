package httpapi

import (
	"go/ast"
	"go/token"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// callGraph is a coarse, name-based call graph of internal/: a function or
// package-level variable ("payin.Create", "idempotency.errInFlight") points
// at every name it mentions. Methods of one package with the same name are
// one node, and calls through interfaces or function values are not
// followed, so it over-approximates some paths and misses others; the e2e
// contract check covers what it misses.
type callGraph struct {
	edges map[string]map[string]bool
	// codes are the errors each node builds itself.
	codes map[string][]builtError
	// fieldPkg maps struct field names typed *pkg.T or pkg.T to each such
	// pkg, so a.Payins.Create reads as payin.Create.
	fieldPkg map[string][]string
}

func newCallGraph(t *testing.T) *callGraph {
	fset, files := sourceFiles(t)
	g := &callGraph{edges: map[string]map[string]bool{}, codes: map[string][]builtError{}, fieldPkg: fieldPackages(files)}
	type span struct {
		key        string
		start, end token.Position
	}
	var spans []span
	for _, f := range files {
		imported := importNames(f)
		for _, d := range f.Decls {
			for key, body := range declBodies(f.Name.Name, d) {
				g.link(key, f.Name.Name, imported, body)
				spans = append(spans, span{key, fset.Position(body.Pos()), fset.Position(body.End())})
			}
		}
	}
	for _, b := range builtErrors(t, fset, files, stringConstants(files)) {
		for _, s := range spans {
			if unreachableBuilds[s.key+" "+b.code] != "" {
				continue
			}
			if b.at.Filename == s.start.Filename && b.at.Offset >= s.start.Offset && b.at.Offset <= s.end.Offset {
				g.codes[s.key] = append(g.codes[s.key], b)
			}
		}
	}
	return g
}

// declBodies are a declaration's nodes: a function's body, or each
// package-level variable's value.
func declBodies(pkg string, d ast.Decl) map[string]ast.Node {
	out := map[string]ast.Node{}
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Body != nil {
			out[pkg+"."+d.Name.Name] = d.Body
		}
	case *ast.GenDecl:
		if d.Tok != token.VAR {
			break
		}
		for _, spec := range d.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					out[pkg+"."+name.Name] = vs.Values[i]
				}
			}
		}
	}
	return out
}

// link records the names body mentions as edges of key.
func (g *callGraph) link(key, pkg string, imported map[string]bool, body ast.Node) {
	if g.edges[key] == nil {
		g.edges[key] = map[string]bool{}
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			switch x := n.X.(type) {
			case *ast.Ident:
				if imported[x.Name] {
					g.edges[key][x.Name+"."+n.Sel.Name] = true
					return false
				}
				g.edges[key][pkg+"."+n.Sel.Name] = true
			case *ast.SelectorExpr:
				for _, p := range g.fieldPkg[x.Sel.Name] {
					g.edges[key][p+"."+n.Sel.Name] = true
				}
			default:
				g.edges[key][pkg+"."+n.Sel.Name] = true
			}
			ast.Inspect(n.X, visit)
			return false
		case *ast.CompositeLit:
			// T{…} names a type, not a function that shares its name.
			for _, el := range n.Elts {
				ast.Inspect(el, visit)
			}
			return false
		case *ast.Ident:
			g.edges[key][pkg+"."+n.Name] = true
		}
		return true
	}
	ast.Inspect(body, visit)
}

// reachable are the errors built by the nodes reachable from start.
func (g *callGraph) reachable(start []string) []builtError {
	seen := map[string]bool{}
	var out []builtError
	for len(start) > 0 {
		k := start[len(start)-1]
		start = start[:len(start)-1]
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, g.codes[k]...)
		for next := range g.edges[k] {
			start = append(start, next)
		}
	}
	return out
}

func fieldPackages(files []*ast.File) map[string][]string {
	out := map[string][]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				typ := field.Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				sel, ok := typ.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); ok {
					for _, name := range field.Names {
						if !slices.Contains(out[name.Name], x.Name) {
							out[name.Name] = append(out[name.Name], x.Name)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

func importNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = true
	}
	return out
}

// routeHandlers maps "METHOD path" to the names a route's handle expression
// mentions (a.payinDetail; jsonHandler(a, 201, a.Payins.Create)), read from
// the route table's source.
func routeHandlers(t *testing.T, g *callGraph) map[string][]string {
	_, files := sourceFiles(t)
	consts := stringConstants(files)
	out := map[string][]string{}
	for _, f := range files {
		if f.Name.Name != "httpapi" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var method, path string
			var names []string
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, _ := kv.Key.(*ast.Ident)
				switch {
				case key == nil:
				case key.Name == "method":
					method = constOf(kv.Value, consts)
				case key.Name == "path":
					path = constOf(kv.Value, consts)
				case key.Name == "handle":
					names = handlerNames(kv.Value, g)
				}
			}
			if method != "" && path != "" {
				out[method+" "+path] = names
			}
			return true
		})
	}
	return out
}

func constOf(e ast.Expr, consts map[string]string) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(e.Value)
		return s
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return consts[x.Name+"."+e.Sel.Name]
		}
	}
	return ""
}

func handlerNames(e ast.Expr, g *callGraph) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.SelectorExpr); ok {
				for _, p := range g.fieldPkg[x.Sel.Name] {
					out = append(out, p+"."+n.Sel.Name)
				}
				return false
			}
			out = append(out, "httpapi."+n.Sel.Name)
			return false
		case *ast.Ident:
			out = append(out, "httpapi."+n.Name)
		}
		return true
	})
	return out
}

// unreachableBuilds are errors that no request can be answered with,
// wherever they are reached from, each with the reason.
var unreachableBuilds = map[string]string{
	"merchant.Read NOT_FOUND": "an API request reads the clock of a merchant that exists (the caller's; a report link's merchant is checked first)",
}

// unreachableErrors are errors the call graph reaches but the route cannot
// answer (through a method that shares its name with another of its
// package), each with the reason.
var unreachableErrors = map[string]string{
	"GET /v2/customers TOO_LARGE 413":                          sharedValidate,
	"GET /v2/contacts/verification_messages TOO_LARGE 413":     sharedValidate,
	"POST /v2/disputes/accept INSUFFICIENT_FUNDS 422":          disputePosts,
	"POST /v2/sandbox/disputes INSUFFICIENT_FUNDS 422":         disputePosts,
	"POST /v2/sandbox/disputes/resolve INSUFFICIENT_FUNDS 422": disputePosts,
	"POST /v2/sandbox/disputes ALREADY_EXISTS 409":             "the sandbox's own gateway payment has a fresh random order_id",
}

const disputePosts = "a dispute's ledger posts may take available below zero (ledger.Leg.MayGoNegative), and its outgoing holds what it takes back out"

const sharedValidate = "contact's validate methods are one node: a KYC submission's builds TOO_LARGE, a list query's does not"

// TestRoutesDocumentTheErrorsTheyBuild: every error a route's handler (and
// the middleware it runs behind) can build, as far as the call graph sees,
// is documented for that route with its status.
func TestRoutesDocumentTheErrorsTheyBuild(t *testing.T) {
	g := newCallGraph(t)
	handlers := routeHandlers(t, g)
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	for _, rt := range a.routes {
		if rt.raw {
			continue
		}
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			start, ok := handlers[rt.method+" "+rt.path]
			if !ok {
				t.Fatal("the route's handler was not found in the route table's source")
			}
			if rt.auth != authNone {
				start = append(start, "httpapi.authenticate")
			}
			if rt.method == http.MethodPost || rt.method == http.MethodPut {
				start = append(start, "httpapi.idempotent")
			}
			documented := map[string]bool{}
			for status, codes := range routeErrors(rt) {
				for _, c := range codes {
					documented[c.code] = true
					documented[c.code+" "+strconv.Itoa(status)] = true
				}
			}
			var missing []string
			for _, b := range g.reachable(start) {
				key := b.code
				if b.status != 0 {
					key += " " + strconv.Itoa(b.status)
				}
				if !documented[key] && unreachableErrors[rt.method+" "+rt.path+" "+key] == "" {
					missing = append(missing, key+" ("+b.at.String()+")")
				}
			}
			sort.Strings(missing)
			for i, m := range missing {
				if i == 0 || m != missing[i-1] {
					t.Errorf("answers %s, which its codes do not document", m)
				}
			}
		})
	}
}
