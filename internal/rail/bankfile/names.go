package bankfile

import (
	"strings"
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
// so an ABA file writes it in the BECS set, each character outside it a
// space, cut to its 16 characters.
func fitRemitter(format payfile.Format, name string) string {
	if format != payfile.ABA {
		return name
	}
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
