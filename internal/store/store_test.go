package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

func TestOpenRejectsBadDSN(t *testing.T) {
	t.Parallel()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The password hunter2 must never appear in the error, which gets logged.
	tests := []struct {
		name string
		dsn  string
	}{
		{"empty", ""},
		{"unknown scheme", "mysql://root:hunter2@localhost/payd"},
		{"bare path", "payd.db"},
		{"sqlite without file", "sqlite:"},
		{"sqlite under a file", "sqlite:" + filepath.Join(notADir, "payd.db")},
		{"postgres nobody listens on", "postgres://payd:hunter2@127.0.0.1:1/payd?connect_timeout=2"},
		{"postgresql nobody listens on", "postgresql://payd:hunter2@127.0.0.1:1/payd?connect_timeout=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := store.Open(context.Background(), tt.dsn, store.Options{})
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) = nil error, want one", tt.dsn)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Open(%q) error %q shows the password", tt.dsn, err)
			}
		})
	}
}

func TestOpenDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target         storetest.Target
		wantDialect    store.Dialect
		wantForUpdate  string
		wantSkipLocked string
	}{
		{storetest.Target{Name: "sqlite", DSN: storetest.SQLiteDSN}, store.SQLite, "", ""},
		{storetest.Target{Name: "postgres", DSN: storetest.PostgresDSN}, store.Postgres, " FOR UPDATE", " FOR UPDATE OF j SKIP LOCKED"},
	}
	for _, tt := range tests {
		t.Run(tt.target.Name, func(t *testing.T) {
			db := storetest.Open(t, tt.target.DSN(t))
			if got := db.Dialect(); got != tt.wantDialect {
				t.Errorf("Dialect() = %q, want %q", got, tt.wantDialect)
			}
			if got := db.ForUpdate(); got != tt.wantForUpdate {
				t.Errorf("ForUpdate() = %q, want %q", got, tt.wantForUpdate)
			}
			if got := db.SkipLocked("j"); got != tt.wantSkipLocked {
				t.Errorf("SkipLocked(j) = %q, want %q", got, tt.wantSkipLocked)
			}
			if err := db.Ping(context.Background()); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}

// TestSQLiteReadPathIsReadOnly checks that the read pool cannot write, so a
// write that skips the transaction path fails loudly instead of racing the writer.
func TestSQLiteReadPathIsReadOnly(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.SQLiteDSN(t))
	_, err := db.Read().Exec(`CREATE TABLE sneaky (id TEXT)`)
	if err == nil {
		t.Fatal("CREATE TABLE on the read path succeeded, want a read-only error")
	}
}

func TestIsUniqueViolation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE uniq_test (k TEXT PRIMARY KEY, v TEXT NOT NULL)`)
			return err
		})
		if err != nil {
			t.Fatalf("create table: %v", err)
		}
		insert := func(k string, v any) error {
			return db.Exec(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO uniq_test (k, v) VALUES ($1, $2)`, k, v)
				return err
			})
		}
		if err := insert("a", "first"); err != nil {
			t.Fatalf("first insert: %v", err)
		}
		tests := []struct {
			name    string
			err     error
			wantErr bool // the case really produced an error
			want    bool
		}{
			{"duplicate key", insert("a", "second"), true, true},
			{"not null", insert("b", nil), true, false},
			{"syntax", db.Exec(ctx, func(tx *store.Tx) error { _, err := tx.ExecContext(ctx, `INSERT INTO`); return err }), true, false},
			{"plain error", errors.New("boom"), true, false},
			{"nil", nil, false, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if (tt.err != nil) != tt.wantErr {
					t.Fatalf("setup error = %v, want error %v", tt.err, tt.wantErr)
				}
				if got := store.IsUniqueViolation(tt.err); got != tt.want {
					t.Errorf("IsUniqueViolation(%v) = %v, want %v", tt.err, got, tt.want)
				}
			})
		}
	})
}

