// Package mt940 reads the SWIFT MT940 customer statement message (CONTRACT
// §18), as the SWIFT User Handbook's Category 9 (Cash Management and
// Customer Status) field specifications lay it out and the banks' format
// guides (Rabobank's "Format Description SWIFT MT940", ING's structured
// MT940/MT942 format description, Deutsche Bank's MT940/942 format
// specifications) apply it: a file holds one or more messages, bare or each
// in its SWIFT envelope ({1:…}{2:I940…}{4: … -}), each of fields :20:
// transaction reference, [:21:], :25: account, :28C: statement and
// sequence number, :60F:/:60M: opening balance, any number of :61:
// statement lines each optionally followed by its :86: information to the
// account owner, :62F:/:62M: closing balance, optional :64: and :65:, and
// an optional closing :86:.
//
// A :61: is 6!n[4!n]2a[1!a]15d1!a3!c16x[//16x] and an optional second line
// [34x]: value date, entry date, debit/credit mark (C, D, RC a reversal of
// a credit, which is a debit, RD a reversal of a debit, which is a
// credit), funds code, amount with a decimal comma, transaction type (S, N
// or F and three characters), reference for the account owner (NONREF is
// none), the account servicing institution's reference, and supplementary
// details. A balance is 1!a6!n3!a15d: mark, date, currency, amount. Amounts
// with more decimals than the currency has are refused (SWIFT's own rule
// C03), but in the rounding currencies, which are rounded as the API
// rounds them (statement.ParseAmount).
//
// The control total of each message is checked (§18): its opening balance
// plus its credits less its debits is its closing balance. A file that
// fails it is refused whole, naming the message (statement.ErrTotals).
//
// Every entry is booked (§25). Its Key is the :61: bank reference (after
// //); its Reference the account owner's reference, else the :86: /EREF/;
// it is a return when its transaction type is RTI (returned item) or its
// :86: has /RTRN/ (ING's and Rabobank's structured code words, whose
// /CNTP/ gives the counterparty); its Remittance the :86: text, lines
// joined (a full 65-character line runs on into the next, a shorter one
// ends with a space), or, in the German structured layout (three digits and
// ?00…?63, Deutsche Bank's), the remittance subfields ?20–?29 and ?60–?63,
// with the counterparty from ?31, ?32 and ?33.
package mt940

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"payd/internal/money"
	"payd/internal/statement"
)

// CheckBalance names the control check of a message (statement.Error.Check).
const CheckBalance = "60a + :61: credits - :61: debits = 62a"

// Bounds beyond statement's: a line is at most maxLineBytes, a :86: at most
// maxInfoLines lines (SWIFT's 6*65x; banks write up to some dozens), a
// message at most maxMessageFields fields besides its statement lines.
const (
	maxLineBytes     = 2048
	maxInfoLines     = 64
	maxFieldLines    = 2
	maxMessageFields = 64
	infoLineRunes    = 65
)

// Read reads an MT940 file, handing each statement line's entry to each in
// file order, and returns the Header once every message's balances are
// checked. Each sees an entry before the totals after it are checked: a
// caller that applies entries calls Check first. An error each returns
// stops the reading and is returned as it is.
func Read(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	return read(r, each)
}

// Check is Read without entries: it reads the whole file and says whether
// Read would take it, and with what Header.
func Check(r io.Reader) (statement.Header, error) {
	return read(r, nil)
}

// eachError marks an error each returned, so that it goes back unchanged.
type eachError struct{ err error }

func (e eachError) Error() string { return e.err.Error() }

func read(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	f := &file{each: each}
	if err := f.read(r); err != nil {
		var fromEach eachError
		if errors.As(err, &fromEach) {
			return statement.Header{}, fromEach.err
		}
		var refusal *statement.Error
		if errors.As(err, &refusal) {
			return statement.Header{}, err
		}
		return statement.Header{}, &statement.Error{Format: statement.MT940, Err: err}
	}
	return f.h, nil
}

// field is one field of a message: its tag and its lines.
type field struct {
	tag   string
	lines []string
	line  int // where it began
}

var tagPattern = regexp.MustCompile(`^:([0-9]{2}[A-Z]?):`)

// file is one reading of an MT940 file.
type file struct {
	each     func(statement.Entry) error
	h        statement.Header
	totals   statement.Totals
	messages int
	msg      *message
	current  *field
	// envelope is true within a {4: block, until its -}.
	envelope bool
	currency money.Currency
}

