package httpapi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"payd/internal/fault"
)

// builtError is an error the code base builds: its code and, when the call
// says it, its status.
type builtError struct {
	code   string
	status int // 0: any (an envelope written directly, or a re-coded error)
	at     token.Position
}

// kinds are fault's kinds by name, as calls spell them.
var kinds = map[string]fault.Kind{
	"Invalid": fault.Invalid, "Malformed": fault.Malformed, "NotFound": fault.NotFound, "Conflict": fault.Conflict,
	"Forbidden": fault.Forbidden, "Unauthenticated": fault.Unauthenticated, "TooLarge": fault.TooLarge,
	"UnsupportedMedia": fault.UnsupportedMedia, "RateLimited": fault.RateLimited, "Busy": fault.Busy,
}

// sourceFiles parses every non-test Go file under internal/.
func sourceFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// stringConstants maps "package.Name" to the value of every string constant
// (package payd's import names are its package names).
func stringConstants(files []*ast.File) map[string]string {
	exprs := map[string]ast.Expr{}
	pkgOf := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						key := f.Name.Name + "." + name.Name
						exprs[key], pkgOf[key] = vs.Values[i], f.Name.Name
					}
				}
			}
		}
	}
	out := map[string]string{}
	for key, e := range exprs {
		if v, ok := constString(e, pkgOf[key], exprs, 0); ok {
			out[key] = v
		}
	}
	return out
}

func constString(e ast.Expr, pkg string, exprs map[string]ast.Expr, depth int) (string, bool) {
	if depth > 5 {
		return "", false
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if next, ok := exprs[pkg+"."+e.Name]; ok {
			return constString(next, pkg, exprs, depth+1)
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if next, ok := exprs[x.Name+"."+e.Sel.Name]; ok {
				return constString(next, x.Name, exprs, depth+1)
			}
		}
	}
	return "", false
}

// builtErrors finds every error files build with package fault's
// constructors or write as an envelope (outside package fault itself, whose
// constructors are read here by what they build).
func builtErrors(t *testing.T, fset *token.FileSet, files []*ast.File, consts map[string]string) []builtError {
	var out []builtError
	for _, f := range files {
		if f.Name.Name == "fault" {
			continue
		}
		pkg := f.Name.Name
		code := func(e ast.Expr) (string, bool) {
			if lit, ok := e.(*ast.BasicLit); ok {
				s, err := strconv.Unquote(lit.Value)
				return s, err == nil
			}
			switch e := e.(type) {
			case *ast.Ident:
				v, ok := consts[pkg+"."+e.Name]
				return v, ok
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok {
					v, ok := consts[x.Name+"."+e.Sel.Name]
					return v, ok
				}
			}
			return "", false
		}
		add := func(n ast.Node, codeExpr ast.Expr, status int) {
			at := fset.Position(n.Pos())
			c, ok := code(codeExpr)
			if !ok {
				t.Errorf("%s: the error code is not a string constant; declare it as one", at)
				return
			}
			out = append(out, builtError{code: c, status: status, at: at})
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				fn, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !isIdent(fn.X, "fault") {
					return true
				}
				switch fn.Sel.Name {
				case "Rule":
					add(n, n.Args[0], http.StatusUnprocessableEntity)
				case "New":
					add(n, n.Args[1], fault.Status(faultKind(t, fset, n.Args[0])))
				case "NotFoundf":
					out = append(out, builtError{fault.CodeNotFound, http.StatusNotFound, fset.Position(n.Pos())})
				case "State":
					out = append(out, builtError{fault.CodeInvalidState, http.StatusConflict, fset.Position(n.Pos())})
				case "Field":
					out = append(out, builtError{fault.CodeValidation, http.StatusUnprocessableEntity, fset.Position(n.Pos())})
				}
			case *ast.AssignStmt:
				// e.Code = X re-codes a fault.Error built elsewhere (its kind
				// stays); only a file that imports fault can hold one.
				if !importsFault(f) {
					return true
				}
				for i, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" && i < len(n.Rhs) {
						add(n, n.Rhs[i], 0)
					}
				}
			case *ast.CompositeLit:
				switch {
				case isSelector(n.Type, "fault", "Error"):
					var kind fault.Kind
					var codeExpr ast.Expr
					for _, el := range n.Elts {
						kv := el.(*ast.KeyValueExpr)
						switch kv.Key.(*ast.Ident).Name {
						case "Kind":
							kind = faultKind(t, fset, kv.Value)
						case "Code":
							codeExpr = kv.Value
						}
					}
					add(n, codeExpr, fault.Status(kind))
				case isSelector(n.Type, "fault", "Fields"):
					out = append(out, builtError{fault.CodeValidation, http.StatusUnprocessableEntity, fset.Position(n.Pos())})
				case isIdent(n.Type, "errorDetail"):
					for _, el := range n.Elts {
						kv := el.(*ast.KeyValueExpr)
						if kv.Key.(*ast.Ident).Name != "Code" {
							continue
						}
						if _, fromError := kv.Value.(*ast.SelectorExpr); fromError && !isIdent(kv.Value.(*ast.SelectorExpr).X, "fault") {
							continue // e.Code: a fault.Error's, checked where it was built
						}
						add(n, kv.Value, 0)
					}
				}
			}
			return true
		})
	}
	return out
}

