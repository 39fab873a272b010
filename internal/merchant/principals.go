package merchant

import (
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// The principal cache. Every API request authenticates, and reading its
// app, merchant and account was one database round trip of every request,
// a large share of a small request's cost (docs/benchmarks.md).
// Authenticate keeps what it read for PrincipalCacheTTL.
//
// The rule that keeps this exact: an entry is good for PrincipalCacheTTL
// from the moment before its read was sent, and every change of what a
// principal holds (an app's revocation, the account's type or payin
// methods, the sandbox test clock) waits PrincipalCacheTTL after its commit
// before it answers. So any request that starts after that answer, in this process or in any
// other payd on the same database (an operator command, another server
// behind the load balancer), finds every entry read before the change
// expired and reads the new state. Only requests running at the same time
// as the change may see either, as they may without a cache.

// PrincipalCacheTTL is how long Authenticate trusts a principal it read,
// and so how long a change of one waits before it answers.
const PrincipalCacheTTL = 100 * time.Millisecond

// maxPrincipals bounds the cache; it is emptied when it reaches this.
const maxPrincipals = 10_000

// principals caches Authenticate's reads by app-id, and AuthenticateToken's
// by token (tokenKey).
type principals struct {
	mu      sync.Mutex
	entries map[string]cachedPrincipal
	// machine is the clock the entries' lifetimes are measured on: the
	// machine's own (clock.Real, with its monotonic reading; a test replaces
	// it), never the service's injected clock, which tests hold still, nor
	// a merchant's: the rule above is about real time, across processes.
	machine clock.Clock
}

// cachedPrincipal is one app's principal and the hash of its secret, or an
// access token's principal and the token's expiry.
type cachedPrincipal struct {
	principal  Principal
	secretHash string
	// tokenExpires is the access token's expiry on the merchant's clock.
	tokenExpires time.Time
	until        time.Time
}

// tokenKey is the cache key of the access token whose hash is hash, apart
// from every app-id.
func tokenKey(hash string) string { return "token\x00" + hash }

func newPrincipals() *principals {
	return &principals{entries: map[string]cachedPrincipal{}, machine: clock.Real{}}
}

// get returns appID's cached principal while it is good.
func (c *principals) get(appID string) (cachedPrincipal, bool) {
	c.mu.Lock()
	e, ok := c.entries[appID]
	c.mu.Unlock()
	if !ok || !c.machine.Now().Before(e.until) {
		return cachedPrincipal{}, false
	}
	return e, true
}

// put keeps e, what a read sent at readAt found, under key (an app-id, or
// tokenKey).
func (c *principals) put(key string, e cachedPrincipal, readAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxPrincipals {
		clear(c.entries)
	}
	e.until = readAt.Add(PrincipalCacheTTL)
	c.entries[key] = e
}

// principalChanged makes tx's caller wait, once tx commits, until every
// principal read before the commit has expired, in every process (see the
// rule above). This process's own entries are dropped at once.
func (s *Service) principalChanged(tx *store.Tx) {
	tx.AfterCommit(func() {
		s.principals.mu.Lock()
		clear(s.principals.entries)
		s.principals.mu.Unlock()
		time.Sleep(PrincipalCacheTTL)
	})
}
