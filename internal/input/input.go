// Package input holds the rule every piece of text a request carries meets,
// wherever it is read (JSON bodies, query strings, forms, multipart fields,
// CSV cells): it is UTF-8 and holds no C0 control character, tab, CR and LF
// aside in free text (CONTRACT §24, §25). PostgreSQL refuses a NUL or a
// broken UTF-8 sequence in any text column (SQLSTATE 22021), so text that
// breaks the rule must be refused before it reaches a statement, with a 422
// that names the member, on every database alike.
package input

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"payd/internal/fault"
)

// FreeText are the members whose text may hold tab, CR and LF (CONTRACT §25):
// people's words, which may run over lines.
var FreeText = []string{"description", "remarks", "reason",
	// a card dispute's evidence (package dispute)
	"product_description", "customer_communication", "refund_policy", "uncategorized_text"}

// Problem says what is wrong with s as the value of member name (a path such
// as payout_transaction_details[0].description: its last name decides whether
// line breaks are allowed), or "" when nothing is.
func Problem(name, s string) string {
	return problem(s, allowsLineBreaks(name))
}

// Check is Problem as a 422 VALIDATION_FAILED naming name, or nil.
func Check(name, s string) error {
	if p := Problem(name, s); p != "" {
		return fault.Field(name, p)
	}
	return nil
}

func problem(s string, lineBreaks bool) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 {
			continue
		}
		if lineBreaks && (c == '\t' || c == '\r' || c == '\n') {
			continue
		}
		return fmt.Sprintf("must not contain control characters (U+%04X at byte %d)", c, i)
	}
	if !utf8.ValidString(s) {
		return "must be UTF-8 text"
	}
	return ""
}

// allowsLineBreaks reports whether the member a path ends in is free text.
func allowsLineBreaks(path string) bool {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	for _, m := range FreeText {
		if path == m {
			return true
		}
	}
	return false
}

// Values checks every name and value of a query string or form (url.Values),
// in name order so that the answer is the same each time. multiline names
// the members a form may carry over several lines besides FreeText (a
// textarea of one entry a line).
func Values(v url.Values, multiline ...string) error {
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names)
	f := fault.Fields{}
	for _, k := range names {
		if p := problem(k, false); p != "" {
			f.Add(Quote(k), "is a parameter name that "+p)
			continue
		}
		lineBreaks := allowsLineBreaks(k)
		for _, m := range multiline {
			lineBreaks = lineBreaks || k == m
		}
		for _, s := range v[k] {
			if p := problem(s, lineBreaks); p != "" {
				f.Add(k, p)
				break
			}
		}
	}
	return f.Err()
}

// Quote names a member whose own name breaks the rule, escaped so that the
// answer and the log carry no control character.
func Quote(name string) string {
	q := fmt.Sprintf("%+q", name)
	return q[1 : len(q)-1]
}
