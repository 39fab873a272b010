package clock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// machineTime are the packages that may read the machine's clock directly:
// this one (it is the source), and those that time the machine itself
// (request latency, migrations, the server's loops), never a merchant's
// business.
var machineTime = map[string]bool{"clock": true, "store": true, "httpapi": true, "server": true}

// TestDomainCodeReadsAnInjectedClock fails when a domain package calls
// time.Now, time.Since or time.Until instead of an injected clock.Clock or
// merchant.Clock: such a call ignores the sandbox's test clocks and the
// tests' manual ones.
func TestDomainCodeReadsAnInjectedClock(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if machineTime[strings.Split(filepath.ToSlash(rel), "/")[0]] || strings.Contains(filepath.ToSlash(rel), "/gen/") {
			return nil // generators (go generate) date their output
		}
		for _, at := range directClockReads(t, path) {
			t.Errorf("%s reads the machine's clock; use the injected clock.Clock or merchant.Clock", at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// directClockReads lists where file path uses time.Now, time.Since or
// time.Until (called or passed as a value).
func directClockReads(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	timePkg := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"time"` {
			timePkg = "time"
			if imp.Name != nil {
				timePkg = imp.Name.Name
			}
		}
	}
	if timePkg == "" {
		return nil
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == timePkg {
			switch sel.Sel.Name {
			case "Now", "Since", "Until":
				found = append(found, fset.Position(sel.Pos()).String()+" ("+timePkg+"."+sel.Sel.Name+")")
			}
		}
		return true
	})
	return found
}

// TestDirectClockReadsFindsThem keeps the check honest: it must see a call,
// a value and a renamed import.
func TestDirectClockReadsFindsThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.go")
	src := "package x\n\nimport t0 \"time\"\n\nvar now = t0.Now\n\nfunc f() t0.Duration { return t0.Since(t0.Now()) }\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := len(directClockReads(t, path)); got != 3 {
		t.Errorf("found %d reads, want 3", got)
	}
}
