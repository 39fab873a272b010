package clock

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests must not depend on the machine's zoneinfo

	"pgregory.net/rapid"
)

// utc is a shorthand for a time in UTC.
func utc(year int, month time.Month, day, hour, minute, second, nanos int) time.Time {
	return time.Date(year, month, day, hour, minute, second, nanos, time.UTC)
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want time.Time
	}{
		{"response form", "2024-07-29T15:51:28.071Z", july29},
		{"no fraction", "2024-07-29T15:51:28Z", utc(2024, 7, 29, 15, 51, 28, 0)},
		{"one fractional digit", "2024-07-29T15:51:28.5Z", utc(2024, 7, 29, 15, 51, 28, 500_000_000)},
		{"nine fractional digits", "2024-07-29T15:51:28.123456789Z", utc(2024, 7, 29, 15, 51, 28, 123_456_789)},
		{"offset with colon", "2024-07-30T01:51:28.071+10:00", july29},
		{"negative offset with colon", "2024-07-29T10:51:28.071-05:00", july29},
		{"offset without colon", "2024-12-31T23:59:59.000+0000", utc(2024, 12, 31, 23, 59, 59, 0)},
		{"half-hour offset without colon", "2024-07-29T21:21:28.071+0530", july29},
		{"negative offset without colon", "2024-07-29T12:21:28.071-0330", july29},
		{"minus zero offset", "2024-07-29T15:51:28.071-00:00", july29},
		{"no offset is UTC", "2024-12-31T23:59:59", utc(2024, 12, 31, 23, 59, 59, 0)},
		{"no offset with fraction", "2024-12-31T23:59:59.25", utc(2024, 12, 31, 23, 59, 59, 250_000_000)},
		{"offset crosses the year", "2025-01-01T09:00:00+10:00", utc(2024, 12, 31, 23, 0, 0, 0)},
		{"leap day", "2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0, 0)},
		{"largest offset", "2024-07-29T23:59:00+23:59", utc(2024, 7, 29, 0, 0, 0, 0)},
		{"year 0000", "0000-01-01T00:00:00Z", utc(0, 1, 1, 0, 0, 0, 0)},
		{"year 9999", "9999-12-31T23:59:59.999Z", utc(9999, 12, 31, 23, 59, 59, 999_000_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.text)
			if !got.Equal(tt.want) || got.Location() != time.UTC || err != nil {
				t.Errorf("Parse(%q) = %v, %v; want %v in UTC, nil", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
	}{
		{"empty", ""},
		{"bare date", "2024-07-29"},
		{"bare date DD/MM/YY", "29/07/24"},
		{"space for T", "2024-07-29 15:51:28Z"},
		{"lower-case t", "2024-07-29t15:51:28Z"},
		{"lower-case z", "2024-07-29T15:51:28z"},
		{"no seconds", "2024-07-29T15:51Z"},
		{"no minutes", "2024-07-29T15Z"},
		{"one-digit month", "2024-7-29T15:51:28Z"},
		{"two-digit year", "24-07-29T15:51:28Z"},
		{"five-digit year", "12024-07-29T15:51:28Z"},
		{"point without digits", "2024-07-29T15:51:28.Z"},
		{"ten fractional digits", "2024-07-29T15:51:28.1234567890Z"},
		{"comma for point", "2024-07-29T15:51:28,071Z"},
		{"hour-only offset", "2024-07-29T15:51:28+10"},
		{"short offset", "2024-07-29T15:51:28+100"},
		{"offset minutes out of range", "2024-07-29T15:51:28+10:60"},
		{"offset hours out of range", "2024-07-29T15:51:28+24:00"},
		{"double colon offset", "2024-07-29T15:51:28+10::00"},
		{"named zone", "2024-07-29T15:51:28 UTC"},
		{"zone after Z", "2024-07-29T15:51:28Z+00:00"},
		{"trailing text", "2024-07-29T15:51:28Zjunk"},
		{"leading space", " 2024-07-29T15:51:28Z"},
		{"trailing space", "2024-07-29T15:51:28Z "},
		{"month 13", "2024-13-01T00:00:00Z"},
		{"month 0", "2024-00-01T00:00:00Z"},
		{"day 0", "2024-01-00T00:00:00Z"},
		{"February 30", "2024-02-30T00:00:00Z"},
		{"February 29 in a common year", "2023-02-29T00:00:00Z"},
		{"April 31", "2024-04-31T00:00:00Z"},
		{"hour 24", "2024-07-29T24:00:00Z"},
		{"minute 60", "2024-07-29T15:60:00Z"},
		{"leap second", "2016-12-31T23:59:60Z"},
		{"before year 0000 in UTC", "0000-01-01T00:00:00+01:00"},
		{"after year 9999 in UTC", "9999-12-31T23:59:59-01:00"},
		{"sign in year", "+2024-07-29T15:51:28Z"},
		{"Unix seconds", "1722268288"},
		{"RFC 1123", "Mon, 29 Jul 2024 15:51:28 GMT"},
		{"too long", "2024-07-29T15:51:28.071Z" + strings.Repeat(" ", 41)},
		{"non-ASCII digits", "２０２４-07-29T15:51:28Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.text)
			var perr *ParseError
			if !got.IsZero() || !errors.As(err, &perr) {
				t.Errorf("Parse(%q) = %v, %v; want a *ParseError", tt.text, got, err)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		parse func() error
		want  string
	}{
		{
			"time",
			func() error { _, err := Parse("yesterday"); return err },
			`"yesterday" is not a valid time; use RFC 3339, e.g. 2024-07-29T15:51:28.071Z`,
		},
		{
			"date",
			func() error { _, err := ParseDate("2024-02-30", nil); return err },
			`"2024-02-30" is not a valid date or time; use YYYY-MM-DD, DD/MM/YY or RFC 3339, e.g. 2024-07-29 or 2024-07-29T15:51:28.071Z`,
		},
		{
			"long text is cut",
			func() error { _, err := Parse(strings.Repeat("x", 100)); return err },
			`"` + strings.Repeat("x", 64) + `..." is not a valid time; use RFC 3339, e.g. 2024-07-29T15:51:28.071Z`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.parse().Error()
			if got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	sydney := mustLoad(t, "Australia/Sydney")
	santiago := mustLoad(t, "America/Santiago")
	havana := mustLoad(t, "America/Havana")
	tests := []struct {
		name      string
		text      string
		loc       *time.Location
		wantStart time.Time
		wantEnd   time.Time
	}{
		{"ISO date in UTC", "2024-12-31", nil, utc(2024, 12, 31, 0, 0, 0, 0), utc(2025, 1, 1, 0, 0, 0, 0)},
		{"DD/MM/YY in UTC", "31/12/24", time.UTC, utc(2024, 12, 31, 0, 0, 0, 0), utc(2025, 1, 1, 0, 0, 0, 0)},
		{"two-digit year 00", "01/01/00", nil, utc(2000, 1, 1, 0, 0, 0, 0), utc(2000, 1, 2, 0, 0, 0, 0)},
		{"two-digit year 99", "31/12/99", nil, utc(2099, 12, 31, 0, 0, 0, 0), utc(2100, 1, 1, 0, 0, 0, 0)},
		{"leap day", "29/02/24", nil, utc(2024, 2, 29, 0, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0, 0)},
		{"end of month", "2024-04-30", nil, utc(2024, 4, 30, 0, 0, 0, 0), utc(2024, 5, 1, 0, 0, 0, 0)},
		{"Sydney summer", "2024-12-31", sydney, utc(2024, 12, 30, 13, 0, 0, 0), utc(2024, 12, 31, 13, 0, 0, 0)},
		{"Sydney winter", "15/07/24", sydney, utc(2024, 7, 14, 14, 0, 0, 0), utc(2024, 7, 15, 14, 0, 0, 0)},
		{"Sydney 23-hour day", "2024-10-06", sydney, utc(2024, 10, 5, 14, 0, 0, 0), utc(2024, 10, 6, 13, 0, 0, 0)},
		{"Sydney 25-hour day", "2024-04-07", sydney, utc(2024, 4, 6, 13, 0, 0, 0), utc(2024, 4, 7, 14, 0, 0, 0)},
		// In Santiago and Havana clocks jump from 00:00 to 01:00, so those
		// days start at 01:00 local time.
		{"Santiago day without midnight", "2024-09-08", santiago, utc(2024, 9, 8, 4, 0, 0, 0), utc(2024, 9, 9, 3, 0, 0, 0)},
		{"Santiago day before", "2024-09-07", santiago, utc(2024, 9, 7, 4, 0, 0, 0), utc(2024, 9, 8, 4, 0, 0, 0)},
		{"Havana day without midnight", "2024-03-10", havana, utc(2024, 3, 10, 5, 0, 0, 0), utc(2024, 3, 11, 4, 0, 0, 0)},
		// Full times are instants, whatever loc says; the end bound includes
		// the named millisecond.
		{"full time", "2024-07-29T15:51:28.071Z", sydney, july29, july29.Add(time.Millisecond)},
		{"full time without offset", "2024-12-31T23:59:59", sydney, utc(2024, 12, 31, 23, 59, 59, 0), utc(2024, 12, 31, 23, 59, 59, 1_000_000)},
		{"last millisecond of the day", "2024-12-31T23:59:59.999Z", nil, utc(2024, 12, 31, 23, 59, 59, 999_000_000), utc(2025, 1, 1, 0, 0, 0, 0)},
		{"sub-millisecond end", "2024-12-31T23:59:59.9995Z", nil, utc(2024, 12, 31, 23, 59, 59, 999_500_000), utc(2025, 1, 1, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotStart, errStart := ParseDate(tt.text, tt.loc)
			gotEnd, errEnd := ParseDateEnd(tt.text, tt.loc)
			if !gotStart.Equal(tt.wantStart) || gotStart.Location() != time.UTC || errStart != nil {
				t.Errorf("ParseDate(%q) = %v, %v; want %v in UTC, nil", tt.text, gotStart, errStart, tt.wantStart)
			}
			if !gotEnd.Equal(tt.wantEnd) || gotEnd.Location() != time.UTC || errEnd != nil {
				t.Errorf("ParseDateEnd(%q) = %v, %v; want %v in UTC, nil", tt.text, gotEnd, errEnd, tt.wantEnd)
			}
		})
	}
}

func TestParseDateRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
	}{
		{"February 30", "2024-02-30"},
		{"April 31 as DD/MM/YY", "31/04/24"},
		{"February 29 in a common year", "2023-02-29"},
		{"February 29 in a common year as DD/MM/YY", "29/02/23"},
		{"month 13", "2024-13-01"},
		{"day 0", "00/01/24"},
		{"one-digit parts", "1/1/24"},
		{"one-digit ISO parts", "2024-1-1"},
		{"slashes in ISO order", "2024/01/01"},
		{"four-digit year with slashes", "01/01/2024"},
		{"dashes in DD-MM-YYYY", "01-01-2024"},
		{"MM/DD/YY with month 13", "12/13/24"},
		{"dots", "31.12.24"},
		{"empty", ""},
		{"words", "today"},
		{"bad full time", "2024-02-30T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotStart, errStart := ParseDate(tt.text, nil)
			gotEnd, errEnd := ParseDateEnd(tt.text, nil)
			var perrStart, perrEnd *ParseError
			if !gotStart.IsZero() || !errors.As(errStart, &perrStart) || !perrStart.Date {
				t.Errorf("ParseDate(%q) = %v, %v; want a date *ParseError", tt.text, gotStart, errStart)
			}
			if !gotEnd.IsZero() || !errors.As(errEnd, &perrEnd) || !perrEnd.Date {
				t.Errorf("ParseDateEnd(%q) = %v, %v; want a date *ParseError", tt.text, gotEnd, errEnd)
			}
		})
	}
}

func TestInputUnmarshal(t *testing.T) {
	t.Parallel()
	type request struct {
		ExpiresAt Input `json:"expires_at"`
	}
	tests := []struct {
		name string
		body string
		want Input
	}{
		{"RFC 3339", `{"expires_at": "2024-07-29T15:51:28.071Z"}`, Input{T: july29, Set: true}},
		{"offset without colon", `{"expires_at": "2024-07-30T01:51:28.071+1000"}`, Input{T: july29, Set: true}},
		{"null", `{"expires_at": null}`, Input{}},
		{"absent", `{}`, Input{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got request
			err := json.Unmarshal([]byte(tt.body), &got)
			if !got.ExpiresAt.T.Equal(tt.want.T) || got.ExpiresAt.Set != tt.want.Set || err != nil {
				t.Errorf("json.Unmarshal(%s) = %+v, %v; want %+v, nil", tt.body, got.ExpiresAt, err, tt.want)
			}
		})
	}
}

func TestInputUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	type request struct {
		ExpiresAt Input `json:"expires_at"`
	}
	tests := []struct {
		name        string
		body        string
		wantNotStr  bool
		wantInvalid bool
	}{
		{"number", `{"expires_at": 1722268288071}`, true, false},
		{"true", `{"expires_at": true}`, true, false},
		{"object", `{"expires_at": {}}`, true, false},
		{"array", `{"expires_at": ["2024-07-29T15:51:28Z"]}`, true, false},
		{"bad string", `{"expires_at": "tomorrow"}`, false, true},
		{"bare date", `{"expires_at": "2024-07-29"}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got request
			err := json.Unmarshal([]byte(tt.body), &got)
			var typeErr *json.UnmarshalTypeError
			if !errors.As(err, &typeErr) || typeErr.Field != "expires_at" || got.ExpiresAt.Set {
				t.Errorf("json.Unmarshal(%s) = %+v, %v; want a type error naming expires_at", tt.body, got.ExpiresAt, err)
			}
		})
	}
}

// TestFormatParseRoundTrip checks that any instant from year 0001 to 9998,
// formatted for a response, parses back to itself cut to the millisecond, and
// that the same instant written in any fixed offset, with or without a colon
// or fraction, parses to the same instant.
func TestFormatParseRoundTrip(t *testing.T) {
	t.Parallel()
	lo := utc(1, 1, 1, 0, 0, 0, 0).Unix()
	hi := utc(9998, 12, 31, 23, 59, 59, 0).Unix()
	layouts := []string{
		"2006-01-02T15:04:05.000000000-07:00",
		"2006-01-02T15:04:05.999999999-0700",
		"2006-01-02T15:04:05.000000000Z07:00",
	}
	rapid.Check(t, func(t *rapid.T) {
		sec := rapid.Int64Range(lo, hi).Draw(t, "unixSeconds")
		nanos := rapid.Int64Range(0, 999_999_999).Draw(t, "nanos")
		instant := time.Unix(sec, nanos).UTC()

		text := Format(instant)
		got, err := Parse(text)
		want := instant.Truncate(time.Millisecond)
		if !got.Equal(want) || err != nil {
			t.Fatalf("Parse(Format(%v)) = Parse(%q) = %v, %v; want %v", instant, text, got, err, want)
		}

		minutes := rapid.IntRange(-(23*60+59), 23*60+59).Draw(t, "offsetMinutes")
		layout := rapid.SampledFrom(layouts).Draw(t, "layout")
		text = instant.In(time.FixedZone("", minutes*60)).Format(layout)
		got, err = Parse(text)
		if !got.Equal(instant) || err != nil {
			t.Fatalf("Parse(%q) = %v, %v; want %v", text, got, err, instant)
		}
	})
}

// FuzzParse checks that Parse never panics, that what it accepts is in UTC and
// formats to text that parses back to the same millisecond, that RFC 3339 text
// it accepts means the same to time.Parse, and that the date parsers accept
// every time Parse accepts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"2024-07-29T15:51:28.071Z", "2024-12-31T23:59:59.000+0000", "2024-07-29T21:21:28.071+0530",
		"2024-12-31T23:59:59", "2024-07-30T01:51:28.071+10:00", "2024-02-30T00:00:00Z",
		"2016-12-31T23:59:60Z", "0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
		"2024-07-29T15:51:28.123456789Z", "2024-07-29T15:51:28.1234567890Z", "2024-07-29",
		"31/04/24", "29/02/24", "", "2024-07-29 15:51:28Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseDate(s, nil)
		_, _ = ParseDateEnd(s, time.FixedZone("", 13*3600))
		got, err := Parse(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("Parse(%q) = %v, not in UTC", s, got)
		}
		again, err := Parse(Format(got))
		if !again.Equal(got.Truncate(time.Millisecond)) || err != nil {
			t.Fatalf("Parse(Format(Parse(%q))) = %v, %v; want %v", s, again, err, got.Truncate(time.Millisecond))
		}
		start, err := ParseDate(s, nil)
		if !start.Equal(got) || err != nil {
			t.Fatalf("ParseDate(%q) = %v, %v; Parse gave %v", s, start, err, got)
		}
		if !hasRFC3339Zone(s) {
			return
		}
		std, err := time.Parse(time.RFC3339Nano, s)
		if !std.Equal(got) || err != nil {
			t.Fatalf("Parse(%q) = %v, but time.Parse gives %v, %v", s, got, std, err)
		}
	})
}

// hasRFC3339Zone reports whether s ends in Z or a ±hh:mm offset, the zones
// time.RFC3339 accepts.
func hasRFC3339Zone(s string) bool {
	n := len(s)
	return strings.HasSuffix(s, "Z") || n >= 6 && s[n-3] == ':' && (s[n-6] == '+' || s[n-6] == '-')
}
