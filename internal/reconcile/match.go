package reconcile

import (
	"strings"
	"time"

	"payd/internal/statement"
)

// businessDaysApart counts the business days (Monday to Friday, CONTRACT
// §25) after the earlier of a and b up to and including the later: a
// Friday and the Monday after are 1 apart, a Saturday and the Monday 1.
func businessDaysApart(a, b statement.Date) int {
	if b.Before(a) {
		a, b = b, a
	}
	n := 0
	for d := a.In(time.UTC).AddDate(0, 0, 1); !b.In(time.UTC).Before(d); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return n
}

// within reports whether a credit on valueDate can be a record of date
// (CONTRACT §19: within three business days).
func within(valueDate, date statement.Date) bool {
	// Dates far apart are not counted day by day.
	if d := valueDate.In(time.UTC).Sub(date.In(time.UTC)); d > 10*24*time.Hour || d < -10*24*time.Hour {
		return false
	}
	return businessDaysApart(valueDate, date) <= businessDays
}

// credit is a statement's booked credit as matching sees it.
type credit struct {
	amountMinor int64
	valueDate   statement.Date
	// text is the reference and the description, upper case: what a
	// record's reference must be contained in.
	text string
}

func creditOf(e statement.Entry) credit {
	date := e.ValueDate
	if date.IsZero() {
		date = e.BookingDate
	}
	return credit{amountMinor: e.AmountMinor, valueDate: date, text: strings.ToUpper(e.Reference + " " + e.Remittance)}
}

// matcher finds the record each credit is, among the records of a
// statement's account, each record taken once.
type matcher struct {
	records []record
	taken   map[RecordRef]bool
}

func newMatcher(rs []record) *matcher {
	m := &matcher{records: rs, taken: map[RecordRef]bool{}}
	for _, r := range rs {
		if r.matchedBy != "" {
			m.taken[r.key()] = true
		}
	}
	return m
}

// match is the record c is (CONTRACT §19): same amount (the currency is the
// statement's, and so every record's here), not yet matched, within three
// business days, and c's text containing its bank reference; failing that,
// containing a settlement's own Reference, when exactly one record does.
// ok is false when none is (or two are, by Reference alone).
func (m *matcher) match(c credit) (record, bool) {
	var byReference []record
	for _, r := range m.records {
		if m.taken[r.key()] || r.amountMinor != c.amountMinor || !within(c.valueDate, r.date) {
			continue
		}
		if r.bankReference != "" && strings.Contains(c.text, strings.ToUpper(r.bankReference)) {
			m.taken[r.key()] = true
			return r, true
		}
		if r.reference != "" && strings.Contains(c.text, strings.ToUpper(r.reference)) {
			byReference = append(byReference, r)
		}
	}
	if len(byReference) != 1 {
		return record{}, false
	}
	m.taken[byReference[0].key()] = true
	return byReference[0], true
}