// TestNamedOperations: the dialects' differences other packages ask for,
// as each database answers them (store.go): row locks, claims across
// merchants, one writer, distribution by merchant.
func TestNamedOperations(t *testing.T) {
	t.Parallel()
	type answers struct {
		forUpdateOf, skipLockedAcross, recheckAcross string
		oneWriter, distributed                       bool
	}
	want := map[string]answers{
		"sqlite":   {"", "", "", true, false},
		"postgres": {" FOR UPDATE OF b", " FOR UPDATE OF e SKIP LOCKED", "", false, false},
		"citus":    {" FOR UPDATE OF b", "", " AND free", false, true},
	}
	for _, target := range storetest.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			db := storetest.Open(t, target.DSN(t))
			got := answers{db.ForUpdateOf("b"), db.SkipLockedAcross("e"), db.RecheckAcross(" AND free"), db.OneWriter(), db.Distributed()}
			if got != want[target.Name] {
				t.Errorf("named operations answer %+v, want %+v", got, want[target.Name])
			}
		})
	}
}

// TestLockKey: a key locked by one transaction (Tx.LockKey) is held until
// it ends: another transaction's TryLockKey of it fails (IsKeyLocked) and
// one of another key or namespace does not; once the first has committed,
// the key is free. SQLite, whose one writer runs one transaction at a
// time, takes no locks.
func TestLockKey(t *testing.T) {
	t.Parallel()
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			db := storetest.Open(t, target.DSN(t))
			ctx := context.Background()
			try := func(ns, key string) error {
				return db.Exec(ctx, func(tx *store.Tx) error {
					if err := tx.TryLockKey(ctx, ns, key); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `SELECT 1`)
					return err
				})
			}
			held, release := make(chan struct{}), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- db.Exec(ctx, func(tx *store.Tx) error {
					if err := tx.LockKey(ctx, "test", "k"); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil {
						return err
					}
					close(held)
					<-release
					return nil
				})
			}()
			<-held
			tests := []struct {
				name, ns, key string
				wantLocked    bool
			}{
				{"the held key", "test", "k", true},
				{"another key", "test", "k2", false},
				{"another namespace", "other", "k", false},
			}
			for _, tt := range tests {
				err := try(tt.ns, tt.key)
				if got := store.IsKeyLocked(err); got != tt.wantLocked || (!tt.wantLocked && err != nil) {
					t.Errorf("%s: TryLockKey = %v, locked %v; want locked %v", tt.name, err, got, tt.wantLocked)
				}
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := try("test", "k"); err != nil {
				t.Errorf("TryLockKey after the holder committed = %v, want nil", err)
			}
		})
	}
}

// TestOpenConnectionsCountsHeldOnes: a connection held by an open query is
// counted, and it stays open (idle) in the pool once the query is closed,
// which is what payd_db_open_connections reports.
func TestOpenConnectionsCountsHeldOnes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rows, err := db.Read().QueryContext(context.Background(), `SELECT 1`)
		if err != nil {
			t.Fatal(err)
		}
		held := db.OpenConnections()
		rows.Close()
		if held < 1 || db.OpenConnections() < 1 {
			t.Errorf("OpenConnections() = %d while a query holds one and %d after it, want at least 1 each", held, db.OpenConnections())
		}
	})
}

// TestInPadsToAPowerOfTwo: an IN list is padded to the next power of two
// with its last value, so that lists of 1 to 64 values take 7 spellings.
func TestInPadsToAPowerOfTwo(t *testing.T) {
	tests := []struct {
		values   []string
		wantList string
		wantArgs []any
	}{
		{[]string{"a"}, "$2", []any{"a"}},
		{[]string{"a", "b"}, "$2, $3", []any{"a", "b"}},
		{[]string{"a", "b", "c"}, "$2, $3, $4, $5", []any{"a", "b", "c", "c"}},
		{[]string{"a", "b", "c", "d", "e"}, "$2, $3, $4, $5, $6, $7, $8, $9", []any{"a", "b", "c", "d", "e", "e", "e", "e"}},
	}
	for _, tt := range tests {
		list, args := store.In(2, tt.values)
		if list != tt.wantList || !slices.Equal(args, tt.wantArgs) {
			t.Errorf("In(2, %v) = %q, %v; want %q, %v", tt.values, list, args, tt.wantList, tt.wantArgs)
		}
	}
	spellings := map[string]bool{}
	for n := 1; n <= 64; n++ {
		list, _ := store.In(1, make([]int, n))
		spellings[list] = true
	}
	if len(spellings) != 7 {
		t.Errorf("lists of 1 to 64 values take %d spellings, want 7", len(spellings))
	}
}
