package payout

import (
	"context"
	"fmt"

	"payd/internal/fault"
	"payd/internal/payfile"
	"payd/internal/payfile/aba"
	"payd/internal/rail"
)

// nameProblems are the checks of a recipient's name by the format of the
// bank file a payout's method goes out in: the rule of CONTRACT §17 and §25
// that a name the file cannot hold is refused when the payout is created
// (422 VALIDATION_FAILED naming the field) rather than mangled in the file.
var nameProblems = map[payfile.Format]func(string) string{
	payfile.ABA: aba.BECSProblem,
}

// checkFileNames refuses, naming each, the account names of r that the
// bank file of m's rail cannot hold, when a bank-file rail serves m (asked
// of the rail router); with none, or a format that takes any name, it
// refuses nothing. Every entry point creates payouts through create, so v2,
// v1 (its payee is the account's name), CSV files and the portal all meet
// it.
func (s *Service) checkFileNames(ctx context.Context, m Method, r Request) error {
	format, err := rail.FileFormatOf(ctx, s.rail, m.Currency, m.Code)
	if err != nil {
		return err
	}
	problem, ok := nameProblems[format]
	if !ok {
		return nil
	}
	f := fault.Fields{}
	for i, d := range r.PayoutTransactionDetails {
		name, _ := d.PayoutMethodParams["account_name"].(string)
		if p := problem(name); name != "" && p != "" {
			f.Add(fmt.Sprintf("payout_transaction_details[%d].payout_method_params.account_name", i), fmt.Sprintf("%s (%s goes out in %s bank files)", p, m.Code, format))
		}
	}
	return f.Err()
}
