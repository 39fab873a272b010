package bai2

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"payd/internal/statement"
)

// detail is a 16 record's fields: type code, amount, funds type (and the
// fields its type adds), bank and customer reference numbers, and text.
type detail struct {
	typeCode, amount, fundsType string
	funds                       []string
	bankReference               string
	customerReference           string
	text                        string
}

// parseDetail reads a 16 record and its continuations. Its fields are read
// one by one across physical records until the text: a physical record
// that ends (with "/") before the text leaves the next field to its 88, and
// once the text has begun every 88 continues it.
func parseDetail(rec *record) (detail, error) {
	var fields []string
	var text []string
	inText := false
	for _, part := range rec.parts {
		if inText {
			text = append(text, textOf(part))
			continue
		}
		rest := part
		for {
			need, err := nonTextFields(fields)
			if err != nil {
				return detail{}, err
			}
			if len(fields) == need {
				inText = true
				text = append(text, textOf(rest))
				break
			}
			i := strings.IndexAny(rest, ",/")
			if i < 0 {
				return detail{}, fmt.Errorf("field %d ends with its record, without a comma or slash", len(fields)+1)
			}
			fields = append(fields, rest[:i])
			if rest[i] == '/' {
				break // the next field is in the 88 that follows
			}
			rest = rest[i+1:]
		}
	}
	need, err := nonTextFields(fields)
	if err != nil {
		return detail{}, err
	}
	if !inText && len(fields) < need {
		return detail{}, fmt.Errorf("the record ends after %d fields, before its text: a 16 has type code, amount, funds type, bank and customer references and text", len(fields))
	}
	extra := need - 5
	d := detail{
		typeCode: fields[0], amount: fields[1], fundsType: fields[2],
		funds:             fields[3 : 3+extra],
		bankReference:     fields[3+extra],
		customerReference: fields[4+extra],
		text:              strings.Join(nonEmpty(text), " "),
	}
	return d, nil
}

// textOf is a physical record's part of a text: a text may not begin with
// "/" (a lone "/" is a defaulted text), and a "/" ending it is the line's
// end mark banks write on every record, not text.
func textOf(part string) string {
	if strings.HasPrefix(part, "/") {
		return ""
	}
	return strings.TrimSpace(strings.TrimSuffix(part, "/"))
}

func nonEmpty(parts []string) []string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return kept
}

// nonTextFields is how many fields come before a 16's text, as far as the
// fields read so far tell: five, and those its funds type adds.
func nonTextFields(fields []string) (int, error) {
	if len(fields) < 3 {
		return 5, nil
	}
	extra, err := fundsExtra(fields[2:])
	if errors.Is(err, errNeedMore) {
		return len(fields) + 1, nil
	}
	if err != nil {
		return 0, err
	}
	return 5 + extra, nil
}

var errNeedMore = errors.New("more fields needed")

// fundsExtra is how many fields follow a funds type (fields[0]) before the
// next field: S three amounts, V a value date and time, D a count and that
// many day and amount pairs; 0, 1, 2, Z and a defaulted one none.
func fundsExtra(fields []string) (int, error) {
	switch fields[0] {
	case "", "0", "1", "2", "Z":
		return 0, nil
	case "S":
		return 3, nil
	case "V":
		return 2, nil
	case "D":
		if len(fields) < 2 {
			return 0, errNeedMore
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 0 || !digits(fields[1], 3) {
			return 0, fmt.Errorf("funds type D: %q is not a number of distributions", fields[1])
		}
		if n > maxDistributions {
			return 0, fmt.Errorf("funds type D: %d distributions, more than %d: %w", n, maxDistributions, statement.ErrLimit)
		}
		return 1 + 2*n, nil
	}
	return 0, fmt.Errorf("funds type %q is not 0, 1, 2, S, V, D or Z", fields[0])
}

// detailDirection is the way a 16 record's type code moves money (the
// manual's type code ranges and Appendix A's loan details), or false for
// 890 (non-monetary information).
func detailDirection(code string) (statement.Direction, bool, error) {
	if len(code) != 3 || !digits(code, 3) {
		return "", false, fmt.Errorf("type code %q is not three digits", code)
	}
	n, _ := strconv.Atoi(code)
	switch {
	case code == typeNonMonetary:
		return "", false, nil
	case n >= 101 && n <= 399, n >= 721 && n <= 728, n >= 920 && n <= 959:
		return statement.Credit, true, nil
	case n >= 401 && n <= 699, n >= 960 && n <= 999:
		return statement.Debit, true, nil
	}
	return "", false, fmt.Errorf("type code %s is not a transaction detail code (credits 101–399, 721–728, 920–959; debits 401–699, 960–999)", code)
}

// detail reads a 16 record into an entry and hands it on.
func (f *file) detail(rec *record) error {
	d, err := parseDetail(rec)
	if err != nil {
		return err
	}
	dir, monetary, err := detailDirection(d.typeCode)
	if err != nil {
		return err
	}
	amount, err := signedAmount(d.amount, false)
	if err != nil {
		return err
	}
	if f.accountTotal, err = statement.AddSigned(f.accountTotal, amount); err != nil {
		return err
	}
	if !monetary {
		return nil
	}
	if d.amount == "" {
		return fmt.Errorf("type code %s without an amount", d.typeCode)
	}
	e := statement.Entry{
		Key: d.bankReference, AmountMinor: amount, Currency: f.account.currency.Code,
		Direction: dir, Status: statement.Booked, Index: f.totals.Entries,
		BookingDate: f.group.asOf, ValueDate: f.group.asOf,
		Reference: d.customerReference, BankTransactionCode: d.typeCode, Remittance: d.text,
	}
	if d.fundsType == "V" {
		if e.ValueDate, err = date(d.funds[0]); err != nil {
			return fmt.Errorf("funds type V value date: %w", err)
		}
	}
	if ReturnTypeCodes[d.typeCode] {
		e.Return, e.ReturnedReference = true, d.customerReference
	}
	if err := statement.CheckEntryText(e); err != nil {
		return err
	}
	if err := f.totals.Add(e); err != nil {
		return err
	}
	if f.each == nil {
		return nil
	}
	if err := f.each(e); err != nil {
		return eachError{err}
	}
	return nil
}
