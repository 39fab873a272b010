package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"payd/internal/fault"
	"payd/internal/store"
)

// postOneStatement is Post on PostgreSQL in a single statement. Each leg
// names a slot of its bucket ($9: 0 the principal row, 1.. a spread slot)
// or, as -1, the whole bucket: every slot, whose sum is the balance the leg
// is checked against, gathered into the principal row by the movement. The
// statement locks the legs' rows in the lock order (account id, bucket name,
// slot), checks every leg (bucket of the entry's merchant, $8, present in
// the currency, no overdraft unless allowed, within ±MaxBalance), and only
// if all pass updates the rows and appends the journal entry and its
// postings, one per row changed.
// Every leg comes back, in the legs' order, with its balance before the
// movement, so a refusal is explained without another round trip and
// writes nothing.
const postOneStatement = postChecks + `, e AS (
	INSERT INTO journal_entries (merchant_id, balance_record_id, kind, created_at)
	SELECT $8::text, $10::text, $11::text, $12::bigint FROM ok WHERE ok.ok
	RETURNING id
), p AS (
	INSERT INTO postings (entry_id, merchant_id, bucket_id, currency, amount, balance_after, overdraft)
	SELECT e.id, $8::text, u.id, $5::text, u.amt, u.balance, u.neg AND u.balance < 0
	FROM e, upd u ORDER BY u.ord, u.slot DESC
)
SELECT (SELECT id FROM e), c.ord IS NOT NULL, COALESCE(c.balance, 0), COALESCE(c.allow_negative, FALSE)
FROM l LEFT JOIN cur c ON c.ord = l.ord
ORDER BY l.ord`

// postCitusStatement is postOneStatement on Citus, which routes a statement
// to its merchant's shard only when no CTE of it inserts: it checks and
// moves the balances as postOneStatement does, and returns, besides every
// leg's state, whether it moved them and the postings to write (the rows
// changed, in posting order), which postCitus then inserts.
const postCitusStatement = postChecks + `
SELECT (SELECT ok FROM ok), c.ord IS NOT NULL, COALESCE(c.balance, 0), COALESCE(c.allow_negative, FALSE),
	(SELECT array_agg(u.id ORDER BY u.ord, u.slot DESC) FROM upd u),
	(SELECT array_agg(u.amt ORDER BY u.ord, u.slot DESC) FROM upd u),
	(SELECT array_agg(u.balance ORDER BY u.ord, u.slot DESC) FROM upd u),
	(SELECT array_agg(u.neg AND u.balance < 0 ORDER BY u.ord, u.slot DESC) FROM upd u)
FROM l LEFT JOIN cur c ON c.ord = l.ord
ORDER BY l.ord`

// postChecks locks, checks and moves the legs' rows: the part of a post
// that postOneStatement and postCitusStatement share.
const postChecks = `WITH l AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bool[], $9::int[]) WITH ORDINALITY AS l(acct, name, amt, neg, slot, ord)
), r AS MATERIALIZED (
	SELECT b.id, b.slot, b.balance, b.allow_negative, l.ord, l.amt, l.neg, l.slot < 0 AS whole
	FROM ledger_buckets b JOIN l ON b.account_id = l.acct AND b.name = l.name AND (l.slot < 0 OR b.slot = l.slot)
	WHERE b.merchant_id = $8::text AND b.currency = $5::text
	ORDER BY b.account_id, b.name, b.slot
	FOR UPDATE OF b
), cur AS (
	SELECT ord, min(amt) AS amt, bool_or(neg) AS neg, bool_and(allow_negative) AS allow_negative,
		CAST(sum(balance) AS bigint) AS balance
	FROM r GROUP BY ord
), ok AS (
	SELECT count(*) = cardinality($1::bigint[])
		AND COALESCE(bool_and((balance + amt >= 0 OR allow_negative OR neg OR amt > 0) AND balance + amt BETWEEN $6::bigint AND $7::bigint), TRUE) AS ok
	FROM cur
), upd AS (
	UPDATE ledger_buckets b SET balance = CASE WHEN NOT r.whole THEN b.balance + r.amt WHEN r.slot = 0 THEN c.balance + c.amt ELSE 0 END
	FROM r JOIN cur c ON c.ord = r.ord, ok
	WHERE ok.ok AND b.merchant_id = $8::text AND b.id = r.id AND (NOT r.whole OR r.slot = 0 OR r.balance <> 0)
	RETURNING b.id, r.ord, r.slot, b.balance - r.balance AS amt, c.neg, b.balance
)`

// wholeBucket is the slot of a leg that takes the whole bucket.
const wholeBucket = -1

// legState is what the single-statement post read of one leg's bucket (or
// slot).
type legState struct {
	found         bool
	balance       int64 // before the movement
	allowNegative bool
}

