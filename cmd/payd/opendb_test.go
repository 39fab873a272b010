package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// TestOperatorCommandsNeverCreateADatabase (issue 54 item 13): an operator
// command on a SQLite file that does not exist exits 1 saying so and leaves
// no file behind; on a database no migration has touched (PostgreSQL and
// Citus; SQLite's is a file not made yet) it exits 1 saying what to run; payd migrate makes
// it ready, and then ledger verify says it found nothing to check.
func TestOperatorCommandsNeverCreateADatabase(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "missing.db")
	r := payd(t, "merchant", "create", "--db", "sqlite:"+file, "--name", "Acme", "--country", "AU", "--timezone", "Australia/Sydney", "--currencies", "AUD")
	if r.code != 1 || !strings.Contains(r.stderr, "does not exist: payd serve or payd migrate --db sqlite:"+file+" creates it") {
		t.Errorf("merchant create on a missing file: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the missing file was created (%v)", err)
	}
	storetest.EachUnmigratedDSN(t, func(t *testing.T, dsn string) {
		r := payd(t, "ledger", "verify", "--db", dsn)
		// SQLite's unmigrated database is a file not made yet.
		said := strings.Contains(r.stderr, "is not migrated (") || strings.Contains(r.stderr, "does not exist")
		if r.code != 1 || !said || !strings.Contains(r.stderr, "payd migrate --db") {
			t.Errorf("ledger verify on an unmigrated database: exit %d, %q", r.code, r.stderr)
		}
		mustPayd(t, "migrate", "--db", dsn)
		if out := mustPayd(t, "ledger", "verify", "--db", dsn); out != "ledger verified: nothing to check, no journal entries yet\n" {
			t.Errorf("ledger verify on an empty ledger: %q", out)
		}
	})
}
