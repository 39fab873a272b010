package httpapi

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// authLimiter slows down and then refuses clients that keep failing
// authentication (CONTRACT §2). It counts failures per client address in a
// fixed window: past slowAfter failures each further failure is answered
// after a growing delay; past refuseAfter the address is refused with 429
// until the window ends. Successful requests are never slowed.
type authLimiter struct {
	mu          sync.Mutex
	now         func() time.Time
	window      time.Duration
	slowAfter   int
	refuseAfter int
	clients     map[string]*failures
}

type failures struct {
	count int
	since time.Time
}

// maxTrackedClients bounds the limiter's memory under a flood of addresses.
const maxTrackedClients = 100_000

func newAuthLimiter() *authLimiter {
	return &authLimiter{now: time.Now, window: time.Minute, slowAfter: 5, refuseAfter: 20, clients: map[string]*failures{}}
}

// check reports whether ip is refused now, and for how long.
func (l *authLimiter) check(ip string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(ip)
	if f == nil || f.count < l.refuseAfter {
		return 0, false
	}
	return l.window - l.now().Sub(f.since), true
}

// failed records a failure and returns how long to hold the answer back.
func (l *authLimiter) failed(ip string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.current(ip)
	if f == nil {
		if len(l.clients) >= maxTrackedClients {
			l.sweep()
		}
		f = &failures{since: l.now()}
		l.clients[ip] = f
	}
	f.count++
	if f.count <= l.slowAfter {
		return 0
	}
	return min(time.Duration(f.count-l.slowAfter)*100*time.Millisecond, 2*time.Second)
}

// current returns ip's failures in the running window, dropping an old window.
func (l *authLimiter) current(ip string) *failures {
	f, ok := l.clients[ip]
	if !ok {
		return nil
	}
	if l.now().Sub(f.since) >= l.window {
		delete(l.clients, ip)
		return nil
	}
	return f
}

func (l *authLimiter) sweep() {
	for ip := range l.clients {
		l.current(ip)
	}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
