package aba

import (
	"fmt"
	"strings"
)

// becsPunctuation is the punctuation of the BECS character set, which with
// A-Z, 0-9 and space is what a text field may hold (zeptofs/aba and
// anam-hossain/aba agree on it; see the package comment).
const becsPunctuation = "!#$%&'()*+,-./:;=?@[]^_"

// becsSet names the set in a problem's text.
const becsSet = "A-Z, 0-9, space and " + becsPunctuation

// BECSProblem says what is wrong with s as the text of an ABA field (an
// account title, a remitter name), or "" when nothing is: the first
// character outside the BECS character set, once lower case is upper-cased
// as Write does. The rail calls it when a payout is created, so that a name
// the file cannot hold is refused there (422 naming the field) rather than
// mangled in the file. It does not judge length: Write cuts names to their
// fields.
func BECSProblem(s string) string {
	for _, r := range upper(s) {
		if !inBECS(r) {
			return fmt.Sprintf("must use only the BECS Direct Entry characters (%s; lower case is upper-cased): %q is not one", becsSet, r)
		}
	}
	return ""
}

func inBECS(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ' ' || strings.ContainsRune(becsPunctuation, r)
}

// upper upper-cases ASCII letters only: unicode.ToUpper would turn the
// dotless ı into I and let it through as if it had been typed so.
func upper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}
