package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"payd/internal/store/migrate"
)

func TestSplitSQL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		script string
		want   []string
	}{
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"-- a comment; not a statement\nSELECT 1;\n-- trailing; comment\n", []string{"-- a comment; not a statement\nSELECT 1"}},
		{"/* a; /* nested; */ comment */ SELECT ';', \"a;b\", 'it''s;';", []string{"/* a; /* nested; */ comment */ SELECT ';', \"a;b\", 'it''s;'"}},
		{"CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RAISE 'x;'; END; $$ LANGUAGE plpgsql; SELECT 2",
			[]string{"CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RAISE 'x;'; END; $$ LANGUAGE plpgsql", "SELECT 2"}},
		{"SELECT $body$ ; $$ ; $body$; SELECT a$b$c; SELECT $1;", []string{"SELECT $body$ ; $$ ; $body$", "SELECT a$b$c", "SELECT $1"}},
		{"SELECT 'unterminated;", []string{"SELECT 'unterminated;"}},
		{" ;; -- nothing\n", nil},
	} {
		if got := migrate.SplitSQL(c.script); !slices.Equal(got, c.want) {
			t.Errorf("SplitSQL(%q) = %q, want %q", c.script, got, c.want)
		}
	}
	// Every embedded PostgreSQL migration splits into statements that join
	// back into it: nothing is lost at the seams.
	ms, err := migrate.Migrations("postgres")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		stmts := migrate.SplitSQL(m.SQL)
		rest := m.SQL
		for _, s := range stmts {
			i := strings.Index(rest, s)
			if i < 0 {
				t.Fatalf("%s: statement %.40q is not in the migration in order", m.Name, s)
			}
			rest = rest[i+len(s):]
		}
		if n := strings.Count(m.SQL, ";"); len(stmts) == 0 || len(stmts) > n {
			t.Errorf("%s: %d statements from %d semicolons", m.Name, len(stmts), n)
		}
	}
}
