package httpapi

import (
	"go/ast"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codeValue is how an error code is spelled: upper case, digits and
// underscores.
var codeValue = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// TestErrorCodesAreSpelledOnce: every error code of internal/ is one
// constant (Code… or code…), in the package that owns its rule, or in fault
// when several packages share it (STYLE: "error codes are typed constants,
// spelled once"): no two constants spell the same code, and no code is
// written out as a literal elsewhere.
func TestErrorCodesAreSpelledOnce(t *testing.T) {
	fset, files := sourceFiles(t)
	defined := map[string][]string{} // code → the constants that spell it
	declared := map[*ast.BasicLit]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := valueAt(vs, i).(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || !strings.HasPrefix(strings.ToLower(name.Name), "code") {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if codeValue.MatchString(v) {
						defined[v] = append(defined[v], f.Name.Name+"."+name.Name+" ("+fset.Position(lit.Pos()).String()+")")
						declared[lit] = true
					}
				}
			}
		}
	}
	var twice []string
	for code, names := range defined {
		if len(names) > 1 {
			sort.Strings(names)
			twice = append(twice, code+": "+strings.Join(names, ", "))
		}
	}
	sort.Strings(twice)
	for _, d := range twice {
		t.Errorf("spelled more than once: %s", d)
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || declared[lit] {
				return true
			}
			if v, _ := strconv.Unquote(lit.Value); len(defined[v]) > 0 {
				t.Errorf("%s: %q is written out; use %s", fset.Position(lit.Pos()), v, defined[v][0])
			}
			return true
		})
	}
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}
