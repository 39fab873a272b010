// Package statementtest holds what the tests of every bank report reader
// share: collecting a reading, writing it as the golden files hold it, and
// the properties every reading keeps (the fuzz tests' oracle).
package statementtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"

	"payd/internal/statement"
)

// ReadFunc is a reader's Read: ReadCamt, bai2.Read, mt940.Read, or ReadCSV
// with its account bound.
type ReadFunc func(r io.Reader, each func(statement.Entry) error) (statement.Header, error)

// CheckFunc is a reader's Check.
type CheckFunc func(r io.Reader) (statement.Header, error)

// Collect reads data with read, keeping every entry it hands on.
func Collect(read ReadFunc, data []byte) (statement.Header, []statement.Entry, error) {
	var entries []statement.Entry
	h, err := read(bytes.NewReader(data), func(e statement.Entry) error {
		entries = append(entries, e)
		return nil
	})
	return h, entries, err
}

// reading is a reading as a golden file holds it.
type reading struct {
	Header  *statement.Header `json:",omitempty"`
	Entries []statement.Entry `json:",omitempty"`
	Error   string            `json:",omitempty"`
	At      string            `json:",omitempty"`
	Check   string            `json:",omitempty"`
}

// Render writes a reading as indented JSON: the Header and the entries, or
// the refusal (its text, place and check).
func Render(h statement.Header, entries []statement.Entry, err error) []byte {
	var out reading
	if err != nil {
		out.Error = err.Error()
		var refusal *statement.Error
		if errors.As(err, &refusal) {
			out.At, out.Check = refusal.At, refusal.Check
		}
	} else {
		out.Header, out.Entries = &h, entries
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if jsonErr := enc.Encode(out); jsonErr != nil {
		panic(jsonErr) // a Header and Entries always marshal
	}
	return buf.Bytes()
}

// Golden compares got with the golden file path, or rewrites it when update
// is set (go test -update, after a deliberate change).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the reading differs from %s (run go test -update after a deliberate change):\n got %s\nwant %s", path, got, want)
	}
}

// errStop is what CheckReading's each returns to see it come back.
var errStop = errors.New("statementtest: stop")

// CheckReading checks what every reading of data keeps, whatever data is:
// no panic; a refusal is a *statement.Error with a zero Header and no
// entry after it matters (Check refuses too); a reading that succeeds agrees
// with Check, counts and sums its entries as its Header says, and each
// entry is within the model's bounds; an error each returns comes back
// unchanged.
func CheckReading(t *testing.T, read ReadFunc, check CheckFunc, data []byte) {
	t.Helper()
	h, entries, err := Collect(read, data)
	checked, checkErr := check(bytes.NewReader(data))
	if (err == nil) != (checkErr == nil) {
		t.Fatalf("Read says %v, Check says %v", err, checkErr)
	}
	if err != nil {
		var refusal *statement.Error
		if !errors.As(err, &refusal) {
			t.Fatalf("a refusal that is no *statement.Error: %T %v", err, err)
		}
		if !reflect.DeepEqual(h, statement.Header{}) || !reflect.DeepEqual(checked, statement.Header{}) {
			t.Fatalf("a refusal with a Header: %+v", h)
		}
		return
	}
	if !reflect.DeepEqual(h, checked) {
		t.Fatalf("Read's Header %+v, Check's %+v", h, checked)
	}
	if err := entriesAgree(h, entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		return
	}
	if _, err := read(bytes.NewReader(data), func(statement.Entry) error { return errStop }); err != errStop {
		t.Fatalf("each's error came back as %v", err)
	}
}

func entriesAgree(h statement.Header, entries []statement.Entry) error {
	var totals statement.Totals
	for i, e := range entries {
		if e.Index != i {
			return fmt.Errorf("entry %d has Index %d", i, e.Index)
		}
		if e.Currency != h.Account.Currency {
			return fmt.Errorf("entry %d in %s, the account in %s", i, e.Currency, h.Account.Currency)
		}
		if e.Direction != statement.Credit && e.Direction != statement.Debit {
			return fmt.Errorf("entry %d: direction %q", i, e.Direction)
		}
		switch e.Status {
		case statement.Booked, statement.Pending, statement.Information, statement.Future:
		default:
			return fmt.Errorf("entry %d: status %q", i, e.Status)
		}
		if err := statement.CheckEntryText(e); err != nil {
			return fmt.Errorf("entry %d: %v", i, err)
		}
		if err := totals.Add(e); err != nil {
			return fmt.Errorf("entry %d: %v", i, err)
		}
	}
	want := statement.Totals{Entries: h.Entries, Booked: h.Booked, CreditsMinor: h.CreditsMinor, DebitsMinor: h.DebitsMinor}
	if got := totals; got != want {
		return fmt.Errorf("the entries add up to %+v, the Header says %+v", got, want)
	}
	return nil
}
