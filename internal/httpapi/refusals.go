package httpapi

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLog stands in for the request log lines of requests refused before
// authentication (ratelimit.Limiter.Early: a merchant far over its rate
// limit). It writes one line per merchant per second with the count, so a
// flood neither floods the log nor costs payd a write per refused request,
// which would slow the other merchants (the noisy-neighbour rule). Each
// refusal is still counted, one by one, in the request metrics.
type refusalLog struct {
	log *slog.Logger

	mu     sync.Mutex
	counts map[string]int // merchant → requests refused this window
	since  time.Time
}

// refusalWindow is how long refusals are counted before they are logged.
const refusalWindow = time.Second

// maxRefusalMerchants bounds the merchants counted apart in one window; the
// rest are counted together.
const maxRefusalMerchants = 1000

// note counts one refused request of merchantID.
func (l *refusalLog) note(merchantID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts, l.since = map[string]int{}, time.Now()
		time.AfterFunc(refusalWindow, l.flush)
	}
	if _, ok := l.counts[merchantID]; !ok && len(l.counts) >= maxRefusalMerchants {
		merchantID = "others"
	}
	l.counts[merchantID]++
}

// flush logs the window's counts and starts a new window.
func (l *refusalLog) flush() {
	l.mu.Lock()
	counts, since := l.counts, l.since
	l.counts = nil
	l.mu.Unlock()
	took := time.Since(since)
	for merchantID, n := range counts {
		l.log.Info("requests refused by rate limit", "merchant_id", merchantID, "refused", n,
			"window_ms", took.Milliseconds(), "status", 429)
	}
}
