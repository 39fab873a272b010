package clock

import (
	"time"
)

// layout is the contract's response form: "RFC 3339 UTC with milliseconds,
// 2024-07-29T15:51:28.071Z".
const layout = "2006-01-02T15:04:05.000Z"

// Format writes t as the API returns times: RFC 3339 in UTC with exactly three
// fractional digits, such as 2024-07-29T15:51:28.071Z. Anything finer than a
// millisecond is cut off, as ToMillis does, so a time read back from the
// database formats the same as before it was stored.
func Format(t time.Time) string {
	return t.UTC().Format(layout)
}

// Time is an instant in a response struct. It marshals to JSON as Format
// writes it, and the zero Time as null. IsZero lets a struct field tagged
// `json:",omitzero"` leave it out instead.
type Time struct {
	T time.Time
}

// MarshalJSON writes t as a quoted Format string, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.T.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, len(layout)+2)
	b = append(b, '"')
	b = t.T.UTC().AppendFormat(b, layout)
	return append(b, '"'), nil
}

// IsZero reports whether t holds no time.
func (t Time) IsZero() bool {
	return t.T.IsZero()
}

// String is t as the API writes it (pages print times with it).
func (t Time) String() string { return Format(t.T) }
