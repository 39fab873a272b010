package clock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// maxTextBytes bounds the text of a time; the longest accepted form,
// 2024-07-29T15:51:28.123456789+05:30, has 35 bytes.
const maxTextBytes = 64

// ParseError reports text that is not a time (or, from ParseDate and
// ParseDateEnd, a date) in a form payd accepts. Its message names the forms
// that are accepted, so it can be shown to the API user as it is.
type ParseError struct {
	// Text is the refused text, cut to maxTextBytes.
	Text string
	// Date is true when a bare date would also have been accepted.
	Date bool
}

func (e *ParseError) Error() string {
	if e.Date {
		return fmt.Sprintf("%q is not a valid date or time; use YYYY-MM-DD, DD/MM/YY or RFC 3339, e.g. 2024-07-29 or 2024-07-29T15:51:28.071Z", e.Text)
	}
	return fmt.Sprintf("%q is not a valid time; use RFC 3339, e.g. 2024-07-29T15:51:28.071Z", e.Text)
}

func parseError(s string, date bool) *ParseError {
	if len(s) > maxTextBytes {
		s = s[:maxTextBytes] + "..."
	}
	return &ParseError{Text: s, Date: date}
}

// Parse reads a time as requests send it and returns it in UTC. The contract
// says requests "accept RFC 3339 (Z or ±hh:mm), offsets without a colon
// (2024-12-31T23:59:59.000+0000, which existing integrations send), a datetime
// without an offset (read as UTC)". So Parse accepts
//
//	2024-07-29T15:51:28.071Z
//	2024-07-29T15:51:28+10:00
//	2024-07-29T15:51:28.071+0530
//	2024-07-29T15:51:28 (UTC)
//
// with 1 to 9 fractional digits or none. It is otherwise strict: upper-case T
// and Z only, no space for T, seconds required, no leap second, the date must
// exist, and the instant must fall in the years 0000 to 9999 in UTC so that
// Format can write it. A refusal is a *ParseError.
func Parse(s string) (time.Time, error) {
	t, ok := parseDateTime(s)
	if !ok {
		return time.Time{}, parseError(s, false)
	}
	return t, nil
}

// ParseDate reads the lower bound of a date filter (from_date). It accepts
// what Parse accepts, and also a bare date as YYYY-MM-DD or DD/MM/YY (a
// two-digit year is 2000 to 2099), which means the start of that day in loc
// (UTC if loc is nil). The result is an inclusive bound in UTC: a record is in
// range when its time is at or after it.
func ParseDate(s string, loc *time.Location) (time.Time, error) {
	if year, month, day, ok := parseBareDate(s); ok {
		return startOfDay(year, month, day, loc), nil
	}
	t, ok := parseDateTime(s)
	if !ok {
		return time.Time{}, parseError(s, true)
	}
	return t, nil
}

// ParseDateEnd reads the upper bound of a date filter (to_date) and returns
// it as an exclusive bound in UTC: a record is in range when its time is
// before it. It accepts what ParseDate accepts, and the bound includes what
// the user named: a bare date includes that whole day in loc (UTC if loc is
// nil), so the bound is the start of the next day; a full time includes that
// instant at the database's millisecond precision, so the bound is that time
// cut to the millisecond plus one millisecond.
func ParseDateEnd(s string, loc *time.Location) (time.Time, error) {
	if year, month, day, ok := parseBareDate(s); ok {
		return startOfDay(year, month, day+1, loc), nil
	}
	t, ok := parseDateTime(s)
	if !ok {
		return time.Time{}, parseError(s, true)
	}
	return t.Truncate(time.Millisecond).Add(time.Millisecond), nil
}

// startOfDay returns, in UTC, the first instant of the given day in loc (UTC
// if loc is nil); day may run past the end of the month. Where a
// daylight-saving change skips midnight (America/Santiago, America/Havana),
// time.Date may answer with a time late on the previous day; the day then
// starts when that zone period ends.
func startOfDay(year int, month time.Month, day int, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	year, month, day = time.Date(year, month, day, 12, 0, 0, 0, time.UTC).Date()
	t := time.Date(year, month, day, 0, 0, 0, 0, loc)
	if gotYear, gotMonth, gotDay := t.Date(); gotYear == year && gotMonth == month && gotDay == day {
		return t.UTC()
	}
	if _, end := t.ZoneBounds(); !end.IsZero() {
		return end.UTC()
	}
	return t.UTC()
}

