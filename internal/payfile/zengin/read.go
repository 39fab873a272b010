package zengin

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/japanese"

	"payd/internal/payfile"
)

// Read parses a 総合振込 file that Write made back into its File: the debtor
// (依頼人コード, name, bank, branch, 預金種目, account) and the credits in
// file order, their names as the fields hold them (half-width, cut,
// trailing blanks dropped) and their bank references from 顧客コード1. 取組日
// is all the file says of when, and it has no year: CreatedAt is that month
// and day in year 0 (as time.Parse gives a date without a year, so 0229 is a
// date), at midnight UTC, and Location is UTC. Name and Reference are not in
// the file and stay empty.
//
// It refuses a file that is not exactly such a file: a record not 120 bytes
// or not ended by CR LF, a byte that is not a single-byte JIS X 0201
// character, a record type out of place, a field out of its shape (digits,
// a constant, a name a Zengin name may not be), or a trailer whose count and
// total are not the data records' own.
func Read(data []byte) (payfile.File, error) {
	records, err := split(data)
	if err != nil {
		return payfile.File{}, err
	}
	if len(records) < 4 {
		return payfile.File{}, fmt.Errorf("zengin: %d records: a file is a header, data records (at least one), a trailer and an end record", len(records))
	}
	end := len(records) - 1
	p := parser{n: end + 1, rec: records[end]}
	p.recordType(typeEnd)
	p.blank(2, 120)
	if p.err != nil {
		return payfile.File{}, p.err
	}
	f, err := readHeader(records[0])
	if err != nil {
		return payfile.File{}, err
	}
	for i := 1; i < end-1; i++ {
		c, err := readData(i+1, records[i])
		if err != nil {
			return payfile.File{}, err
		}
		f.Credits = append(f.Credits, c)
	}
	if err := readTrailer(end, records[end-1], f); err != nil {
		return payfile.File{}, err
	}
	return f, nil
}

// split cuts data into its records, each 120 bytes of single-byte
// characters followed by CR LF.
func split(data []byte) ([][]byte, error) {
	var records [][]byte
	for n := 1; len(data) > 0; n++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil, fmt.Errorf("zengin: record %d: no line end (each record ends in CR LF)", n)
		}
		if end == 0 || data[end-1] != '\r' {
			return nil, fmt.Errorf("zengin: record %d: ends in LF without CR (each record ends in CR LF)", n)
		}
		rec := data[:end-1]
		if len(rec) != recordLen {
			return nil, fmt.Errorf("zengin: record %d: %d bytes, not %d", n, len(rec), recordLen)
		}
		for i, c := range rec {
			if !(c >= ' ' && c <= '~' || c >= 0xA1 && c <= 0xDF) {
				return nil, fmt.Errorf("zengin: record %d, byte %d: 0x%02x is not a single-byte JIS X 0201 character", n, i+1, c)
			}
		}
		records = append(records, rec)
		data = data[end+1:]
	}
	return records, nil
}

// readHeader reads the header (record 1).
func readHeader(rec []byte) (payfile.File, error) {
	p := parser{n: 1, rec: rec}
	p.recordType(typeHeader)
	p.literal(2, 3, kindCode)
	p.literal(4, 4, codeKubunJIS)
	d := payfile.Debtor{OriginatorID: p.digits(5, 14)}
	d.Name = p.name(15, 54, true)
	date := p.digits(55, 58)
	d.BankCode = p.digits(59, 62)
	d.BankNameKana = p.name(63, 77, false)
	d.BranchCode = p.digits(78, 80)
	d.BranchNameKana = p.name(81, 95, false)
	d.AccountType = p.accountType(96)
	d.Account = p.digits(97, 103)
	p.blank(104, 120)
	if p.err != nil {
		return payfile.File{}, p.err
	}
	day, err := time.Parse(dateLayout, date)
	if err != nil {
		return payfile.File{}, fmt.Errorf("zengin: record 1, bytes 55-58: 取組日 %q is not an MMDD date", date)
	}
	return payfile.File{CreatedAt: day, Location: time.UTC, Currency: currency, Debtor: d}, nil
}

