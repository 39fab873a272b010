package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// positionalConstructors are the services built from positional arguments,
// each with the reason.
var positionalConstructors = map[string]string{
	"merchant": "the tenancy every service reads: a database and the clock, nothing to name",
}

// TestServicesTakeDeps: every domain service is built one way, from a Deps
// struct (as httpapi.Deps), optionally after a context: server.Open wires
// each by its members' names, and a service that needs one more thing adds
// a member, not a position.
func TestServicesTakeDeps(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != "NewService" || positionalConstructors[f.Name.Name] != "" {
				continue
			}
			if !takesDeps(fn.Type.Params.List) {
				t.Errorf("%s: %s.NewService takes positional arguments; give it a Deps struct", fset.Position(fn.Pos()), f.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// takesDeps reports whether params are (d Deps) or (ctx context.Context, d Deps).
func takesDeps(params []*ast.Field) bool {
	if n := len(params); n == 2 {
		sel, ok := params[0].Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Context" || len(params[0].Names) != 1 {
			return false
		}
		params = params[1:]
	}
	if len(params) != 1 || len(params[0].Names) != 1 {
		return false
	}
	id, ok := params[0].Type.(*ast.Ident)
	return ok && id.Name == "Deps"
}
