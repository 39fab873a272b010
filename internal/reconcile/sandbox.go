package reconcile

import (
	"context"
	"fmt"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/settlement"
	"payd/internal/statement"
	"payd/internal/store"
)

// BankStatement is the statement the sandbox bank would send for the
// merchant's external settlement account in currency (its settlement
// config's external_bank_account) on date, a day in the merchant's zone
// (CONTRACT §19): a credit for each settlement and external transfer to
// that account that completed that day, its reference the record's bank
// reference, between an opening balance of what payd sent there before and
// the closing balance after. Uploaded back, every line matches and nothing
// is missing. The sandbox bank's account receives nothing but payd's.
func (s *Service) BankStatement(ctx context.Context, p merchant.Principal, currency string, date statement.Date) (statement.Header, []statement.Entry, error) {
	q := s.db.Read()
	account, err := settlementAccount(ctx, q, p.MerchantID, currency)
	if err != nil {
		return statement.Header{}, nil, err
	}
	loc := merchant.Location(p.Timezone)
	dayEnd := date.In(loc).AddDate(0, 0, 1)
	rs, err := records(ctx, q, p.MerchantID, currency, digitsOf(account), 0, dayEnd.UnixMilli(), loc)
	if err != nil {
		return statement.Header{}, nil, err
	}
	var opening int64
	var entries []statement.Entry
	for _, r := range rs {
		switch {
		case !r.completed || date.Before(r.date):
		case r.date.Before(date):
			opening += r.amountMinor
		default:
			entries = append(entries, sandboxEntry(r, date, len(entries)))
		}
	}
	credits := opening
	for _, e := range entries {
		credits += e.AmountMinor
	}
	stamp := fmt.Sprintf("%04d%02d%02d", date.Year, int(date.Month), date.Day)
	h := statement.Header{
		MessageID:    "SBX-" + stamp + "-" + digitsOf(account),
		StatementIDs: []string{"SBX-" + stamp + "-" + digitsOf(account)},
		CreatedAt:    time.Date(date.Year, date.Month, date.Day, 23, 30, 0, 0, loc),
		Account:      statement.Account{Number: account, Currency: currency},
		From:         date, To: date,
		Opening: &statement.Balance{AmountMinor: opening, Date: date},
		Closing: &statement.Balance{AmountMinor: credits, Date: date},
		Entries: len(entries), Booked: len(entries), CreditsMinor: credits - opening,
	}
	return h, entries, nil
}

// sandboxEntry is record r as the sandbox bank books it on date.
func sandboxEntry(r record, date statement.Date, index int) statement.Entry {
	reference := r.bankReference
	if reference == "" {
		reference = r.reference
	}
	return statement.Entry{
		Key:         fmt.Sprintf("SBX%04d%02d%02d%06d", date.Year, int(date.Month), date.Day, index+1),
		AmountMinor: r.amountMinor, Currency: r.currency, Direction: statement.Credit, Status: statement.Booked, Index: index,
		BookingDate: date, ValueDate: date, Reference: reference,
		Remittance: "PAYD " + strings.ToUpper(string(r.typ)) + " " + reference,
	}
}

// settlementAccount is the account number of the external bank account the
// merchant's currency settles to; 422 NO_BENEFICIARY without one.
func settlementAccount(ctx context.Context, q store.Querier, merchantID, currency string) (string, error) {
	var bank string
	err := q.QueryRowContext(ctx, `SELECT bank_account FROM settlement_configs WHERE merchant_id = $1 AND currency = $2`, merchantID, currency).Scan(&bank)
	if err != nil && !store.IsNoRows(err) {
		return "", fmt.Errorf("read settlement config: %w", err)
	}
	account := beneficiaryAccount(bank, "")
	if account == "" {
		return "", fault.Rule(settlement.CodeNoBeneficiary, "the %s account settles to no external bank account: set one with PUT /v2/settlements/config", currency)
	}
	return account, nil
}
