package aba

import (
	"errors"
	"strings"
	"testing"

	"payd/internal/payfile"
)

// TestWriteRefuses: what the file cannot hold is refused, naming the credit
// and the field, and nothing is written.
func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		change      func(f *payfile.File)
		wantCredit  int
		wantField   string
		wantProblem string
	}{
		{"amount over the field", func(f *payfile.File) { f.Credits[1].AmountMinor = 10_000_000_000 }, 1, "AmountMinor", "must be 1 to 9999999999 cents"},
		{"amount zero", func(f *payfile.File) { f.Credits[0].AmountMinor = 0 }, 0, "AmountMinor", "must be 1 to"},
		{"amount negative", func(f *payfile.File) { f.Credits[0].AmountMinor = -5 }, 0, "AmountMinor", "must be 1 to"},
		{"total over the field", func(f *payfile.File) {
			f.Credits[0].AmountMinor, f.Credits[1].AmountMinor = 9_999_999_999, 1
		}, -1, "Credits", "must total at most 9999999999 cents"},
		{"name outside the BECS set", func(f *payfile.File) { f.Credits[1].Name = "José Núñez" }, 1, "Name", `'é' is not one`},
		{"name with a backslash", func(f *payfile.File) { f.Credits[0].Name = `A\B` }, 0, "Name", `'\\' is not one`},
		{"name with a double quote", func(f *payfile.File) { f.Credits[0].Name = `"ACME"` }, 0, "Name", `'"' is not one`},
		{"name blank", func(f *payfile.File) { f.Credits[0].Name = "   " }, 0, "Name", "must not be blank"},
		{"remitter outside the BECS set", func(f *payfile.File) { f.Credits[0].Remitter = "Café ☕" }, 0, "Remitter", `'é' is not one`},
		{"remitter empty", func(f *payfile.File) { f.Credits[0].Remitter = "" }, 0, "Remitter", "must not be blank"},
		{"account over 9 digits", func(f *payfile.File) { f.Credits[1].Account = "1234567890" }, 1, "Account", "must be 1 to 9 digits"},
		{"account with a hyphen", func(f *payfile.File) { f.Credits[1].Account = "12-3456" }, 1, "Account", "must be 1 to 9 digits"},
		{"account all zeros", func(f *payfile.File) { f.Credits[1].Account = "0000" }, 1, "Account", "not all zeros"},
		{"account empty", func(f *payfile.File) { f.Credits[1].Account = "" }, 1, "Account", "must be 1 to 9 digits"},
		{"BSB without its hyphen", func(f *payfile.File) { f.Credits[0].BSB = "032001" }, 0, "BSB", `must be nnn-nnn (got "032001")`},
		{"BSB short", func(f *payfile.File) { f.Credits[0].BSB = "32-001" }, 0, "BSB", "must be nnn-nnn"},
		{"a PayID", func(f *payfile.File) { f.Credits[0].PayID = "jane@example.com" }, 0, "PayID", "cannot be paid by an ABA file"},
		{"bank reference over 18", func(f *payfile.File) { f.Credits[0].BankReference = strings.Repeat("A", 19) }, 0, "BankReference", "at most 18"},
		{"bank reference empty", func(f *payfile.File) { f.Credits[0].BankReference = "" }, 0, "BankReference", "must not be empty"},
		{"bank reference with a trailing blank", func(f *payfile.File) { f.Credits[0].BankReference = "ABC " }, 0, "BankReference", "must not start or end with a blank"},
		{"file reference outside the set", func(f *payfile.File) { f.Reference = "FILE~1" }, -1, "Reference", `'~' is not one`},
		{"debtor name outside the set", func(f *payfile.File) { f.Debtor.Name = "Payd <Ops>" }, -1, "Debtor.Name", `'<' is not one`},
		{"debtor BSB", func(f *payfile.File) { f.Debtor.BSB = "062 000" }, -1, "Debtor.BSB", "must be nnn-nnn"},
		{"debtor account", func(f *payfile.File) { f.Debtor.Account = "1234567890" }, -1, "Debtor.Account", "must be 1 to 9 digits"},
		{"APCA user id of 5 digits", func(f *payfile.File) { f.Debtor.OriginatorID = "30150" }, -1, "Debtor.OriginatorID", "must be the 6-digit APCA user id"},
		{"bank abbreviation lower case", func(f *payfile.File) { f.Debtor.BankAbbrev = "cba" }, -1, "Debtor.BankAbbrev", "3-letter abbreviation"},
		{"no credits", func(f *payfile.File) { f.Credits = nil }, -1, "Credits", "at least one credit"},
		{"currency", func(f *payfile.File) { f.Currency = "NZD" }, -1, "Currency", `must be AUD (got "NZD")`},
		{"no location", func(f *payfile.File) { f.Location = nil }, -1, "Location", "must be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := smallFile()
			f.Credits = append([]payfile.Credit(nil), f.Credits...)
			tt.change(&f)
			data, err := Write(f)
			var fe *payfile.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Write = %d bytes, %v; want a *payfile.FieldError", len(data), err)
			}
			if data != nil {
				t.Errorf("Write returned %d bytes with its error", len(data))
			}
			if fe.Format != payfile.ABA || fe.Credit != tt.wantCredit || fe.Field != tt.wantField || !strings.Contains(fe.Problem, tt.wantProblem) {
				t.Errorf("error = %+v; want credit %d, field %s, problem containing %q", *fe, tt.wantCredit, tt.wantField, tt.wantProblem)
			}
			if tt.wantCredit >= 0 && fe.BankReference != f.Credits[tt.wantCredit].BankReference {
				t.Errorf("error names reference %q, want %q", fe.BankReference, f.Credits[tt.wantCredit].BankReference)
			}
		})
	}
}

// TestFieldErrorText: the message says the format, the credit and its
// reference, the field and the problem.
func TestFieldErrorText(t *testing.T) {
	t.Parallel()
	f := smallFile()
	f.Credits = append([]payfile.Credit(nil), f.Credits...)
	f.Credits[1].BSB = "083004"
	_, err := Write(f)
	want := `aba file: credit 1 (PT9R8S7T6U5V4W3X): BSB must be nnn-nnn (got "083004")`
	if err == nil || err.Error() != want {
		t.Errorf("Write error = %v, want %s", err, want)
	}
}
