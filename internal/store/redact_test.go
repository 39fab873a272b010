package store

import "testing"

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
