package store_test

import (
	"context"
	"strings"
	"testing"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestVacuumAdvice checks that payd tells the operator when autovacuum will
// not look after its busiest tables: off on the server, or disabled on one
// of them. Which of the two a server shows depends on its configuration
// (this repository's CI runs PostgreSQL with autovacuum off), so the test
// reads the setting itself and checks the advice against it.
func TestVacuumAdvice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		advice, err := db.VacuumAdvice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if db.Dialect() == store.SQLite {
			if advice != "" {
				t.Errorf("SQLite: advice %q, want none", advice)
			}
			return
		}
		var on string
		if err := db.Read().QueryRowContext(ctx, `SHOW autovacuum`).Scan(&on); err != nil {
			t.Fatal(err)
		}
		if on == "off" {
			if !strings.Contains(advice, "autovacuum is off") {
				t.Errorf("autovacuum off on the server: advice %q, want it said", advice)
			}
			return
		}
		if advice != "" {
			t.Errorf("autovacuum on everywhere: advice %q, want none", advice)
		}
		exec := func(q string) {
			t.Helper()
			if err := db.Exec(ctx, func(tx *store.Tx) error { _, err := tx.ExecContext(ctx, q); return err }); err != nil {
				t.Fatal(err)
			}
		}
		exec(`ALTER TABLE jobs SET (autovacuum_enabled = false)`)
		defer exec(`ALTER TABLE jobs RESET (autovacuum_enabled)`)
		if advice, err = db.VacuumAdvice(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(advice, "[jobs]") {
			t.Errorf("autovacuum disabled on jobs: advice %q, want it named", advice)
		}
	})
}