// parseBareDate reads YYYY-MM-DD or DD/MM/YY, refusing days that do not exist.
func parseBareDate(s string) (year int, month time.Month, day int, ok bool) {
	sc := scanner{text: s}
	switch len(s) {
	case len("2006-01-02"):
		year = sc.digits(4)
		sc.literal('-')
		month = time.Month(sc.digits(2))
		sc.literal('-')
		day = sc.digits(2)
	case len("02/01/06"):
		day = sc.digits(2)
		sc.literal('/')
		month = time.Month(sc.digits(2))
		sc.literal('/')
		year = 2000 + sc.digits(2)
	default:
		return 0, 0, 0, false
	}
	ok = sc.done() && validDate(year, month, day)
	return year, month, day, ok
}

// parseDateTime reads the forms Parse accepts.
func parseDateTime(s string) (time.Time, bool) {
	if len(s) > maxTextBytes {
		return time.Time{}, false
	}
	sc := scanner{text: s}
	year := sc.digits(4)
	sc.literal('-')
	month := time.Month(sc.digits(2))
	sc.literal('-')
	day := sc.digits(2)
	sc.literal('T')
	hour := sc.digits(2)
	sc.literal(':')
	minute := sc.digits(2)
	sc.literal(':')
	second := sc.digits(2)
	nanos := sc.fraction()
	offset := sc.offset()
	if !sc.done() || !validDate(year, month, day) || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, second, nanos, time.UTC).Add(-offset)
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

func validDate(year int, month time.Month, day int) bool {
	if month < time.January || month > time.December || day < 1 {
		return false
	}
	lastDay := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return day <= lastDay
}

// scanner reads a time's text from left to right. Once a read fails, every
// further read fails and returns zero, so a parser can read every field and
// check done once at the end.
type scanner struct {
	text   string
	failed bool
}

// done reports whether every read succeeded and all text was read.
func (sc *scanner) done() bool {
	return !sc.failed && sc.text == ""
}

func (sc *scanner) fail() {
	sc.failed = true
	sc.text = ""
}

// digits reads exactly n ASCII digits as a number.
func (sc *scanner) digits(n int) int {
	if len(sc.text) < n {
		sc.fail()
		return 0
	}
	v := 0
	for i := 0; i < n; i++ {
		c := sc.text[i]
		if c < '0' || c > '9' {
			sc.fail()
			return 0
		}
		v = v*10 + int(c-'0')
	}
	sc.text = sc.text[n:]
	return v
}

// literal reads the byte c.
func (sc *scanner) literal(c byte) {
	if !sc.skip(c) {
		sc.fail()
	}
}

// skip reads the byte c if it comes next, and reports whether it did.
func (sc *scanner) skip(c byte) bool {
	if sc.text == "" || sc.text[0] != c {
		return false
	}
	sc.text = sc.text[1:]
	return true
}

// fraction reads an optional '.' and 1 to 9 digits as nanoseconds.
func (sc *scanner) fraction() int {
	if !sc.skip('.') {
		return 0
	}
	n := 0
	for n < len(sc.text) && '0' <= sc.text[n] && sc.text[n] <= '9' {
		n++
	}
	if n < 1 || n > 9 {
		sc.fail()
		return 0
	}
	nanos := sc.digits(n)
	for ; n < 9; n++ {
		nanos *= 10
	}
	return nanos
}

// offset reads an optional zone: Z, or a sign and hh:mm or hhmm. No zone
// means UTC.
func (sc *scanner) offset() time.Duration {
	if sc.text == "" || sc.skip('Z') {
		return 0
	}
	sign := time.Duration(1)
	switch {
	case sc.skip('-'):
		sign = -1
	case sc.skip('+'):
	default:
		sc.fail()
		return 0
	}
	hours := sc.digits(2)
	sc.skip(':')
	minutes := sc.digits(2)
	if hours > 23 || minutes > 59 {
		sc.fail()
		return 0
	}
	return sign * (time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute)
}

// typeError reports a JSON value that is not a readable time string. It is a
// *json.UnmarshalTypeError so that encoding/json adds the member's name, and
// the HTTP layer can answer 400 naming it.
func typeError(value string) error {
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeOf(Input{})}
}

// Input is an optional time in a request. A JSON string is read with Parse;
// null or an absent member leaves Set false.
type Input struct {
	T   time.Time
	Set bool
}

// UnmarshalJSON reads a JSON string with Parse, so an unreadable time is a
// *ParseError naming the accepted forms. JSON null unsets in. Any other JSON
// value, and a string Parse cannot read, is refused with a
// *json.UnmarshalTypeError.
func (in *Input) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*in = Input{}
		return nil
	}
	if len(data) == 0 || data[0] != '"' {
		return typeError("non-string")
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	t, err := Parse(s)
	if err != nil {
		return typeError("string " + strconv.Quote(truncate(s, 40)))
	}
	*in = Input{T: t, Set: true}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
