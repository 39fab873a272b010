package aba

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd/internal/payfile"
)

// Read parses an ABA file that Write made back into its File: the debtor
// (name as the type 0 user name holds it, BSB and account from the balancing
// record, APCA user id, bank), the file reference (the balancing record's
// lodgement reference) and the credits in file order, their text as the
// fields hold it (upper case, cut, trailing blanks dropped). The processing
// date is all the file says of when: CreatedAt is that date (its year in
// 2000–2099) at midnight UTC, and Location is UTC. Name is not in the file and stays empty.
//
// It refuses a file that is not exactly such a file: a record not 120
// characters or not ended by CR LF, a character that is not ASCII text, a
// record type out of place, a field out of its shape (a blank field not
// blank, a constant not its value), a trace record not the debtor's, or
// type 7 totals and count that are not the records' own.
func Read(data []byte) (payfile.File, error) {
	records, err := split(data)
	if err != nil {
		return payfile.File{}, err
	}
	if len(records) < 3 {
		return payfile.File{}, fmt.Errorf("aba: %d records: a file is a type 0 record, type 1 records (at least a credit and the balancing debit) and a type 7 record", len(records))
	}
	f, err := readDescriptive(records[0])
	if err != nil {
		return payfile.File{}, err
	}
	last := len(records) - 1
	if records[last][0] != typeFileTotal {
		return payfile.File{}, fmt.Errorf("aba: record %d: record type %q: the last record must be the type 7 file total", last+1, records[last][0])
	}
	var credits []detailFields
	var balancing detailFields
	for i := 1; i < last; i++ {
		d, err := readDetail(i+1, records[i])
		if err != nil {
			return payfile.File{}, err
		}
		switch {
		case i < last-1 && d.code == codeCredit:
			credits = append(credits, d)
		case i == last-1 && d.code == codeDebit:
			balancing = d
		case i == last-1:
			return payfile.File{}, fmt.Errorf("aba: record %d: transaction code %s: the last detail record must be the balancing debit (%s)", i+1, d.code, codeDebit)
		default:
			return payfile.File{}, fmt.Errorf("aba: record %d: transaction code %s: a credit (%s) belongs here", i+1, d.code, codeCredit)
		}
	}
	if err := readFileTotal(last+1, records[last], credits, balancing); err != nil {
		return payfile.File{}, err
	}
	f.Reference = balancing.reference
	f.Debtor.BSB, f.Debtor.Account = balancing.bsb, balancing.account
	for i, d := range append(credits, balancing) {
		if d.traceBSB != balancing.bsb || d.traceAccount != balancing.account {
			return payfile.File{}, fmt.Errorf("aba: record %d: trace record %s %s is not the debtor's account %s %s", i+2, d.traceBSB, d.traceAccount, balancing.bsb, balancing.account)
		}
	}
	for _, d := range credits {
		f.Credits = append(f.Credits, payfile.Credit{
			BankReference: d.reference, AmountMinor: d.amountMinor, Name: d.title,
			Account: d.account, BSB: d.bsb, Remitter: d.remitter,
		})
	}
	return f, nil
}

// split cuts data into its records, each 120 characters of ASCII text
// followed by CR LF.
func split(data []byte) ([][]byte, error) {
	var records [][]byte
	for n := 1; len(data) > 0; n++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil, fmt.Errorf("aba: record %d: no line end (each record ends in CR LF)", n)
		}
		if end == 0 || data[end-1] != '\r' {
			return nil, fmt.Errorf("aba: record %d: ends in LF without CR (each record ends in CR LF)", n)
		}
		rec := data[:end-1]
		if len(rec) != recordLen {
			return nil, fmt.Errorf("aba: record %d: %d characters, not %d", n, len(rec), recordLen)
		}
		for i, c := range rec {
			if c < ' ' || c > '~' {
				return nil, fmt.Errorf("aba: record %d, column %d: byte 0x%02x is not ASCII text", n, i+1, c)
			}
		}
		records = append(records, rec)
		data = data[end+1:]
	}
	return records, nil
}

// readDescriptive reads the type 0 record (record 1).
func readDescriptive(rec []byte) (payfile.File, error) {
	p := parser{n: 1, rec: rec}
	p.recordType(typeDescriptive)
	p.blank(2, 18)
	p.literal(19, 20, reelSequence)
	bank := p.text(21, 23)
	p.blank(24, 30)
	name := p.text(31, 56)
	userID := p.digits(57, 62)
	p.literal(63, 74, fmt.Sprintf("%-*s", widthDescription, description))
	date := p.text(75, 80)
	p.blank(81, 120)
	if p.err != nil {
		return payfile.File{}, p.err
	}
	day, err := processingDate(date)
	if err != nil {
		return payfile.File{}, err
	}
	if !bankAbbrevPattern.MatchString(bank) {
		return payfile.File{}, fmt.Errorf("aba: record 1, columns 21-23: bank %q is not 3 upper-case letters", bank)
	}
	return payfile.File{
		CreatedAt: day, Location: time.UTC, Currency: currency,
		Debtor: payfile.Debtor{Name: strings.TrimRight(name, " "), OriginatorID: userID, BankAbbrev: bank},
	}, nil
}

