package bankchannel

import (
	"errors"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string // the endpoint's URL; "" when refused
	}{
		{"dir", "dir:/srv/payd/outbox", "dir:/srv/payd/outbox"},
		{"dir root", "dir:/", "dir:/"},
		{"sftp IPv4", "sftp://payd@127.0.0.1:2222/out", "sftp://payd@127.0.0.1:2222/out"},
		{"sftp IPv6", "sftp://payd@[::1]:22/out", "sftp://payd@[::1]:22/out"},
		{"sftp host name", "sftp://payd@sftp.bank.example:22/h2h/in", "sftp://payd@sftp.bank.example:22/h2h/in"},
		{"sftp root", "sftp://payd@127.0.0.1:22/", "sftp://payd@127.0.0.1:22/"},

		{"empty", "", ""},
		{"other scheme", "ftp://payd@127.0.0.1:21/out", ""},
		{"upper-case scheme", "SFTP://payd@127.0.0.1:22/out", ""},
		{"file URL", "file:///srv/out", ""},
		{"dir relative", "dir:outbox", ""},
		{"dir dot-dot", "dir:/srv/../etc", ""},
		{"dir dot", "dir:/srv/./out", ""},
		{"dir trailing slash", "dir:/srv/out/", ""},
		{"dir double slash", "dir:/srv//out", ""},
		{"dir NUL", "dir:/srv/out\x00", ""},
		{"dir newline", "dir:/srv/out\n", ""},
		{"dir escape", "dir:/srv/%2e%2e/etc", ""},
		{"dir empty", "dir:", ""},
		{"sftp no user", "sftp://127.0.0.1:22/out", ""},
		{"sftp empty user", "sftp://@127.0.0.1:22/out", ""},
		{"sftp password", "sftp://payd:secret@127.0.0.1:22/out", ""},
		{"sftp empty password", "sftp://payd:@127.0.0.1:22/out", ""},
		{"sftp user with a dash first", "sftp://-oProxyCommand@127.0.0.1:22/out", ""},
		{"sftp no port", "sftp://payd@127.0.0.1/out", ""},
		{"sftp empty port", "sftp://payd@127.0.0.1:/out", ""},
		{"sftp port 0", "sftp://payd@127.0.0.1:0/out", ""},
		{"sftp port too large", "sftp://payd@127.0.0.1:65536/out", ""},
		{"sftp port leading zero", "sftp://payd@127.0.0.1:022/out", ""},
		{"sftp no host", "sftp://payd@:22/out", ""},
		{"sftp bad host", "sftp://payd@bank_host:22/out", ""},
		{"sftp IPv6 zone", "sftp://payd@[fe80::1%25eth0]:22/out", ""},
		{"sftp no path", "sftp://payd@127.0.0.1:22", ""},
		{"sftp relative path", "sftp://payd@127.0.0.1:22out", ""},
		{"sftp dot-dot", "sftp://payd@127.0.0.1:22/out/../etc", ""},
		{"sftp escaped dot-dot", "sftp://payd@127.0.0.1:22/out/%2e%2e/etc", ""},
		{"sftp query", "sftp://payd@127.0.0.1:22/out?x=1", ""},
		{"sftp fragment", "sftp://payd@127.0.0.1:22/out#x", ""},
		{"sftp NUL", "sftp://payd@127.0.0.1:22/out\x00", ""},
		{"too long", "dir:/" + strings.Repeat("a", maxURLBytes), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := parseURL(tt.raw)
			got := ""
			if err == nil {
				got = loc.String()
			}
			if got != tt.want {
				t.Errorf("parseURL(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
			if tt.want == "" && !errors.Is(err, ErrInvalid) {
				t.Errorf("parseURL(%q) error = %v; want ErrInvalid", tt.raw, err)
			}
		})
	}
}

// TestParseURLHidesPassword: a URL refused for its password does not quote
// it back.
func TestParseURLHidesPassword(t *testing.T) {
	for _, raw := range []string{"sftp://payd:hunter2@127.0.0.1:22/out", "sftp://payd:hunter2@127.0.0.1:22/out/%zz"} {
		_, err := parseURL(raw)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseURL(%q) error = %v; want a refusal without the password", raw, err)
		}
		if got := redact(raw); strings.Contains(got, "hunter2") {
			t.Errorf("redact(%q) = %q", raw, got)
		}
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"payd-au-20261202-001.aba", true},
		{"pain.002 reply 17.xml", true},
		{"振込結果.txt", true},
		{strings.Repeat("a", maxNameBytes), true},
		{"", false},
		{".", false},
		{"..", false},
		{".payd-au-20261202-001.aba.0123456789abcdef.tmp", false},
		{".hidden", false},
		{"../etc/passwd", false},
		{"a/b", false},
		{"/abs", false},
		{`a\b`, false},
		{"a\x00b", false},
		{"a\nb", false},
		{"a\x7fb", false},
		{"\xff\xfe", false},
		{strings.Repeat("a", maxNameBytes+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkName(tt.name)
			if got := err == nil; got != tt.ok {
				t.Errorf("checkName(%q) = %v; want ok %v", tt.name, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("checkName(%q) = %v; want ErrInvalid", tt.name, err)
			}
		})
	}
}
