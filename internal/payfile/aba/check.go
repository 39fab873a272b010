package aba

import (
	"fmt"
	"regexp"
	"strings"

	"payd/internal/payfile"
)

var (
	bsbPattern          = regexp.MustCompile(`^[0-9]{3}-[0-9]{3}$`)
	accountPattern      = regexp.MustCompile(`^[0-9]{1,9}$`)
	originatorIDPattern = regexp.MustCompile(`^[0-9]{6}$`)
	bankAbbrevPattern   = regexp.MustCompile(`^[A-Z]{3}$`)
)

// checkFile refuses what the file's own records cannot hold: no credits or
// more than the count field takes, a currency other than AUD, no date, a
// reference that does not fit, and the debtor's fields (see checkDebtor).
func checkFile(f payfile.File) error {
	fail := func(field, problem string) error {
		return &payfile.FieldError{Format: payfile.ABA, Credit: -1, Field: field, Problem: problem}
	}
	switch {
	case f.Currency != currency:
		return fail("Currency", fmt.Sprintf("must be %s (got %q)", currency, f.Currency))
	case len(f.Credits) == 0:
		return fail("Credits", "must hold at least one credit (the balancing debit must be more than zero)")
	case len(f.Credits) > maxCredits:
		return fail("Credits", fmt.Sprintf("must be at most %d (the type 7 count holds 6 digits, the balancing record included)", maxCredits))
	case f.CreatedAt.IsZero():
		return fail("CreatedAt", "must be set (the processing date is its date)")
	case f.Location == nil:
		return fail("Location", "must be set (the processing date is CreatedAt's date there)")
	}
	if p := referenceProblem(f.Reference); p != "" {
		return fail("Reference", p)
	}
	return checkDebtor(f.Debtor)
}

// checkTotal refuses credits (each already within its field) whose total
// the balancing debit and the type 7 totals cannot hold.
func checkTotal(f payfile.File) error {
	var total int64
	for _, c := range f.Credits {
		total += c.AmountMinor // each at most maxAmountMinor, so no overflow before the check
		if total > maxAmountMinor {
			return &payfile.FieldError{Format: payfile.ABA, Credit: -1, Field: "Credits",
				Problem: fmt.Sprintf("must total at most %d cents (the balancing debit and the type 7 totals hold 10 digits)", int64(maxAmountMinor))}
		}
	}
	return nil
}

// checkDebtor refuses a debtor whose name, BSB, account, APCA user id or
// bank abbreviation the records cannot hold.
func checkDebtor(d payfile.Debtor) error {
	fail := func(field, problem string) error {
		return &payfile.FieldError{Format: payfile.ABA, Credit: -1, Field: "Debtor." + field, Problem: problem}
	}
	if p := textProblem(d.Name); p != "" {
		return fail("Name", p)
	}
	if p := bsbProblem(d.BSB); p != "" {
		return fail("BSB", p)
	}
	if p := accountProblem(d.Account); p != "" {
		return fail("Account", p)
	}
	if !originatorIDPattern.MatchString(d.OriginatorID) {
		return fail("OriginatorID", fmt.Sprintf("must be the 6-digit APCA user id (got %q)", d.OriginatorID))
	}
	if !bankAbbrevPattern.MatchString(d.BankAbbrev) {
		return fail("BankAbbrev", fmt.Sprintf("must be the bank's 3-letter abbreviation, upper case (got %q)", d.BankAbbrev))
	}
	return nil
}

// checkCredit refuses a credit the type 1 record cannot hold.
func checkCredit(i int, c payfile.Credit) error {
	fail := func(field, problem string) error {
		return &payfile.FieldError{Format: payfile.ABA, Credit: i, BankReference: c.BankReference, Field: field, Problem: problem}
	}
	if p := referenceProblem(c.BankReference); p != "" {
		return fail("BankReference", p)
	}
	if c.AmountMinor < 1 || c.AmountMinor > maxAmountMinor {
		return fail("AmountMinor", fmt.Sprintf("must be 1 to %d cents (got %d)", int64(maxAmountMinor), c.AmountMinor))
	}
	if c.PayID != "" {
		return fail("PayID", "cannot be paid by an ABA file, which credits a BSB and account")
	}
	if p := bsbProblem(c.BSB); p != "" {
		return fail("BSB", p)
	}
	if p := accountProblem(c.Account); p != "" {
		return fail("Account", p)
	}
	if p := textProblem(c.Name); p != "" {
		return fail("Name", p)
	}
	if p := textProblem(c.Remitter); p != "" {
		return fail("Remitter", p)
	}
	return nil
}

// textProblem is a name's problem: blank (the specifications say "must not
// be all blanks"), or a character outside the BECS set.
func textProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be blank"
	}
	return BECSProblem(s)
}

// referenceProblem is a lodgement reference's: it must fit its 18
// characters, in the BECS set, and have no blank at either end, so that Read
// finds it again as it was.
func referenceProblem(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > widthReference:
		return fmt.Sprintf("must be at most %d characters (got %d)", widthReference, len(s))
	case strings.TrimSpace(s) != s:
		return "must not start or end with a blank"
	}
	return BECSProblem(s)
}

func bsbProblem(s string) string {
	if !bsbPattern.MatchString(s) {
		return fmt.Sprintf("must be nnn-nnn (got %q)", s)
	}
	return ""
}

// accountProblem: 1 to 9 digits, not all zeros (the specifications: "must
// not contain all blanks or zeros").
func accountProblem(s string) string {
	if !accountPattern.MatchString(s) || strings.Trim(s, "0") == "" {
		return fmt.Sprintf("must be 1 to 9 digits, not all zeros (got %q)", s)
	}
	return ""
}
