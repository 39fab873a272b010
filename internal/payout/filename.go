package payout

import (
	"context"
	"fmt"
	"strings"

	"payd/internal/fault"
	"payd/internal/iso20022"
	"payd/internal/payfile"
	"payd/internal/payfile/aba"
	"payd/internal/payfile/zengin"
	"payd/internal/rail"
	"payd/internal/store"
)

// fileRules are the checks of what a bank file carries of a payout, by the
// file's format: the rule of CONTRACT §17 and §25 that a name the file
// cannot hold is refused when the payout is created (422
// VALIDATION_FAILED naming the field) rather than mangled in the file or
// failed at the cut-off. A nil check checks nothing.
type fileRules struct {
	name, description func(string) string
}

var fileRulesOf = map[payfile.Format]fileRules{
	payfile.ABA:     {name: aba.BECSProblem},
	payfile.Pain001: {name: iso20022.NameProblem, description: iso20022.DescriptionProblem},
	payfile.Zengin:  {name: zengin.KanaProblem},
}

// checkFileNames refuses, naming each, what of r the bank file of m's rail
// cannot hold, when a bank-file rail serves m (asked of the rail router):
// each recipient's name (the account's name, or the payee's first and last
// names for a method without one, a PayID) and the description. With no
// rail, or a format that takes anything, it refuses nothing. Every entry
// point creates payouts through create, so v2, v1 (its payee is the
// account's name), CSV files and the portal all meet it.
func (s *Service) checkFileNames(ctx context.Context, tx *store.Tx, m Method, r Request) error {
	format, err := rail.FileFormatOf(ctx, tx, s.rail, m.Currency, m.Code)
	if err != nil {
		return err
	}
	rules, ok := fileRulesOf[format]
	if !ok {
		return nil
	}
	f := fault.Fields{}
	check := func(rule func(string) string, field, value string) {
		if rule == nil {
			return
		}
		if p := rule(value); p != "" {
			f.Add(field, fmt.Sprintf("%s (%s goes out in %s bank files)", p, m.Code, format))
		}
	}
	check(rules.description, "description", r.Description)
	for i, d := range r.PayoutTransactionDetails {
		prefix := fmt.Sprintf("payout_transaction_details[%d].", i)
		if name, _ := d.PayoutMethodParams["account_name"].(string); name != "" {
			check(rules.name, prefix+"payout_method_params.account_name", name)
			continue
		}
		check(rules.name, prefix+"first_name", strings.TrimSpace(d.FirstName+" "+d.LastName))
	}
	return f.Err()
}
