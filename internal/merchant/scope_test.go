package merchant

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseScopes: a comma list of RESOURCE:read|write, sorted and without
// repeats, or * alone (also for an empty list); anything else says why.
func TestParseScopes(t *testing.T) {
	good := []struct{ in, want string }{
		{"", "*"}, {"*", "*"}, {" payouts:write , balances:read,payouts:write", "balances:read,payouts:write"},
	}
	for _, c := range good {
		got, err := ParseScopes(c.in)
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("ParseScopes(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, says string }{
		{"payouts", "is not a scope"}, {"payouts:delete", "is not a scope"}, {"money:read", "is not a scope"},
		{"*,payins:read", "give it alone"}, {"payins:read,", "is not a scope"},
	}
	for _, c := range bad {
		if _, err := ParseScopes(c.in); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseScopes(%q) = %v, want an error saying %q", c.in, err, c.says)
		}
	}
}

// TestAccess: write includes read; * and the zero Access allow everything;
// a scope elsewhere allows nothing else; an expiry is past at its instant;
// the allowed addresses take prefixes and single addresses, IPv4-mapped
// IPv6 included.
func TestAccess(t *testing.T) {
	scoped := Access{Scopes: []string{"balances:read", "payouts:write"}}
	for scope, want := range map[string]bool{"payouts:write": true, "payouts:read": true, "balances:read": true,
		"balances:write": false, "payins:read": false, "": true} {
		if got := scoped.Allows(scope); got != want {
			t.Errorf("%v.Allows(%q) = %v, want %v", scoped.Scopes, scope, got, want)
		}
	}
	if !(Access{}).Allows("payins:write") || !(Access{Scopes: []string{AllScopes}}).Allows("sandbox:write") {
		t.Error("the zero Access and * must allow everything")
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if e := (Access{ExpiresAt: at}); e.Expired(at.Add(-time.Millisecond)) || !e.Expired(at) || (Access{}).Expired(at) {
		t.Error("an expiry is past from its instant on, and no expiry never")
	}
	ips, err := ParseAllowedIPs("203.0.113.0/24, 198.51.100.7 ,2001:db8::/32")
	if err != nil || len(ips) != 3 {
		t.Fatalf("ParseAllowedIPs = %v, %v", ips, err)
	}
	allowed := Access{AllowedIPs: ips}
	for addr, want := range map[string]bool{"203.0.113.9": true, "198.51.100.7": true, "198.51.100.8": false, "::ffff:203.0.113.9": true,
		"2001:db8::1": true, "127.0.0.1": false} {
		if got := allowed.From(netip.MustParseAddr(addr)); got != want {
			t.Errorf("From(%s) = %v, want %v", addr, got, want)
		}
	}
	if !(Access{}).From(netip.MustParseAddr("127.0.0.1")) {
		t.Error("no allowed addresses is any address")
	}
	if _, err := ParseAllowedIPs("10.0.0.0/33"); err == nil {
		t.Error("a prefix longer than the address is refused")
	}
	if _, err := ParseAllowedIPs(strings.Repeat("10.0.0.1,", MaxAllowedIPs) + "10.0.0.2"); err != nil {
		t.Errorf("repeats count once: %v", err)
	}
	if got := readAccess("payins:read,bogus", nil, ""); !slices.Equal(got.Scopes, []string{"-"}) || got.Allows("payins:read") {
		t.Errorf("a stored scope list that does not parse allows %v, want nothing", got.Scopes)
	}
}
