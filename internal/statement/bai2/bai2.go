// Package bai2 reads the BAI2 balance report many banks send (CONTRACT §18):
// the BAI "Cash Management Balance Reporting Specifications Version 2"
// technical reference manual (10/2005), whose record layouts, delimiters,
// continuation rules, control totals and type codes (its Appendix A) this
// reader follows: records 01 file header, 02 group header, 03 account
// identifier and summary/status, 16 transaction detail, 88 continuation, 49
// account trailer, 98 group trailer and 99 file trailer, each a physical
// line of comma-separated fields ending in "/" (a 16 record ends with its
// text instead, which runs to the next record that is not an 88).
//
// Amounts are unsigned integers in the minor units the currency implies
// (the group's currency, or the account's, USD when neither is given), the
// direction a 16 record moves money in is its type code's range (101–399
// credits, 401–699 debits, 721–728 loan credits, 920–959 and 960–999 the
// customised credits and debits; 890 is non-monetary text and makes no
// entry). The control totals are checked as the manual defines them: a 49's
// account control total is the algebraic sum of the amounts of its 03 and
// 16 records, its number of records counts the 03, 16, 88 and 49 records; a
// 98's group total is the sum of its 49 totals, with its number of 03
// records and of all its records; a 99's file total the sum of the 98
// totals, with its number of groups and of all records. A file that fails
// one is refused whole, naming it (statement.ErrTotals).
//
// Read and Check follow statement's shape. A file reports one account (a
// feed's, CONTRACT §25): several groups or 03 records of that one account
// are read as one report; another account refuses the file. Only groups of
// status 1 (update) are read: a deletion, correction or test group is
// refused rather than applied as if it were new money. Every entry is
// booked (§25); its Key is the 16 record's bank reference number, its
// Reference the customer reference number, its Remittance the text with its
// 88 continuations (joined by a space; a "/" ending a physical record's
// text is dropped, as banks end every line with one).
package bai2

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/statement"
)

// The control checks a BAI2 file must pass (statement.Error.Check).
const (
	CheckAccountTotal   = "49 account control total"
	CheckAccountRecords = "49 number of records"
	CheckGroupTotal     = "98 group control total"
	CheckGroupAccounts  = "98 number of accounts"
	CheckGroupRecords   = "98 number of records"
	CheckFileTotal      = "99 file control total"
	CheckFileGroups     = "99 number of groups"
	CheckFileRecords    = "99 number of records"
)

// Bounds beyond statement's: a physical record is at most maxLineBytes (the
// manual's records are 80 characters in practice), a logical record at
// most maxContinuations 88 records, a funds type D at most maxDistributions
// availability pairs, an 03 at most maxSummaries status and summary amounts.
const (
	maxLineBytes     = 4096
	maxContinuations = 64
	maxDistributions = 32
	maxSummaries     = 256
)

// ReturnTypeCodes are the transaction detail type codes (Appendix A) of an
// item coming back: credits 252 debit reversal, 257 individual ACH return
// item, 258 ACH reversal credit, 261 individual rejected credit, 266 return
// item; debits 552 credit reversal, 555 deposited item returned, 557
// individual ACH return item, 558 ACH reversal debit, 561 individual
// rejected debit, 566 return item. An entry of one of them is a return
// (statement.Entry.Return) of the payment its customer reference names.
var ReturnTypeCodes = map[string]bool{
	"252": true, "257": true, "258": true, "261": true, "266": true,
	"552": true, "555": true, "557": true, "558": true, "561": true, "566": true,
}

// Status and type codes of the 03 record the Header's balances come from.
const (
	typeOpeningLedger = "010"
	typeClosingLedger = "015"
	typeNonMonetary   = "890"
	groupStatusUpdate = "1"
	versionNumber     = "2"
	defaultCurrency   = "USD"
)

// Read reads a BAI2 file, handing each 16 record's entry to each in file
// order, and returns the Header once every trailer's totals and counts
// are checked. Each sees an entry before the totals after it are checked:
// a caller that applies entries calls Check first. An error each returns
// stops the reading and is returned as it is.
func Read(r io.Reader, each func(statement.Entry) error) (statement.Header, error) {
	return read(r, each)
}

// Check is Read without entries: it reads the whole file and says whether
// Read would take it, and with what Header.
func Check(r io.Reader) (statement.Header, error) {
	return read(r, nil)
}

