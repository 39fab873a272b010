package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/store"
)

// t0 is the instant the ledger tests happen at.
var t0 = time.Date(2025, time.March, 3, 9, 30, 0, 0, time.UTC)

// newMerchant inserts a merchant row and returns its id.
func newMerchant(t testing.TB, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	id := store.RandomID(store.UUIDLen)
	err := db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at)
			VALUES ($1, 'Test Merchant', 'JP', 'Asia/Tokyo', 'whsec_test', $2)`, id, t0.UnixMilli())
		return err
	})
	if err != nil {
		t.Fatalf("insert merchant: %v", err)
	}
	return id
}

// newAccount inserts an account of merchantID and opens its ledger buckets.
func newAccount(t testing.TB, db *store.DB, merchantID, kind, currency string) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := store.Do(ctx, db, func(tx *store.Tx) (int64, error) {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO accounts (merchant_id, kind, currency, account_number, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, merchantID, kind, currency, store.RandomDigits(12), t0.UnixMilli()).Scan(&id)
		if err != nil {
			return 0, err
		}
		return id, ledger.OpenAccount(ctx, tx, merchantID, id, currency)
	})
	if err != nil {
		t.Fatalf("open account: %v", err)
	}
	return id
}

// newJPYAccount is a merchant with one JPY payments account.
func newJPYAccount(t testing.TB, db *store.DB) (merchantID string, accountID int64) {
	t.Helper()
	merchantID = newMerchant(t, db)
	return merchantID, newAccount(t, db, merchantID, "payments", "JPY")
}

// post runs one Post in its own transaction.
func post(db *store.DB, e ledger.Entry) (int64, error) {
	return store.Do(context.Background(), db, func(tx *store.Tx) (int64, error) {
		return ledger.Post(context.Background(), tx, e)
	})
}

// deposit moves amount from the outside world into the account's available
// bucket; a zero amount deposits nothing.
func deposit(t testing.TB, db *store.DB, merchantID string, accountID, amount int64) {
	t.Helper()
	if amount == 0 {
		return
	}
	_, err := post(db, ledger.Entry{MerchantID: merchantID, Currency: "JPY", Kind: "test.deposit", At: t0, Legs: []ledger.Leg{
		{Account: accountID, Bucket: ledger.External, Amount: -amount},
		{Account: accountID, Bucket: ledger.Available, Amount: amount},
	}})
	if err != nil {
		t.Fatalf("deposit %d: %v", amount, err)
	}
}

// buckets reads the non-zero bucket balances of an account, each the sum of
// its slots.
func buckets(t testing.TB, db *store.DB, accountID int64) map[ledger.Bucket]int64 {
	t.Helper()
	rows, err := db.Read().Query(`SELECT name, balance FROM ledger_buckets WHERE account_id = $1`, accountID)
	if err != nil {
		t.Fatalf("read buckets: %v", err)
	}
	defer rows.Close()
	out := map[ledger.Bucket]int64{}
	for rows.Next() {
		var name string
		var balance int64
		if err := rows.Scan(&name, &balance); err != nil {
			t.Fatalf("read buckets: %v", err)
		}
		out[ledger.Bucket(name)] += balance
	}
	for name, balance := range out {
		if balance == 0 {
			delete(out, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read buckets: %v", err)
	}
	return out
}

// count runs a SELECT count(*) … query.
func count(t testing.TB, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// exec runs raw SQL in a transaction, for tampering and setup.
func exec(t testing.TB, db *store.DB, query string, args ...any) {
	t.Helper()
	err := db.Exec(context.Background(), func(tx *store.Tx) error {
		_, err := tx.ExecContext(context.Background(), query, args...)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// errCode names an error for comparison in tables: "" for nil, the fault code
// for a domain error, "error" for anything else.
func errCode(err error) string {
	if err == nil {
		return ""
	}
	if f, ok := fault.As(err); ok {
		return f.Code
	}
	return "error"
}

// verifyChecks runs Verify and returns the names of the checks that failed.
func verifyChecks(t testing.TB, db *store.DB) []string {
	t.Helper()
	problems, err := ledger.Verify(context.Background(), db.Read())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return checkNames(problems)
}

// checkNames returns the sorted names of the checks problems came from, once each.
func checkNames(problems []ledger.Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, p.Check)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
