package main

import (
	"strings"
	"testing"
	"time"

	"payd/internal/webhook"
)

// TestWebhookVerify: payd webhook verify exits 0 for a delivery signed with
// the secret (the body on standard input), 1 saying why for one that is not
// or whose body was changed, and 2 for missing flags.
func TestWebhookVerify(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := `{"type":"payin.received","data":{"uuid":"PIN1"}}`
	sig, err := webhook.Sign(secret, "msg_2Lc", time.Unix(1764720000, 0), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	args := func(sig string) []string {
		return []string{"webhook", "verify", "--secret", secret, "--id", "msg_2Lc", "--timestamp", "1764720000", "--signature", sig}
	}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		out, inErr string
	}{
		{"valid", args(sig), body, 0, "valid: webhook msg_2Lc", ""},
		{"valid beside a rotated secret's", args("v1,bm90IHRoaXMgb25l " + sig), body, 0, "valid", ""},
		{"a changed body", args(sig), strings.Replace(body, "PIN1", "PIN2", 1), 1, "", "payd: invalid: no v1 signature"},
		{"another signature", args("v1,bm90IHRoaXMgb25l"), body, 1, "", "payd: invalid: no v1 signature"},
		{"missing flags", []string{"webhook", "verify", "--secret", secret}, body, 2, "", "missing --id, --signature, --timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runPayd(t, invocation{args: tt.args, stdin: tt.stdin})
			if got.code != tt.code || !strings.Contains(got.stdout, tt.out) || !strings.Contains(got.stderr, tt.inErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", got.code, got.stdout, got.stderr, tt.code, tt.out, tt.inErr)
			}
		})
	}
}
