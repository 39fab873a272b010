package zengin

import (
	"fmt"
	"strings"
)

// halfWidth maps the full-width characters of Japanese names to the
// half-width forms Zengin transfers use; a voiced or semi-voiced kana becomes
// its base kana and a separate mark (ガ → ｶﾞ).
var halfWidth = func() map[rune]string {
	m := map[rune]string{}
	plain := []struct{ full, half string }{
		{"アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン",
			"ｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜｦﾝ"},
		{"ァィゥェォッャュョー。「」、・", "ｧｨｩｪｫｯｬｭｮｰ｡｢｣､･"},
	}
	for _, p := range plain {
		h := []rune(p.half)
		for i, r := range []rune(p.full) {
			m[r] = string(h[i])
		}
	}
	voiced := []struct{ full, base string }{
		{"ガギグゲゴザジズゼゾダヂヅデドバビブベボ", "ｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾊﾋﾌﾍﾎ"},
	}
	for _, v := range voiced {
		b := []rune(v.base)
		for i, r := range []rune(v.full) {
			m[r] = string(b[i]) + "ﾞ"
		}
	}
	semi := []rune("ハヒフヘホ")
	for i, r := range []rune("パピプペポ") {
		m[r] = m[semi[i]] + "ﾟ"
	}
	m['ヴ'] = "ｳﾞ"
	m['　'] = " "
	return m
}()

// HalfWidthKana converts full-width katakana, full-width Latin letters,
// digits and the marks of Japanese names (－ ． （ ） ／ and the ideographic
// space) to their half-width forms; other characters are kept. It changes
// only width: the bank directory's names, which are already what Zengin
// files carry, pass through it (package bank uses it). HalfWidthName is the
// stricter form a Zengin name field holds.
func HalfWidthKana(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(halfWidthRune(r))
	}
	return b.String()
}

func halfWidthRune(r rune) string {
	if h, ok := halfWidth[r]; ok {
		return h
	}
	if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII block
		return string(r - 0xFF01 + '!')
	}
	return string(r)
}

// zenginForm maps what HalfWidthKana leaves and a Zengin name may not hold
// to what the standard writes instead: small kana full size (キャノン is
// ｷﾔﾉﾝ), the prolonged sound mark as a hyphen, loose voicing marks as the
// half-width ones, and lower-case letters upper case.
var zenginForm = func() map[rune]rune {
	m := map[rune]rune{}
	small, full := []rune("ｧｨｩｪｫｯｬｭｮヮヵヶ"), []rune("ｱｲｳｴｵﾂﾔﾕﾖﾜｶｹ")
	for i, r := range small {
		m[r] = full[i]
	}
	for _, r := range "ｰ‐" { // ー (after HalfWidthKana) and the Unicode hyphen
		m[r] = '-'
	}
	for _, r := range "゛\u3099" {
		m[r] = 'ﾞ'
	}
	for _, r := range "゜\u309A" {
		m[r] = 'ﾟ'
	}
	for r := 'a'; r <= 'z'; r++ {
		m[r] = r - 'a' + 'A'
	}
	return m
}()

// nameSymbols are the marks a Zengin name may hold besides kana, A-Z, 0-9
// and space (the JBA's 使用文字, as zengin4j's PARTY_NAME class and bank
// guides agree on them; "/" and "," are accepted by some banks only).
const nameSymbols = " ()-."

// The bases a voicing mark may follow.
const (
	takesVoiced     = "ｳｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾊﾋﾌﾍﾎ"
	takesSemiVoiced = "ﾊﾋﾌﾍﾎ"
)

// nameSet names what a name may hold in a problem's text.
const nameSet = "half-width katakana ｱ-ﾝ with ﾞ and ﾟ, A-Z, 0-9, space and ( ) - ."

// HalfWidthName is s as a Zengin name field (受取人名, 依頼人名, a bank or
// branch name) holds it: full-width katakana, Latin letters and digits made
// half-width (ガ → ｶﾞ), small kana written full size, the prolonged sound
// mark as a hyphen, lower case upper-cased. It refuses, naming the first, a
// character with no such form: hiragana and kanji, ヲ, ヰ, ヱ, ・, other
// symbols, or a voicing mark after a kana that takes none.
func HalfWidthName(s string) (string, error) {
	var b strings.Builder
	var prev rune
	for _, r := range s {
		for _, h := range halfWidthRune(r) {
			if z, ok := zenginForm[h]; ok {
				h = z
			}
			if problem := nameRuneProblem(r, h, prev); problem != "" {
				return "", fmt.Errorf("must be a name a Zengin transfer can carry (%s): %s", nameSet, problem)
			}
			b.WriteRune(h)
			prev = h
		}
	}
	return b.String(), nil
}

// nameRuneProblem is what is wrong with h, the half-width form of r, after
// prev.
func nameRuneProblem(r, h, prev rune) string {
	switch {
	case (h == 'ﾞ' || h == 'ﾟ') && prev == 0:
		return fmt.Sprintf("%q starts the name, with no kana to mark", h)
	case h == 'ﾞ' && !strings.ContainsRune(takesVoiced, prev), h == 'ﾟ' && !strings.ContainsRune(takesSemiVoiced, prev):
		return fmt.Sprintf("%q follows %q, which takes no such mark", h, prev)
	case h == 'ﾞ' || h == 'ﾟ':
		return ""
	case h >= 'ｱ' && h <= 'ﾝ', h >= 'A' && h <= 'Z', h >= '0' && h <= '9', strings.ContainsRune(nameSymbols, h):
		return ""
	}
	return fmt.Sprintf("%q has no such form", r)
}

// KanaProblem says what is wrong with s as a Zengin name, or "" when
// nothing is: HalfWidthName's refusal. The rail calls it when a payout is
// created, so that a recipient name the file cannot hold is refused there
// (422 naming the field). It does not judge length: Write cuts names to
// their fields.
func KanaProblem(s string) string {
	if _, err := HalfWidthName(s); err != nil {
		return err.Error()
	}
	return ""
}

// cut is name (half-width, one character a byte) cut to width characters,
// never between a kana and its voicing mark: cutting ｶﾞ after ｶ would leave a
// different kana, so the kana goes too.
func cut(name string, width int) string {
	r := []rune(name)
	if len(r) <= width {
		return name
	}
	n := width
	if r[n] == 'ﾞ' || r[n] == 'ﾟ' {
		n--
	}
	return string(r[:n])
}
