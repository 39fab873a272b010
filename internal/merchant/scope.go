package merchant

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"payd/internal/fault"
)

// Resources are what an app's scopes name (CONTRACT §23), each read or
// written: RESOURCE:read, or RESOURCE:write, which includes read.
var Resources = []string{"payins", "payouts", "contacts", "balances", "payid", "gateway", "settlements", "treasury",
	"transfers", "reports", "banks", "webhooks", "events", "disputes", "reconciliation", "exports", "sandbox"}

// AllScopes is the scope of an app that may do everything its account can:
// every app made before scopes existed, and any made without --scopes.
const AllScopes = "*"

// Bounds of an app's access settings.
const (
	MaxScopes     = 2 * 17 // every resource, read and write
	MaxAllowedIPs = 32
)

// Access is what an app may do beyond authenticating: its scopes, when it
// stops being accepted and where from (CONTRACT §23). The zero value, a
// caller that is no app (a portal user acting on the account), allows
// everything.
type Access struct {
	// Scopes are the app's scopes; nil or ["*"] is everything.
	Scopes []string
	// ExpiresAt is when the app stops being accepted (deployment time);
	// zero never.
	ExpiresAt time.Time
	// AllowedIPs are the client addresses accepted; none is any.
	AllowedIPs []netip.Prefix
}

// Allows reports whether the scopes grant scope ("payouts:write"; "" is a
// route that needs none): the scope itself, * or, for a read, the
// resource's write.
func (a Access) Allows(scope string) bool {
	if scope == "" || len(a.Scopes) == 0 || slices.Contains(a.Scopes, AllScopes) || slices.Contains(a.Scopes, scope) {
		return true
	}
	resource, action, _ := strings.Cut(scope, ":")
	return action == "read" && slices.Contains(a.Scopes, resource+":write")
}

// Expired reports whether the app is past its expiry at now.
func (a Access) Expired(now time.Time) bool { return !a.ExpiresAt.IsZero() && !now.Before(a.ExpiresAt) }

// From reports whether addr is among the allowed addresses.
func (a Access) From(addr netip.Addr) bool {
	if len(a.AllowedIPs) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, p := range a.AllowedIPs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// ParseScopes reads a comma list of scopes: each RESOURCE:read or
// RESOURCE:write of Resources, or * alone. It returns them sorted and
// without repeats, or what is wrong.
func ParseScopes(list string) ([]string, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == AllScopes {
		return []string{AllScopes}, nil
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		resource, action, ok := strings.Cut(s, ":")
		switch {
		case s == AllScopes:
			return nil, fmt.Errorf("* is every scope: give it alone")
		case !ok || (action != "read" && action != "write") || !slices.Contains(Resources, resource):
			return nil, fmt.Errorf("%q is not a scope: each is RESOURCE:read or RESOURCE:write, RESOURCE one of %s", s, strings.Join(Resources, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > MaxScopes {
		return nil, fmt.Errorf("lists %d scopes; at most %d", len(out), MaxScopes)
	}
	slices.Sort(out)
	return out, nil
}

// ParseAllowedIPs reads a comma list of addresses and CIDR prefixes (an
// address alone is its own /32 or /128).
func ParseAllowedIPs(list string) ([]netip.Prefix, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			addr, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix such as 203.0.113.0/24", s)
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		if !slices.Contains(out, p.Masked()) {
			out = append(out, p.Masked())
		}
	}
	if len(out) > MaxAllowedIPs {
		return nil, fmt.Errorf("lists %d addresses; at most %d", len(out), MaxAllowedIPs)
	}
	return out, nil
}

// readAccess is an app's Access from its stored columns; stored values
// that do not parse (never written by payd) allow nothing rather than
// everything.
func readAccess(scopes string, expiresMs *int64, allowedIPs string) Access {
	var a Access
	if s, err := ParseScopes(scopes); err == nil {
		a.Scopes = s
	} else {
		a.Scopes = []string{"-"}
	}
	if expiresMs != nil {
		a.ExpiresAt = time.UnixMilli(*expiresMs)
	}
	if ips, err := ParseAllowedIPs(allowedIPs); err == nil {
		a.AllowedIPs = ips
	} else {
		a.AllowedIPs = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")}
	}
	return a
}

func joinPrefixes(ps []netip.Prefix) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

// AccessFields names the inputs ParseAccess reads in its refusals: the
// CLI's flags or the portal form's fields.
type AccessFields struct{ Scopes, ExpiresAt, AllowedIPs string }

// ParseAccess reads an app's access settings as payd app create and the
// portal's key form take them (CONTRACT §23): scopes (empty is every
// scope), an RFC 3339 expiry (empty never) and allowed addresses (empty
// any), each refusal naming its input.
func ParseAccess(scopes, expiresAt, allowedIPs string, names AccessFields) (Access, error) {
	var access Access
	f := fault.Fields{}
	var err error
	if access.Scopes, err = ParseScopes(scopes); err != nil {
		f.Add(names.Scopes, err.Error())
	}
	if access.AllowedIPs, err = ParseAllowedIPs(allowedIPs); err != nil {
		f.Add(names.AllowedIPs, err.Error())
	}
	if v := strings.TrimSpace(expiresAt); v != "" {
		if access.ExpiresAt, err = time.Parse(time.RFC3339, v); err != nil {
			f.Add(names.ExpiresAt, "must be an RFC 3339 time such as 2027-01-31T00:00:00Z")
		}
	}
	return access, f.Err()
}
