package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/store"
)

// Bucket names one of an account's balances.
type Bucket string

const (
	Available      Bucket = "available"
	Incoming       Bucket = "incoming"
	Outgoing       Bucket = "outgoing"
	RollingReserve Bucket = "rolling_reserve"
	// External is the counterpart of money entering or leaving payd (bank
	// transfers in, payouts out). It goes negative as money comes in.
	External Bucket = "external"
	// Fees is the counterpart of fees charged to the account.
	Fees Bucket = "fees"
)

// buckets lists every bucket an account has, with whether it may go negative.
var buckets = []struct {
	name          Bucket
	allowNegative bool
}{
	{Available, false},
	{Incoming, false},
	{Outgoing, false},
	{RollingReserve, false},
	{External, true},
	{Fees, true},
}

// OpenAccount creates the buckets of a new account, all at zero: on
// PostgreSQL each bucket with its spread slots (see Entry.Spread).
func OpenAccount(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, currency string) error {
	slots := slotsOf(tx.DB())
	var q strings.Builder
	q.WriteString("INSERT INTO ledger_buckets (merchant_id, account_id, name, currency, balance, allow_negative, slot) VALUES ")
	args := make([]any, 0, 6*len(buckets)*slots)
	for _, b := range buckets {
		for slot := range slots {
			if len(args) > 0 {
				q.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, 0, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6)
			args = append(args, merchantID, accountID, string(b.name), currency, b.allowNegative, slot)
		}
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("open ledger account %d: %w", accountID, err)
	}
	return nil
}

// MaxBalance bounds the magnitude of every bucket row (a bucket, or one of
// its slots), in minor units: far above any real balance, and far enough
// below the int64 limit that a bucket's slots summed, plus one more amount
// (at most money.MaxMinor), can never overflow, on either database.
const MaxBalance int64 = 1_000_000_000_000_000_000

// Leg is one side of a movement: Amount (signed, minor units) is added to the
// bucket of the account.
type Leg struct {
	Account int64
	Bucket  Bucket
	Amount  int64
	// MayGoNegative lets this leg take a merchant bucket below zero (a
	// card dispute on an emptied account: package dispute is the only
	// user). Counterpart buckets always may. A credit is always taken, also
	// into a bucket below zero, which it brings back up.
	MayGoNegative bool
}

// Entry is one balanced movement.
type Entry struct {
	MerchantID string
	Currency   string
	// Kind names the movement for people reading the journal ("deposit.receive").
	Kind string
	// RecordID is the balance record (Balance ID) the movement belongs to, if any.
	RecordID string
	// Spread, when set, is the key of a hot path's money (a payin's uuid):
	// on PostgreSQL the entry's legs that cannot overdraw (credits, and any
	// leg on a bucket that may go negative) go to the bucket's slot the key
	// picks instead of its principal row, so that concurrent receipts into
	// one account update different rows; a debit is taken from that slot
	// when the slot holds it, otherwise from the whole bucket (without a
	// key, from the principal row when it holds it). Entries that
	// credit money and later debit it (a receipt, its clearing) use the
	// same key, so the debit finds its slot. Lane names the store lane of
	// work on a key's slot.
	Spread string
	Legs   []Leg
	At     time.Time
}

// Post writes e: it locks the buckets in a fixed order (account id, then
// bucket name, then slot), applies each leg only if it does not overdraw,
// and appends the journal entry and its postings. On INSUFFICIENT_FUNDS
// nothing is written (the caller's transaction must be rolled back, which
// returning the error does). On PostgreSQL all of it is one statement (one
// round trip, however many legs; two when a debit's slot or principal row
// falls short, a refusal among them); on SQLite, whose single writer makes round trips cheap, each leg
// is its own conditional update.
func Post(ctx context.Context, tx *store.Tx, e Entry) (int64, error) {
	legs, err := normalise(e.Legs)
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	if tx.DB().OneWriter() {
		return postEach(ctx, tx, e, legs)
	}
	return postPostgres(ctx, tx, e, legs)
}

// spreadSlots is how many slots a bucket has besides its principal row on
// PostgreSQL (migration 0020 creates them for accounts opened before). More
// slots let more receipts into one account run side by side, each slot's
// lane committing fewer at a time; past a few, the lanes' commits cost more
// than the waiting they save (docs/benchmarks.md, bench-results/2026-11-23.md).
const spreadSlots = 4

// slotsOf is how many rows each bucket has on tx's database: its principal
// row and, on PostgreSQL, its spread slots. SQLite has one writer, so there
// is nothing to spread.
func slotsOf(db *store.DB) int {
	if db.OneWriter() {
		return 1
	}
	return 1 + spreadSlots
}

