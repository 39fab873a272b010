package bai2

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

// TestWriteRoundTrips: what Write writes passes Read's control totals and
// counts and reads back as the statement it was given; one changed amount
// fails the 49 account control total.
func TestWriteRoundTrips(t *testing.T) {
	t.Parallel()
	h, entries := statementtest.Day()
	var buf bytes.Buffer
	if err := Write(&buf, "SANDBOXBANK", "PAYD", h, entries, time.UTC); err != nil {
		t.Fatal(err)
	}
	got, gotEntries, err := statementtest.Collect(Read, buf.Bytes())
	if err != nil {
		t.Fatalf("read back: %v\n%s", err, buf.Bytes())
	}
	if got.Account.Number != "12345678" || got.Account.Currency != "AUD" || got.To != h.To || got.Opening.AmountMinor != h.Opening.AmountMinor ||
		got.Closing.AmountMinor != h.Closing.AmountMinor || got.CreditsMinor != h.CreditsMinor || got.DebitsMinor != h.DebitsMinor {
		t.Errorf("read back header %+v, want %+v", got, h)
	}
	if len(gotEntries) != len(entries) {
		t.Fatalf("read back %d entries, want %d", len(gotEntries), len(entries))
	}
	for i, e := range gotEntries {
		w := entries[i]
		if e.Key != w.Key || e.AmountMinor != w.AmountMinor || e.Direction != w.Direction || e.Reference != w.Reference || e.Remittance != w.Remittance {
			t.Errorf("entry %d read back %+v, want %+v", i, e, w)
		}
	}
	altered := strings.Replace(buf.String(), "16,195,10050,", "16,195,10051,", 1)
	_, err = Check(strings.NewReader(altered))
	var se *statement.Error
	if !errors.As(err, &se) || se.Check != CheckAccountTotal {
		t.Errorf("an altered amount: %v, want the check %q", err, CheckAccountTotal)
	}
}
