package reconcile

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"payd/internal/statement"
	"payd/internal/store"
)

// record is a settlement or an external transfer of payd's to a bank
// account, as matching sees it.
type record struct {
	typ           RecordType
	uuid          string
	currency      string
	amountMinor   int64
	status        string
	accountDigits string
	// bankReference is what the beneficiary's statement shows (CONTRACT
	// §25); reference a settlement's own Reference (its local date, or its
	// uuid), which §19 names too.
	bankReference, reference string
	// date is when the money left, in the merchant's zone: the day it
	// completed, else the day it was made.
	date      statement.Date
	completed bool
	// matchedBy is the line that matched it ("" for none).
	matchedBy string
}

// key names r for a set of records.
func (r record) key() RecordRef { return RecordRef{Type: r.typ, UUID: r.uuid} }

// recordStatuses are the statuses of records a line may match: on their
// way or arrived (a failed one never reached the bank, a returned one left
// it again).
const (
	statusProcessing = "processing"
	statusCompleted  = "completed"
)

// window is the span of creation times (ms) whose records a statement of
// from..to may hold: a week before and after, which takes in three
// business days and a weekend either side, and a record made before the
// period that completed in it.
func window(from, to statement.Date, loc *time.Location) (lo, hi int64) {
	return from.In(loc).AddDate(0, 0, -14).UnixMilli(), to.In(loc).AddDate(0, 0, 8).UnixMilli()
}

// maxRecords bounds the records one statement's matching reads.
const maxRecords = 200_000

// records reads the merchant's settlements and external transfers in
// currency made within lo..hi to an account whose digits are
// accountDigits, with the line that matched each.
func records(ctx context.Context, q store.Querier, merchantID, currency, accountDigits string, lo, hi int64, loc *time.Location) ([]record, error) {
	var out []record
	rows, err := q.QueryContext(ctx, `SELECT s.uuid, s.amount, s.status, s.beneficiary, s.eod_date, s.bank_reference, s.created_at, s.completed_at, l.id
		FROM settlements s LEFT JOIN reconciliation_lines l ON l.merchant_id = s.merchant_id AND l.matched_type = 'settlement' AND l.matched_uuid = s.uuid
		WHERE s.merchant_id = $1 AND s.currency = $2 AND s.treasury_account_id IS NULL AND s.status IN ('processing', 'completed')
		AND s.created_at >= $3 AND s.created_at < $4 ORDER BY s.created_at, s.uuid LIMIT $5`, merchantID, currency, lo, hi, maxRecords)
	if err != nil {
		return nil, fmt.Errorf("read settlements: %w", err)
	}
	for rows.Next() {
		var (
			r                       = record{typ: SettlementRecord, currency: currency}
			beneficiary             string
			eod, bankRef, matchedBy sql.NullString
			created                 int64
			completed               sql.NullInt64
		)
		if err := rows.Scan(&r.uuid, &r.amountMinor, &r.status, &beneficiary, &eod, &bankRef, &created, &completed, &matchedBy); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read settlements: %w", err)
		}
		r.accountDigits = digitsOf(beneficiaryAccount(beneficiary, "external_bank_account"))
		r.reference = r.uuid
		if eod.Valid {
			r.reference = eod.String
		}
		r.finish(bankRef, matchedBy, created, completed, loc)
		if sameAccount(accountDigits, r.accountDigits) {
			out = append(out, r)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read settlements: %w", err)
	}
	rows, err = q.QueryContext(ctx, `SELECT t.uuid, t.amount, t.status, t.bank_account, t.bank_reference, t.created_at, t.completed_at, l.id
		FROM transfers t LEFT JOIN reconciliation_lines l ON l.merchant_id = t.merchant_id AND l.matched_type = 'transfer' AND l.matched_uuid = t.uuid
		WHERE t.merchant_id = $1 AND t.currency = $2 AND t.to_account_id IS NULL AND t.status IN ('processing', 'completed')
		AND t.created_at >= $3 AND t.created_at < $4 ORDER BY t.created_at, t.uuid LIMIT $5`, merchantID, currency, lo, hi, maxRecords)
	if err != nil {
		return nil, fmt.Errorf("read transfers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r                  = record{typ: TransferRecord, currency: currency}
			bank               string
			bankRef, matchedBy sql.NullString
			created            int64
			completed          sql.NullInt64
		)
		if err := rows.Scan(&r.uuid, &r.amountMinor, &r.status, &bank, &bankRef, &created, &completed, &matchedBy); err != nil {
			return nil, fmt.Errorf("read transfers: %w", err)
		}
		r.accountDigits = digitsOf(beneficiaryAccount(bank, ""))
		r.finish(bankRef, matchedBy, created, completed, loc)
		if sameAccount(accountDigits, r.accountDigits) {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

func (r *record) finish(bankRef, matchedBy sql.NullString, created int64, completed sql.NullInt64, loc *time.Location) {
	r.bankReference, r.matchedBy = bankRef.String, matchedBy.String
	r.completed = r.status == statusCompleted
	r.date = dateOf(created, loc)
	if completed.Valid {
		r.date = dateOf(completed.Int64, loc)
	}
}

// beneficiaryAccount is the account_number of a stored bank account (JSON),
// under member when it is nested ("" when it names none).
func beneficiaryAccount(raw, member string) string {
	var account struct {
		AccountNumber string `json:"account_number"`
	}
	if member == "" {
		_ = json.Unmarshal([]byte(raw), &account)
		return account.AccountNumber
	}
	var nested map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &nested) != nil || nested[member] == nil {
		return ""
	}
	_ = json.Unmarshal(nested[member], &account)
	return account.AccountNumber
}

// sameAccount reports whether a statement's account (its digits) is the
// record's: the same digits, or the statement's ending in the record's (a
// bank that writes the branch before the account number, 062000 12345678).
func sameAccount(statementDigits, recordDigits string) bool {
	if recordDigits == "" || statementDigits == "" {
		return false
	}
	return statementDigits == recordDigits || (len(recordDigits) >= 6 && strings.HasSuffix(statementDigits, recordDigits))
}

func digitsOf(s string) string {
	return statement.Account{Number: s}.Digits()
}
