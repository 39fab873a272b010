package webhook

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recipeBlock is a fenced code block of docs/webhooks.md.
var recipeBlock = regexp.MustCompile("(?s)```(go|js|python)\n(.*?)```")

// TestDocsRecipes runs the verification programs of docs/webhooks.md (Go,
// Node, Python) on deliveries Sign made, as a merchant's developer would
// paste them: each says valid for a delivery signed with the secret (alone
// or beside a rotated secret's signature) and invalid for a changed body,
// another secret or a timestamp ten minutes old. An interpreter the machine
// lacks skips its language.
func TestDocsRecipes(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := recipeBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 3 {
		t.Fatalf("docs/webhooks.md has %d go/js/python blocks, want the three recipes", len(blocks))
	}
	const secret, other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2VjcmV0LXR3by1vZi10aGUtcm90YXRpb24="
	body := `{"type":"payin.received","data":{"uuid":"PIN1","amount":"10.00"}}`
	now := time.Now()
	sign := func(secret string, at time.Time) string {
		sig, err := Sign(secret, "msg_2Lc", at, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	cases := []struct {
		name, secret, signature, body, want string
		at                                  time.Time
	}{
		{"signed with the secret", secret, sign(secret, now), body, "valid", now},
		{"beside a rotated secret's", secret, sign(other, now) + " " + sign(secret, now), body, "valid", now},
		{"a changed body", secret, sign(secret, now), strings.Replace(body, "10.00", "99.00", 1), "invalid", now},
		{"another secret", other, sign(secret, now), body, "invalid", now},
		{"ten minutes old", secret, sign(secret, now.Add(-10*time.Minute)), body, "invalid", now.Add(-10 * time.Minute)},
	}
	for _, b := range blocks {
		lang, code := b[1], b[2]
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var argv []string
			switch lang {
			case "go":
				if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
					t.Fatal(err)
				}
				// Built once rather than go run for each case.
				bin := filepath.Join(dir, "verify")
				build := exec.Command("go", "build", "-o", bin, filepath.Join(dir, "main.go"))
				build.Dir = dir
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("the Go recipe does not build: %v\n%s", err, out)
				}
				argv = []string{bin}
			case "js":
				argv = []string{"node", filepath.Join(dir, "verify.js")}
			case "python":
				argv = []string{"python3", filepath.Join(dir, "verify.py")}
			}
			if lang != "go" {
				if _, err := exec.LookPath(argv[0]); err != nil {
					t.Skipf("%s is not installed here", argv[0])
				}
				if err := os.WriteFile(argv[1], []byte(code), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range cases {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Stdin = strings.NewReader(c.body)
				cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+c.secret, "WEBHOOK_ID=msg_2Lc",
					"WEBHOOK_TIMESTAMP="+strconv.FormatInt(c.at.Unix(), 10), "WEBHOOK_SIGNATURE="+c.signature)
				out, err := cmd.Output()
				if got := strings.TrimSpace(string(out)); err != nil || got != c.want {
					t.Errorf("%s: the %s recipe says %q (%v), want %q", c.name, lang, got, err, c.want)
				}
			}
		})
	}
}
