package storetest_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

func TestTargets(t *testing.T) {
	t.Parallel()
	want := []string{"sqlite"}
	if os.Getenv(storetest.DSNEnv) != "" {
		want = append(want, "postgres")
	}
	if os.Getenv(storetest.CitusDSNEnv) != "" {
		want = append(want, "citus")
	}
	var got []string
	for _, target := range storetest.Targets() {
		got = append(got, target.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Targets() = %v, want %v", got, want)
	}
}

// TestDSNIsFresh checks that two DSNs of one target are two databases: a
// table made in one is not in the other, and each opens migrated.
func TestDSNIsFresh(t *testing.T) {
	t.Parallel()
	for _, target := range storetest.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			ctx := context.Background()
			first := storetest.Open(t, target.DSN(t))
			second := storetest.Open(t, target.DSN(t))
			err := first.Exec(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `CREATE TABLE only_in_first (id TEXT)`)
				return err
			})
			if err != nil {
				t.Fatalf("create table: %v", err)
			}
			if _, err := second.Read().Exec(`SELECT count(*) FROM only_in_first`); err == nil {
				t.Error("a table created in the first database is visible in the second")
			}
			var merchants int
			if err := second.Read().QueryRow(`SELECT count(*) FROM merchants`).Scan(&merchants); err != nil || merchants != 0 {
				t.Errorf("second database: %d merchants, %v; want a migrated, empty database", merchants, err)
			}
		})
	}
}

func TestEachRunsEveryTarget(t *testing.T) {
	t.Parallel()
	var got []store.Dialect
	storetest.Each(t, func(t *testing.T, db *store.DB) { got = append(got, db.Dialect()) })
	if len(got) != len(storetest.Targets()) || got[0] != store.SQLite {
		t.Errorf("Each ran on %v, want one run per target starting with sqlite", got)
	}
}
