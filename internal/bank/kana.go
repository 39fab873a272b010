package bank

import "strings"

// halfWidth maps the full-width characters of Zengin names to the half-width
// forms Zengin transfers use; a voiced or semi-voiced kana becomes its base
// kana and a separate mark (ガ → ｶﾞ).
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
// digits and the marks of Zengin names (－ ． （ ） ／ and the ideographic
// space) to their half-width forms; other characters are kept.
func HalfWidthKana(s string) string {
	var b strings.Builder
	for _, r := range s {
		if h, ok := halfWidth[r]; ok {
			b.WriteString(h)
			continue
		}
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII block
			b.WriteRune(r - 0xFF01 + '!')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