// record is one logical record: its code, the physical records it was
// written in (the first and its 88 continuations), and where it began.
type record struct {
	code  string
	parts []string
	line  int
}

func (rec *record) at() string { return fmt.Sprintf("record %s (line %d)", rec.code, rec.line) }

// physical counts the physical records the logical record took.
func (rec *record) physical() int64 { return int64(len(rec.parts)) }

// fields are a record's fields but a 16's text: each physical record's
// content up to its "/", split at commas, the continuations' after the
// first's.
func (rec *record) fields() []string {
	var fields []string
	for _, part := range rec.parts {
		content, _, _ := strings.Cut(part, "/")
		fields = append(fields, strings.Split(content, ",")...)
	}
	return fields
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
		return statement.Header{}, &statement.Error{Format: statement.BAI2, Err: err}
	}
	return f.h, nil
}

// file is one reading of a BAI2 file: where it is in the file's envelopes
// and the totals of each open envelope.
type file struct {
	each   func(statement.Entry) error
	h      statement.Header
	totals statement.Totals
	// state is the record code last read of 01, 02, 03, 49, 98, 99 (16s
	// are within an 03).
	state string
	// file-level, group-level and account-level sums and counts.
	fileTotal, groupTotal, accountTotal       int64
	fileRecords, groupRecords, accountRecords int64
	groups, accounts                          int64
	group                                     groupHeader
	account                                   accountHeader
}

type groupHeader struct {
	asOf     statement.Date
	currency string
}

type accountHeader struct {
	currency money.Currency
}

func (f *file) read(r io.Reader) error {
	sc := bufio.NewScanner(statement.LimitReader(r, statement.HardMaxBytes))
	sc.Buffer(make([]byte, 0, 1024), maxLineBytes)
	var pending *record
	line, blank := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(strings.TrimSuffix(sc.Text(), "\r"), " ")
		if text == "" {
			blank++
			continue
		}
		if blank > 0 {
			return statement.Errorf(statement.BAI2, fmt.Sprintf("line %d", line-1), "an empty record")
		}
		code, content, ok := strings.Cut(text, ",")
		if !ok || len(code) != 2 {
			return statement.Errorf(statement.BAI2, fmt.Sprintf("line %d", line), "%q is not a record (two-digit record code and a comma)", clip(text))
		}
		if code == "88" {
			if pending == nil {
				return statement.Errorf(statement.BAI2, fmt.Sprintf("line %d", line), "an 88 continuation before any record")
			}
			if len(pending.parts) > maxContinuations {
				return statement.Errorf(statement.BAI2, pending.at(), "more than %d continuations: %w", maxContinuations, statement.ErrLimit)
			}
			pending.parts = append(pending.parts, content)
			continue
		}
		if pending != nil {
			if err := f.record(pending); err != nil {
				return err
			}
		}
		pending = &record{code: code, parts: []string{content}, line: line}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a physical record of more than %d bytes: %w", maxLineBytes, statement.ErrLimit)
		}
		return statement.Errorf(statement.BAI2, fmt.Sprintf("line %d", line+1), "%w", err)
	}
	if pending == nil {
		return errors.New("empty: no 01 file header")
	}
	if err := f.record(pending); err != nil {
		return err
	}
	if f.state != "99" {
		return statement.Errorf(statement.BAI2, fmt.Sprintf("line %d", line), "the file ends without its 99 file trailer (truncated)")
	}
	f.h.Format = statement.BAI2
	f.h.Entries, f.h.Booked = f.totals.Entries, f.totals.Booked
	f.h.CreditsMinor, f.h.DebitsMinor = f.totals.CreditsMinor, f.totals.DebitsMinor
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// follows says which record codes may come after each (the manual's file
// structure: 01 (02 (03 16* 49)* 98)* 99).
var follows = map[string]string{
	"":   "01",
	"01": "02",
	"02": "03",
	"03": "16 49",
	"16": "16 49",
	"49": "03 98",
	"98": "02 99",
	"99": "",
}

