package iso20022

import (
	"bytes"
	"testing"
	"time"

	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

// TestWriteCamt053RoundTrips: what WriteCamt053 writes is valid against the
// official XSD and reads back as the statement it was given, its control
// totals checked; balances that disagree with the entries are refused.
// The day is 5 April 2026, when Sydney leaves daylight saving.
func TestWriteCamt053RoundTrips(t *testing.T) {
	t.Parallel()
	sydney, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	h, entries := statementtest.Day()
	var buf bytes.Buffer
	if err := WriteCamt053(&buf, h, entries, sydney); err != nil {
		t.Fatal(err)
	}
	requireValid(t, camt053XSD, buf.Bytes())
	got, gotEntries, err := collectCamt(buf.Bytes())
	if err != nil {
		t.Fatalf("read back: %v\n%s", err, buf.Bytes())
	}
	if got.Format != statement.Camt053 || got.Account.Number != "12345678" || got.From != h.From || got.To != h.To ||
		got.Opening.AmountMinor != h.Opening.AmountMinor || got.Closing.AmountMinor != h.Closing.AmountMinor ||
		got.CreditsMinor != h.CreditsMinor || got.DebitsMinor != h.DebitsMinor || got.Entries != 3 {
		t.Errorf("read back header %+v, want %+v", got, h)
	}
	for i, e := range gotEntries {
		w := entries[i]
		if e.Key != w.Key || e.AmountMinor != w.AmountMinor || e.Direction != w.Direction || e.Reference != w.Reference ||
			e.Remittance != w.Remittance || e.ValueDate != w.ValueDate || e.BookingDate != w.BookingDate {
			t.Errorf("entry %d read back %+v, want %+v", i, e, w)
		}
	}
	wrong := h
	wrong.Closing = &statement.Balance{AmountMinor: h.Closing.AmountMinor + 1, Date: h.To}
	if err := WriteCamt053(&bytes.Buffer{}, wrong, entries, sydney); err == nil {
		t.Error("a closing balance that disagrees with the entries was written")
	}
}
