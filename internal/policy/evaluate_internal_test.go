package policy

import (
	"testing"
	"time"
)

// TestLocalDay: the daily limit's day is the merchant's local day, 23 or 25
// hours long across a DST change (Australia/Sydney: 5 April 2026 ends
// daylight saving, 4 October 2026 starts it).
func TestLocalDay(t *testing.T) {
	tests := []struct {
		name  string
		now   time.Time
		zone  string
		from  string
		hours float64
	}{
		{"an ordinary day", time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), "Australia/Sydney", "2026-03-01T13:00:00Z", 24},
		{"the day DST ends", time.Date(2026, 4, 5, 3, 0, 0, 0, time.UTC), "Australia/Sydney", "2026-04-04T13:00:00Z", 25},
		{"the day DST starts", time.Date(2026, 10, 4, 3, 0, 0, 0, time.UTC), "Australia/Sydney", "2026-10-03T14:00:00Z", 23},
		{"no zone", time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), "", "2026-03-02T00:00:00Z", 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := localDay(tt.now, tt.zone)
			if got := from.UTC().Format(time.RFC3339); got != tt.from || to.Sub(from).Hours() != tt.hours {
				t.Errorf("localDay() = %s + %v, want %s + %vh", got, to.Sub(from), tt.from, tt.hours)
			}
		})
	}
}
