package webhook

import (
	"sync"
	"time"
)

// failureLogEvery is how often, at most, a failing receiver is logged: a
// receiver that is down fails every attempt, and the log says so once a
// minute with the count, not once an attempt.
const failureLogEvery = time.Minute

// failureLog writes failed deliveries to the operator's log, rate-limited
// per receiver (its endpoint's URL).
type failureLog struct {
	mu   sync.Mutex
	last map[string]failureLine
}

type failureLine struct {
	at         time.Time
	suppressed int
}

// note reports whether a failure to url at now is logged, and how many of
// its failures were left out since the last line.
func (l *failureLog) note(url string, now time.Time) (logged bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]failureLine{}
	}
	prev, seen := l.last[url]
	if seen && now.Sub(prev.at) < failureLogEvery {
		prev.suppressed++
		l.last[url] = prev
		return false, 0
	}
	if len(l.last) >= maxLoggedReceivers {
		// Bounded: forget the receivers of an earlier minute.
		for k, v := range l.last {
			if now.Sub(v.at) >= failureLogEvery {
				delete(l.last, k)
			}
		}
		if len(l.last) >= maxLoggedReceivers {
			return false, 0
		}
	}
	l.last[url] = failureLine{at: now}
	return true, prev.suppressed
}

// maxLoggedReceivers bounds the receivers the log remembers at once.
const maxLoggedReceivers = 10_000

// logFailure logs a delivery attempt that failed (rate-limited).
func (d *Dispatcher) logFailure(ev claimed, o outcome) {
	if o.delivered() {
		return
	}
	logged, suppressed := d.failures.note(ev.endpoint, d.clock.Now())
	if !logged {
		return
	}
	args := []any{"merchant_id", ev.merchantID, "event_id", ev.id, "event_type", ev.eventType, "url", ev.endpoint}
	if ev.endpointID != "" {
		args = append(args, "endpoint_id", ev.endpointID)
	}
	if o.statusCode != 0 {
		args = append(args, "status", o.statusCode)
	}
	if o.err != "" {
		args = append(args, "err", o.err)
	}
	if suppressed > 0 {
		args = append(args, "failures_not_logged", suppressed)
	}
	d.log.Warn("webhook delivery failed", args...)
}