// record checks rec's place in the file and reads it.
func (f *file) record(rec *record) error {
	allowed := follows[f.state]
	if !strings.Contains(" "+allowed+" ", " "+rec.code+" ") {
		return f.misplaced(rec, allowed)
	}
	f.count(rec)
	var err error
	switch rec.code {
	case "01":
		err = f.fileHeader(rec)
	case "02":
		err = f.groupHeader(rec)
	case "03":
		err = f.accountHeader(rec)
	case "16":
		err = f.detail(rec)
	case "49":
		err = f.accountTrailer(rec)
	case "98":
		err = f.groupTrailer(rec)
	case "99":
		err = f.fileTrailer(rec)
	}
	if err != nil {
		var refusal *statement.Error
		var fromEach eachError
		if errors.As(err, &refusal) || errors.As(err, &fromEach) {
			return err
		}
		return statement.Errorf(statement.BAI2, rec.at(), "%w", err)
	}
	f.state = rec.code
	return nil
}

// count adds rec's physical records to the envelopes it is in: every
// record to the file's count, 02 to 98 to the group's, 03 to 49 to the
// account's (the 88 continuations with the record they continue).
func (f *file) count(rec *record) {
	n := rec.physical()
	f.fileRecords += n
	switch rec.code {
	case "02":
		f.groupRecords = n
	case "03":
		f.accountRecords = n
		f.groupRecords += n
	case "16", "49":
		f.accountRecords += n
		f.groupRecords += n
	case "98":
		f.groupRecords += n
	}
}

func (f *file) misplaced(rec *record, allowed string) error {
	known := map[string]bool{"01": true, "02": true, "03": true, "16": true, "49": true, "98": true, "99": true}
	switch {
	case !known[rec.code]:
		return statement.Errorf(statement.BAI2, rec.at(), "record code %s is not one of BAI2's (01, 02, 03, 16, 88, 49, 98, 99)", rec.code)
	case allowed == "":
		return statement.Errorf(statement.BAI2, rec.at(), "a record after the 99 file trailer")
	case f.state == "":
		return statement.Errorf(statement.BAI2, rec.at(), "out of place: a file begins with its 01 file header")
	}
	return statement.Errorf(statement.BAI2, rec.at(), "out of place: after a %s record comes %s", f.state, strings.ReplaceAll(allowed, " ", " or "))
}

// fileHeader reads 01: sender, receiver, creation date and time, file id,
// record length, block size, version 2.
func (f *file) fileHeader(rec *record) error {
	fields := rec.fields()
	if len(fields) != 8 {
		return fmt.Errorf("%d fields, an 01 has 8", len(fields))
	}
	if fields[7] != versionNumber {
		return fmt.Errorf("version number %q: payd reads version 2", fields[7])
	}
	created, err := dateTime(fields[2], fields[3])
	if err != nil {
		return fmt.Errorf("file creation date and time: %w", err)
	}
	if fields[0] == "" || fields[4] == "" {
		return errors.New("no sender identification or file identification number")
	}
	f.h.MessageID = fields[0] + "/" + fields[2] + "/" + fields[4]
	f.h.CreatedAt = created
	return statement.TextError("file identification", f.h.MessageID, statement.MaxReferenceRunes)
}

// groupHeader reads 02: receiver, originator, group status, as-of date and
// time, currency, as-of-date modifier.
func (f *file) groupHeader(rec *record) error {
	fields := rec.fields()
	if len(fields) != 7 {
		return fmt.Errorf("%d fields, an 02 has 7", len(fields))
	}
	if fields[2] != groupStatusUpdate {
		return fmt.Errorf("group status %q: payd applies only update groups (1), not deletions, corrections or tests", fields[2])
	}
	asOf, err := date(fields[3])
	if err != nil {
		return fmt.Errorf("as-of date: %w", err)
	}
	f.group = groupHeader{asOf: asOf, currency: fields[5]}
	f.groups++
	f.groupTotal, f.accounts = 0, 0
	id := fields[1] + "/" + fields[3]
	if err := statement.TextError("originator identification", id, statement.MaxReferenceRunes); err != nil {
		return err
	}
	f.h.StatementIDs = append(f.h.StatementIDs, id)
	if f.h.From.IsZero() || asOf.Before(f.h.From) {
		f.h.From = asOf
	}
	if f.h.To.IsZero() || f.h.To.Before(asOf) {
		f.h.To = asOf
	}
	return nil
}

