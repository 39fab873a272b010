package merchant

import (
	"context"
	"fmt"
	"sync"
	"time"

	"payd/internal/store"
)

// A merchant's local-time rules (end of day, 09:00 reports, bare dates in
// filters) are read in its IANA time zone (CONTRACT §1). These helpers are
// the one place that turns a stored zone name into a *time.Location.

// DateLayout is how a local calendar date is written ("2026-10-04").
const DateLayout = "2006-01-02"

var zones sync.Map // zone name → *time.Location

// Location is the time zone called name, loaded once per process. A name
// that does not load (merchant create refuses those, so only a damaged row
// has one) is read as UTC rather than stopping the work that needs it.
func Location(name string) *time.Location {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = time.UTC
	}
	zones.Store(name, loc)
	return loc
}

// LocalDate is t's calendar date in loc.
func LocalDate(t time.Time, loc *time.Location) string { return t.In(loc).Format(DateLayout) }

// Zone is merchantID's time zone, read from q: the zone its pages show
// times in.
func Zone(ctx context.Context, q store.Querier, merchantID string) (*time.Location, error) {
	var name string
	if err := q.QueryRowContext(ctx, `SELECT timezone FROM merchants WHERE id = $1`, merchantID).Scan(&name); err != nil {
		return nil, fmt.Errorf("time zone of merchant %s: %w", merchantID, err)
	}
	return Location(name), nil
}
