package statementtest

import (
	"time"

	"payd/internal/statement"
)

// Day is a day's statement of account 12345678 in AUD, as the writers'
// tests write it: two credits and a debit between an opening and a closing
// balance that agree with them.
func Day() (statement.Header, []statement.Entry) {
	date := statement.Date{Year: 2026, Month: time.April, Day: 5}
	entries := []statement.Entry{
		{Key: "SBX0000000000001", AmountMinor: 10050, Currency: "AUD", Direction: statement.Credit, Status: statement.Booked, Index: 0,
			BookingDate: date, ValueDate: date, Reference: "K3M9Q4X1B8C3D7F2", Remittance: "PAYD SETTLEMENT K3M9Q4X1B8C3D7F2"},
		{Key: "SBX0000000000002", AmountMinor: 250000, Currency: "AUD", Direction: statement.Credit, Status: statement.Booked, Index: 1,
			BookingDate: date, ValueDate: date, Reference: "P7K2M9Q4X1B8C3E1", Remittance: "PAYD TRANSFER P7K2M9Q4X1B8C3E1"},
		{Key: "SBX0000000000003", AmountMinor: 1500, Currency: "AUD", Direction: statement.Debit, Status: statement.Booked, Index: 2,
			BookingDate: date, ValueDate: date, Reference: "FEE", Remittance: "ACCOUNT FEE"},
	}
	h := statement.Header{MessageID: "SBX-20260405-12345678", StatementIDs: []string{"SBX-20260405-12345678"},
		CreatedAt: time.Date(2026, 4, 5, 13, 30, 0, 0, time.UTC),
		Account:   statement.Account{Number: "12345678", Currency: "AUD"}, From: date, To: date,
		Opening: &statement.Balance{AmountMinor: 100000, Date: date}, Closing: &statement.Balance{AmountMinor: 100000 + 10050 + 250000 - 1500, Date: date},
		Entries: 3, Booked: 3, CreditsMinor: 260050, DebitsMinor: 1500}
	return h, entries
}
