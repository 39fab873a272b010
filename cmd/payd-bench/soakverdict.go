package main

import (
	"fmt"
	"io"
	"time"
)

// The soak's verdict (issue 55): over a soak of duration d, the p99 of its
// last window within soakP99Growth of its first's, payd's RSS growth after
// warm-up under soakRSSGrowth, no errors, and after the load payd ledger
// verify clean and every acknowledged write read back. The windows
// are five minutes of a thirty-minute soak; a shorter or longer soak scales
// them by the same sixth, so that a three-minute soak compares its first and
// last 30 s. The warm-up is the first window: caches, pools and the Go heap
// grow to their working size there, and growth after it is what a leak shows.
const (
	soakWindowShare = 6   // a window is the soak's duration over this
	soakP99Growth   = 1.5 // the last window's p99 over the first's, at most
	soakRSSGrowth   = 0.10
)

// soakWindow is the length of the soak's first and last windows.
func soakWindow(d time.Duration) time.Duration { return d / soakWindowShare }

// rssSample is payd's resident memory at an offset into the soak.
type rssSample struct {
	at  time.Duration
	mib float64
}

// rssGrowth compares payd's RSS once warm-up has ended (the first sample at
// or after warmUp) with the highest it reached from lastFrom on (the last
// window), and reports the two and the growth between them as a fraction.
// A soak with no sample in either range has nothing to compare: ok false.
func rssGrowth(samples []rssSample, warmUp, lastFrom time.Duration) (base, last, growth float64, ok bool) {
	for _, s := range samples {
		if s.at >= warmUp && base == 0 {
			base = s.mib
		}
		if s.at >= lastFrom {
			last = max(last, s.mib)
		}
	}
	if base <= 0 || last <= 0 {
		return base, last, 0, false
	}
	return base, last, last/base - 1, true
}

// soakOutcome is what the verdict is made of.
type soakOutcome struct {
	window            time.Duration
	firstP99, lastP99 float64 // milliseconds
	rssBase, rssLast  float64 // MiB
	rssGrowth         float64
	rssKnown          bool
	errors            int64 // failed requests: the peak's, the soak's and the clock's
	firstErrors       []string
	// The checks after the load.
	checked, missing int // acknowledged writes read back, and those absent or changed
	untracked        int // acknowledged writes past the log's bound, never read back
	firstMissing     string
	hooksMissing     int // test events acknowledged and never delivered
	jobsShort        int // merchants with fewer reports or settlements than their clock passed
	jobsDetail       string
	ledgerOK         bool
	ledgerSays       string
}

// soakRule is one line of the verdict.
type soakRule struct {
	name   string
	ok     bool
	detail string
}

// rules are the verdict's lines; the soak passes when every one is ok.
func (o soakOutcome) rules() []soakRule {
	ratio := 0.0
	if o.firstP99 > 0 {
		ratio = o.lastP99 / o.firstP99
	}
	return []soakRule{
		{"p99 steady", o.firstP99 > 0 && ratio <= soakP99Growth,
			fmt.Sprintf("last %s p99 %.2f ms over first %s p99 %.2f ms = %.2f× (at most %.1f×)", o.window, o.lastP99, o.window, o.firstP99, ratio, soakP99Growth)},
		{"RSS steady", o.rssKnown && o.rssGrowth < soakRSSGrowth,
			fmt.Sprintf("%.1f MiB after warm-up, at most %.1f MiB in the last %s: %+.1f %% (under %.0f %%)", o.rssBase, o.rssLast, o.window, 100*o.rssGrowth, 100*soakRSSGrowth)},
		{"no errors", o.errors == 0, fmt.Sprintf("%d failed requests%s", o.errors, firstOf(o.firstErrors))},
		{"acknowledged writes present", o.checked > 0 && o.missing == 0 && o.untracked == 0,
			fmt.Sprintf("%d read back, %d absent or changed, %d not tracked%s", o.checked, o.missing, o.untracked, firstOf([]string{o.firstMissing}))},
		{"webhooks delivered", o.hooksMissing == 0, fmt.Sprintf("%d acknowledged test events never reached the receiver", o.hooksMissing)},
		{"jobs on the clock ran", o.jobsShort == 0, o.jobsDetail},
		{"ledger verify clean", o.ledgerOK, o.ledgerSays},
	}
}

// passed reports whether every rule holds.
func (o soakOutcome) passed() bool {
	for _, r := range o.rules() {
		if !r.ok {
			return false
		}
	}
	return true
}

func (o soakOutcome) print(w io.Writer, db string) {
	verdict := "PASS"
	if !o.passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\nverdict on %s: %s\n", db, verdict)
	for _, r := range o.rules() {
		mark := "ok  "
		if !r.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-28s %s\n", mark, r.name, r.detail)
	}
}

// firstOf is ": " and the first of msgs, or nothing when there is none.
func firstOf(msgs []string) string {
	if len(msgs) == 0 || msgs[0] == "" {
		return ""
	}
	return "; first: " + msgs[0]
}

// localTimesBetween counts the instants in (from, to] at which the wall
// clock of loc reads hour:00: the 09:00 report runs or the midnight
// end-of-day settlements a merchant's clock passed. A wall time a
// daylight-saving change skips is not counted; one it repeats counts once.
func localTimesBetween(from, to time.Time, loc *time.Location, hour int) int {
	y, m, d := from.In(loc).Date()
	days := int(to.Sub(from).Hours()/24) + 2
	n := 0
	for i := range days {
		t := time.Date(y, m, d+i, hour, 0, 0, 0, loc)
		noon := time.Date(y, m, d+i, 12, 0, 0, 0, loc)
		skipped := t.Hour() != hour || t.Day() != noon.Day()
		if !skipped && t.After(from) && !t.After(to) {
			n++
		}
	}
	return n
}

// payinState is what the soak's client was last told of a payin.
type payinState uint8

const (
	payinCreated payinState = iota
	payinReceived
	payinRefunded
)

// payinStatusFits reports whether a payin read back in status agrees with
// what was acknowledged: a created payin is pending or has expired (the
// clock moves on and receipts take the newest); a received one is
// received; a refunded one is in one of the return states. A payin a later
// request failed on (unsure) may be in any state, since that request may
// have been applied; the failure counts among the errors.
func payinStatusFits(state payinState, unsure bool, status string) bool {
	if unsure {
		return true
	}
	switch state {
	case payinCreated:
		return status == "pending" || status == "expired"
	case payinReceived:
		return status == "received"
	default:
		return status == "return_pending" || status == "return_received" || status == "return_expired"
	}
}
