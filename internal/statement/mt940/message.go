package mt940

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/statement"
)

// message is one MT940 being read: where it is in its fields' order, its
// balances, and the statement line waiting for its :86:.
type message struct {
	line    int
	state   string
	fields  int
	opening *statement.Balance
	closing *statement.Balance
	pending *statement.Entry
	credits int64
	debits  int64
	entries int
}

// next says which fields may follow each (the MT940 field order), by the
// names add gives them: 86e is a statement line's :86:, 86m the message's.
var next = map[string]string{
	"":    "20",
	"20":  "21 25",
	"21":  "25",
	"25":  "28C",
	"28C": "60",
	"60":  "61 62",
	"61":  "61 86e 62",
	"86e": "61 62",
	"62":  "64 65 86m",
	"64":  "65 86m",
	"65":  "65 86m",
	"86m": "",
}

// kind is the field's place in the order: its tag with the F/M and P
// options folded, a :86: told by what it follows.
func (m *message) kind(tag string) (string, error) {
	switch tag {
	case "20", "21", "28C", "61", "64", "65":
		return tag, nil
	case "25", "25P":
		return "25", nil
	case "60F", "60M":
		return "60", nil
	case "62F", "62M":
		return "62", nil
	case "86":
		if m.state == "61" {
			return "86e", nil
		}
		return "86m", nil
	}
	return "", fmt.Errorf("field :%s: is not one of MT940's (:20:, :21:, :25:, :28C:, :60F:/:60M:, :61:, :86:, :62F:/:62M:, :64:, :65:)", tag)
}

// add reads one field of the message.
func (m *message) add(f *file, fl *field) error {
	m.fields++
	if m.fields > maxMessageFields+m.entries*2 {
		return fmt.Errorf("more than %d fields: %w", maxMessageFields, statement.ErrLimit)
	}
	kind, err := m.kind(fl.tag)
	if err != nil {
		return err
	}
	if !strings.Contains(" "+next[m.state]+" ", " "+kind+" ") {
		return fmt.Errorf("out of place after :%s:", strings.TrimSuffix(strings.TrimSuffix(m.state, "e"), "m"))
	}
	if kind != "86e" {
		if err := m.flush(f); err != nil {
			return err
		}
	}
	if kind != "61" && kind != "86e" && len(fl.lines) > 1 {
		return fmt.Errorf(":%s: has %d lines, it has one", fl.tag, len(fl.lines))
	}
	m.state = kind
	text := fl.lines[0]
	switch kind {
	case "20":
		return m.reference(f, text)
	case "21":
		return statement.TextError(":21:", text, 16)
	case "25":
		return f.account(text)
	case "28C":
		return m.sequence(f, text)
	case "60":
		m.opening, err = f.balance(text)
		return err
	case "61":
		return m.statementLine(f, fl)
	case "86e":
		return m.information(f, fl)
	case "62":
		m.closing, err = f.balance(text)
		return err
	case "64", "65":
		_, err = f.balance(text)
		return err
	}
	return nil // 86m: the message's own information, nothing payd uses
}

func (m *message) reference(f *file, text string) error {
	if text == "" {
		return errors.New("an empty :20:")
	}
	if err := statement.TextError(":20:", text, 16); err != nil {
		return err
	}
	if f.h.MessageID == "" {
		f.h.MessageID = text
	}
	return nil
}

var sequencePattern = regexp.MustCompile(`^[0-9]{1,5}(/[0-9]{1,5})?$`)

func (m *message) sequence(f *file, text string) error {
	if !sequencePattern.MatchString(text) {
		return fmt.Errorf(":28C: %q is not 5n[/5n]", text)
	}
	f.h.StatementIDs = append(f.h.StatementIDs, text)
	return nil
}

// end completes the message: its last statement line, and its control
// total (CONTRACT §18: opening + entries = closing).
func (m *message) end(f *file) error {
	if err := m.flush(f); err != nil {
		return err
	}
	if m.opening == nil {
		return errors.New("no :60F: or :60M: opening balance")
	}
	if m.closing == nil {
		return errors.New("no :62F: or :62M: closing balance (truncated?)")
	}
	want, err := statement.AddSigned(m.opening.AmountMinor, m.credits)
	if err == nil {
		want, err = statement.AddSigned(want, -m.debits)
	}
	if err != nil {
		return err
	}
	if want != m.closing.AmountMinor {
		return statement.TotalsError(statement.MT940, fmt.Sprintf("message %d (line %d)", f.messages, m.line), CheckBalance,
			"%s + credits %s - debits %s = %s, but :62a: is %s",
			f.amount(m.opening.AmountMinor), f.amount(m.credits), f.amount(m.debits), f.amount(want), f.amount(m.closing.AmountMinor))
	}
	if f.h.Opening == nil {
		f.h.Opening, f.h.From = m.opening, m.opening.Date
	}
	f.h.Closing, f.h.To = m.closing, m.closing.Date
	return nil
}

