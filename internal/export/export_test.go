package export

import "testing"

// TestTextEscapesFormulas: a text cell a spreadsheet would read as a
// formula gets a leading ' (CONTRACT §25); others are written as they are.
func TestTextEscapesFormulas(t *testing.T) {
	tests := []struct{ in, want string }{
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+61 400 000 000", "'+61 400 000 000"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"Jane = Doe", "Jane = Doe"},
		{"", ""},
		{"'quoted", "'quoted"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := text(tt.in); got != tt.want {
				t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
