package main

import (
	"testing"
	"time"
	_ "time/tzdata"
)

func TestSoakWindowScalesFiveOfThirtyMinutes(t *testing.T) {
	tests := []struct {
		soak, want time.Duration
	}{
		{30 * time.Minute, 5 * time.Minute},
		{3 * time.Minute, 30 * time.Second},
		{time.Hour, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := soakWindow(tt.soak); got != tt.want {
			t.Errorf("soakWindow(%s) = %s, want %s", tt.soak, got, tt.want)
		}
	}
}

func TestRSSGrowth(t *testing.T) {
	s := func(sec int, mib float64) rssSample { return rssSample{at: time.Duration(sec) * time.Second, mib: mib} }
	tests := []struct {
		name       string
		samples    []rssSample
		wantBase   float64
		wantLast   float64
		wantGrowth float64
		wantOK     bool
	}{
		{"flat after a warm-up climb", []rssSample{s(0, 40), s(20, 80), s(30, 100), s(60, 101), s(150, 104), s(170, 103)}, 100, 104, 0.04, true},
		{"growth is the last window's peak", []rssSample{s(30, 100), s(155, 130), s(175, 110)}, 100, 130, 0.30, true},
		{"no sample after warm-up", []rssSample{s(0, 40), s(10, 50)}, 0, 0, 0, false},
		{"no sample in the last window", []rssSample{s(30, 100), s(60, 100)}, 100, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, last, growth, ok := rssGrowth(tt.samples, 30*time.Second, 150*time.Second)
			if base != tt.wantBase || last != tt.wantLast || ok != tt.wantOK || growth < tt.wantGrowth-1e-9 || growth > tt.wantGrowth+1e-9 {
				t.Errorf("rssGrowth = %v, %v, %v, %v; want %v, %v, %v, %v", base, last, growth, ok, tt.wantBase, tt.wantLast, tt.wantGrowth, tt.wantOK)
			}
		})
	}
}

// passing is an outcome every rule accepts; each case below breaks one rule.
var passing = soakOutcome{window: 30 * time.Second, firstP99: 10, lastP99: 14, rssBase: 100, rssLast: 109, rssGrowth: 0.09, rssKnown: true,
	checked: 1000, ledgerOK: true}

func TestSoakRules(t *testing.T) {
	tests := []struct {
		name     string
		change   func(o *soakOutcome)
		wantFail string // the one rule that fails; "" for none
	}{
		{"passing", func(o *soakOutcome) {}, ""},
		{"p99 at exactly 1.5× passes", func(o *soakOutcome) { o.lastP99 = 15 }, ""},
		{"p99 over 1.5×", func(o *soakOutcome) { o.lastP99 = 15.1 }, "p99 steady"},
		{"no first p99", func(o *soakOutcome) { o.firstP99 = 0 }, "p99 steady"},
		{"RSS growth of 10 %", func(o *soakOutcome) { o.rssGrowth = 0.10 }, "RSS steady"},
		{"RSS not sampled", func(o *soakOutcome) { o.rssKnown = false }, "RSS steady"},
		{"one error", func(o *soakOutcome) { o.errors = 1 }, "no errors"},
		{"a write missing", func(o *soakOutcome) { o.missing = 1 }, "acknowledged writes present"},
		{"writes past the log's bound", func(o *soakOutcome) { o.untracked = 1 }, "acknowledged writes present"},
		{"nothing read back", func(o *soakOutcome) { o.checked = 0 }, "acknowledged writes present"},
		{"a test event undelivered", func(o *soakOutcome) { o.hooksMissing = 1 }, "webhooks delivered"},
		{"a report missing", func(o *soakOutcome) { o.jobsShort = 1 }, "jobs on the clock ran"},
		{"ledger verify failed", func(o *soakOutcome) { o.ledgerOK = false }, "ledger verify clean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := passing
			tt.change(&o)
			var failed []string
			for _, r := range o.rules() {
				if !r.ok {
					failed = append(failed, r.name)
				}
			}
			wantPassed := tt.wantFail == ""
			if o.passed() != wantPassed || (!wantPassed && (len(failed) != 1 || failed[0] != tt.wantFail)) {
				t.Errorf("failed rules %q, passed %v; want only %q failing", failed, o.passed(), tt.wantFail)
			}
		})
	}
}

func TestLocalTimesBetween(t *testing.T) {
	sydney, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	saoPaulo, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	at := func(loc *time.Location, s string) time.Time {
		t.Helper()
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		loc      *time.Location
		from, to string
		hour     int
		want     int
	}{
		{"36 hours pass two 09:00s", sydney, "2026-12-04 05:00", "2026-12-05 17:00", 9, 2},
		{"and one midnight", sydney, "2026-12-04 05:00", "2026-12-05 17:00", 0, 1},
		{"from is excluded, to included", sydney, "2026-12-04 09:00", "2026-12-05 09:00", 9, 1},
		{"none in a short span", sydney, "2026-12-04 10:00", "2026-12-04 20:00", 9, 0},
		{"fifteen days", sydney, "2026-12-04 05:00", "2026-12-19 05:00", 9, 15},
		// Brazil's clocks went from 00:00 to 01:00 on 2018-11-04: that day had no midnight.
		{"a midnight the clocks skipped", saoPaulo, "2018-11-03 12:00", "2018-11-05 12:00", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := localTimesBetween(at(tt.loc, tt.from), at(tt.loc, tt.to), tt.loc, tt.hour); got != tt.want {
				t.Errorf("localTimesBetween(%s, %s, %02d:00) = %d, want %d", tt.from, tt.to, tt.hour, got, tt.want)
			}
		})
	}
}

func TestPayinStatusFits(t *testing.T) {
	tests := []struct {
		state  payinState
		unsure bool
		status string
		want   bool
	}{
		{payinCreated, false, "pending", true},
		{payinCreated, false, "expired", true},
		{payinCreated, false, "received", false},
		{payinReceived, false, "received", true},
		{payinReceived, false, "pending", false},
		{payinReceived, false, "return_pending", false},
		{payinRefunded, false, "return_pending", true},
		{payinRefunded, false, "return_received", true},
		{payinRefunded, false, "received", false},
		{payinReceived, true, "pending", true},
	}
	for _, tt := range tests {
		if got := payinStatusFits(tt.state, tt.unsure, tt.status); got != tt.want {
			t.Errorf("payinStatusFits(%d, unsure %v, %q) = %v, want %v", tt.state, tt.unsure, tt.status, got, tt.want)
		}
	}
}
