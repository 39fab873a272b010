package paydclient

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"payd/internal/httpapi"
)

// generateTimeout bounds one run of oapi-codegen, its build included (about
// 40 s with an empty build cache, 10 s after).
const generateTimeout = 5 * time.Minute

// TestGeneratedClientIsFresh regenerates the client as go generate does
// (the sandbox document from the route table, then go tool oapi-codegen with
// this package's configuration) into a temporary directory and compares it
// with the checked-in paydclient.gen.go: a change to the API that was not
// followed by go generate ./client/go/... fails here.
func TestGeneratedClientIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs oapi-codegen")
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, append(httpapi.Document(httpapi.Sandbox), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "paydclient.gen.go")
	ctx, cancel := context.WithTimeout(context.Background(), generateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "tool", "oapi-codegen", "-config", "oapi-codegen.yaml", "-o", out, doc)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("paydclient.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("paydclient.gen.go is stale (%d bytes, regenerated %d): run go generate ./client/go/...\n%s", len(want), len(got), firstDifference(want, got))
	}
}

// firstDifference shows the first line where checked and fresh differ.
func firstDifference(checked, fresh []byte) string {
	a, b := bytes.Split(checked, []byte("\n")), bytes.Split(fresh, []byte("\n"))
	for i := 0; i < len(a) && i < len(b); i++ {
		if !bytes.Equal(a[i], b[i]) {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}
