package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payd/internal/httpapi"
	"payd/internal/store/storetest"
)

// tsClientDir is the TypeScript client (relative to this package's
// directory, where go test runs it); .ci/run installs its pinned tools
// with npm ci --prefix client/ts.
const tsClientDir = "../../client/ts"

// tsClientTimeout bounds one step of the TypeScript client's tests: a
// generation, a compile (about 5 s on an idle machine) or the flows' run.
const tsClientTimeout = 2 * time.Minute

// tsTool is the path of one of the TypeScript client's installed tools;
// without them the test skips, or fails with CI=true.
func tsTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	tool, err := filepath.Abs(filepath.Join(tsClientDir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tool); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript client's tools are not installed (%v): .ci/run installs them with npm ci --prefix client/ts", err)
		}
		t.Skipf("the TypeScript client's tools are not installed (%v): run npm ci --prefix client/ts", err)
	}
	return tool
}

// runTool runs name with args (and env added to the environment) and
// returns its output, ending the test when it fails.
func runTool(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tsClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// TestTypeScriptSchemaIsFresh regenerates the TypeScript client's types as
// npm run generate does (openapi-typescript over the sandbox document) and
// fails while the checked-in client/ts/src/schema.d.ts differs.
func TestTypeScriptSchemaIsFresh(t *testing.T) {
	t.Parallel()
	generator := tsTool(t, "openapi-typescript")
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, append(httpapi.Document(httpapi.Sandbox), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "schema.d.ts")
	runTool(t, nil, generator, doc, "-o", out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(tsClientDir, "src", "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client/ts/src/schema.d.ts is stale (%d bytes, regenerated %d): run npm run generate --prefix client/ts", len(want), len(got))
	}
}

// TestTypeScriptClient compiles the TypeScript client and its flows
// program (client/ts/examples/flows.ts) with tsc, which also checks every
// call and body against the generated types, and runs the program with
// node against a running payd (SQLite) with an AUD app's keys: an access
// token, a contact and a PayID payin completed by the sandbox (available
// 49.75), a payout read back completed (fee 0.50, available 24.25), the
// balance history naming both and a webhook endpoint with its whsec_
// secret. It must exit 0 having printed each of those.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	tsc := tsTool(t, "tsc")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	dir := t.TempDir()
	runTool(t, nil, tsc, "-p", tsClientDir, "--outDir", dir)
	// The compiled ES modules find openapi-fetch through node_modules beside
	// them, and are modules by the package.json beside them.
	modules, err := filepath.Abs(filepath.Join(tsClientDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	p := start(t, storetest.SQLiteDSN(t))
	aud := p.merchant("AUD")["AUD"]
	out := string(runTool(t, []string{"PAYD_URL=" + p.base, "PAYD_APP_ID=" + aud.AppID, "PAYD_SECRET_KEY=" + aud.SecretKey},
		node, filepath.Join(dir, "examples", "flows.js")))
	for _, line := range []string{
		"payin.status received", "available 49.75", "payout.status completed", "payout.total_fees 0.50",
		"available 24.25", "history has the payin true", "history has the payout true", "webhook secret is whsec_ true", "ok",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("the flows printed no %q:\n%s", line, out)
		}
	}
}
