package report

import (
	"fmt"
	"time"

	"payd/internal/merchant"
)

// Frequency is how often an account's reports are made, and so how long
// each one's period is.
type Frequency string

const (
	Daily   Frequency = "daily"
	Monthly Frequency = "monthly"
)

// frequencies are every frequency, each made for every payments account.
var frequencies = []Frequency{Daily, Monthly}

// parseFrequency reads a report_frequency value.
func parseFrequency(s string) (Frequency, bool) {
	switch f := Frequency(s); f {
	case Daily, Monthly:
		return f, true
	}
	return "", false
}

// cutoffHour is the local hour at which one period ends and the next
// begins (CONTRACT §12: reports are made at 09:00 local time; daily: 09:00
// to 09:00; monthly: 09:00 on the 1st to 09:00 on the 1st).
const cutoffHour = 9

// Period is the span of time one report covers: [Start, End).
type Period struct {
	Frequency  Frequency
	Start, End time.Time
}

// cutoff is 09:00 on a local date of loc. time.Date normalises the date
// (day 0, month 13) and reads the wall clock in force that day, so a period
// is 23 or 25 hours long across a daylight-saving change.
func cutoff(year int, month time.Month, day int, loc *time.Location) time.Time {
	return time.Date(year, month, day, cutoffHour, 0, 0, 0, loc)
}

// periodContaining is the period of f that t falls in, in loc.
func periodContaining(f Frequency, t time.Time, loc *time.Location) Period {
	l := t.In(loc)
	day := l.Day()
	if f == Monthly {
		day = 1
	}
	start := cutoff(l.Year(), l.Month(), day, loc)
	if t.Before(start) {
		if f == Monthly {
			start = cutoff(l.Year(), l.Month()-1, 1, loc)
		} else {
			start = cutoff(l.Year(), l.Month(), day-1, loc)
		}
	}
	return periodFrom(f, start, loc)
}

// periodFrom is the period of f that begins at start, a cutoff of loc.
func periodFrom(f Frequency, start time.Time, loc *time.Location) Period {
	l := start.In(loc)
	end := cutoff(l.Year(), l.Month(), l.Day()+1, loc)
	if f == Monthly {
		end = cutoff(l.Year(), l.Month()+1, 1, loc)
	}
	return Period{Frequency: f, Start: start, End: end}
}

// next is the period that follows p.
func (p Period) next(loc *time.Location) Period { return periodFrom(p.Frequency, p.End, loc) }

// label names the period in loc: its first local date (daily) or month.
func (p Period) label(loc *time.Location) string {
	if p.Frequency == Monthly {
		return p.Start.In(loc).Format("2006-01")
	}
	return merchant.LocalDate(p.Start, loc)
}

// fileName is the name a report's file is served under.
func fileName(currency string, p Period, loc *time.Location) string {
	return fmt.Sprintf("settlement_report_%s_%s_%s.csv", p.Frequency, currency, p.label(loc))
}