// postPostgres writes e's normalised legs in one statement (postOneStatement),
// which carries the transaction's queued statements with it (store.Tx.Send).
// A debit is first taken from one row of its bucket, a spread entry's from
// its slot, any other's from the principal row; only if that row does not
// hold it does a second statement take the debits from their whole
// buckets. So an unspread debit the principal row covers (a refund, a
// deposit's clearing) locks no slot: the slots are the receipts' and their
// clearings', which lock them in their slots' lanes.
func postPostgres(ctx context.Context, tx *store.Tx, e Entry, legs []Leg) (int64, error) {
	id, states, err := postSlots(ctx, tx, e, legs, true)
	if err != nil || id != 0 {
		return id, err
	}
	if refusedInSlot(legs, states) {
		if id, states, err = postSlots(ctx, tx, e, legs, false); err != nil || id != 0 {
			return id, err
		}
	}
	return 0, refusal(e, legs, states)
}

// refusedInSlot reports whether a debit taken from a slot was refused for
// want of money there (the whole bucket may hold it).
func refusedInSlot(legs []Leg, states []legState) bool {
	for i, l := range legs {
		if i < len(states) && states[i].found && !states[i].allowNegative && l.Amount < 0 && states[i].balance+l.Amount < 0 {
			return true
		}
	}
	return false
}

// postSlots runs postOneStatement once: with fromSlot, debits are taken
// from one row, a spread entry's from the key's slot and any other's from
// the principal row; otherwise from their whole bucket.
// It returns the entry's id, or 0 and the legs' states when it was refused.
func postSlots(ctx context.Context, tx *store.Tx, e Entry, legs []Leg, fromSlot bool) (int64, []legState, error) {
	accounts := make([]int64, len(legs))
	names := make([]string, len(legs))
	amounts := make([]int64, len(legs))
	mayGoNeg := make([]bool, len(legs))
	slots := make([]int32, len(legs))
	slot := int32(spreadSlot(e.Spread))
	for i, l := range legs {
		accounts[i], names[i], amounts[i], mayGoNeg[i] = l.Account, string(l.Bucket), l.Amount, l.MayGoNegative
		switch {
		case l.Amount > 0 || mayGoNegative(l.Bucket):
			slots[i] = slot // cannot overdraw
		case fromSlot && !l.MayGoNegative:
			slots[i] = slot
		default:
			slots[i] = wholeBucket
		}
	}
	var record any
	if e.RecordID != "" {
		record = e.RecordID
	}
	args := []any{accounts, names, amounts, mayGoNeg, e.Currency, -MaxBalance, MaxBalance, e.MerchantID, slots}
	if tx.DB().Distributed() {
		return postCitus(ctx, tx, e, len(legs), record, args)
	}
	args = append(args, record, e.Kind, e.At.UnixMilli())
	var entryID sql.NullInt64
	states := make([]legState, 0, len(legs))
	err := tx.Query(ctx, postOneStatement, args, func(row store.Row) error {
		var s legState
		if err := row.Scan(&entryID, &s.found, &s.balance, &s.allowNegative); err != nil {
			return err
		}
		states = append(states, s)
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	if entryID.Valid {
		return entryID.Int64, nil, nil
	}
	return 0, states, nil
}

// postCitus is postSlots on Citus: postCitusStatement moves the balances,
// then the journal entry is inserted (its id read back) and its postings
// sent with the transaction's next statement, each statement routed to the
// merchant's shard.
func postCitus(ctx context.Context, tx *store.Tx, e Entry, legs int, record any, args []any) (int64, []legState, error) {
	var (
		moved                sql.NullBool
		buckets, amts, after []int64
		overdraft            []bool
	)
	states := make([]legState, 0, legs)
	err := tx.Query(ctx, postCitusStatement, args, func(row store.Row) error {
		var s legState
		if err := row.Scan(&moved, &s.found, &s.balance, &s.allowNegative, &buckets, &amts, &after, &overdraft); err != nil {
			return err
		}
		states = append(states, s)
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	if !moved.Bool {
		return 0, states, nil
	}
	var entryID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO journal_entries (merchant_id, balance_record_id, kind, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		e.MerchantID, record, e.Kind, e.At.UnixMilli()).Scan(&entryID); err != nil {
		return 0, nil, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	var values strings.Builder
	vals := []any{entryID, e.MerchantID, e.Currency}
	for i := range buckets {
		if i > 0 {
			values.WriteString(", ")
		}
		n := len(vals)
		fmt.Fprintf(&values, "($1, $2, $%d, $3, $%d, $%d, $%d)", n+1, n+2, n+3, n+4)
		vals = append(vals, buckets[i], amts[i], after[i], overdraft[i])
	}
	if err := tx.Send(ctx, `INSERT INTO postings (entry_id, merchant_id, bucket_id, currency, amount, balance_after, overdraft) VALUES `+values.String(), vals...); err != nil {
		return 0, nil, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	return entryID, nil, nil
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
		if after < 0 && l.Amount < 0 && !s.allowNegative && !l.MayGoNegative {
			return &fault.Error{Kind: fault.Invalid, Code: fault.CodeInsufficientFunds,
				Message: fmt.Sprintf("insufficient funds: the %s balance is lower than the amount required", l.Bucket)}
		}
	}
	return fmt.Errorf("post %s: refused, yet every leg fits", e.Kind)
}
