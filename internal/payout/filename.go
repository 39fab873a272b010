package payout

import (
	"context"
	"fmt"
	"strings"

	"payd/internal/fault"
	"payd/internal/rail"
	"payd/internal/store"
)

// checkFileNames refuses, naming each, what of r the bank file of m's rail
// cannot hold, when a bank-file rail serves m (asked of the rail router):
// each recipient's name (the account's name, or the payee's first and last
// names for a method without one, a PayID) and the description. With no
// rail, or a format that takes anything, it refuses nothing. Every entry
// point creates payouts through create, so v2, v1 (its payee is the
// account's name), CSV files and the portal all meet it.
func (s *Service) checkFileNames(ctx context.Context, tx *store.Tx, m Method, r Request) error {
	texts, err := rail.FileTextsOf(ctx, tx, s.rail, m.Currency, m.Code, m.Code+" payouts")
	if err != nil {
		return err
	}
	f := fault.Fields{}
	texts.Description(f, "description", r.Description)
	for i, d := range r.PayoutTransactionDetails {
		prefix := fmt.Sprintf("payout_transaction_details[%d].", i)
		if name, _ := d.PayoutMethodParams["account_name"].(string); name != "" {
			texts.Name(f, prefix+"payout_method_params.account_name", name)
			continue
		}
		texts.Name(f, prefix+"first_name", strings.TrimSpace(d.FirstName+" "+d.LastName))
	}
	return f.Err()
}