// accountHeader reads 03: the account, its currency, and its status and
// summary amounts (type code, amount, item count, funds type), which the
// 49's total adds.
func (f *file) accountHeader(rec *record) error {
	fields := rec.fields()
	if len(fields) < 2 {
		return fmt.Errorf("%d fields: an 03 names its account and currency", len(fields))
	}
	code := joinFirst(fields[1], f.group.currency, defaultCurrency)
	c, err := statement.Currency(code)
	if err != nil {
		return err
	}
	if err := f.setAccount(fields[0], c); err != nil {
		return err
	}
	f.account = accountHeader{currency: c}
	f.accounts++
	f.accountTotal = 0
	return f.summaries(fields[2:])
}

func (f *file) setAccount(number string, c money.Currency) error {
	if number == "" {
		return errors.New("no customer account number")
	}
	if err := statement.TextError("customer account number", number, statement.MaxNameRunes); err != nil {
		return err
	}
	a := statement.Account{Number: number, Currency: c.Code}
	if f.h.Account.Number == "" {
		f.h.Account = a
		return nil
	}
	if a != f.h.Account {
		return fmt.Errorf("account %s in %s, but the file's first is %s in %s: a file is read for one account", a.Number, a.Currency, f.h.Account.Number, f.h.Account.Currency)
	}
	return nil
}

// summaries reads an 03's repeated type code, amount, item count and funds
// type groups.
func (f *file) summaries(fields []string) error {
	for n := 0; len(fields) > 0; n++ {
		if n >= maxSummaries {
			return fmt.Errorf("more than %d status and summary amounts: %w", maxSummaries, statement.ErrLimit)
		}
		if len(fields) < 4 {
			return fmt.Errorf("a type code with %d of its 4 fields (type code, amount, item count, funds type)", len(fields))
		}
		code, amountText, count := fields[0], fields[1], fields[2]
		extra, err := fundsExtra(fields[3:])
		if errors.Is(err, errNeedMore) || (err == nil && len(fields) < 4+extra) {
			return fmt.Errorf("type code %s: the record ends within its funds type's %d fields", code, extra)
		}
		if err != nil {
			return fmt.Errorf("type code %s: %w", code, err)
		}
		if code == "" && amountText == "" {
			fields = fields[4+extra:]
			continue
		}
		if err := statusOrSummaryCode(code); err != nil {
			return err
		}
		if count != "" && !digits(count, 18) {
			return fmt.Errorf("type code %s: item count %q is not a number", code, count)
		}
		amount, err := signedAmount(amountText, code < "100")
		if err != nil {
			return fmt.Errorf("type code %s: %w", code, err)
		}
		if f.accountTotal, err = statement.AddSigned(f.accountTotal, amount); err != nil {
			return err
		}
		f.balance(code, amount)
		fields = fields[4+extra:]
	}
	return nil
}

// balance keeps the ledger balances of the first and last account as the
// Header's opening and closing.
func (f *file) balance(code string, amount int64) {
	b := &statement.Balance{AmountMinor: amount, Date: f.group.asOf}
	switch {
	case code == typeOpeningLedger && f.h.Opening == nil:
		f.h.Opening = b
	case code == typeClosingLedger:
		f.h.Closing = b
	}
}

func statusOrSummaryCode(code string) error {
	if !digits(code, 3) || len(code) != 3 {
		return fmt.Errorf("type code %q is not three digits", code)
	}
	return nil
}

// accountTrailer reads 49 and checks the account's total and records.
func (f *file) accountTrailer(rec *record) error {
	fields := rec.fields()
	if len(fields) != 2 {
		return fmt.Errorf("%d fields, a 49 has 2", len(fields))
	}
	if err := f.checkTotal(rec, CheckAccountTotal, fields[0], f.accountTotal); err != nil {
		return err
	}
	if err := f.checkCount(rec, CheckAccountRecords, fields[1], f.accountRecords); err != nil {
		return err
	}
	var err error
	f.groupTotal, err = statement.AddSigned(f.groupTotal, f.accountTotal)
	return err
}

