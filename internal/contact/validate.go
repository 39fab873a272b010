package contact

import (
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"payd/internal/fault"
)

// Bounds of the text members (CONTRACT §3: every input has a bound), in
// characters.
const (
	maxEmailLen      = 254
	maxNameLen       = 100
	maxRegNoLen      = 64
	maxPhoneLen      = 32
	maxStreetLen     = 200
	maxCityLen       = 100
	maxPostalCodeLen = 16
	maxStateLen      = 100
	maxExternalIDLen = 64
)

// dateLayout is the spec's yyyy-mm-dd.
const dateLayout = "2006-01-02"

// text trims *v and checks it against the member's bounds: present when
// required, at most maxLen characters, valid UTF-8, one line without
// control characters.
func text(f fault.Fields, name string, v *string, maxLen int, required bool) {
	*v = strings.TrimSpace(*v)
	switch {
	case *v == "":
		if required {
			f.Add(name, "is required")
		}
	case !utf8.ValidString(*v):
		f.Add(name, "must be valid UTF-8 text")
	case utf8.RuneCountInString(*v) > maxLen:
		f.Add(name, fmt.Sprintf("is at most %d characters", maxLen))
	case strings.IndexFunc(*v, unicode.IsControl) >= 0:
		f.Add(name, "must not contain control characters or line breaks")
	}
}

// email checks an email address: one plain address (no display name) with
// a dotted domain, at most 254 characters.
func email(f fault.Fields, name string, v *string, required bool) {
	text(f, name, v, maxEmailLen, required)
	if *v == "" || f[name] != "" {
		return
	}
	if !validEmail(*v) {
		f.Add(name, "must be an email address such as jane@example.com")
	}
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndex(s, "@")
	local, domain := s[:at], s[at+1:]
	return len(local) <= 64 && strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// emailKey is the form an email is matched in: contacts and customers are
// found by email whatever its case.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// phone checks a phone number: an optional leading +, then 6 to 15 digits
// (E.164 allows 15), which may be grouped with spaces, hyphens or brackets.
func phone(f fault.Fields, name string, v *string) {
	text(f, name, v, maxPhoneLen, false)
	if *v == "" || f[name] != "" {
		return
	}
	digits, rest := 0, strings.TrimPrefix(*v, "+")
	for _, r := range rest {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '-' || r == '(' || r == ')':
		default:
			digits = -1000
		}
	}
	if digits < 6 || digits > 15 {
		f.Add(name, "must be a phone number of 6 to 15 digits, optionally starting with + (such as +61412345678)")
	}
}

// country checks an ISO 3166-1 alpha-2 code, accepted in either case and
// kept in upper case.
func country(f fault.Fields, name string, v *string, required bool) {
	text(f, name, v, 2, required)
	if *v == "" || f[name] != "" {
		return
	}
	*v = strings.ToUpper(*v)
	if !IsCountry(*v) {
		f.Add(name, "must be an ISO 3166-1 alpha-2 country code such as AU")
	}
}

// postalCode allows letters, digits, spaces and hyphens.
func postalCode(f fault.Fields, name string, v *string) {
	text(f, name, v, maxPostalCodeLen, false)
	if *v == "" || f[name] != "" {
		return
	}
	for _, r := range *v {
		if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || r == '-')) {
			f.Add(name, "may hold only letters, digits, spaces and hyphens")
			return
		}
	}
}

// date checks a yyyy-mm-dd date and returns it (the zero time when absent or wrong).
func date(f fault.Fields, name string, v *string, required bool) time.Time {
	text(f, name, v, len(dateLayout), required)
	if *v == "" || f[name] != "" {
		return time.Time{}
	}
	d, err := time.Parse(dateLayout, *v)
	if err != nil || d.Format(dateLayout) != *v {
		f.Add(name, "must be a date in the form yyyy-mm-dd")
		return time.Time{}
	}
	return d
}

// oneOf checks that *v, when given, is one of the allowed values.
func oneOf(f fault.Fields, name string, v *string, required bool, allowed ...string) {
	text(f, name, v, 32, required)
	if *v == "" || f[name] != "" {
		return
	}
	for _, a := range allowed {
		if *v == a {
			return
		}
	}
	f.Add(name, "must be "+orList(allowed))
}

func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// day is the calendar date of t (in UTC), for comparisons with yyyy-mm-dd dates.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
