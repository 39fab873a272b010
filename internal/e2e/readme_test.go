package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// readmeWalkThrough is the README's first shell block after its heading
// "A first payin and payout".
var readmeWalkThrough = regexp.MustCompile("(?s)## A first payin and payout\n.*?```sh\n(.*?)```")

// TestReadmeWalkThrough runs the README's walk-through as written (bash,
// curl and jq) against a fresh payd serve with the demo merchant's AUD
// keys, its API line pointed at that server: every call answers 2xx, the
// payin is received, its money reaches available, and the payout
// completes; the script's own reads say so too.
func TestReadmeWalkThrough(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a payd process")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walk-through needs %s", tool)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := readmeWalkThrough.FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md has no sh block under "## A first payin and payout"`)
	}
	script := string(m[1])
	const apiLine = "API=http://127.0.0.1:8080/api\n"
	if !strings.HasPrefix(script, apiLine) {
		t.Fatalf("the walk-through does not start with %q", apiLine)
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		proc := startProcess(t, dsn)
		app := demoApp(t, proc, "AUD")
		// curl fails the script on an answer that is not 2xx, naming the URL.
		prelude := "set -euo pipefail\ncurl() { command curl -S --fail-with-body \"$@\" || { echo \"curl failed: $*\" >&2; return 22; }; }\n"
		cmd := exec.Command("bash", "-c", prelude+"API="+proc.base+"\n"+strings.TrimPrefix(script, apiLine))
		cmd.Env = append(os.Environ(), "APP_ID="+app.AppID, "SECRET_KEY="+app.SecretKey)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the walk-through failed: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if !strings.Contains(string(out), "\n\"received\"\n") || lines[len(lines)-1] != `"completed"` {
			t.Errorf("the walk-through printed\n%s\nwant the payin \"received\" and the payout \"completed\"", out)
		}
		client := &payd{t: t, base: proc.base}
		if b := client.balanceOf(app, "AUD"); minorUnits(t, b.Available, "AUD") <= 0 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("after the walk-through available is %s and outgoing %s; want the payin's money less the payout, nothing outgoing", b.Available, b.Outgoing)
		}
	})
}
