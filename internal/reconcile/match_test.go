package reconcile

import (
	"testing"

	"payd/internal/statement"
)

// TestBusinessDaysApart: Monday to Friday count (CONTRACT §25), either order.
func TestBusinessDaysApart(t *testing.T) {
	d := func(s string) statement.Date {
		v, err := statement.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name, a, b string
		want       int
		within     bool
	}{
		{"same day", "2026-03-02", "2026-03-02", 0, true},
		{"Friday to Monday", "2026-03-06", "2026-03-09", 1, true},
		{"Monday to Friday", "2026-03-02", "2026-03-06", 4, false},
		{"Thursday to Tuesday", "2026-03-05", "2026-03-10", 3, true},
		{"Tuesday back to Thursday", "2026-03-10", "2026-03-05", 3, true},
		{"Saturday to Monday", "2026-03-07", "2026-03-09", 1, true},
		{"Friday to Wednesday", "2026-03-06", "2026-03-11", 3, true},
		{"Friday to Thursday", "2026-03-06", "2026-03-12", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := businessDaysApart(d(tt.a), d(tt.b)); got != tt.want {
				t.Errorf("businessDaysApart = %d, want %d", got, tt.want)
			}
			if got := within(d(tt.a), d(tt.b)); got != tt.within {
				t.Errorf("within = %v, want %v", got, tt.within)
			}
		})
	}
}
