package mt940

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/statement"
)

// noReference is what a reference for the account owner holds when there
// is none (the SWIFT usage rules).
const noReference = "NONREF"

// returnedItem is the transaction type code of a returned item (RTI).
const returnedItem = "RTI"

// statementLine reads a :61: into the entry that waits for its :86:.
func (m *message) statementLine(f *file, fl *field) error {
	if f.currency.Code == "" {
		return fmt.Errorf(":61: before the opening balance")
	}
	l, err := parseLine(fl.lines[0])
	if err != nil {
		return err
	}
	e := &statement.Entry{
		Key: l.bankReference, Currency: f.currency.Code, Status: statement.Booked,
		ValueDate: l.valueDate, BookingDate: l.entryDate,
		Reference: l.ownerReference, BankTransactionCode: l.transactionType,
	}
	if e.BookingDate.IsZero() {
		e.BookingDate = e.ValueDate
	}
	switch l.mark {
	case "C":
		e.Direction = statement.Credit
	case "D":
		e.Direction = statement.Debit
	case "RD": // a reversal of a debit is a credit entry
		e.Direction, e.Reversal = statement.Credit, true
	case "RC": // a reversal of a credit is a debit entry
		e.Direction, e.Reversal = statement.Debit, true
	}
	if e.AmountMinor, err = amount(l.amount, f.currency); err != nil {
		return err
	}
	if e.Reference == noReference {
		e.Reference = ""
	}
	if len(fl.lines) == 2 {
		if utf8.RuneCountInString(fl.lines[1]) > 34 {
			return fmt.Errorf("supplementary details of more than 34 characters")
		}
		e.Remittance = strings.TrimSpace(fl.lines[1])
	}
	if strings.HasSuffix(l.transactionType, returnedItem) {
		e.Return = true
	}
	m.pending = e
	return nil
}

// line is a :61:'s first line, subfield by subfield.
type line struct {
	valueDate, entryDate statement.Date
	mark                 string
	amount               string
	transactionType      string
	ownerReference       string
	bankReference        string
}

// parseLine reads 6!n[4!n]2a[1!a]15d1!a3!c16x[//16x].
func parseLine(text string) (line, error) {
	var l line
	s := text
	if len(s) < 6 || !allDigits(s[:6]) {
		return line{}, fmt.Errorf(":61: %q does not begin with a value date (YYMMDD)", clip(text))
	}
	var err error
	if l.valueDate, err = date(s[:6]); err != nil {
		return line{}, fmt.Errorf(":61: value date: %w", err)
	}
	s = s[6:]
	if len(s) >= 4 && allDigits(s[:4]) {
		if l.entryDate, err = entryDate(s[:4], l.valueDate); err != nil {
			return line{}, err
		}
		s = s[4:]
	}
	switch {
	case strings.HasPrefix(s, "RC"), strings.HasPrefix(s, "RD"):
		l.mark, s = s[:2], s[2:]
	case strings.HasPrefix(s, "C"), strings.HasPrefix(s, "D"):
		l.mark, s = s[:1], s[1:]
	default:
		return line{}, fmt.Errorf(":61: %q: the debit/credit mark is not C, D, RC or RD", clip(text))
	}
	if len(s) > 1 && isUpper(s[0]) && isDigit(s[1]) {
		s = s[1:] // the funds code: the currency's third letter
	}
	n := 0
	for n < len(s) && n < 15 && (isDigit(s[n]) || s[n] == ',') {
		n++
	}
	l.amount, s = s[:n], s[n:]
	if n == 0 {
		return line{}, fmt.Errorf(":61: %q: no amount", clip(text))
	}
	if len(s) < 4 || !strings.ContainsRune("SNF", rune(s[0])) || !alphanumeric(s[1:4]) {
		return line{}, fmt.Errorf(":61: %q: the transaction type is not S, N or F and three characters", clip(text))
	}
	l.transactionType, s = s[:4], s[4:]
	owner, bank, _ := strings.Cut(s, "//")
	l.ownerReference, l.bankReference = owner, strings.TrimRight(bank, " ")
	if owner == "" {
		return line{}, fmt.Errorf(":61: %q: no reference for the account owner (NONREF when there is none)", clip(text))
	}
	if utf8.RuneCountInString(owner) > 16 || utf8.RuneCountInString(l.bankReference) > 16 {
		return line{}, fmt.Errorf(":61: %q: a reference of more than 16 characters", clip(text))
	}
	return l, nil
}

