package job

import (
	"context"
	"time"

	"payd/internal/store"
)

// Poller is how a consumer of a queue kept in the database waits for work,
// the job workers and the webhook dispatcher alike: work this process
// commits wakes it at once (Wake), and a poll every interval finds the work
// other processes committed and the work that became due with time, which
// no wake announces.
type Poller struct {
	wake chan struct{}
}

// NewPoller returns a poller no one has woken.
func NewPoller() *Poller { return &Poller{wake: make(chan struct{}, 1)} }

// Wake makes a waiting Loop run its next round now. Wakes that come while a
// round runs count as one: the round after it looks for all their work.
func (p *Poller) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Loop runs round until ctx ends: at once again while round reports that it
// may have left work (a full batch), otherwise after a Wake, or after
// interval, for which round is told it polls. Several loops may share a
// poller (a queue's workers): a Wake starts one of them.
func (p *Poller) Loop(ctx context.Context, interval time.Duration, round func(polled bool) (more bool)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	polled := false
	for ctx.Err() == nil {
		if round(polled) {
			polled = false
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
			polled = false
		case <-ticker.C:
			polled = true
		}
	}
}

// Probe reports whether `SELECT 1 FROM from` finds a row: the cheap look on
// the read path a consumer takes before it spends a write transaction on a
// claim (and, on SQLite, the one writer), since an idle poll mostly finds
// nothing. from is a table and its condition, without a LIMIT.
func Probe(ctx context.Context, q store.Querier, from string, args ...any) (bool, error) {
	var found int
	err := q.QueryRowContext(ctx, ProbeQuery(from), args...).Scan(&found)
	return found > 0, err
}

// ProbeQuery is Probe's statement for from, for a test that checks which
// indexes it uses.
func ProbeQuery(from string) string {
	return `SELECT count(*) FROM (SELECT 1 FROM ` + from + ` LIMIT 1) d`
}
