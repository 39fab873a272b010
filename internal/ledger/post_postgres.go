package ledger

import (
	"context"
	"database/sql"
	"fmt"

	"payd/internal/fault"
	"payd/internal/store"
)

// postOneStatement is Post on PostgreSQL in a single statement: it locks the
// entry's buckets in the lock order (account id, then bucket name), checks
// every leg (bucket present in the currency, no overdraft unless allowed,
// within ±MaxBalance), and only if all pass updates the buckets and appends
// the journal entry and its postings. Every leg comes back, in the legs'
// order, with its bucket's balance before the movement, so a refusal is
// explained without another round trip and writes nothing.
const postOneStatement = `WITH l AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bool[]) WITH ORDINALITY AS l(acct, name, amt, neg, ord)
), cur AS MATERIALIZED (
	SELECT b.id, b.balance, b.allow_negative, l.ord, l.amt, l.neg
	FROM ledger_buckets b JOIN l ON b.account_id = l.acct AND b.name = l.name
	WHERE b.currency = $5::text
	ORDER BY b.account_id, b.name
	FOR UPDATE OF b
), ok AS (
	SELECT count(*) = cardinality($1::bigint[])
		AND COALESCE(bool_and((balance + amt >= 0 OR allow_negative OR neg) AND balance + amt BETWEEN $6::bigint AND $7::bigint), TRUE) AS ok
	FROM cur
), upd AS (
	UPDATE ledger_buckets b SET balance = b.balance + c.amt
	FROM cur c, ok WHERE ok.ok AND b.id = c.id
	RETURNING b.id, c.ord, c.amt, c.neg, b.balance
), e AS (
	INSERT INTO journal_entries (merchant_id, balance_record_id, kind, created_at)
	SELECT $8::text, $9::text, $10::text, $11::bigint FROM ok WHERE ok.ok
	RETURNING id
), p AS (
	INSERT INTO postings (entry_id, merchant_id, bucket_id, currency, amount, balance_after, overdraft)
	SELECT e.id, $8::text, u.id, $5::text, u.amt, u.balance, u.neg AND u.balance < 0
	FROM e, upd u ORDER BY u.ord
)
SELECT (SELECT id FROM e), c.id IS NOT NULL, COALESCE(c.balance, 0), COALESCE(c.allow_negative, FALSE)
FROM l LEFT JOIN cur c ON c.ord = l.ord
ORDER BY l.ord`

// legState is what the single-statement post read of one leg's bucket.
type legState struct {
	found         bool
	balance       int64 // before the movement
	allowNegative bool
}

// postPostgres writes e's normalised legs in one statement (postOneStatement),
// which carries the transaction's queued statements with it (store.Tx.Send).
func postPostgres(ctx context.Context, tx *store.Tx, e Entry, legs []Leg) (int64, error) {
	accounts := make([]int64, len(legs))
	names := make([]string, len(legs))
	amounts := make([]int64, len(legs))
	mayGoNegative := make([]bool, len(legs))
	for i, l := range legs {
		accounts[i], names[i], amounts[i], mayGoNegative[i] = l.Account, string(l.Bucket), l.Amount, l.MayGoNegative
	}
	var record any
	if e.RecordID != "" {
		record = e.RecordID
	}
	var entryID sql.NullInt64
	states := make([]legState, 0, len(legs))
	err := tx.Query(ctx, postOneStatement, []any{accounts, names, amounts, mayGoNegative, e.Currency,
		-MaxBalance, MaxBalance, e.MerchantID, record, e.Kind, e.At.UnixMilli()}, func(row store.Row) error {
		var s legState
		if err := row.Scan(&entryID, &s.found, &s.balance, &s.allowNegative); err != nil {
			return err
		}
		states = append(states, s)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	if entryID.Valid {
		return entryID.Int64, nil
	}
	return 0, refusal(e, legs, states)
}

// refusal explains why the single-statement post wrote nothing, naming the
// first leg (in lock order) that could not be applied, as Post does on SQLite.
func refusal(e Entry, legs []Leg, states []legState) error {
	if len(states) != len(legs) {
		return fmt.Errorf("post %s: %d legs came back for %d", e.Kind, len(states), len(legs))
	}
	for i, l := range legs {
		s := states[i]
		if !s.found {
			return fmt.Errorf("post %s: no %s bucket in %s for account %d: %w", e.Kind, l.Bucket, e.Currency, l.Account, sql.ErrNoRows)
		}
		after := s.balance + l.Amount
		if after > MaxBalance || after < -MaxBalance {
			return &fault.Error{Kind: fault.Invalid, Code: fault.CodeAmountOutOfRange,
				Message: fmt.Sprintf("the %s balance would exceed the largest balance payd holds", l.Bucket)}
		}
		if after < 0 && !s.allowNegative && !l.MayGoNegative {
			return &fault.Error{Kind: fault.Invalid, Code: fault.CodeInsufficientFunds,
				Message: fmt.Sprintf("insufficient funds: the %s balance is lower than the amount required", l.Bucket)}
		}
	}
	return fmt.Errorf("post %s: refused, yet every leg fits", e.Kind)
}
