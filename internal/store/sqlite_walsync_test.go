package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"payd/internal/store"
)

// TestSQLiteAnswersAfterItsLogIsFlushed: by default a SQLite commit is
// answered only once payd has flushed the log (the -wal file) after it,
// once per commit; a database opened with synchronous given (the tests'
// NORMAL) is left to SQLite.
func TestSQLiteAnswersAfterItsLogIsFlushed(t *testing.T) {
	ctx := context.Background()
	flushed := make(chan string, 16)
	release := make(chan struct{})
	defer store.SetLogSync(func(f *os.File) error {
		flushed <- f.Name()
		<-release
		return nil
	})()
	path := filepath.Join(t.TempDir(), "payd.db")
	db, err := store.Open(ctx, "sqlite:"+path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(query string) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- db.Exec(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, query)
				return err
			})
		}()
		return done
	}
	for i, query := range []string{`CREATE TABLE t (v TEXT)`, `INSERT INTO t VALUES ('a')`, `INSERT INTO t VALUES ('b')`} {
		done := write(query)
		select {
		case got := <-flushed:
			if got != path+"-wal" {
				t.Fatalf("commit %d flushed %s, want the log %s-wal", i, got, path)
			}
		case err := <-done:
			t.Fatalf("commit %d answered (%v) with no flush of its log", i, err)
		}
		select {
		case err := <-done:
			t.Fatalf("commit %d answered (%v) while its log's flush had not returned", i, err)
		default:
		}
		release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-flushed:
		t.Errorf("a flush of %s with no commit", got)
	default:
	}

	other := filepath.Join(t.TempDir(), "payd.db")
	tests, err := store.Open(ctx, "sqlite:"+other, store.Options{SQLiteSynchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer tests.Close()
	if err := tests.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE t (v TEXT)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-flushed:
		t.Errorf("synchronous=NORMAL given, payd flushed %s itself", got)
	default:
	}
}
