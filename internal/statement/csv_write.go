package statement

import (
	"encoding/csv"
	"io"

	"payd/internal/money"
)

// WriteCSV writes entries as the reconciliation upload's CSV (CONTRACT §19):
// the header date,amount,reference,description, then a line per entry with
// its value date (its booking date when it has none), its signed amount in
// major units of currency, its reference and its remittance text. ReadCSV
// reads back what it writes.
func WriteCSV(w io.Writer, currency string, entries []Entry) error {
	c, err := Currency(currency)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"date", "amount", "reference", "description"}); err != nil {
		return err
	}
	for _, e := range entries {
		date := e.ValueDate
		if date.IsZero() {
			date = e.BookingDate
		}
		if err := cw.Write([]string{date.String(), money.Format(e.SignedMinor(), c), e.Reference, e.Remittance}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
