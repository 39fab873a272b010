package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestAnalyzeStale: on PostgreSQL a table whose rows changed beyond
// autovacuum's analyze threshold is analyzed (the planner then has its
// statistics) and reported once; SQLite and Citus analyze nothing.
func TestAnalyzeStale(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if db.Dialect() != store.Postgres || db.Citus() {
			if analyzed, err := db.AnalyzeStale(ctx); err != nil || analyzed != nil {
				t.Fatalf("AnalyzeStale = %v, %v; want nothing", analyzed, err)
			}
			return
		}
		probe(t, db, `CREATE TABLE analyze_probe (n INT NOT NULL)`, `INSERT INTO analyze_probe SELECT generate_series(1, 200)`)
		deadline := time.Now().Add(30 * time.Second)
		for {
			analyzed, err := db.AnalyzeStale(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(analyzed, "analyze_probe") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("200 rows inserted, yet analyze_probe was not analyzed within 30 s (last round: %v)", analyzed)
			}
			time.Sleep(50 * time.Millisecond)
		}
		var stats int
		if err := db.Read().QueryRowContext(ctx, `SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'analyze_probe'`).Scan(&stats); err != nil {
			t.Fatal(err)
		}
		if stats != 1 {
			t.Errorf("analyze_probe has statistics for %d columns, want 1", stats)
		}
		again, err := db.AnalyzeStale(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(again, "analyze_probe") {
			t.Errorf("analyze_probe analyzed again with no change since: %v", again)
		}
		// Changed again beyond the threshold, it waits out its minute.
		probe(t, db, `INSERT INTO analyze_probe SELECT generate_series(1, 400)`)
		for changed := int64(0); changed < 400; {
			if time.Now().After(deadline) {
				t.Fatalf("400 more rows inserted, yet the statistics count %d changed rows", changed)
			}
			time.Sleep(50 * time.Millisecond)
			if err := db.Read().QueryRowContext(ctx, `SELECT n_mod_since_analyze FROM pg_stat_user_tables
				WHERE schemaname = current_schema() AND relname = 'analyze_probe'`).Scan(&changed); err != nil {
				t.Fatal(err)
			}
		}
		if again, err = db.AnalyzeStale(ctx); err != nil || slices.Contains(again, "analyze_probe") {
			t.Errorf("analyze_probe analyzed again within its minute: %v, %v", again, err)
		}
	})
}

// probe runs statements in one transaction and has the session's counts of
// changed rows reach the statistics the moment it is idle.
func probe(t *testing.T, db *store.DB, statements ...string) {
	t.Helper()
	ctx := context.Background()
	err := db.Exec(ctx, func(tx *store.Tx) error {
		for _, q := range append(statements, `SELECT pg_stat_force_next_flush()`) {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
