package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"payd/internal/store/storetest"
)

// redoclyDir holds the pinned Redocly CLI and its configuration, which
// .ci/run installs with npm ci (relative to this package's directory, where
// go test runs it).
const redoclyDir = "../../.ci/openapi"

// redoclyTimeout bounds one lint of the document (about 2 s on an idle machine).
const redoclyTimeout = 2 * time.Minute

// TestOpenAPIDocumentIsValidRedocly lints the served documents, sandbox and
// production, with Redocly CLI: a validator independent of kin-openapi (its
// own reading of the OpenAPI 3.1 structure, and every rule of its strictest
// ruleset as an error, examples included). Without the validator the test
// skips, or fails with CI=true.
func TestOpenAPIDocumentIsValidRedocly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs Node.js; TestOpenAPIDocumentIsValid checks the document in the fast loop")
	}
	redocly := filepath.Join(redoclyDir, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(redocly); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redocly CLI is not installed (%v): .ci/run installs it with npm ci --prefix .ci/openapi", err)
		}
		t.Skipf("Redocly CLI is not installed (%v): run npm ci --prefix .ci/openapi", err)
	}
	for _, tt := range []struct {
		name string
		opts []option
	}{
		{"sandbox", nil},
		{"production", []option{production}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, storetest.SQLiteDSN(t), tt.opts...)
			r := p.do(req{method: "GET", path: "/openapi.json"})
			want(t, r, 200)
			file := filepath.Join(t.TempDir(), "openapi.json")
			if err := os.WriteFile(file, r.Body, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), redoclyTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, redocly, "lint", "--config", filepath.Join(redoclyDir, "redocly.yaml"),
				"--format", "stylish", "--max-problems", "50", file)
			// No usage report, no update check: the lint needs no network.
			cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_NOTIFICATIONS=true")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("redocly lint: %v\n%s", err, out)
			}
		})
	}
}