// processingDate is the DDMMYY date, its year in this century (time.Parse
// would put 69 to 99 in the last one).
func processingDate(s string) (time.Time, error) {
	t, err := time.Parse(processingLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("aba: record 1, columns 75-80: processing date %q is not a DDMMYY date", s)
	}
	return time.Date(2000+t.Year()%100, t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

// readDetail reads a type 1 record (record n).
func readDetail(n int, rec []byte) (detailFields, error) {
	p := parser{n: n, rec: rec}
	p.recordType(typeDetail)
	d := detailFields{
		bsb:     p.bsb(2, 8),
		account: p.account(9, 17),
	}
	p.literal(18, 18, indicatorBlank)
	d.code = p.text(19, 20)
	d.amountMinor = p.amount(21, 30)
	d.title = p.name(31, 62)
	d.reference = p.name(63, 80)
	d.traceBSB = p.bsb(81, 87)
	d.traceAccount = p.account(88, 96)
	d.remitter = p.name(97, 112)
	p.literal(113, 120, withholdingZero)
	if p.err == nil && d.code != codeCredit && d.code != codeDebit {
		p.fail(19, 20, fmt.Sprintf("transaction code %q is neither %s nor %s", d.code, codeCredit, codeDebit))
	}
	if p.err == nil && d.amountMinor == 0 {
		p.fail(21, 30, "amount is zero")
	}
	return d, p.err
}

// readFileTotal checks the type 7 record (record n) against the detail
// records: net, credit and debit totals, and their count.
func readFileTotal(n int, rec []byte, credits []detailFields, balancing detailFields) error {
	p := parser{n: n, rec: rec}
	p.recordType(typeFileTotal)
	p.literal(2, 8, fileTotalBSB)
	p.blank(9, 20)
	net := p.amount(21, 30)
	creditTotal := p.amount(31, 40)
	debitTotal := p.amount(41, 50)
	p.blank(51, 74)
	count := p.amount(75, 80)
	p.blank(81, 120)
	if p.err != nil {
		return p.err
	}
	var sum int64
	for _, c := range credits {
		sum += c.amountMinor
	}
	switch {
	case count != int64(len(credits)+1):
		return fmt.Errorf("aba: record %d: count %d, but the file has %d type 1 records", n, count, len(credits)+1)
	case creditTotal != sum:
		return fmt.Errorf("aba: record %d: credit total %d, but the credits sum to %d", n, creditTotal, sum)
	case debitTotal != balancing.amountMinor:
		return fmt.Errorf("aba: record %d: debit total %d, but the balancing debit is %d", n, debitTotal, balancing.amountMinor)
	case creditTotal != debitTotal:
		return fmt.Errorf("aba: record %d: credit total %d and debit total %d do not balance", n, creditTotal, debitTotal)
	case net != 0:
		return fmt.Errorf("aba: record %d: net total %d, but the file balances", n, net)
	}
	return nil
}

// parser reads one record's fields by their columns (1-based, inclusive, as
// the specifications number them), keeping the first problem.
type parser struct {
	n   int
	rec []byte
	err error
}

func (p *parser) fail(from, to int, problem string) {
	if p.err == nil {
		p.err = fmt.Errorf("aba: record %d, columns %d-%d: %s", p.n, from, to, problem)
	}
}

func (p *parser) text(from, to int) string { return string(p.rec[from-1 : to]) }

func (p *parser) recordType(want byte) {
	if p.rec[0] != want {
		p.fail(1, 1, fmt.Sprintf("record type %q where a type %q record belongs", p.rec[0], want))
	}
}

func (p *parser) literal(from, to int, want string) {
	if got := p.text(from, to); got != want {
		p.fail(from, to, fmt.Sprintf("%q, not %q", got, want))
	}
}

func (p *parser) blank(from, to int) { p.literal(from, to, strings.Repeat(" ", to-from+1)) }

func (p *parser) digits(from, to int) string {
	s := p.text(from, to)
	if strings.Trim(s, "0123456789") != "" {
		p.fail(from, to, fmt.Sprintf("%q is not digits", s))
	}
	return s
}

func (p *parser) amount(from, to int) int64 {
	n, _ := strconv.ParseInt(p.digits(from, to), 10, 64)
	return n
}

func (p *parser) bsb(from, to int) string {
	s := p.text(from, to)
	if !bsbPattern.MatchString(s) {
		p.fail(from, to, fmt.Sprintf("BSB %q is not nnn-nnn", s))
	}
	return s
}

// account is a right-justified, blank-filled account number.
func (p *parser) account(from, to int) string {
	s := strings.TrimLeft(p.text(from, to), " ")
	if accountProblem(s) != "" {
		p.fail(from, to, fmt.Sprintf("account %q is not 1 to 9 digits right-justified", p.text(from, to)))
	}
	return s
}

// name is a left-justified, blank-filled text field in the BECS set, not
// blank.
func (p *parser) name(from, to int) string {
	s := strings.TrimRight(p.text(from, to), " ")
	if problem := textProblem(s); problem != "" {
		p.fail(from, to, fmt.Sprintf("%q %s", s, problem))
	}
	return s
}
