package clock

import (
	"sync"
	"testing"
	"time"
)

var july29 = time.Date(2024, time.July, 29, 15, 51, 28, 71_000_000, time.UTC)

func TestRealNow(t *testing.T) {
	t.Parallel()
	before := time.Now()
	got := Real{}.Now()
	after := time.Now()
	if got.Before(before) || got.After(after) {
		t.Errorf("Real{}.Now() = %v, want between %v and %v", got, before, after)
	}
}

func TestFixed(t *testing.T) {
	t.Parallel()
	c := Fixed(july29)
	got := c.Now()
	if !got.Equal(july29) {
		t.Errorf("Fixed.Now() = %v, want %v", got, july29)
	}
}

func TestManual(t *testing.T) {
	t.Parallel()
	m := NewManual(july29)
	tests := []struct {
		name string
		move func() time.Time
		want time.Time
	}{
		{"starts at the given time", m.Now, july29},
		{"advance", func() time.Time { return m.Advance(90 * time.Minute) }, july29.Add(90 * time.Minute)},
		{"now after advance", m.Now, july29.Add(90 * time.Minute)},
		{"set", func() time.Time { m.Set(july29.AddDate(1, 0, 0)); return m.Now() }, july29.AddDate(1, 0, 0)},
		{"advance back", func() time.Time { return m.Advance(-time.Hour) }, july29.AddDate(1, 0, 0).Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.move()
			if !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOffset(t *testing.T) {
	t.Parallel()
	base := NewManual(july29)
	c := Offset(base, 36*time.Hour)
	first := c.Now()
	base.Advance(time.Minute)
	second := c.Now()
	tests := []struct {
		name string
		got  time.Time
		want time.Time
	}{
		{"ahead of base", first, july29.Add(36 * time.Hour)},
		{"follows base", second, july29.Add(36*time.Hour + time.Minute)},
		{"of a fixed clock", Offset(Fixed(july29), -time.Second).Now(), july29.Add(-time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.got.Equal(tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// TestManualConcurrent races many goroutines advancing and reading one
// Manual clock: run under -race, no advance may be lost and no reader may see
// time go backwards.
func TestManualConcurrent(t *testing.T) {
	t.Parallel()
	const goroutines, advances = 16, 500
	m := NewManual(july29)
	var wg sync.WaitGroup
	backwards := make(chan time.Time, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := m.Now()
			for range advances {
				m.Advance(time.Millisecond)
				now := m.Now()
				if now.Before(last) {
					backwards <- now
					return
				}
				last = now
			}
		}()
	}
	wg.Wait()
	close(backwards)
	for got := range backwards {
		t.Errorf("a reader saw time go back to %v", got)
	}
	got := m.Now()
	want := july29.Add(goroutines * advances * time.Millisecond)
	if !got.Equal(want) {
		t.Errorf("after all advances Now() = %v, want %v", got, want)
	}
}

func TestMillis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    time.Time
		want int64
	}{
		{"example", july29, 1722268288071},
		{"epoch", time.Unix(0, 0), 0},
		{"sub-millisecond cut off", july29.Add(999 * time.Microsecond), 1722268288071},
		{"before the epoch rounds to the past", time.Unix(0, -500_000), -1},
		{"other zone", july29.In(time.FixedZone("AEST", 10*3600)), 1722268288071},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToMillis(tt.t)
			if got != tt.want {
				t.Errorf("ToMillis(%v) = %d, want %d", tt.t, got, tt.want)
			}
		})
	}
}

func TestFromMillis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ms   int64
		want time.Time
	}{
		{"example", 1722268288071, july29},
		{"epoch", 0, time.Unix(0, 0).UTC()},
		{"before the epoch", -1, time.Date(1969, time.December, 31, 23, 59, 59, 999_000_000, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromMillis(tt.ms)
			if !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("FromMillis(%d) = %v, want %v in UTC", tt.ms, got, tt.want)
			}
		})
	}
}