func (f *file) read(r io.Reader) error {
	sc := bufio.NewScanner(statement.LimitReader(r, statement.HardMaxBytes))
	sc.Buffer(make([]byte, 0, 1024), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		if err := f.line(line, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line of more than %d bytes: %w", maxLineBytes, statement.ErrLimit)
		}
		return statement.Errorf(statement.MT940, fmt.Sprintf("line %d", line+1), "%w", err)
	}
	if f.envelope {
		return statement.Errorf(statement.MT940, fmt.Sprintf("line %d", line), "the file ends inside a message's {4: block, without its -} (truncated)")
	}
	if err := f.endMessage(line); err != nil {
		return err
	}
	if f.messages == 0 {
		return errors.New("empty: no :20: message")
	}
	f.h.Format = statement.MT940
	f.h.Entries, f.h.Booked = f.totals.Entries, f.totals.Booked
	f.h.CreditsMinor, f.h.DebitsMinor = f.totals.CreditsMinor, f.totals.DebitsMinor
	return nil
}

// line reads one line: an envelope's start or end, a message separator, a
// field's first line or a continuation.
func (f *file) line(n int, text string) error {
	at := fmt.Sprintf("line %d", n)
	switch {
	case strings.HasPrefix(text, "{1:"):
		return f.envelopeStart(n, text)
	case strings.HasPrefix(text, "-}"):
		if !f.envelope {
			return statement.Errorf(statement.MT940, at, "-} without a {4: block")
		}
		f.envelope = false
		return f.endMessage(n)
	case text == "-":
		if f.envelope {
			return statement.Errorf(statement.MT940, at, "a - inside a {4: block (its end is -})")
		}
		return f.endMessage(n)
	case strings.TrimSpace(text) == "":
		if f.current != nil && f.current.tag == "86" {
			return f.continuation(at, text)
		}
		return nil
	}
	if m := tagPattern.FindStringSubmatch(text); m != nil {
		return f.fieldStart(n, m[1], text[len(m[0]):])
	}
	return f.continuation(at, text)
}

func (f *file) continuation(at, text string) error {
	if f.current == nil {
		return statement.Errorf(statement.MT940, at, "%q is neither a field (:20:, :61:, …) nor a field's continuation", clip(text))
	}
	max := maxFieldLines
	if f.current.tag == "86" {
		max = maxInfoLines
	}
	if len(f.current.lines) >= max {
		return statement.Errorf(statement.MT940, at, ":%s: has more than %d lines: %w", f.current.tag, max, statement.ErrLimit)
	}
	f.current.lines = append(f.current.lines, text)
	return nil
}

// envelopeStart reads a message's basic and application headers: the
// message type must be 940, and its text block begins on the next line.
func (f *file) envelopeStart(n int, text string) error {
	at := fmt.Sprintf("line %d", n)
	if f.envelope {
		return statement.Errorf(statement.MT940, at, "a {1: block inside another message's {4: block")
	}
	if err := f.endMessage(n); err != nil {
		return err
	}
	if i := strings.Index(text, "{2:"); i >= 0 {
		block := text[i+3:]
		if len(block) < 4 || (block[0] != 'I' && block[0] != 'O') || block[1:4] != "940" {
			return statement.Errorf(statement.MT940, at, "block 2 %q: not an MT940", clip(block))
		}
	}
	i := strings.Index(text, "{4:")
	if i < 0 {
		return statement.Errorf(statement.MT940, at, "a SWIFT envelope without its {4: text block")
	}
	f.envelope = true
	if rest := text[i+3:]; rest != "" {
		return f.line(n, rest)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// fieldStart ends the field being read and begins tag's.
func (f *file) fieldStart(n int, tag, rest string) error {
	if err := f.endField(); err != nil {
		return err
	}
	if tag == "20" {
		if err := f.endMessage(n); err != nil {
			return err
		}
		f.msg = &message{line: n}
		f.messages++
	}
	if f.msg == nil {
		return statement.Errorf(statement.MT940, fmt.Sprintf("line %d", n), ":%s: before the message's :20:", tag)
	}
	f.current = &field{tag: tag, lines: []string{rest}, line: n}
	return nil
}

// endField reads the field just completed into the message.
func (f *file) endField() error {
	if f.current == nil {
		return nil
	}
	fl := f.current
	f.current = nil
	if err := f.msg.add(f, fl); err != nil {
		var refusal *statement.Error
		var fromEach eachError
		if errors.As(err, &refusal) || errors.As(err, &fromEach) {
			return err
		}
		return statement.Errorf(statement.MT940, fmt.Sprintf("message %d :%s: (line %d)", f.messages, fl.tag, fl.line), "%w", err)
	}
	return nil
}

// endMessage completes the message being read, if any, and checks it.
func (f *file) endMessage(n int) error {
	if err := f.endField(); err != nil {
		return err
	}
	if f.msg == nil {
		return nil
	}
	m := f.msg
	f.msg = nil
	if err := m.end(f); err != nil {
		var refusal *statement.Error
		var fromEach eachError
		if errors.As(err, &refusal) || errors.As(err, &fromEach) {
			return err
		}
		return statement.Errorf(statement.MT940, fmt.Sprintf("message %d (line %d)", f.messages, m.line), "%w", err)
	}
	return nil
}
