// Package proxy finds a request's real client address. Behind a load
// balancer or reverse proxy every connection comes from the proxy, which
// names the client in X-Forwarded-For or Forwarded; those headers are
// believed only from the proxies the operator trusts (--trusted-proxies),
// since any client can write them.
package proxy

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// maxHops bounds how many forwarding hops are read from a request.
const maxHops = 32

// Trust is the set of proxies whose forwarding headers are believed.
// The zero Trust believes none: the client is the connection's peer.
type Trust struct {
	prefixes []netip.Prefix
}

// ParseTrust reads a comma-separated list of CIDR prefixes or addresses
// ("10.0.0.0/8, 192.168.1.7").
func ParseTrust(list string) (Trust, error) {
	var t Trust
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			addr, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return Trust{}, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix such as 10.0.0.0/8", item)
			}
			p = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		t.prefixes = append(t.prefixes, p.Masked())
	}
	return t, nil
}

// String lists the trusted prefixes.
func (t Trust) String() string {
	out := make([]string, len(t.prefixes))
	for i, p := range t.prefixes {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

func (t Trust) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the address of the client that sent r. It is the
// connection's peer unless the peer is a trusted proxy; then it is the
// right-most hop of X-Forwarded-For (or, without it, of Forwarded) that is
// not itself a trusted proxy. A hop that cannot be read ends the walk: the
// hop before it, which a trusted proxy wrote, is the client.
func (t Trust) Client(r *http.Request) netip.Addr {
	peer := remote(r.RemoteAddr)
	if !peer.IsValid() || !t.trusts(peer) {
		return peer
	}
	hops := forwardedFor(r.Header.Values("X-Forwarded-For"), parseXFF)
	if len(hops) == 0 {
		hops = forwardedFor(r.Header.Values("Forwarded"), parseForwarded)
	}
	client := peer
	for i := len(hops) - 1; i >= 0 && len(hops)-i <= maxHops; i-- {
		hop := hops[i]
		if !hop.IsValid() {
			break
		}
		client = hop
		if !t.trusts(hop) {
			break
		}
	}
	return client
}

// remote reads a connection's "host:port".
func remote(addr string) netip.Addr {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// forwardedFor splits the header's values into hops, first (client side) to last.
func forwardedFor(values []string, parse func(string) netip.Addr) []netip.Addr {
	var hops []netip.Addr
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			hops = append(hops, parse(strings.TrimSpace(item)))
		}
	}
	return hops
}

// parseXFF reads one X-Forwarded-For entry: an address, perhaps with a port.
func parseXFF(s string) netip.Addr {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap()
	}
	return remote(s)
}

// parseForwarded reads the for= parameter of one RFC 7239 element
// (for=192.0.2.60;proto=http, for="[2001:db8::1]:4711").
func parseForwarded(element string) netip.Addr {
	for _, pair := range strings.Split(element, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(name, "for") {
			continue
		}
		value = strings.Trim(value, `"`)
		if strings.HasPrefix(value, "[") {
			if end := strings.IndexByte(value, ']'); end > 0 {
				value = value[1:end]
			}
		}
		return parseXFF(value)
	}
	return netip.Addr{}
}