// readData reads a data record (record n).
func readData(n int, rec []byte) (payfile.Credit, error) {
	p := parser{n: n, rec: rec}
	p.recordType(typeData)
	c := payfile.Credit{BankCode: p.digits(2, 5)}
	c.BankNameKana = p.name(6, 20, false)
	c.BranchCode = p.digits(21, 23)
	c.BranchNameKana = p.name(24, 38, false)
	p.literal(39, 42, clearingHouse)
	c.AccountType = p.accountType(43)
	c.Account = p.digits(44, 50)
	c.Name = p.name(51, 80, true)
	amount, _ := strconv.ParseInt(p.digits(81, 90), 10, 64)
	c.AmountMinor = amount
	p.literal(91, 91, newCodeOther)
	c.BankReference = p.digits(92, 101)
	p.literal(102, 111, customerCode2)
	p.literal(112, 112, transferTelegram)
	p.literal(113, 113, identification)
	p.blank(114, 120)
	if p.err == nil && amount == 0 {
		p.fail(81, 90, "振込金額 is zero")
	}
	return c, p.err
}

// readTrailer checks the trailer (record n) against the data records.
func readTrailer(n int, rec []byte, f payfile.File) error {
	p := parser{n: n, rec: rec}
	p.recordType(typeTrailer)
	count, _ := strconv.Atoi(p.digits(2, 7))
	total, _ := strconv.ParseInt(p.digits(8, 19), 10, 64)
	p.blank(20, 120)
	switch {
	case p.err != nil:
		return p.err
	case count != len(f.Credits):
		return fmt.Errorf("zengin: record %d: 合計件数 %d, but the file has %d data records", n, count, len(f.Credits))
	case total != f.Total():
		return fmt.Errorf("zengin: record %d: 合計金額 %d, but the data records sum to %d", n, total, f.Total())
	}
	return nil
}

// parser reads one record's fields by their bytes (1-based, inclusive),
// keeping the first problem.
type parser struct {
	n   int
	rec []byte
	err error
}

func (p *parser) fail(from, to int, problem string) {
	if p.err == nil {
		p.err = fmt.Errorf("zengin: record %d, bytes %d-%d: %s", p.n, from, to, problem)
	}
}

// text is the field decoded from Shift_JIS (split admitted single-byte
// characters only, which always decode).
func (p *parser) text(from, to int) string {
	s, _ := japanese.ShiftJIS.NewDecoder().Bytes(p.rec[from-1 : to])
	return string(s)
}

func (p *parser) recordType(want byte) {
	if p.rec[0] != want {
		p.fail(1, 1, fmt.Sprintf("データ区分 %q where a %q record belongs", p.rec[0], want))
	}
}

func (p *parser) literal(from, to int, want string) {
	if got := p.text(from, to); got != want {
		p.fail(from, to, fmt.Sprintf("%q, not %q", got, want))
	}
}

func (p *parser) blank(from, to int) { p.literal(from, to, blank(to-from+1)) }

func (p *parser) digits(from, to int) string {
	s := p.text(from, to)
	if strings.Trim(s, "0123456789") != "" {
		p.fail(from, to, fmt.Sprintf("%q is not digits", s))
	}
	return s
}

func (p *parser) accountType(at int) payfile.AccountType {
	s := p.text(at, at)
	for t, code := range accountTypeCode {
		if code == s {
			return t
		}
	}
	p.fail(at, at, fmt.Sprintf("預金種目 %q is neither 1 (ordinary) nor 2 (current)", s))
	return ""
}

// name is a left-justified, blank-filled name field that is already what
// HalfWidthName makes; required ones may not be blank.
func (p *parser) name(from, to int, required bool) string {
	s := strings.TrimRight(p.text(from, to), " ")
	if required && s == "" {
		p.fail(from, to, "a name is blank")
	}
	if h, err := HalfWidthName(s); err != nil || h != s {
		p.fail(from, to, fmt.Sprintf("%q is not a Zengin name", s))
	}
	return s
}
