package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ dsn, want string }{
		{"postgres://payd:s3cret@db:5432/payd", "postgres://payd:xxxxx@db:5432/payd"},
		{"postgres://payd:s3cret@db1:5432,db2:5432/payd?target_session_attrs=read-write", "postgres://payd:xxxxx@db1:5432,db2:5432/payd?target_session_attrs=read-write"},
		{"postgresql://payd@db1,db2/payd", "postgresql://payd@db1,db2/payd"},
		{"sqlite:payd.db", "sqlite:payd.db"},
	}
	for _, tt := range tests {
		if got := redact(tt.dsn); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
}

// TestSQLiteOddFileNames: a file name holding "#", "?" or "%" opens that
// very file (a file: URI would otherwise cut it at the "#" or "?").
func TestSQLiteOddFileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a#01.db", "b?x=1.db", "c%41.db"} {
		path := filepath.Join(dir, name)
		db, err := Open(context.Background(), "sqlite:"+path, Options{})
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		if _, err := db.Migrate(context.Background()); err != nil {
			t.Fatalf("migrate %s: %v", name, err)
		}
		db.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: the database is not at its name: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "a#01.db") && !strings.HasPrefix(e.Name(), "b?x=1.db") && !strings.HasPrefix(e.Name(), "c%41.db") {
			t.Errorf("stray file %s", e.Name())
		}
	}
}
