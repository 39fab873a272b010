package iso20022

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestNameProblem checks the rule payout creation applies to a recipient's
// name on a pain001 rail: what WritePain001 would refuse in Cdtr/Nm.
func TestNameProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want string
	}{
		{"JANE CITIZEN", ""},
		{"Ōrītetanga Café & Co", ""},
		{"ﾔﾏﾀﾞ ﾀﾛｳ", ""},
		{strings.Repeat("é", 140), ""},
		{strings.Repeat("é", 141), "must be at most 140 characters (got 141)"},
		{"", "must not be empty"},
		{"JANE\tCITIZEN", "must not hold U+0009 (a control character or one XML cannot carry)"},
		{"JANE\u0085", "must not hold U+0085 (a control character or one XML cannot carry)"},
		{"JANE\xff", "must be UTF-8"},
	}
	for _, tt := range tests {
		if got := NameProblem(tt.name); got != tt.want {
			t.Errorf("NameProblem(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestDescriptionProblem checks the rule on a description (RmtInf/Ustrd):
// 140 characters, tab, CR and LF allowed, empty left out.
func TestDescriptionProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		description string
		want        string
	}{
		{"Invoice 1042", ""},
		{"Payout\r\nsecond line\tend", ""},
		{"", ""},
		{strings.Repeat("d", 140), ""},
		{strings.Repeat("d", 141), "must be at most 140 characters (got 141)"},
		{"ring\a", "must not hold U+0007 (a control character or one XML cannot carry)"},
	}
	for _, tt := range tests {
		if got := DescriptionProblem(tt.description); got != tt.want {
			t.Errorf("DescriptionProblem(%q) = %q, want %q", tt.description, got, tt.want)
		}
	}
}

// TestProblemsAgreeWithWritePain001 checks that NameProblem and
// DescriptionProblem refuse exactly what WritePain001 refuses in a
// creditor's name and description, for any string at all.
func TestProblemsAgreeWithWritePain001(t *testing.T) {
	t.Parallel()
	base := audFile(t)
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringN(130, 150, -1), textGen(max140Text, true)).Draw(rt, "s")
		f := base
		f.Credits = slices.Clone(base.Credits)
		f.Credits[0].Name = s
		if _, err := WritePain001(f); (err == nil) != (NameProblem(s) == "") {
			rt.Fatalf("NameProblem(%q) = %q, WritePain001 = %v", s, NameProblem(s), err)
		}
		f.Credits[0].Name = base.Credits[0].Name
		f.Credits[0].Description = s
		if _, err := WritePain001(f); (err == nil) != (DescriptionProblem(s) == "") {
			rt.Fatalf("DescriptionProblem(%q) = %q, WritePain001 = %v", s, DescriptionProblem(s), err)
		}
	})
}
