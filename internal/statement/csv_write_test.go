package statement_test

import (
	"bytes"
	"io"
	"testing"

	"payd/internal/statement"
	"payd/internal/statement/statementtest"
)

// TestWriteCSVRoundTrips: ReadCSV reads back what WriteCSV writes, debits
// signed.
func TestWriteCSVRoundTrips(t *testing.T) {
	t.Parallel()
	h, entries := statementtest.Day()
	var buf bytes.Buffer
	if err := statement.WriteCSV(&buf, "AUD", entries); err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
		return statement.ReadCSV(r, h.Account, each)
	}
	got, gotEntries, err := statementtest.Collect(read, buf.Bytes())
	if err != nil {
		t.Fatalf("read back: %v\n%s", err, buf.Bytes())
	}
	if got.CreditsMinor != h.CreditsMinor || got.DebitsMinor != h.DebitsMinor || got.From != h.From || got.To != h.To || len(gotEntries) != 3 {
		t.Errorf("read back %+v, %d entries; want %+v", got, len(gotEntries), h)
	}
	for i, e := range gotEntries {
		if w := entries[i]; e.AmountMinor != w.AmountMinor || e.Direction != w.Direction || e.Reference != w.Reference || e.Remittance != w.Remittance {
			t.Errorf("line %d read back %+v, want %+v", i, e, w)
		}
	}
}
