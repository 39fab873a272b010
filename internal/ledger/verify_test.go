package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// soundLedger writes a small ledger with every kind of row Verify reads and
// returns the account, the entry of the payout and its available posting.
func soundLedger(t *testing.T, db *store.DB) (account, payoutEntry, payoutPosting int64) {
	t.Helper()
	ctx := context.Background()
	merchant, account := newJPYAccount(t, db)
	deposit(t, db, merchant, account, 1000)
	payoutEntry, err := store.Do(ctx, db, func(tx *store.Tx) (int64, error) {
		r := &ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyOut,
			TransactionType: ledger.Payout, Amount: 300, Fees: 20, Total: 320, CreatedAt: t0}
		if err := ledger.CreateRecord(ctx, tx, r); err != nil {
			return 0, err
		}
		return ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "payout", RecordID: r.ID, At: t0, Legs: []ledger.Leg{
			{Account: account, Bucket: ledger.Available, Amount: -320},
			{Account: account, Bucket: ledger.External, Amount: 300},
			{Account: account, Bucket: ledger.Fees, Amount: 20},
		}})
	})
	if err != nil {
		t.Fatalf("payout: %v", err)
	}
	deposit(t, db, merchant, account, 50)
	err = db.Read().QueryRow(`SELECT p.id FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
		WHERE p.entry_id = $1 AND b.name = 'available'`, payoutEntry).Scan(&payoutPosting)
	if err != nil {
		t.Fatalf("find posting: %v", err)
	}
	return account, payoutEntry, payoutPosting
}

func TestVerifySound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		soundLedger(t, db)
		soundLedger(t, db)
		problems, err := ledger.Verify(context.Background(), db.Read())
		if err != nil || len(problems) != 0 {
			t.Errorf("Verify = %v, %v; want no problems", problems, err)
		}
	})
}

func TestVerifyEmpty(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		problems, err := ledger.Verify(context.Background(), db.Read())
		if err != nil || len(problems) != 0 {
			t.Errorf("Verify = %v, %v; want no problems", problems, err)
		}
	})
}

// ledgerRows names the rows of soundLedger that the tampering cases change.
type ledgerRows struct {
	account, payoutEntry, payoutPosting int64
}

// TestVerifyFindsBreaks tampers with a sound ledger in one way per case and
// checks Verify names exactly the invariants that tampering breaks. Each case
// tampers and verifies inside a transaction that is then rolled back, so the
// breaks do not add up.
func TestVerifyFindsBreaks(t *testing.T) {
	t.Parallel()
	type sqlArgs struct {
		query string
		args  []any
		// unchecked runs the tampering with foreign keys unchecked: since
		// migration 0021 they include merchant_id, so the database itself
		// refuses a row naming another merchant than the row it points at.
		unchecked bool
	}
	tests := []struct {
		name   string
		tamper func(l ledgerRows) sqlArgs
		want   []string
	}{
		{"bucket balance changed", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE ledger_buckets SET balance = balance + 1 WHERE account_id = $1 AND name = 'available' AND slot = 0`, args: []any{l.account}}
		}, []string{"bucket_sum"}},
		{"posting amount changed", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE postings SET amount = amount + 5 WHERE id = $1`, args: []any{l.payoutPosting}}
		}, []string{"bucket_sum", "entry_balances", "running_balance"}},
		{"non-negative bucket below zero", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE ledger_buckets SET balance = -5 WHERE account_id = $1 AND name = 'incoming' AND slot = 0`, args: []any{l.account}}
		}, []string{"bucket_sum", "non_negative"}},
		{"wrong balance_after", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE postings SET balance_after = balance_after + 7 WHERE id = $1`, args: []any{l.payoutPosting}}
		}, []string{"running_balance"}},
		{"entry without postings", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `INSERT INTO journal_entries (merchant_id, kind, created_at) SELECT merchant_id, 'orphan', 0 FROM journal_entries WHERE id = $1`, args: []any{l.payoutEntry}}
		}, []string{"entry_has_postings"}},
		{"postings in another currency", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE postings SET currency = 'USD' WHERE entry_id = $1`, args: []any{l.payoutEntry}}
		}, []string{"posting_currency"}},
		{"entry of another merchant's record", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE journal_entries SET merchant_id = 'SOMEONE' WHERE id = $1`, args: []any{l.payoutEntry}, unchecked: true}
		}, []string{"entry_has_postings", "posting_owner", "record_owner"}},
		{"posting naming another merchant", func(l ledgerRows) sqlArgs {
			return sqlArgs{query: `UPDATE postings SET merchant_id = 'SOMEONE' WHERE id = $1`, args: []any{l.payoutPosting}, unchecked: true}
			// Seen from either merchant, the posting is missing from its
			// entry and bucket, and the other merchant's has neither.
		}, []string{"bucket_sum", "entry_balances", "posting_bucket_owner", "posting_owner", "running_balance"}},
	}
	errRollback := errors.New("roll back the tampering")
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		account, entry, posting := soundLedger(t, db)
		rows := ledgerRows{account, entry, posting}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got []string
				sa := tt.tamper(rows)
				if sa.unchecked && db.Citus() {
					t.Skip("Citus refuses outright to move a row to another merchant (merchant_id is its distribution column)")
				}
				err := db.Exec(ctx, func(tx *store.Tx) error {
					if sa.unchecked {
						if err := uncheckForeignKeys(ctx, db, tx); err != nil {
							return err
						}
					}
					res, err := tx.ExecContext(ctx, sa.query, sa.args...)
					if err != nil {
						return err
					}
					if n, err := res.RowsAffected(); n == 0 || err != nil {
						return fmt.Errorf("tamper touched %d rows: %v", n, err)
					}
					problems, err := ledger.Verify(ctx, tx)
					if err != nil {
						return err
					}
					got = checkNames(problems)
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("tamper: %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("Verify found %v, want %v", got, tt.want)
				}
			})
		}
		// The rollbacks left the ledger as sound as it was.
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify after the cases found %v, want nothing", got)
		}
	})
}