// groupTrailer reads 98 and checks the group's total, accounts and records.
func (f *file) groupTrailer(rec *record) error {
	fields := rec.fields()
	if len(fields) != 3 {
		return fmt.Errorf("%d fields, a 98 has 3", len(fields))
	}
	if err := f.checkTotal(rec, CheckGroupTotal, fields[0], f.groupTotal); err != nil {
		return err
	}
	if err := f.checkCount(rec, CheckGroupAccounts, fields[1], f.accounts); err != nil {
		return err
	}
	if err := f.checkCount(rec, CheckGroupRecords, fields[2], f.groupRecords); err != nil {
		return err
	}
	var err error
	f.fileTotal, err = statement.AddSigned(f.fileTotal, f.groupTotal)
	return err
}

// fileTrailer reads 99 and checks the file's total, groups and records.
func (f *file) fileTrailer(rec *record) error {
	fields := rec.fields()
	if len(fields) != 3 {
		return fmt.Errorf("%d fields, a 99 has 3", len(fields))
	}
	if err := f.checkTotal(rec, CheckFileTotal, fields[0], f.fileTotal); err != nil {
		return err
	}
	if err := f.checkCount(rec, CheckFileGroups, fields[1], f.groups); err != nil {
		return err
	}
	return f.checkCount(rec, CheckFileRecords, fields[2], f.fileRecords)
}

func (f *file) checkTotal(rec *record, check, text string, sum int64) error {
	stated, err := signedAmount(text, true)
	if err != nil {
		return fmt.Errorf("%s: %w", check, err)
	}
	if stated != sum {
		return statement.TotalsError(statement.BAI2, rec.at(), check, "the records sum to %d, the trailer says %d", sum, stated)
	}
	return nil
}

func (f *file) checkCount(rec *record, check, text string, count int64) error {
	if !digits(text, 18) || text == "" {
		return fmt.Errorf("%s %q is not a number", check, text)
	}
	stated, _ := strconv.ParseInt(text, 10, 64)
	if stated != count {
		return statement.TotalsError(statement.BAI2, rec.at(), check, "%d counted, the trailer says %d", count, stated)
	}
	return nil
}

// signedAmount reads a BAI2 amount: digits in minor units, "" for none, a
// leading sign only where signed (status amounts and trailer totals).
func signedAmount(text string, signed bool) (int64, error) {
	if text == "" {
		return 0, nil
	}
	negative := false
	if signed && (text[0] == '+' || text[0] == '-') {
		negative, text = text[0] == '-', text[1:]
	}
	if !digits(text, 18) || text == "" {
		return 0, fmt.Errorf("amount %q is not unsigned digits (BAI2 amounts have no decimal point: the currency implies it)", text)
	}
	n, _ := strconv.ParseInt(text, 10, 64)
	if n > money.MaxMinor {
		return 0, fmt.Errorf("amount %s: %w", text, money.ErrOutOfRange)
	}
	if negative {
		n = -n
	}
	return n, nil
}

// digits reports whether s is at most max ASCII digits.
func digits(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// date reads YYMMDD, its year in 2000–2099.
func date(text string) (statement.Date, error) {
	if len(text) != 6 || !digits(text, 6) {
		return statement.Date{}, fmt.Errorf("%q is not YYMMDD", text)
	}
	t, err := time.Parse("060102", text)
	if err != nil {
		return statement.Date{}, fmt.Errorf("%q is not a date", text)
	}
	if t.Year() < 2000 {
		t = t.AddDate(100, 0, 0)
	}
	return statement.DateOf(t), nil
}

// dateTime reads YYMMDD and HHMM (0000–2400, or 9999 for the end of the
// day, as the manual allows) as UTC: the file gives no zone.
func dateTime(dateText, timeText string) (time.Time, error) {
	d, err := date(dateText)
	if err != nil {
		return time.Time{}, err
	}
	if timeText == "" {
		return d.In(time.UTC), nil
	}
	if len(timeText) != 4 || !digits(timeText, 4) {
		return time.Time{}, fmt.Errorf("time %q is not HHMM", timeText)
	}
	if timeText == "9999" || timeText == "2400" {
		return d.In(time.UTC).AddDate(0, 0, 1), nil
	}
	hour, _ := strconv.Atoi(timeText[:2])
	minute, _ := strconv.Atoi(timeText[2:])
	if hour > 23 || minute > 59 {
		return time.Time{}, fmt.Errorf("time %q is not HHMM", timeText)
	}
	return d.In(time.UTC).Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute), nil
}

func joinFirst(texts ...string) string {
	for _, t := range texts {
		if t != "" {
			return t
		}
	}
	return ""
}
