package settlement

import (
	"testing"
	"time"

	"payd/internal/merchant"
)

// TestEndOfDayAcrossDST: a local day ends at the next local midnight, 23 or
// 25 hours after it began when daylight saving starts or ends.
func TestEndOfDayAcrossDST(t *testing.T) {
	t.Parallel()
	sydney, tokyo := merchant.Location("Australia/Sydney"), merchant.Location("Asia/Tokyo")
	tests := []struct {
		date   string
		loc    *time.Location
		length time.Duration
	}{
		{"2026-10-04", sydney, 23 * time.Hour}, // daylight saving starts
		{"2027-04-04", sydney, 25 * time.Hour}, // and ends
		{"2027-04-05", sydney, 24 * time.Hour},
		{"2026-10-04", tokyo, 24 * time.Hour}, // no daylight saving
	}
	for _, tt := range tests {
		start, err := time.ParseInLocation(merchant.DateLayout, tt.date, tt.loc)
		if err != nil {
			t.Fatal(err)
		}
		end, err := endOfDay(tt.date, tt.loc)
		if err != nil {
			t.Fatal(err)
		}
		if got := end.Sub(start); got != tt.length {
			t.Errorf("%s in %s lasts %s, want %s", tt.date, tt.loc, got, tt.length)
		}
		if next := merchant.LocalDate(end, tt.loc); next != nextDate(tt.date) {
			t.Errorf("the end of %s is on %s, want %s", tt.date, next, nextDate(tt.date))
		}
	}
}
