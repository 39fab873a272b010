package bankfile

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/payfile"
	"payd/internal/payfile/aba"
)

// remitterLen is the ABA remitter name's width (CONTRACT §25: the
// merchant's name cut to 16).
const remitterLen = 16

// fitRemitter is the merchant's name as a file shows it as who paid. It is
// no recipient's name, which the rules refuse at creation rather than
// mangle (a name the format cannot hold fails its transfer at the cut-off,
// never the file): it is the merchant's own, which no payout can change,
// so a file writes it as the format can hold it: an ABA file in the BECS
// set, each character outside it a space, cut to its 16 characters; a
// pain.001 file cut to 140.
func fitRemitter(format payfile.Format, name string) string {
	switch format {
	case payfile.ABA:
		return fitABARemitter(name)
	case payfile.Pain001:
		return fitPain001Remitter(name)
	}
	return name
}

// pain001NameLen is a pain.001 name's width (Max140Text).
const pain001NameLen = 140

// fitPain001Remitter is name without control characters, cut to its 140
// characters (UltmtDbtr/Nm).
func fitPain001Remitter(name string) string {
	fitted := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, name)
	if utf8.RuneCountInString(fitted) > pain001NameLen {
		fitted = string([]rune(fitted)[:pain001NameLen])
	}
	return strings.TrimSpace(fitted)
}

// fitABARemitter is name in the BECS set, cut to the remitter's 16.
func fitABARemitter(name string) string {
	fitted := strings.Map(func(r rune) rune {
		if aba.BECSProblem(string(r)) != "" {
			return ' '
		}
		return r
	}, strings.ToUpper(name))
	fitted = strings.Join(strings.Fields(fitted), " ")
	if utf8.RuneCountInString(fitted) > remitterLen {
		fitted = strings.TrimSpace(string([]rune(fitted)[:remitterLen]))
	}
	if fitted == "" {
		return "PAYD"
	}
	return fitted
}