// FitCopy fits the buckets of a database dbcopy.Copy has just filled (payd
// copy) to its dialect's shape (slotsOf): on PostgreSQL every bucket copied
// from SQLite gets its spread slots, empty. Into SQLite, whose posts move a
// bucket's only row, it refuses a bucket with slots: PostgreSQL's spread
// balances are not gathered back.
func FitCopy(ctx context.Context, tx *sql.Tx, dst *store.DB) error {
	if slotsOf(dst) == 1 {
		var n int
		// spans merchants: payd copy fits every bucket at once
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM ledger_buckets WHERE slot > 0`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("the source's balances are spread over %d slot rows (PostgreSQL keeps hot balances so), which SQLite does not have: copy from PostgreSQL to PostgreSQL or Citus only", n)
		}
		return nil
	}
	// spans merchants, as above
	_, err := tx.ExecContext(ctx, `INSERT INTO ledger_buckets (merchant_id, account_id, name, currency, balance, allow_negative, slot)
		SELECT b.merchant_id, b.account_id, b.name, b.currency, 0, b.allow_negative, s.slot
		FROM ledger_buckets b CROSS JOIN generate_series(1, $1::int) AS s(slot)
		WHERE b.slot = 0 AND NOT EXISTS (SELECT 1 FROM ledger_buckets o
			WHERE o.merchant_id = b.merchant_id AND o.account_id = b.account_id AND o.name = b.name AND o.slot = s.slot)`, spreadSlots)
	return err
}

// spreadSlot is the slot (1..spreadSlots) of key, or the principal row (0)
// for no key.
func spreadSlot(key string) int {
	if key == "" {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return 1 + int(h.Sum32()%spreadSlots)
}

// Lane is the store lane (store.WithLane) for work on merchantID's money
// spread by key (Entry.Spread): the work of one slot is group-committed
// together, and the slots' lanes run side by side.
func Lane(merchantID, key string) string {
	return store.MerchantLane(merchantID) + "/" + strconv.Itoa(spreadSlot(key))
}

// mayGoNegative reports whether bucket b may go below zero.
func mayGoNegative(b Bucket) bool {
	for _, d := range buckets {
		if d.name == b {
			return d.allowNegative
		}
	}
	return false
}

// postEach is Post as one statement per leg, then the entry, then its postings.
func postEach(ctx context.Context, tx *store.Tx, e Entry, legs []Leg) (int64, error) {
	type applied struct {
		bucketID  int64
		amount    int64
		after     int64
		overdraft bool
	}
	done := make([]applied, 0, len(legs))
	for _, l := range legs {
		var id, after int64
		err := tx.QueryRowContext(ctx, `UPDATE ledger_buckets SET balance = balance + $1
			WHERE merchant_id = $8 AND account_id = $2 AND name = $3 AND currency = $4 AND (balance + $1 >= 0 OR allow_negative OR $5 OR $1 > 0)
			  AND balance + $1 BETWEEN $6 AND $7
			RETURNING id, balance`, l.Amount, l.Account, string(l.Bucket), e.Currency, l.MayGoNegative, -MaxBalance, MaxBalance, e.MerchantID).Scan(&id, &after)
		if err != nil {
			return 0, legError(ctx, tx, e, l, err)
		}
		done = append(done, applied{id, l.Amount, after, l.MayGoNegative && after < 0})
	}
	var entryID int64
	var record any
	if e.RecordID != "" {
		record = e.RecordID
	}
	if err := tx.QueryRowContext(ctx, `INSERT INTO journal_entries (merchant_id, balance_record_id, kind, created_at)
		VALUES ($1, $2, $3, $4) RETURNING id`, e.MerchantID, record, e.Kind, e.At.UnixMilli()).Scan(&entryID); err != nil {
		return 0, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	var q strings.Builder
	q.WriteString("INSERT INTO postings (entry_id, merchant_id, bucket_id, currency, amount, balance_after, overdraft) VALUES ")
	args := make([]any, 0, 7*len(done))
	for i, d := range done {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		args = append(args, entryID, e.MerchantID, d.bucketID, e.Currency, d.amount, d.after, d.overdraft)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return 0, fmt.Errorf("post %s: %w", e.Kind, err)
	}
	return entryID, nil
}

// normalise merges legs on the same bucket, drops zero legs, checks the entry
// balances, and sorts the legs into the lock order.
func normalise(in []Leg) ([]Leg, error) {
	type key struct {
		account int64
		bucket  Bucket
	}
	merged := map[key]*Leg{}
	var order []key
	var sum int64
	for _, l := range in {
		if l.Bucket == "" || l.Account == 0 {
			return nil, fmt.Errorf("leg without account or bucket")
		}
		if l.Amount > money.MaxMinor || l.Amount < -money.MaxMinor {
			return nil, fmt.Errorf("leg of %d is beyond the largest amount", l.Amount)
		}
		sum += l.Amount
		k := key{l.Account, l.Bucket}
		if m, ok := merged[k]; ok {
			m.Amount += l.Amount
			m.MayGoNegative = m.MayGoNegative || l.MayGoNegative
			continue
		}
		c := l
		merged[k] = &c
		order = append(order, k)
	}
	if sum != 0 {
		return nil, fmt.Errorf("entry does not balance: legs sum to %d", sum)
	}
	out := make([]Leg, 0, len(order))
	for _, k := range order {
		if merged[k].Amount != 0 {
			out = append(out, *merged[k])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("entry moves nothing")
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Bucket < out[j].Bucket
	})
	return out, nil
}

// legError explains why a leg's update matched no row: the bucket is missing
// (a programming error) or the movement would overdraw it.
func legError(ctx context.Context, tx *store.Tx, e Entry, l Leg, err error) error {
	if !isNoRows(err) {
		return fmt.Errorf("post %s: %w", e.Kind, err)
	}
	var balance int64
	if err := tx.QueryRowContext(ctx, `SELECT balance FROM ledger_buckets WHERE merchant_id = $1 AND account_id = $2 AND name = $3 AND currency = $4`,
		e.MerchantID, l.Account, string(l.Bucket), e.Currency).Scan(&balance); err != nil {
		return fmt.Errorf("post %s: no %s bucket in %s for account %d: %w", e.Kind, l.Bucket, e.Currency, l.Account, err)
	}
	if balance+l.Amount > MaxBalance || balance+l.Amount < -MaxBalance {
		return &fault.Error{Kind: fault.Invalid, Code: fault.CodeAmountOutOfRange,
			Message: fmt.Sprintf("the %s balance would exceed the largest balance payd holds", l.Bucket)}
	}
	return &fault.Error{Kind: fault.Invalid, Code: fault.CodeInsufficientFunds,
		Message: fmt.Sprintf("insufficient funds: the %s balance is lower than the amount required", l.Bucket)}
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// LockAccount locks every bucket of merchantID's account (its principal
// rows), in Post's lock order. A caller that changes rows of its own and
// posts in the same transaction, again and again (a batch of payout
// outcomes, say), takes it first, so that all such transactions wait on the
// account before anything else, instead of holding their own rows while
// waiting for buckets another holds. Every job that posts is such a caller:
// a worker runs a merchant's jobs in one transaction. Spread slots are not
// locked: only a post takes them, as the last lock of its statement, and
// holds them to its commit.
func LockAccount(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, currency string) error {
	_, err := LockAccountOf(ctx, tx, merchantID, accountOfID, accountID, currency)
	return err
}

// SendLockAccount is LockAccount sent (store.Tx.Send): the lock goes to
// the server with the transaction's next statement, in its round trip. It
// is for a change that posts once, with nothing else to lock before, which
// needs no lock of its own alone but runs in the merchant's lane: a group
// commit runs it in one transaction with the lane's other work (a worker's
// jobs, which lock the account), where a post that took only its legs' rows
// would leave the batch holding part of the account while a job after it
// waits for the rest, held by a refund waiting for that part.
func SendLockAccount(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, currency string) error {
	return SendLockAccountOf(ctx, tx, merchantID, accountOfID, accountID, currency)
}

// accountOfID is the account query of an account known by id and currency.
const accountOfID = `SELECT CAST($1 AS BIGINT) AS account_id, CAST($2 AS TEXT) AS currency`

// LockAccounts is LockAccount for each of merchantID's accounts ids (in one
// currency; 0 stands for none), in account id order: a change that posts to
// two accounts (a transfer, a settlement into a treasury account) takes both
// first, in the one order every such change takes them, so that two of them
// in opposite directions cannot deadlock.
func LockAccounts(ctx context.Context, tx *store.Tx, merchantID, currency string, ids ...int64) error {
	sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
	for _, id := range sorted {
		if id == 0 {
			continue
		}
		if err := LockAccount(ctx, tx, merchantID, id, currency); err != nil {
			return err
		}
	}
	return nil
}

// LockAccountOf is LockAccount for the account a row of merchantID names, in
// one statement: accountQuery selects that account's account_id and currency
// (merchantID follows args as the statement's last parameter). It reports
// whether accountQuery found the row. When accountQuery selects several
// accounts (the payins of a batch of jobs), it locks them all, in account id
// order, as LockAccounts does.
func LockAccountOf(ctx context.Context, tx *store.Tx, merchantID, accountQuery string, args ...any) (bool, error) {
	query, args := lockAccountOf(tx, merchantID, accountQuery, args)
	found := false
	err := tx.Query(ctx, query, args, func(store.Row) error {
		found = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("lock account: %w", err)
	}
	return found, nil
}

// SendLockAccountOf is LockAccountOf sent (store.Tx.Send), for a caller
// that learns from a later read whether the row was there: the lock goes
// to the server with that read, in its round trip.
func SendLockAccountOf(ctx context.Context, tx *store.Tx, merchantID, accountQuery string, args ...any) error {
	query, args := lockAccountOf(tx, merchantID, accountQuery, args)
	return tx.Send(ctx, query, args...)
}

// lockAccountOf is LockAccountOf's statement and its arguments.
func lockAccountOf(tx *store.Tx, merchantID, accountQuery string, args []any) (string, []any) {
	lock := tx.DB().ForUpdateOf("b")
	args = append(args[:len(args):len(args)], merchantID)
	return `SELECT b.id FROM ledger_buckets b
		JOIN (` + accountQuery + `) a ON b.account_id = a.account_id AND b.currency = a.currency
		WHERE b.merchant_id = $` + strconv.Itoa(len(args)) + ` AND b.slot = 0
		ORDER BY b.account_id, b.name` + lock, args
}
