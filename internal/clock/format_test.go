package clock

import (
	"encoding/json"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	sydney := time.FixedZone("AEST", 10*3600)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"example", july29, "2024-07-29T15:51:28.071Z"},
		{"whole second keeps three digits", time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), "2024-12-31T23:59:59.000Z"},
		{"sub-millisecond cut off", time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "2024-12-31T23:59:59.999Z"},
		{"converted to UTC", time.Date(2024, 7, 30, 1, 51, 28, 71_000_000, sydney), "2024-07-29T15:51:28.071Z"},
		{"epoch", time.Unix(0, 0), "1970-01-01T00:00:00.000Z"},
		{"from millis", FromMillis(1), "1970-01-01T00:00:00.001Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Format(tt.t)
			if got != tt.want {
				t.Errorf("Format(%v) = %q, want %q", tt.t, got, tt.want)
			}
		})
	}
}

func TestTimeMarshalJSON(t *testing.T) {
	t.Parallel()
	type record struct {
		CreatedAt Time `json:"created_at"`
		PaidAt    Time `json:"paid_at,omitzero"`
	}
	tests := []struct {
		name   string
		record record
		want   string
	}{
		{"set", record{CreatedAt: Time{july29}}, `{"created_at":"2024-07-29T15:51:28.071Z"}`},
		{"zero is null, or left out with omitzero", record{}, `{"created_at":null}`},
		{"both set", record{CreatedAt: Time{july29}, PaidAt: Time{july29.Add(time.Second)}},
			`{"created_at":"2024-07-29T15:51:28.071Z","paid_at":"2024-07-29T15:51:29.071Z"}`},
		{"other zone", record{CreatedAt: Time{july29.In(time.FixedZone("X", -5*3600))}}, `{"created_at":"2024-07-29T15:51:28.071Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.record)
			got := string(b)
			if got != tt.want || err != nil {
				t.Errorf("json.Marshal = %s, %v; want %s, nil", got, err, tt.want)
			}
		})
	}
}
