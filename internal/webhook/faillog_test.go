package webhook

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"payd/internal/clock"
)

// TestFailedDeliveriesLoggedOnceAMinute: a receiver that fails every
// attempt is logged once a minute, the next line counting the failures
// left out; another receiver has lines of its own; a delivery is not
// logged.
func TestFailedDeliveriesLoggedOnceAMinute(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clk := clock.NewManual(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	d := &Dispatcher{clock: clk, log: slog.New(slog.NewTextHandler(&buf, nil))}
	down := claimed{merchantID: "M1", id: "evt_1", eventType: "payin.received", endpoint: "https://down.example/hooks"}
	other := claimed{merchantID: "M1", id: "evt_2", eventType: "payin.received", endpoint: "https://other.example/hooks"}
	for range 5 {
		d.logFailure(down, outcome{statusCode: 503})
	}
	d.logFailure(other, outcome{err: "no answer within 15s"})
	d.logFailure(down, outcome{statusCode: 200})
	clk.Advance(time.Minute)
	d.logFailure(down, outcome{statusCode: 503})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range [][]string{
		{"webhook delivery failed", "url=https://down.example/hooks", "status=503", "merchant_id=M1", "event_id=evt_1"},
		{"url=https://other.example/hooks", `err="no answer within 15s"`},
		{"url=https://down.example/hooks", "failures_not_logged=4"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i+1, lines[i], w)
			}
		}
	}
}
