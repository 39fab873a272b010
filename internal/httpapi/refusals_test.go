package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestRefusalLogSummarisesPerMerchant(t *testing.T) {
	var out bytes.Buffer
	l := &refusalLog{log: slog.New(slog.NewJSONHandler(&out, nil))}
	for range 3 {
		l.note("m1")
	}
	l.note("m2")
	if out.Len() != 0 {
		t.Fatalf("logged before the window ended: %s", out.String())
	}
	l.flush()
	got := map[string]float64{}
	for line := range bytes.Lines(out.Bytes()) {
		var rec struct {
			Msg        string  `json:"msg"`
			MerchantID string  `json:"merchant_id"`
			Refused    float64 `json:"refused"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg != "requests refused by rate limit" {
			t.Fatalf("message %q", rec.Msg)
		}
		got[rec.MerchantID] = rec.Refused
	}
	if len(got) != 2 || got["m1"] != 3 || got["m2"] != 1 {
		t.Fatalf("counts %v, want m1=3 m2=1", got)
	}
	out.Reset()
	l.note("m3") // a new window
	l.flush()
	if !bytes.Contains(out.Bytes(), []byte(`"merchant_id":"m3","refused":1`)) {
		t.Fatalf("second window: %s", out.String())
	}
}

func TestRefusalLogBoundsMerchants(t *testing.T) {
	var out bytes.Buffer
	l := &refusalLog{log: slog.New(slog.NewJSONHandler(&out, nil))}
	for i := range maxRefusalMerchants + 5 {
		l.note(string(rune('a'+i%26)) + string(rune(i)))
	}
	if len(l.counts) != maxRefusalMerchants+1 || l.counts["others"] != 5 {
		t.Fatalf("%d merchants counted apart, others %d", len(l.counts), l.counts["others"])
	}
	l.flush()
}