// importsFault reports whether f imports package fault.
func importsFault(f *ast.File) bool {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"payd/internal/fault"` {
			return true
		}
	}
	return false
}

func faultKind(t *testing.T, fset *token.FileSet, e ast.Expr) fault.Kind {
	if sel, ok := e.(*ast.SelectorExpr); ok && isIdent(sel.X, "fault") {
		if k, ok := kinds[sel.Sel.Name]; ok {
			return k
		}
	}
	t.Errorf("%s: the error kind is not one of fault's kinds", fset.Position(e.Pos()))
	return 0
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}

// TestEveryErrorCodeIsInTheCatalog: every code built anywhere under
// internal/ is in errorCodes with the status its kind maps to, so a new code
// cannot be left out of the OpenAPI document; and every catalog entry is
// built somewhere, so none is stale.
func TestEveryErrorCodeIsInTheCatalog(t *testing.T) {
	fset, files := sourceFiles(t)
	built := builtErrors(t, fset, files, stringConstants(files))
	if len(built) < 100 {
		t.Fatalf("found only %d errors built under internal/: the scan is broken", len(built))
	}
	inCatalog := map[string]bool{}
	for _, e := range errorCodes {
		key := fmt.Sprintf("%s %d", e.code, e.status)
		if inCatalog[key] {
			t.Errorf("errorCodes lists %s twice", key)
		}
		inCatalog[key], inCatalog[e.code] = true, true
	}
	seen := map[string]bool{}
	for _, b := range built {
		key := b.code
		if b.status != 0 {
			key = fmt.Sprintf("%s %d", b.code, b.status)
		}
		seen[key], seen[b.code] = true, true
		if !inCatalog[key] {
			t.Errorf("%s: error %s is not in errorCodes (internal/httpapi/errorcode.go)", b.at, key)
		}
	}
	for _, e := range errorCodes {
		if !seen[fmt.Sprintf("%s %d", e.code, e.status)] && !seen[e.code] {
			t.Errorf("errorCodes lists %s %d, which nothing builds", e.code, e.status)
		}
	}
}

// TestRouteCodesAreInTheCatalog: every code a route declares is in the
// catalog, and every documented operation answers at least 500 and 503.
func TestRouteCodesAreInTheCatalog(t *testing.T) {
	a := &API{Deps: Deps{Env: Sandbox}, metrics: NewMetrics()}
	for _, rt := range a.table() {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, c := range rt.codes {
				if !slicesContainsCode(c) {
					t.Errorf("code %s is not in errorCodes", c)
				}
			}
			got := routeErrors(rt)
			for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable} {
				if len(got[status]) == 0 {
					t.Errorf("no %d documented", status)
				}
			}
		})
	}
}

func slicesContainsCode(code string) bool {
	for _, e := range errorCodes {
		if e.code == code {
			return true
		}
	}
	return false
}
