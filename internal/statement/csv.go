package statement

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"payd/internal/money"
)

// ReadCSV reads the reconciliation upload's CSV (CONTRACT §19, §25) of
// account, handing each line to each as a booked Entry, and returns its
// Header. The first line is exactly date,amount,reference,description; each
// line after it has those four cells: date YYYY-MM-DD, amount a signed
// decimal in major units of account.Currency (positive a credit, negative a
// debit; no exponent, no thousands separator, not zero), reference (at most
// MaxReferenceRunes) and description (at most MaxTextRunes). The file names
// neither account nor currency, so the caller gives both (the upload's
// account_number and its currency); CSV lines have no bank key (Entry.Key
// is ""): an upload is known by its SHA-256. The file states no balances
// and no totals: a line that cannot be read refuses the whole file.
func ReadCSV(r io.Reader, account Account, each func(Entry) error) (Header, error) {
	return readCSV(r, account, each)
}

// CheckCSV is ReadCSV without entries: it reads the whole file and says
// whether ReadCSV would take it.
func CheckCSV(r io.Reader, account Account) (Header, error) {
	return readCSV(r, account, nil)
}

func readCSV(r io.Reader, account Account, each func(Entry) error) (Header, error) {
	if account.Number == "" {
		return Header{}, Errorf(CSV, "", "a CSV upload needs the account's number (account_number)")
	}
	c, err := Currency(account.Currency)
	if err != nil {
		return Header{}, Errorf(CSV, "", "%w", err)
	}
	br := bufio.NewReader(LimitReader(r, HardMaxBytes))
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = 4
	cr.ReuseRecord = true
	h := Header{Format: CSV, Account: account}
	var totals Totals
	sawHeader := false
	for line := 1; ; line++ {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		at := fmt.Sprintf("line %d", line)
		if err != nil {
			return Header{}, Errorf(CSV, at, "%w", csvCause(err))
		}
		at = fmt.Sprintf("line %d", lineOf(cr, line))
		if line == 1 {
			if strings.Join(record, ",") != csvHeader {
				return Header{}, Errorf(CSV, at, "the header is %q, want %q", strings.Join(record, ","), csvHeader)
			}
			sawHeader = true
			continue
		}
		e, err := csvEntry(record, c, totals.Entries)
		if err != nil {
			return Header{}, Errorf(CSV, at, "%w", err)
		}
		if err := totals.Add(e); err != nil {
			return Header{}, Errorf(CSV, at, "%w", err)
		}
		h.widen(e.BookingDate)
		if each != nil {
			if err := each(e); err != nil {
				return Header{}, err
			}
		}
	}
	if !sawHeader {
		return Header{}, Errorf(CSV, "", "empty: no header %q", csvHeader)
	}
	h.Entries, h.Booked = totals.Entries, totals.Booked
	h.CreditsMinor, h.DebitsMinor = totals.CreditsMinor, totals.DebitsMinor
	return h, nil
}

// csvEntry reads a line's cells.
func csvEntry(record []string, c money.Currency, index int) (Entry, error) {
	date, err := ParseDate(record[0])
	if err != nil {
		return Entry{}, fmt.Errorf("date: %w", err)
	}
	e := Entry{
		Currency: c.Code, Direction: Credit, Status: Booked, Index: index,
		BookingDate: date, ValueDate: date,
		Reference: record[2], Remittance: record[3],
	}
	digits := record[1]
	switch {
	case strings.HasPrefix(digits, "-"):
		e.Direction, digits = Debit, digits[1:]
	case strings.HasPrefix(digits, "+"):
		digits = digits[1:]
	}
	if e.AmountMinor, err = ParseAmount(digits, c); err != nil {
		return Entry{}, err
	}
	if e.AmountMinor == 0 {
		return Entry{}, fmt.Errorf("amount %s: a line moves money (zero is not an entry)", record[1])
	}
	if err := CheckEntryText(e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// lineOf is the line a record began on, for the error's place.
func lineOf(cr *csv.Reader, record int) int {
	line, _ := cr.FieldPos(0)
	if line == 0 {
		return record
	}
	return line
}

// csvCause is encoding/csv's complaint without its own line prefix when it
// is a ParseError (the place is the refusal's).
func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return errors.New("not 4 cells (date,amount,reference,description)")
		}
		return pe.Err
	}
	return err
}

// widen makes h's period take in d.
func (h *Header) widen(d Date) {
	if d.IsZero() {
		return
	}
	if h.From.IsZero() || d.Before(h.From) {
		h.From = d
	}
	if h.To.IsZero() || h.To.Before(d) {
		h.To = d
	}
}
