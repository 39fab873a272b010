package zengin

import (
	"strings"
	"testing"
)

func TestHalfWidthName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want    string
		wantProblem string // a part of the refusal, when there is one
	}{
		{in: "ヤマダ　タロウ", want: "ﾔﾏﾀﾞ ﾀﾛｳ"},
		{in: "ﾔﾏﾀﾞ ﾀﾛｳ", want: "ﾔﾏﾀﾞ ﾀﾛｳ"},
		{in: "ガギグゲゴザジズゼゾダヂヅデドバビブベボ", want: "ｶﾞｷﾞｸﾞｹﾞｺﾞｻﾞｼﾞｽﾞｾﾞｿﾞﾀﾞﾁﾞﾂﾞﾃﾞﾄﾞﾊﾞﾋﾞﾌﾞﾍﾞﾎﾞ"},
		{in: "パピプペポヴ", want: "ﾊﾟﾋﾟﾌﾟﾍﾟﾎﾟｳﾞ"},
		{in: "キャノン", want: "ｷﾔﾉﾝ"},                           // small kana written full size
		{in: "ｷｬﾉﾝ", want: "ｷﾔﾉﾝ"},                           // half-width small kana too
		{in: "ァィゥェォッャュョヮヵヶ", want: "ｱｲｳｴｵﾂﾔﾕﾖﾜｶｹ"},           //
		{in: "ソニー", want: "ｿﾆ-"},                             // the prolonged sound mark as a hyphen
		{in: "ｿﾆｰ", want: "ｿﾆ-"},                             //
		{in: "ソニ－", want: "ｿﾆ-"},                             // the directory's full-width hyphen
		{in: "ＡＢＣ　ａｂｃ　０１２", want: "ABC ABC 012"},             // full-width Latin, lower case upper-cased
		{in: "abc xyz", want: "ABC XYZ"},                     //
		{in: "カ）ペイド", want: "ｶ)ﾍﾟｲﾄﾞ"},                       // company abbreviations
		{in: "（カ）．－", want: "(ｶ).-"},                         //
		{in: "カ\u3099", want: "ｶﾞ"},                          // a combining voicing mark
		{in: "ハ゜", want: "ﾊﾟ"},                               // a spacing one
		{in: "", want: ""},                                   // blankness is Write's to judge
		{in: "ヲ", wantProblem: `'ヲ' has no such form`},       // ｦ is EDI-only
		{in: "ヰヱ", wantProblem: `'ヰ' has no such form`},      //
		{in: "ジョン・スミス", wantProblem: `'・' has no such form`}, // write a space or a full stop
		{in: "やまだ", wantProblem: `'や' has no such form`},     // hiragana
		{in: "山田", wantProblem: `'山' has no such form`},      // kanji
		{in: "A/B", wantProblem: `'/' has no such form`},     // accepted by some banks only
		{in: "A,B", wantProblem: `',' has no such form`},     //
		{in: "「ア」", wantProblem: `'「' has no such form`},     //
		{in: "ｱﾞ", wantProblem: `'ﾞ' follows 'ｱ', which takes no such mark`},
		{in: "ﾞｱ", wantProblem: `'ﾞ' starts the name, with no kana to mark`},
		{in: "カ゜", wantProblem: `'ﾟ' follows 'ｶ'`},
		{in: "ｶﾞﾞ", wantProblem: `'ﾞ' follows 'ﾞ'`},
		{in: "ヷ", wantProblem: `'ヷ' has no such form`},
	}
	for _, tt := range tests {
		got, err := HalfWidthName(tt.in)
		if tt.wantProblem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantProblem) || KanaProblem(tt.in) != err.Error() {
				t.Errorf("HalfWidthName(%q) = %q, %v; want a refusal containing %q (and KanaProblem the same)", tt.in, got, err, tt.wantProblem)
			}
			continue
		}
		if err != nil || got != tt.want || KanaProblem(tt.in) != "" {
			t.Errorf("HalfWidthName(%q) = %q, %v; want %q (and no KanaProblem)", tt.in, got, err, tt.want)
		}
	}
	if p := KanaProblem("ヰ"); !strings.HasPrefix(p, "must be a name a Zengin transfer can carry (half-width katakana ｱ-ﾝ with ﾞ and ﾟ, A-Z, 0-9, space and ( ) - .)") {
		t.Errorf("the problem does not name the set: %q", p)
	}
}

// TestHalfWidthKana: width only, as package bank has always had it.
func TestHalfWidthKana(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ガギグゲゴ":     "ｶﾞｷﾞｸﾞｹﾞｺﾞ",
		"パピプペポヴ":    "ﾊﾟﾋﾟﾌﾟﾍﾟﾎﾟｳﾞ",
		"ＡＢＣ．－（）　ア": "ABC.-() ｱ",
		"キャノン・ソニー":  "ｷｬﾉﾝ･ｿﾆｰ",
		"みずほ":       "みずほ",
	} {
		if got := HalfWidthKana(in); got != want {
			t.Errorf("HalfWidthKana(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"ﾔﾏﾀﾞ", 4, "ﾔﾏﾀﾞ"},
		{"ﾔﾏﾀﾞ", 5, "ﾔﾏﾀﾞ"},
		{"ﾔﾏﾀﾞ", 3, "ﾔﾏ"}, // not ﾔﾏﾀ, another name
		{"ﾔﾏﾀﾞ", 2, "ﾔﾏ"},
		{"ﾊﾟﾝ", 1, ""},
		{"ABCD", 3, "ABC"},
	}
	for _, tt := range tests {
		if got := cut(tt.in, tt.width); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}
