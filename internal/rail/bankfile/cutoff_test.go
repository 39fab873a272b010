package bankfile

import (
	"slices"
	"testing"
	"time"
)

func TestParseCutoffs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, problem string
	}{
		{"09:30,15:00", "09:30,15:00", ""},
		{"15:00, 09:30", "09:30,15:00", ""},
		{"00:00", "00:00", ""},
		{"9:30", "", `"9:30" is not a time of day such as 09:30`},
		{"24:00", "", `"24:00" is not a time of day such as 09:30`},
		{"09:30,09:30", "", "09:30 is listed twice"},
		{"", "", `"" is not a time of day such as 09:30`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCutoffs(tt.in)
			problem := ""
			if err != nil {
				problem = err.Error()
			}
			if formatCutoffs(got) != tt.want || problem != tt.problem {
				t.Errorf("ParseCutoffs(%q) = %q, %q; want %q, %q", tt.in, formatCutoffs(got), problem, tt.want, tt.problem)
			}
		})
	}
}

// TestNextCutoffAcrossDST: a rail's cut-offs keep their local times in
// Sydney across both changes of 2026 (daylight saving ends on 5 April at
// 03:00, starts on 4 October at 02:00), so the instants between two
// 09:30 cut-offs are 25 and 23 hours apart over those nights; a cut-off in
// the skipped hour falls an hour later on the wall clock, once; one in the
// repeated hour, once (at its second instant, as time.Date gives it).
func TestNextCutoffAcrossDST(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, sydney)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	walk := func(cutoffs string, from time.Time, n int) []string {
		cs, err := ParseCutoffs(cutoffs)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range n {
			from = NextCutoff(cs, sydney, from)
			out = append(out, from.Format(time.RFC3339))
		}
		return out
	}
	tests := []struct {
		name, cutoffs string
		from          time.Time
		want          []string
	}{
		{"daylight saving ends", "09:30,15:00", at("2026-04-04 09:00"), []string{
			"2026-04-04T09:30:00+11:00", "2026-04-04T15:00:00+11:00",
			"2026-04-05T09:30:00+10:00", "2026-04-05T15:00:00+10:00", "2026-04-06T09:30:00+10:00"}},
		{"daylight saving starts", "09:30,15:00", at("2026-10-03 16:00"), []string{
			"2026-10-04T09:30:00+11:00", "2026-10-04T15:00:00+11:00", "2026-10-05T09:30:00+11:00"}},
		{"a cut-off in the skipped hour", "02:30", at("2026-10-03 03:00"), []string{
			"2026-10-04T03:30:00+11:00", "2026-10-05T02:30:00+11:00"}},
		{"a cut-off in the repeated hour", "02:30", at("2026-04-04 03:00"), []string{
			"2026-04-05T02:30:00+10:00", "2026-04-06T02:30:00+10:00"}},
		{"at a cut-off's instant, the next", "09:30,15:00", at("2026-05-01 09:30"), []string{"2026-05-01T15:00:00+10:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := walk(tt.cutoffs, tt.from, len(tt.want)); !slices.Equal(got, tt.want) {
				t.Errorf("cut-offs from %s = %v, want %v", tt.from.Format(time.RFC3339), got, tt.want)
			}
		})
	}
	nights := walk("09:30", at("2026-04-04 09:00"), 2)
	a, _ := time.Parse(time.RFC3339, nights[0])
	b, _ := time.Parse(time.RFC3339, nights[1])
	if d := b.Sub(a); d != 25*time.Hour {
		t.Errorf("09:30 to 09:30 over the night daylight saving ends = %s, want 25h", d)
	}
}
