package rail

import (
	"context"
	"fmt"

	"payd/internal/fault"
	"payd/internal/iso20022"
	"payd/internal/payfile"
	"payd/internal/payfile/aba"
	"payd/internal/payfile/zengin"
	"payd/internal/store"
)

// textRules are what a bank file of one format can hold of a transfer's
// texts, each a problem or "" (CONTRACT §17, §25): a name the file cannot
// hold is refused when the payout, external transfer or settlement
// beneficiary is given rather than mangled in the file or failed at the
// cut-off. A nil rule checks nothing.
type textRules struct {
	name, description func(string) string
}

var textRulesOf = map[payfile.Format]textRules{
	payfile.ABA:     {name: aba.BECSProblem},
	payfile.Pain001: {name: iso20022.NameProblem, description: iso20022.DescriptionProblem},
	payfile.Zengin:  {name: zengin.KanaProblem},
}

// FileTexts checks texts against the bank file that (currency, method)'s
// transfers go out in. Its zero value, where no bank-file rail serves them,
// refuses nothing.
type FileTexts struct {
	format payfile.Format
	what   string
	rules  textRules
}

// FileTextsOf is the check of what r's bank file of (currency, method) can
// hold; what names the transfers in its messages (a payout method's code,
// "external transfers", "settlements").
func FileTextsOf(ctx context.Context, q store.Querier, r Rail, currency, method, what string) (FileTexts, error) {
	format, err := FileFormatOf(ctx, q, r, currency, method)
	if err != nil {
		return FileTexts{}, err
	}
	return FileTexts{format: format, what: what, rules: textRulesOf[format]}, nil
}

// Name adds to f, under field, why the file cannot hold the name value.
func (t FileTexts) Name(f fault.Fields, field, value string) { t.check(f, t.rules.name, field, value) }

// Description adds to f, under field, why the file cannot hold the
// description value.
func (t FileTexts) Description(f fault.Fields, field, value string) {
	t.check(f, t.rules.description, field, value)
}

func (t FileTexts) check(f fault.Fields, rule func(string) string, field, value string) {
	if rule == nil {
		return
	}
	if p := rule(value); p != "" {
		f.Add(field, fmt.Sprintf("%s (%s go out in %s bank files)", p, t.what, t.format))
	}
}
