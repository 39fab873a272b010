package aba

import (
	"strings"
	"testing"
)

func TestBECSProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          string
		wantProblem string // "" when s is fine; else a part of the problem
	}{
		{"JANE CITIZEN", ""},
		{"jane citizen", ""}, // upper-cased in the file
		{"O'BRIEN & SONS (AUST) PTY. LTD., NO 1", ""},
		{"!#$%&'()*+,-./:;=?@[]^_", ""},
		{"0123456789", ""},
		{"", ""}, // length and blankness are Write's to judge
		{"José", `'é' is not one`},
		{"ıSTANBUL", `'ı' is not one`}, // not upper-cased into I
		{"ＡＢＣ", `'Ａ' is not one`},
		{"TAB\tHERE", `'\t' is not one`},
		{`A"B`, `'"' is not one`},
		{"A<B>", `'<' is not one`},
		{`A\B`, `'\\' is not one`},
		{"A{B}", `'{' is not one`},
		{"A|B", `'|' is not one`},
		{"A~B", `'~' is not one`},
		{"A`B", "'`' is not one"},
		{"山田", `'山' is not one`},
	}
	for _, tt := range tests {
		got := BECSProblem(tt.in)
		if (tt.wantProblem == "") != (got == "") || !strings.Contains(got, tt.wantProblem) {
			t.Errorf("BECSProblem(%q) = %q, want %q", tt.in, got, tt.wantProblem)
		}
	}
	if got := BECSProblem("é"); !strings.HasPrefix(got, "must use only the BECS Direct Entry characters (A-Z, 0-9, space and !#$%&'()*+,-./:;=?@[]^_") {
		t.Errorf("the problem does not name the set: %q", got)
	}
}
