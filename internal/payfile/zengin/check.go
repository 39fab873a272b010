package zengin

import (
	"fmt"
	"regexp"
	"strings"

	"payd/internal/payfile"
)

var (
	originatorIDPattern = regexp.MustCompile(`^[0-9]{10}$`)
	bankCodePattern     = regexp.MustCompile(`^[0-9]{4}$`)
	branchCodePattern   = regexp.MustCompile(`^[0-9]{3}$`)
	accountPattern      = regexp.MustCompile(`^[0-9]{7}$`)
	referencePattern    = regexp.MustCompile(`^[0-9]{10}$`)
)

// checkFile refuses what the header and trailer cannot hold: no credits or
// more than 合計件数 takes, a currency other than JPY, no date, and the
// debtor's fields. It returns the debtor's names as the header holds them.
func checkFile(f payfile.File) (kanaNames, error) {
	fail := func(field, problem string) (kanaNames, error) {
		return kanaNames{}, &payfile.FieldError{Format: payfile.Zengin, Credit: -1, Field: field, Problem: problem}
	}
	switch {
	case f.Currency != currency:
		return fail("Currency", fmt.Sprintf("must be %s (got %q)", currency, f.Currency))
	case len(f.Credits) == 0:
		return fail("Credits", "must hold at least one credit")
	case len(f.Credits) > maxCredits:
		return fail("Credits", fmt.Sprintf("must be at most %d (合計件数 holds 6 digits)", maxCredits))
	case f.CreatedAt.IsZero():
		return fail("CreatedAt", "must be set (取組日 is its date)")
	case f.Location == nil:
		return fail("Location", "must be set (取組日 is CreatedAt's date there)")
	}
	d := f.Debtor
	if !originatorIDPattern.MatchString(d.OriginatorID) {
		return fail("Debtor.OriginatorID", fmt.Sprintf("must be the 10-digit 依頼人コード (got %q)", d.OriginatorID))
	}
	if _, ok := accountTypeCode[d.AccountType]; !ok {
		return fail("Debtor.AccountType", fmt.Sprintf("must be ordinary or current (got %q)", d.AccountType))
	}
	if !accountPattern.MatchString(d.Account) {
		return fail("Debtor.Account", fmt.Sprintf("must be 7 digits (got %q)", d.Account))
	}
	n, field, problem := partyNames(d.Name, widthDebtorName, d.BankCode, d.BankNameKana, d.BranchCode, d.BranchNameKana)
	if problem != "" {
		return fail("Debtor."+field, problem)
	}
	return n, nil
}

// checkCredit refuses a credit the data record cannot hold, and returns its
// names as the record holds them.
func checkCredit(i int, c payfile.Credit) (kanaNames, error) {
	fail := func(field, problem string) (kanaNames, error) {
		return kanaNames{}, &payfile.FieldError{Format: payfile.Zengin, Credit: i, BankReference: c.BankReference, Field: field, Problem: problem}
	}
	switch {
	case !referencePattern.MatchString(c.BankReference):
		return fail("BankReference", fmt.Sprintf("must be 10 digits, the 顧客コード1 (got %q)", c.BankReference))
	case c.AmountMinor < 1 || c.AmountMinor > maxAmountMinor:
		return fail("AmountMinor", fmt.Sprintf("must be 1 to %d yen (got %d)", int64(maxAmountMinor), c.AmountMinor))
	case c.PayID != "":
		return fail("PayID", "cannot be paid by a Zengin file, which credits a bank account")
	}
	if _, ok := accountTypeCode[c.AccountType]; !ok {
		return fail("AccountType", fmt.Sprintf("must be ordinary or current (got %q)", c.AccountType))
	}
	if !accountPattern.MatchString(c.Account) {
		return fail("Account", fmt.Sprintf("must be 7 digits (got %q)", c.Account))
	}
	n, field, problem := partyNames(c.Name, widthName, c.BankCode, c.BankNameKana, c.BranchCode, c.BranchNameKana)
	if problem != "" {
		return fail(field, problem)
	}
	return n, nil
}

// partyNames checks a party's name (not blank), bank and branch codes, and
// the kana names of bank and branch (which may be empty), and returns the
// names half-width and cut to their fields; or the field at fault and its
// problem.
func partyNames(name string, nameWidth int, bankCode, bankName, branchCode, branchName string) (kanaNames, string, string) {
	if !bankCodePattern.MatchString(bankCode) {
		return kanaNames{}, "BankCode", fmt.Sprintf("must be the 4-digit Zengin bank code (got %q)", bankCode)
	}
	if !branchCodePattern.MatchString(branchCode) {
		return kanaNames{}, "BranchCode", fmt.Sprintf("must be the 3-digit Zengin branch code (got %q)", branchCode)
	}
	if strings.TrimSpace(name) == "" {
		return kanaNames{}, "Name", "must not be blank"
	}
	var n kanaNames
	for _, f := range []struct {
		field, in string
		width     int
		out       *string
	}{
		{"Name", name, nameWidth, &n.name},
		{"BankNameKana", bankName, widthBankName, &n.bank},
		{"BranchNameKana", branchName, widthBranchName, &n.branch},
	} {
		h, err := HalfWidthName(f.in)
		if err != nil {
			return kanaNames{}, f.field, err.Error()
		}
		*f.out = cut(h, f.width)
	}
	return n, "", ""
}

// checkTotal refuses credits (each already within its field) whose total
// 合計金額 cannot hold.
func checkTotal(f payfile.File) error {
	if f.Total() > maxTotalMinor { // at most 999,999 × 9,999,999,999: no overflow
		return &payfile.FieldError{Format: payfile.Zengin, Credit: -1, Field: "Credits",
			Problem: fmt.Sprintf("must total at most %d yen (合計金額 holds 12 digits)", int64(maxTotalMinor))}
	}
	return nil
}