// TestVerifyAcceptsAllowedOverdraft: a movement that says it may take a
// merchant bucket below zero is not a break; the same balance reached
// without that permission is.
func TestVerifyAcceptsAllowedOverdraft(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID, acc := newJPYAccount(t, db)
		deposit(t, db, merchantID, acc, 20)
		if _, err := post(db, ledger.Entry{MerchantID: merchantID, Currency: "JPY", Kind: "chargeback", At: time.Now(),
			Legs: []ledger.Leg{{Account: acc, Bucket: ledger.Available, Amount: -50, MayGoNegative: true}, {Account: acc, Bucket: ledger.External, Amount: 50}}}); err != nil {
			t.Fatalf("post: %v", err)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("verify after an allowed overdraft = %v, want no problems", got)
		}
		exec(t, db, `UPDATE postings SET overdraft = $1`, false)
		got := verifyChecks(t, db)
		if len(got) == 0 {
			t.Errorf("verify after clearing the overdraft flags found nothing, want non_negative problems")
		}
	})
}

// TestCreditIntoOverdrawnBucket: a credit into a bucket an allowed
// overdraft took below zero is taken, also one that leaves it below zero,
// and is no break; a debit of it without permission is still refused
// while it is below zero, and taken again once credits covered it.
func TestCreditIntoOverdrawnBucket(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID, acc := newJPYAccount(t, db)
		deposit(t, db, merchantID, acc, 20)
		if _, err := post(db, ledger.Entry{MerchantID: merchantID, Currency: "JPY", Kind: "dispute.open", At: time.Now(),
			Legs: []ledger.Leg{{Account: acc, Bucket: ledger.Available, Amount: -100, MayGoNegative: true}, {Account: acc, Bucket: ledger.Outgoing, Amount: 100}}}); err != nil {
			t.Fatalf("overdraft: %v", err)
		}
		deposit(t, db, merchantID, acc, 30) // -80 → -50
		if got := buckets(t, db, acc)[ledger.Available]; got != -50 {
			t.Fatalf("available after a credit into -80: %d, want -50", got)
		}
		debit := ledger.Entry{MerchantID: merchantID, Currency: "JPY", Kind: "payout", At: time.Now(),
			Legs: []ledger.Leg{{Account: acc, Bucket: ledger.Available, Amount: -1}, {Account: acc, Bucket: ledger.External, Amount: 1}}}
		if _, err := post(db, debit); errCode(err) != "INSUFFICIENT_FUNDS" {
			t.Errorf("a debit while below zero: %v, want INSUFFICIENT_FUNDS", err)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("verify with a credit into an overdrawn bucket = %v, want no problems", got)
		}
		deposit(t, db, merchantID, acc, 51)
		if _, err := post(db, debit); err != nil {
			t.Errorf("a debit once covered: %v", err)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("verify = %v, want no problems", got)
		}
	})
}

// uncheckForeignKeys lets tx write rows that break foreign keys, which it
// rolls back: SQLite checks them at the commit only, PostgreSQL skips them
// (as a replica applying changes does; the tests connect as a superuser).
func uncheckForeignKeys(ctx context.Context, db *store.DB, tx *store.Tx) error {
	stmt := `PRAGMA defer_foreign_keys = ON`
	if db.Dialect() == store.Postgres {
		stmt = `SET LOCAL session_replication_role = replica`
	}
	_, err := tx.ExecContext(ctx, stmt)
	return err
}
