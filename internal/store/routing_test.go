package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// globalTables hold no merchant's rows (or, merchants, are keyed by the
// merchant id itself; global_keys, by the key it maps to a merchant): their
// statements route by other means. The databases' catalogs are here too:
// PostgreSQL's (which store.DB.VacuumAdvice, AnalyzeStale and Open, the
// migrations' Citus distribution, payd copy and the tests' schema pool
// read), Citus's and SQLite's (payd copy's).
var globalTables = map[string]bool{
	"merchants": true, "secrets": true, "schema_migrations": true,
	"auth_failures": true, "portal_login_failures": true, "portal_oidc_logins": true, "report_signing_keys": true,
	"global_keys": true,
	"pg_class":    true, "pg_extension": true, "pg_stat_user_tables": true, "pg_constraint": true, "pg_depend": true,
	"pg_attribute": true, "pg_namespace": true, "pg_tables": true, "information_schema": true, "pg_dist_partition": true,
	"sqlite_master": true, "pragma_table_xinfo": true, "pragma_foreign_key_list": true,
}

// tableRef finds the tables a statement names (an upsert's DO UPDATE is
// taken out first).
var tableRef = regexp.MustCompile(`\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_]+)`)

// TestStatementsNameTheirMerchant reads every SQL statement of payd's code
// and requires each reference to a merchant-owned table to come with its
// own merchant_id condition (or column, in an insert), so that on a database
// distributed by merchant_id (Citus, issue 19) every statement routes to one
// merchant's shard. A lookup that starts from a key unique across merchants
// (an app-id, a token, a PayID, a hosted page's id) asks global_keys for the
// merchant first (store.KeyOwner); a statement that cannot says why with a
// "global lookup" comment on the lines before it, and one that spans
// merchants on purpose says "spans merchants".
func TestStatementsNameTheirMerchant(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			for _, stmt := range statements(f) {
				if stmt.dynamic {
					// Part of the statement is built elsewhere in its
					// function (a list's filter): judge the function's text.
					stmt.sql = stmt.funcText
				}
				line := fset.Position(stmt.pos).Line
				if globalLookup(fset, f, line) {
					continue
				}
				if missing := unrouted(stmt.sql); len(missing) > 0 {
					t.Errorf("%s:%d: %v without merchant_id: %s", rel, line, missing, oneLine(stmt.sql))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

type statement struct {
	pos token.Pos
	sql string
	// dynamic is set when the statement joins a variable's text, which
	// funcText, the string literals of the whole function, holds.
	dynamic  bool
	funcText string
}

var sqlStart = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s`)

// statements finds the SQL of every call argument that starts like SQL:
// the string literals of the argument's expression joined (constants
// between them, such as a column list, are left out).
func statements(f *ast.File) []statement {
	var out []statement
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		funcText, _ := literals(fn.Body)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, arg := range call.Args {
				if sql, dynamic := literals(arg); sqlStart.MatchString(sql) {
					out = append(out, statement{arg.Pos(), sql, dynamic, funcText})
				}
			}
			return true
		})
	}
	return out
}

// literals joins the string literals of an expression, outside the calls
// in it, and reports whether it also joins an identifier's value.
func literals(n ast.Node) (text string, dynamic bool) {
	var b strings.Builder
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.CallExpr:
			return m == n
		case *ast.Ident:
			dynamic = true
		case *ast.BasicLit:
			if s, err := strconv.Unquote(m.Value); err == nil && m.Kind == token.STRING {
				b.WriteString(s)
				b.WriteString(" ")
			}
		}
		return true
	})
	return b.String(), dynamic
}

// unrouted lists the merchant-owned tables a statement names more often than
// it names merchant_id.
func unrouted(sql string) []string {
	var owned []string
	for _, m := range tableRef.FindAllStringSubmatch(strings.ReplaceAll(sql, "DO UPDATE", ""), -1) {
		if name := strings.ToLower(m[1]); !globalTables[name] {
			owned = append(owned, name)
		}
	}
	if strings.Count(sql, "merchant_id") >= len(owned) {
		return nil
	}
	return owned
}

// globalLookup reports whether a comment on the three lines before line
// says the statement is a "global lookup" or "spans merchants".
func globalLookup(fset *token.FileSet, f *ast.File, line int) bool {
	for _, g := range f.Comments {
		l := fset.Position(g.End()).Line
		if l < line && l >= line-3 && (strings.Contains(g.Text(), "global lookup") || strings.Contains(g.Text(), "spans merchants")) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
