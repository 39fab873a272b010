package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// walkThrough is one flow of docs/walkthroughs.md: a "## " heading, the
// demo merchant's app it runs as ("# As the demo merchant's IDR app"), its
// sh block, what its last line prints ("# Prints: received") and lines it
// prints on the way ("# Also prints: held").
type walkThrough struct {
	title, currency, script, prints string
	// also are lines it prints on the way ("# Also prints: held").
	also []string
}

var (
	walkSection  = regexp.MustCompile("(?s)\n## ([^\n]+)\n(.*?)(?:\n## |\\z)")
	walkBlock    = regexp.MustCompile("(?s)```sh\n(.*?)```")
	walkCurrency = regexp.MustCompile(`(?m)^# As the demo merchant's ([A-Z]{3}) app`)
	walkPrints   = regexp.MustCompile(`(?m)^# Prints: (.+)$`)
	walkAlso     = regexp.MustCompile(`(?m)^# Also prints: (.+)$`)
	bannerLogin  = regexp.MustCompile(`(?m)^\s+portal login\s+(\S+) / (\S+)$`)
	bannerID     = regexp.MustCompile(`created the demo merchant (\S+)\.`)
)

func walkThroughs(t *testing.T) []walkThrough {
	t.Helper()
	doc, err := os.ReadFile("../../docs/walkthroughs.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []walkThrough
	text := string(doc)
	for {
		m := walkSection.FindStringSubmatchIndex(text)
		if m == nil {
			break
		}
		title, body := text[m[2]:m[3]], text[m[4]:m[5]]
		text = text[m[5]:]
		b := walkBlock.FindStringSubmatch(body)
		if b == nil {
			continue
		}
		w := walkThrough{title: title, script: b[1]}
		if c := walkCurrency.FindStringSubmatch(b[1]); c != nil {
			w.currency = c[1]
		}
		if p := walkPrints.FindStringSubmatch(b[1]); p != nil {
			w.prints = strings.TrimSpace(p[1])
		}
		for _, a := range walkAlso.FindAllStringSubmatch(b[1], -1) {
			w.also = append(w.also, strings.TrimSpace(a[1]))
		}
		if w.currency == "" || w.prints == "" {
			t.Errorf("walk-through %q names no app (# As the demo merchant's XXX app) or no result (# Prints: …)", title)
			continue
		}
		out = append(out, w)
	}
	return out
}

// TestWalkThroughs runs every flow of docs/walkthroughs.md as written (bash,
// curl, jq; payd's operator commands on PATH with PAYD_DB) against a fresh
// payd serve, each as the demo merchant's app it names: every call answers
// 2xx (3xx for the portal's forms) and the last line prints what the flow
// says it does.
func TestWalkThroughs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a payd process")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walk-throughs need %s", tool)
		}
	}
	flows := walkThroughs(t)
	if len(flows) < 6 {
		t.Fatalf("docs/walkthroughs.md has %d flows, want at least 6", len(flows))
	}
	bin := t.TempDir()
	if err := os.Symlink(paydBinary(t), filepath.Join(bin, "payd")); err != nil {
		t.Fatal(err)
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		proc := startProcess(t, dsn)
		apps := map[string]creds{}
		for _, w := range flows {
			if _, ok := apps[w.currency]; !ok {
				apps[w.currency] = demoApp(t, proc, w.currency)
			}
		}
		proc.mu.Lock()
		banner := proc.stdout.String()
		proc.mu.Unlock()
		login, id := bannerLogin.FindStringSubmatch(banner), bannerID.FindStringSubmatch(banner)
		if login == nil || id == nil {
			t.Fatalf("the banner names no portal login or merchant:\n%s", banner)
		}
		root := strings.TrimSuffix(proc.base, "/api")
		for _, w := range flows {
			t.Run(w.title, func(t *testing.T) {
				prelude := "set -euo pipefail\ncurl() { command curl -S --fail-with-body \"$@\" || { echo \"curl failed: $*\" >&2; return 22; }; }\n"
				script := strings.ReplaceAll(w.script, "http://127.0.0.1:8080", root)
				cmd := exec.Command("bash", "-c", prelude+script)
				app := apps[w.currency]
				cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PAYD_DB="+dsn, "APP_ID="+app.AppID, "SECRET_KEY="+app.SecretKey,
					"MERCHANT="+id[1], "PORTAL_EMAIL="+login[1], "PORTAL_PASSWORD="+login[2])
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("the walk-through failed: %v\n%s", err, out)
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				if got := lines[len(lines)-1]; got != w.prints {
					t.Errorf("the walk-through's last line is %q, want %q; it printed\n%s", got, w.prints, out)
				}
				for _, a := range w.also {
					if !slices.Contains(lines, a) {
						t.Errorf("the walk-through printed no line %q:\n%s", a, out)
					}
				}
			})
		}
	})
}
