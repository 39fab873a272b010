package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestDialectsStayInStore reads payd's code outside package store and
// finds no branch on the database it runs on: no call of DB.Dialect or
// DB.Citus and no mention of store.SQLite or store.Postgres. What differs
// between the databases is a named operation of store's (DB.ForUpdate,
// DB.OneWriter, DB.Distributed, Tx.LockKey, …), which each dialect's
// driver answers (driver.go). Tests may ask which database they run on.
func TestDialectsStayInStore(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() && rel == "internal/store" {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, isIdent := sel.X.(*ast.Ident)
				switch {
				case isIdent && pkg.Name == "store" && (sel.Sel.Name == "SQLite" || sel.Sel.Name == "Postgres"):
					t.Errorf("%s:%d: store.%s: a branch on the dialect; ask store for a named operation", rel, fset.Position(sel.Pos()).Line, sel.Sel.Name)
				case !isIdent || pkg.Name != "store":
					if sel.Sel.Name == "Dialect" || sel.Sel.Name == "Citus" {
						t.Errorf("%s:%d: .%s(): a branch on the dialect; ask store for a named operation", rel, fset.Position(sel.Pos()).Line, sel.Sel.Name)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDialectFiles reads package store itself: only its dialects' files
// (sqlite*.go, postgres*.go) name a dialect or its implementation (the
// constants SQLite and Postgres, sqliteDriver, postgresConn, …); the rest
// of the package, the engine of transactions, pipelining and group
// commit, asks the driver (driver.go) and never which one it is.
func TestDialectFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "sqlite") || strings.HasPrefix(name, "postgres") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		declared := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := n.(*ast.ValueSpec); ok {
				for _, id := range v.Names {
					declared[id] = true
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || declared[id] {
				return true
			}
			switch {
			case id.Name == "SQLite" || id.Name == "Postgres",
				strings.HasPrefix(id.Name, "sqlite") || strings.HasPrefix(id.Name, "postgres"):
				t.Errorf("%s:%d: %s: a dialect named outside its files; ask the driver", name, fset.Position(id.Pos()).Line, id.Name)
			}
			return true
		})
	}
}
