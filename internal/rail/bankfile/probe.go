package bankfile

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/payfile"
	"payd/internal/rail"
)

// debtorFlags are the flags of payd rail set that set each debtor field a
// format may refuse.
var debtorFlags = map[string]string{
	"Debtor.Name": "--debtor-name", "Debtor.Account": "--debtor-account", "Debtor.BSB": "--debtor-bsb", "Debtor.BIC": "--debtor-bic",
	"Debtor.BankCode": "--debtor-bank-code", "Debtor.BranchCode": "--debtor-branch-code", "Debtor.BankNameKana": "--debtor-bank-code",
	"Debtor.BranchNameKana": "--debtor-branch-code", "Debtor.OriginatorID": "--originator-id", "Debtor.BankAbbrev": "--bank-abbrev",
	"Debtor.AccountType": "--debtor-account-type",
}

// probeCredits are a credit each format surely holds, to write a file of
// the rail's debtor with before the rail is set.
var probeCredits = map[payfile.Format]payfile.Credit{
	payfile.ABA:     {AmountMinor: 100, Name: "PROBE", Account: "12345678", BSB: "062-000", Remitter: "PAYD"},
	payfile.Pain001: {AmountMinor: 100, Name: "PROBE", Account: "12345678", BIC: "CTBAAU2SXXX"},
	payfile.Zengin: {AmountMinor: 100, Name: "ﾃｽﾄ", Account: "1234567", BankCode: "0001", BranchCode: "001", BankNameKana: "ﾐｽﾞﾎ",
		BranchNameKana: "ﾄｳｷﾖｳ", AccountType: payfile.Ordinary},
}

// probe writes a file of one credit with r's debtor in its format, so
// that a debtor the format refuses (a name outside its characters, an
// account of the wrong width) is refused when the rail is set, naming the
// flag, rather than at every cut-off.
func (f *Files) probe(s Settings) error {
	write, ok := f.Writers[s.Format]
	credit, known := probeCredits[s.Format]
	if !ok || !known {
		return nil
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return nil // check refused it
	}
	debtor, err := f.debtor(Rail{Settings: s})
	if err != nil {
		return nil // Set refused the branch
	}
	credit.BankReference = strings.Repeat("1", rail.ReferenceLen)
	if s.Format == payfile.Zengin {
		credit.BankReference = strings.Repeat("1", rail.ZenginReferenceLen)
	}
	base := fmt.Sprintf("payd-%s-20260101-001", s.Name)
	_, err = write(payfile.File{Name: base, Reference: FileReference(base), CreatedAt: time.Date(2026, 1, 1, 9, 0, 0, 0, loc), Location: loc,
		Currency: s.Currency, Debtor: debtor, Credits: []payfile.Credit{credit}})
	var fe *payfile.FieldError
	if !errors.As(err, &fe) || fe.Credit >= 0 {
		return nil // what a probe credit cannot show
	}
	if flag, ok := debtorFlags[fe.Field]; ok {
		return &fieldRefusal{flag: flag, problem: fe.Problem + " (in a " + string(s.Format) + " file)"}
	}
	return nil
}

// fieldRefusal names the flag whose value a format refused.
type fieldRefusal struct{ flag, problem string }

func (e *fieldRefusal) Error() string { return e.flag + " " + e.problem }
