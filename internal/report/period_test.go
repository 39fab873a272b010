package report

import (
	"testing"
	"time"

	"payd/internal/merchant"
)

// TestPeriodsAcrossDST: a period runs from 09:00 local to the next 09:00
// (or the next month's 1st), 23 or 25 hours when daylight saving starts or
// ends inside it, and the next period starts where it ends.
func TestPeriodsAcrossDST(t *testing.T) {
	t.Parallel()
	sydney, tokyo := merchant.Location("Australia/Sydney"), merchant.Location("Asia/Tokyo")
	tests := []struct {
		name       string
		f          Frequency
		at         time.Time
		loc        *time.Location
		wantStart  time.Time
		wantLength time.Duration
		wantLabel  string
	}{
		{"Sydney: daylight saving starts (2026-10-04 02:00)", Daily, time.Date(2026, 10, 4, 3, 30, 0, 0, sydney), sydney,
			time.Date(2026, 10, 3, 9, 0, 0, 0, sydney), 23 * time.Hour, "2026-10-03"},
		{"Sydney: the day after", Daily, time.Date(2026, 10, 4, 9, 0, 0, 0, sydney), sydney,
			time.Date(2026, 10, 4, 9, 0, 0, 0, sydney), 24 * time.Hour, "2026-10-04"},
		{"Sydney: daylight saving ends (2027-04-04 03:00)", Daily, time.Date(2027, 4, 4, 8, 59, 59, 0, sydney), sydney,
			time.Date(2027, 4, 3, 9, 0, 0, 0, sydney), 25 * time.Hour, "2027-04-03"},
		{"Sydney: before 09:00 on the 1st is last month", Monthly, time.Date(2026, 11, 1, 8, 0, 0, 0, sydney), sydney,
			time.Date(2026, 10, 1, 9, 0, 0, 0, sydney), (31*24 - 1) * time.Hour, "2026-10"},
		{"Sydney: April 2027 gains an hour", Monthly, time.Date(2027, 4, 20, 0, 0, 0, 0, sydney), sydney,
			time.Date(2027, 4, 1, 9, 0, 0, 0, sydney), (30*24 + 1) * time.Hour, "2027-04"},
		{"Sydney: March 2027 (ends before the change)", Monthly, time.Date(2027, 3, 5, 0, 0, 0, 0, sydney), sydney,
			time.Date(2027, 3, 1, 9, 0, 0, 0, sydney), 31 * 24 * time.Hour, "2027-03"},
		{"Sydney: January from December", Monthly, time.Date(2027, 1, 1, 8, 59, 0, 0, sydney), sydney,
			time.Date(2026, 12, 1, 9, 0, 0, 0, sydney), 31 * 24 * time.Hour, "2026-12"},
		{"Tokyo: no daylight saving", Daily, time.Date(2026, 10, 4, 12, 0, 0, 0, tokyo), tokyo,
			time.Date(2026, 10, 4, 9, 0, 0, 0, tokyo), 24 * time.Hour, "2026-10-04"},
		{"Tokyo: before 09:00 on the 1st of the month", Daily, time.Date(2026, 11, 1, 8, 0, 0, 0, tokyo), tokyo,
			time.Date(2026, 10, 31, 9, 0, 0, 0, tokyo), 24 * time.Hour, "2026-10-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := periodContaining(tt.f, tt.at, tt.loc)
			if !p.Start.Equal(tt.wantStart) || p.End.Sub(p.Start) != tt.wantLength || p.label(tt.loc) != tt.wantLabel {
				t.Errorf("got [%v, %v) %s (%v), want from %v, %v long, %s", p.Start, p.End, p.label(tt.loc), p.End.Sub(p.Start), tt.wantStart, tt.wantLength, tt.wantLabel)
			}
			if h := p.End.In(tt.loc).Hour(); h != cutoffHour {
				t.Errorf("ends at %02d:00 local, want 09:00", h)
			}
			if next := p.next(tt.loc); !next.Start.Equal(p.End) || next.End.In(tt.loc).Hour() != cutoffHour {
				t.Errorf("next period [%v, %v) does not follow [%v, %v)", next.Start, next.End, p.Start, p.End)
			}
		})
	}
}
