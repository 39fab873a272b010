package web

import (
	"fmt"
	"time"

	"payd/internal/clock"
)

// Every time a page shows is in the merchant's time zone, with the zone
// named (issue 54 item 2): "2026-12-03 14:05 AEDT", never an RFC 3339
// string in UTC. when is the one template function that writes one;
// portalPage.Zone is the signed-in merchant's zone.

// whenLayout is how a page writes an instant.
const whenLayout = "2006-01-02 15:04 MST"

// when writes t in zone (UTC when nil) as whenLayout; "" for a zero or
// missing time. t is a time.Time, a clock.Time, a pointer to either, or
// an RFC 3339 string (a date alone is written as it is).
func when(zone *time.Location, t any) string {
	if zone == nil {
		zone = time.UTC
	}
	var at time.Time
	switch v := t.(type) {
	case time.Time:
		at = v
	case *time.Time:
		if v != nil {
			at = *v
		}
	case clock.Time:
		at = v.T
	case *clock.Time:
		if v != nil {
			at = v.T
		}
	case string:
		parsed, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return v
		}
		at = parsed
	case nil:
	default:
		return fmt.Sprint(v)
	}
	if at.IsZero() {
		return ""
	}
	return at.In(zone).Format(whenLayout)
}

// zoned is a value with the zone its template writes times in: the data
// of a template called from another ({{template "approval_trail" (zoned $.Zone .)}}).
type zoned struct {
	Zone *time.Location
	V    any
}

func newZoned(zone *time.Location, v any) zoned { return zoned{Zone: zone, V: v} }

// timeFuncs are the template functions of every page set.
var timeFuncs = map[string]any{"when": when, "zoned": newZoned}
