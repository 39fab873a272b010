package bankfile

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cutoff is one daily cut-off: a local time of day in the rail's zone.
type Cutoff struct {
	Hour, Minute int
}

func (c Cutoff) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// maxCutoffs bounds a rail's cut-offs a day.
const maxCutoffs = 24

// ParseCutoffs reads --cutoffs: local times HH:MM, comma-separated, at
// least one and at most maxCutoffs, each once; they are kept in the order
// of the day.
func ParseCutoffs(s string) ([]Cutoff, error) {
	var out []Cutoff
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		t, err := time.Parse("15:04", part)
		if err != nil || len(part) != len("15:04") {
			return nil, fmt.Errorf("%q is not a time of day such as 09:30", part)
		}
		c := Cutoff{Hour: t.Hour(), Minute: t.Minute()}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("%s is listed twice", c)
		}
		out = append(out, c)
	}
	if len(out) > maxCutoffs {
		return nil, fmt.Errorf("lists %d cut-offs; at most %d a day", len(out), maxCutoffs)
	}
	slices.SortFunc(out, func(a, b Cutoff) int { return (a.Hour*60 + a.Minute) - (b.Hour*60 + b.Minute) })
	return out, nil
}

// formatCutoffs is cutoffs as --cutoffs takes them.
func formatCutoffs(cutoffs []Cutoff) string {
	parts := make([]string, len(cutoffs))
	for i, c := range cutoffs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// NextCutoff is the first cut-off strictly after the instant after, the
// cut-offs being local times of day in loc. Each local day has each of its
// cut-offs once, on the wall clock of that day (time.Date), so a cut-off
// keeps its local time across a change to or from daylight saving time,
// and the instants between two cut-offs are 23 or 25 hours apart over the
// night of the change. A cut-off inside the hour the clocks skip falls at
// the instant time.Date gives it (the same wall time in the zone's
// previous offset: 02:30 becomes 03:30 summer time); one inside the hour
// that repeats, once, at the instant time.Date gives it (the second, in
// Go's zone rules today).
func NextCutoff(cutoffs []Cutoff, loc *time.Location, after time.Time) time.Time {
	local := after.In(loc)
	// The search starts a local day early, so that no cut-off whose wall
	// time a change of offset moves past midnight is missed.
	day := time.Date(local.Year(), local.Month(), local.Day()-1, 0, 0, 0, 0, loc)
	for range 4 {
		for _, c := range cutoffs {
			at := time.Date(day.Year(), day.Month(), day.Day(), c.Hour, c.Minute, 0, 0, loc)
			if at.After(after) {
				return at
			}
		}
		day = time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, loc)
	}
	panic("bankfile: no cut-off within three days") // cannot happen: every day has one
}