func (f *file) amount(minor int64) string { return money.Format(minor, f.currency) }

// account reads :25: (35x): the account, or a bank's code, a slash and the
// account (a BIC, a BSB, a German Bankleitzahl).
func (f *file) account(text string) error {
	if text == "" {
		return errors.New("an empty :25:")
	}
	if err := statement.TextError(":25:", text, 35); err != nil {
		return err
	}
	a := statement.Account{Number: text}
	if bank, number, ok := strings.Cut(text, "/"); ok && number != "" {
		a.Number = number
		switch {
		case bicPattern.MatchString(bank):
			a.BIC = bank
		case bsbPattern.MatchString(bank):
			parts := bsbPattern.FindStringSubmatch(bank)
			a.BSB = parts[1] + "-" + parts[2]
		}
	}
	if f.messages == 1 {
		f.h.Account = a
		return nil
	}
	if a.Number != f.h.Account.Number {
		return fmt.Errorf("account %s, but the file's first message is of %s: a file is read for one account", a.Number, f.h.Account.Number)
	}
	return nil
}

var (
	bicPattern     = regexp.MustCompile(`^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	bsbPattern     = regexp.MustCompile(`^([0-9]{3})-?([0-9]{3})$`)
	balancePattern = regexp.MustCompile(`^([CD])([0-9]{6})([A-Z]{3})([0-9,]{2,15})$`)
)

// balance reads a balance field, 1!a6!n3!a15d, in the account's currency
// (the first balance of the file sets it).
func (f *file) balance(text string) (*statement.Balance, error) {
	m := balancePattern.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("%q is not a balance (mark C or D, YYMMDD, currency, amount)", clip(text))
	}
	if err := f.setCurrency(m[3]); err != nil {
		return nil, err
	}
	d, err := date(m[2])
	if err != nil {
		return nil, err
	}
	minor, err := amount(m[4], f.currency)
	if err != nil {
		return nil, err
	}
	if m[1] == "D" {
		minor = -minor
	}
	return &statement.Balance{AmountMinor: minor, Date: d}, nil
}

func (f *file) setCurrency(code string) error {
	if f.currency.Code == "" {
		c, err := statement.Currency(code)
		if err != nil {
			return err
		}
		f.currency, f.h.Account.Currency = c, code
		return nil
	}
	if code != f.currency.Code {
		return fmt.Errorf("a balance in %s on an account in %s", code, f.currency.Code)
	}
	return nil
}

// amount reads 15d: digits, the decimal comma (mandatory) and decimals.
func amount(text string, c money.Currency) (int64, error) {
	whole, fraction, ok := strings.Cut(text, ",")
	if !ok || whole == "" || strings.Contains(fraction, ",") || len(text) > 15 {
		return 0, fmt.Errorf("amount %q is not 15d (digits, a decimal comma, decimals)", text)
	}
	if fraction == "" {
		return statement.ParseAmount(whole, c)
	}
	return statement.ParseAmount(whole+"."+fraction, c)
}

// date reads YYMMDD, its year in 2000–2099.
func date(text string) (statement.Date, error) {
	t, err := time.Parse("060102", text)
	if err != nil || len(text) != 6 {
		return statement.Date{}, fmt.Errorf("%q is not a date (YYMMDD)", text)
	}
	if t.Year() < 2000 {
		t = t.AddDate(100, 0, 0)
	}
	return statement.DateOf(t), nil
}

// flush hands on the statement line waiting for its :86:.
func (m *message) flush(f *file) error {
	e := m.pending
	if e == nil {
		return nil
	}
	m.pending = nil
	if e.Return {
		e.ReturnedReference = e.Reference
	}
	if err := statement.CheckEntryText(*e); err != nil {
		return err
	}
	e.Index = f.totals.Entries
	if err := f.totals.Add(*e); err != nil {
		return err
	}
	var err error
	if e.Direction == statement.Credit {
		m.credits, err = statement.AddSigned(m.credits, e.AmountMinor)
	} else {
		m.debits, err = statement.AddSigned(m.debits, e.AmountMinor)
	}
	if err != nil {
		return err
	}
	m.entries++
	if f.each == nil {
		return nil
	}
	if err := f.each(*e); err != nil {
		return eachError{err}
	}
	return nil
}
