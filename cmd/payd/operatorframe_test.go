package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorUsageTouchesNoDatabase: an operator command refuses its
// flags (a missing one, a wrong value, an argument too many) with exit 2
// and a message before it opens its database: the SQLite file it names is
// not even created.
func TestOperatorUsageTouchesNoDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		command    string
		flags      []string
		wantStderr string
	}{
		{"merchant create without --name", "merchant create", []string{"--country", "AU", "--timezone", "UTC", "--currencies", "AUD"}, "payd: missing --name"},
		{"merchant update without a change", "merchant update", []string{"--merchant", "M1"}, "payd: nothing to change: give --embed-origins"},
		{"webhook-secret without --merchant", "merchant webhook-secret", nil, "payd: missing --merchant"},
		{"merchant limits without --merchant", "merchant limits", []string{"--write-rate", "5"}, "payd: missing --merchant"},
		{"app create without either", "app create", nil, "payd: missing --currency, --merchant"},
		{"app revoke without --app-id", "app revoke", []string{"--merchant", "M1"}, "payd: missing --app-id"},
		{"user create without --password-stdin", "user create", []string{"--merchant", "M1", "--email", "a@example.com", "--role", "admin"}, "payd: --password-stdin is required"},
		{"account update with a wrong --approvals", "account update", []string{"--merchant", "M1", "--currency", "AUD", "--approvals", "yes"}, "payd: --approvals must be on or off"},
		{"treasury review without a decision", "treasury review", []string{"--merchant", "M1", "--account", "T1"}, "payd: give exactly one of --approve and --reject"},
		{"ledger verify with an argument", "ledger verify", []string{"now"}, `payd: unexpected argument "now"`},
		{"report rotate-key with an argument", "report rotate-key", []string{"now"}, `payd: unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "payd.db")
			args := append(strings.Fields(tt.command), "--db", "sqlite:"+file)
			got := payd(t, append(args, tt.flags...)...)
			if got.code != 2 || !strings.Contains(got.stderr, tt.wantStderr) || got.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q and nothing", got.code, got.stderr, got.stdout, tt.wantStderr)
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Errorf("the database file was touched (%v)", err)
			}
		})
	}
}