// entryDate reads MMDD in the year nearest the value date's (an entry
// booked on 31 December may be valued on 2 January).
func entryDate(text string, value statement.Date) (statement.Date, error) {
	best := statement.Date{}
	bestDays := 0
	for _, year := range []int{value.Year - 1, value.Year, value.Year + 1} {
		d, err := date(fmt.Sprintf("%02d%s", year%100, text))
		if err != nil {
			return statement.Date{}, fmt.Errorf(":61: entry date %q is not MMDD", text)
		}
		days := int(d.In(time.UTC).Sub(value.In(time.UTC)).Hours() / 24)
		if days < 0 {
			days = -days
		}
		if best.IsZero() || days < bestDays {
			best, bestDays = d, days
		}
	}
	return best, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func alphanumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && !isUpper(s[i]) && !(s[i] >= 'a' && s[i] <= 'z') {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// information reads a statement line's :86:.
func (m *message) information(f *file, fl *field) error {
	e := m.pending
	if germanLayout(fl.lines[0]) {
		german(e, strings.Join(fl.lines, "")) // its ?nn subfields, not its lines, hold the text
		return m.flush(f)
	}
	text := joinLines(fl.lines)
	codeWords(e, text)
	e.Remittance = joinNonEmpty(text, e.Remittance)
	return m.flush(f)
}

// joinLines joins a :86:'s lines: a line of the full 65 characters was cut
// where the field's width ended and runs on into the next; a shorter one
// ended where its writer ended it.
func joinLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 && utf8.RuneCountInString(lines[i-1]) < infoLineRunes {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return strings.TrimSpace(b.String())
}

// germanLayout reports whether a :86: is in the German structured layout
// (the DFÜ agreement's, Deutsche Bank's): a three-digit transaction code
// and ?nn subfields.
func germanLayout(text string) bool {
	return len(text) >= 6 && allDigits(text[:3]) && text[3] == '?' && allDigits(text[4:6])
}

// german reads the German layout: remittance ?20–?29 and ?60–?63 (each
// of 27 characters: a full one runs on), the counterparty's account ?31 and
// name ?32 and ?33.
func german(e *statement.Entry, text string) {
	subfields := make(map[int]string)
	var order []int
	for _, part := range strings.Split(text[3:], "?")[1:] {
		if len(part) < 2 || !allDigits(part[:2]) {
			continue
		}
		code := int(part[0]-'0')*10 + int(part[1]-'0')
		subfields[code] = part[2:]
		order = append(order, code)
	}
	var remittance strings.Builder
	previous := ""
	for _, code := range order {
		if !(code >= 20 && code <= 29) && !(code >= 60 && code <= 63) {
			continue
		}
		if remittance.Len() > 0 && utf8.RuneCountInString(previous) < 27 {
			remittance.WriteByte(' ')
		}
		remittance.WriteString(subfields[code])
		previous = subfields[code]
	}
	e.Remittance = joinNonEmpty(strings.TrimSpace(remittance.String()), e.Remittance)
	e.CounterpartyAccount = strings.TrimSpace(subfields[31])
	e.CounterpartyName = strings.TrimSpace(subfields[32] + subfields[33])
}

// knownCodeWords are the structured :86: code words (SWIFT's, as ING and
// Rabobank write them) whose start ends the value before them.
var knownCodeWords = []string{
	"EREF", "CNTP", "REMI", "RTRN", "ORDP", "BENM", "MARF", "CSID", "PURP", "ULTD", "ULTC",
	"ULTB", "BUSP", "TRCD", "IREF", "OCMT", "ATOS", "EXCH", "CHGS", "RREF", "ISDT", "PREF", "SVCL",
}

// codeWords reads a structured :86: (/EREF/…/CNTP/…/REMI/…): the
// end-to-end reference (the Reference when the :61: gives none, and what a
// return returns), the counterparty, and /RTRN/'s return reason.
func codeWords(e *statement.Entry, text string) {
	if !strings.HasPrefix(text, "/") {
		return
	}
	values := make(map[string]string)
	rest := text
	for rest != "" {
		word, value, next := nextCodeWord(rest)
		if word == "" {
			break
		}
		if _, seen := values[word]; !seen {
			values[word] = value
		}
		rest = next
	}
	if eref := strings.Trim(values["EREF"], "/ "); eref != "" && eref != "NOTPROVIDED" && e.Reference == "" {
		e.Reference = eref
	}
	if cntp, ok := values["CNTP"]; ok {
		parts := strings.Split(strings.Trim(cntp, "/"), "/")
		e.CounterpartyAccount = strings.TrimSpace(parts[0])
		if len(parts) > 2 {
			e.CounterpartyName = strings.TrimSpace(parts[2])
		}
	}
	if rtrn, ok := values["RTRN"]; ok {
		e.Return = true
		e.ReturnReason = strings.TrimSpace(strings.ReplaceAll(strings.Trim(rtrn, "/"), "/", " "))
	}
}

// nextCodeWord splits "/WORD/value/NEXT/…" at the next known code word.
func nextCodeWord(text string) (word, value, rest string) {
	for _, w := range knownCodeWords {
		if strings.HasPrefix(text, "/"+w+"/") {
			word = w
			break
		}
	}
	if word == "" {
		return "", "", ""
	}
	body := text[len(word)+2:]
	end := len(body)
	for _, w := range knownCodeWords {
		if i := strings.Index(body, "/"+w+"/"); i >= 0 && i < end {
			end = i
		}
	}
	return word, body[:end], body[end:]
}

func joinNonEmpty(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}
