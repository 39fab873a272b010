package zengin

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
		{"a name with no half-width form", func(f *payfile.File) { f.Credits[1].Name = "山田太郎" }, 1, "Name", `'山' has no such form`},
		{"a name with ・", func(f *payfile.File) { f.Credits[0].Name = "ジョン・スミス" }, 0, "Name", `'・' has no such form`},
		{"a name blank", func(f *payfile.File) { f.Credits[0].Name = "　" }, 0, "Name", "must not be blank"},
		{"a bank name with no form", func(f *payfile.File) { f.Credits[0].BankNameKana = "みずほ" }, 0, "BankNameKana", `'み' has no such form`},
		{"a branch name with no form", func(f *payfile.File) { f.Credits[1].BranchNameKana = "本店" }, 1, "BranchNameKana", `'本' has no such form`},
		{"an amount over the field", func(f *payfile.File) { f.Credits[1].AmountMinor = 10_000_000_000 }, 1, "AmountMinor", "must be 1 to 9999999999 yen"},
		{"an amount of zero", func(f *payfile.File) { f.Credits[0].AmountMinor = 0 }, 0, "AmountMinor", "must be 1 to"},
		{"a bank reference of 9 digits", func(f *payfile.File) { f.Credits[0].BankReference = "123456789" }, 0, "BankReference", "must be 10 digits"},
		{"a bank reference with letters", func(f *payfile.File) { f.Credits[0].BankReference = "ABCDEFGHIJ" }, 0, "BankReference", "must be 10 digits"},
		{"an account of 6 digits", func(f *payfile.File) { f.Credits[1].Account = "123456" }, 1, "Account", "must be 7 digits"},
		{"an account type", func(f *payfile.File) { f.Credits[1].AccountType = "savings" }, 1, "AccountType", "must be ordinary or current"},
		{"a bank code", func(f *payfile.File) { f.Credits[0].BankCode = "05" }, 0, "BankCode", "4-digit Zengin bank code"},
		{"a branch code", func(f *payfile.File) { f.Credits[0].BranchCode = "1350" }, 0, "BranchCode", "3-digit Zengin branch code"},
		{"a PayID", func(f *payfile.File) { f.Credits[0].PayID = "x@example.com" }, 0, "PayID", "cannot be paid by a Zengin file"},
		{"a total over 12 digits", func(f *payfile.File) {
			f.Credits = make([]payfile.Credit, 101)
			for i := range f.Credits {
				f.Credits[i] = smallFile().Credits[0]
				f.Credits[i].AmountMinor = 9_999_999_999
			}
		}, -1, "Credits", "must total at most 999999999999 yen"},
		{"no credits", func(f *payfile.File) { f.Credits = nil }, -1, "Credits", "at least one credit"},
		{"a currency", func(f *payfile.File) { f.Currency = "USD" }, -1, "Currency", `must be JPY (got "USD")`},
		{"no location", func(f *payfile.File) { f.Location = nil }, -1, "Location", "must be set"},
		{"an originator id of 9 digits", func(f *payfile.File) { f.Debtor.OriginatorID = "123456789" }, -1, "Debtor.OriginatorID", "10-digit 依頼人コード"},
		{"a debtor name with no form", func(f *payfile.File) { f.Debtor.Name = "ペイド株式会社" }, -1, "Debtor.Name", `'株' has no such form`},
		{"a debtor account type", func(f *payfile.File) { f.Debtor.AccountType = "" }, -1, "Debtor.AccountType", "must be ordinary or current"},
		{"a debtor account", func(f *payfile.File) { f.Debtor.Account = "12345678" }, -1, "Debtor.Account", "must be 7 digits"},
		{"a debtor bank code", func(f *payfile.File) { f.Debtor.BankCode = "" }, -1, "Debtor.BankCode", "4-digit"},
		{"a debtor branch name", func(f *payfile.File) { f.Debtor.BranchNameKana = "ﾄｳｷﾖｳ/ﾎﾝﾃﾝ" }, -1, "Debtor.BranchNameKana", `'/' has no such form`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := smallFile()
			tt.change(&f)
			data, err := Write(f)
			var fe *payfile.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Write = %d bytes, %v; want a *payfile.FieldError", len(data), err)
			}
			if data != nil {
				t.Errorf("Write returned %d bytes with its error", len(data))
			}
			if fe.Format != payfile.Zengin || fe.Credit != tt.wantCredit || fe.Field != tt.wantField || !strings.Contains(fe.Problem, tt.wantProblem) {
				t.Errorf("error = %+v; want credit %d, field %s, problem containing %q", *fe, tt.wantCredit, tt.wantField, tt.wantProblem)
			}
			if tt.wantCredit >= 0 && fe.BankReference != f.Credits[tt.wantCredit].BankReference {
				t.Errorf("error names reference %q, want %q", fe.BankReference, f.Credits[tt.wantCredit].BankReference)
			}
		})
	}
}
