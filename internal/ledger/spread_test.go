package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// receipt is a payin's receipt spread by key: amount comes in from outside
// into incoming.
func receipt(merchant string, account int64, key string, amount int64) ledger.Entry {
	return ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.receive", Spread: key, At: t0, Legs: []ledger.Leg{
		{Account: account, Bucket: ledger.External, Amount: -amount},
		{Account: account, Bucket: ledger.Incoming, Amount: amount},
	}}
}

// clearing moves a receipt's amount from incoming to available, spread by
// the receipt's key.
func clearing(merchant string, account int64, key string, amount int64) ledger.Entry {
	return ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.clear", Spread: key, At: t0.Add(time.Minute), Legs: []ledger.Leg{
		{Account: account, Bucket: ledger.Incoming, Amount: -amount},
		{Account: account, Bucket: ledger.Available, Amount: amount},
	}}
}

// rowsHolding counts the rows (slots) of an account's bucket that hold money.
func rowsHolding(t *testing.T, db *store.DB, account int64, bucket ledger.Bucket) int {
	t.Helper()
	return count(t, db, `SELECT count(*) FROM ledger_buckets WHERE account_id = $1 AND name = $2 AND balance <> 0`, account, string(bucket))
}

// TestSpreadEntries checks hot-bucket slots: spread entries put their money
// in the key's slot (PostgreSQL) and take it back from there, a debit its
// slot cannot cover takes the whole bucket, an unspread debit the principal
// row cannot cover gathers every slot, a bucket's balance is always the sum of its slots, and the ledger
// verifies clean throughout.
func TestSpreadEntries(t *testing.T) {
	t.Parallel()
	keys := []string{"payin-a", "payin-b", "payin-c", "payin-d", "payin-e", "payin-f", "payin-g", "payin-h"}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		var received int64
		for i, k := range keys {
			amount := int64(100 * (i + 1))
			received += amount
			if _, err := post(db, receipt(merchant, account, k, amount)); err != nil {
				t.Fatalf("receipt %s: %v", k, err)
			}
		}
		want := map[ledger.Bucket]int64{ledger.Incoming: received, ledger.External: -received}
		checkBuckets(t, db, account, want)
		spread := rowsHolding(t, db, account, ledger.Incoming)
		if db.Dialect() == store.Postgres && spread < 2 {
			t.Errorf("incoming is held in %d rows after 8 spread receipts, want them spread over several slots", spread)
		}
		if db.Dialect() == store.SQLite && spread != 1 {
			t.Errorf("incoming is held in %d rows on SQLite, want its one row", spread)
		}

		// Each clearing takes back what its receipt put in its slot.
		for i, k := range keys {
			if _, err := post(db, clearing(merchant, account, k, int64(100*(i+1)))); err != nil {
				t.Fatalf("clearing %s: %v", k, err)
			}
		}
		want = map[ledger.Bucket]int64{ledger.Available: received, ledger.External: -received}
		checkBuckets(t, db, account, want)
		if n := rowsHolding(t, db, account, ledger.Incoming); n != 0 {
			t.Errorf("%d incoming rows still hold money after every clearing", n)
		}

		// A spread debit that no one slot holds (the receipts are in
		// several) takes the whole bucket.
		taken := received - 100
		other := ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.spread_debit", Spread: keys[0], At: t0.Add(2 * time.Minute),
			Legs: []ledger.Leg{{Account: account, Bucket: ledger.Available, Amount: -taken}, {Account: account, Bucket: ledger.External, Amount: taken}}}
		if _, err := post(db, other); err != nil {
			t.Fatalf("spread debit from other slots: %v", err)
		}
		want = map[ledger.Bucket]int64{ledger.Available: 100, ledger.External: -100}
		checkBuckets(t, db, account, want)
		if n := rowsHolding(t, db, account, ledger.Available); n != 1 {
			t.Errorf("available is held in %d rows after a debit of the whole bucket, want it gathered into one", n)
		}

		// More than the bucket holds is refused and changes nothing.
		_, err := post(db, movement(merchant, account, -101))
		if !fault.Is(err, fault.CodeInsufficientFunds) {
			t.Errorf("debit beyond the balance: %v, want INSUFFICIENT_FUNDS", err)
		}
		checkBuckets(t, db, account, want)

		// An unspread debit needing money from several slots.
		for i, k := range keys[:3] {
			if _, err := post(db, receipt(merchant, account, k, 10)); err != nil {
				t.Fatalf("receipt: %v", err)
			}
			if _, err := post(db, clearing(merchant, account, k, 10)); err != nil {
				t.Fatalf("clearing %d: %v", i, err)
			}
		}
		entry, err := post(db, movement(merchant, account, -130))
		if err != nil {
			t.Fatalf("debit of the whole balance: %v", err)
		}
		checkBuckets(t, db, account, map[ledger.Bucket]int64{ledger.External: 0})
		var net int64
		if err := db.Read().QueryRow(`SELECT CAST(SUM(p.amount) AS BIGINT) FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
			WHERE p.entry_id = $1 AND b.name = 'available'`, entry).Scan(&net); err != nil {
			t.Fatal(err)
		}
		if net != -130 {
			t.Errorf("the debit's available postings sum to %d, want -130", net)
		}
		n := count(t, db, `SELECT count(*) FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
			WHERE p.entry_id = $1 AND b.name = 'available'`, entry)
		if pg := db.Dialect() == store.Postgres; pg && n < 2 || !pg && n != 1 {
			t.Errorf("the debit has %d available postings; want one per slot it gathered (SQLite: 1)", n)
		}

		// Balance history nets each entry over the slots.
		opening, moves, err := ledger.BucketHistory(t.Context(), db.Read(), merchant, account, ledger.Available, t0, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		sum := opening
		for _, m := range moves {
			if m.Amount == 0 {
				t.Errorf("a move of 0 at %v: an entry's gathering shows as a move", m.At)
			}
			sum += m.Amount
		}
		// The 8 clearings, the spread debit, 3 more clearings, the last debit.
		if wantMoves := len(keys) + 1 + 3 + 1; opening != 0 || sum != 0 || len(moves) != wantMoves {
			t.Errorf("history: opening %d, %d moves summing to %d; want 0, %d moves, 0", opening, len(moves), sum, wantMoves)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// TestUnspreadDebitLocksNoSlot: an unspread debit (a refund, a deposit's
// clearing) that the bucket's principal row covers is taken from that row,
// and locks none of the slots, which receipts and their clearings hold in
// their slots' lanes: taking them after the account's principal rows, as a
// whole-bucket debit does, it would deadlock with a slot's group commit,
// which takes its rows in the order its items come. The slots keep their
// money, and the balance is the same.
func TestUnspreadDebitLocksNoSlot(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite has one row per bucket and no row locks")
		}
		merchant, account := newJPYAccount(t, db)
		keys := []string{"payin-a", "payin-b", "payin-c", "payin-d", "payin-e", "payin-f"}
		for _, k := range keys {
			if _, err := post(db, receipt(merchant, account, k, 100)); err != nil {
				t.Fatal(err)
			}
			if _, err := post(db, clearing(merchant, account, k, 100)); err != nil {
				t.Fatal(err)
			}
		}
		deposit(t, db, merchant, account, 1000) // into the principal row
		spread := rowsHolding(t, db, account, ledger.Available)
		ctx := context.Background()
		var lockable int
		err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := ledger.Post(ctx, tx, movement(merchant, account, -700)); err != nil {
				return err
			}
			// Another transaction counts the available slots it could lock.
			return db.Exec(ctx, func(probe *store.Tx) error {
				return probe.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT id FROM ledger_buckets
					WHERE merchant_id = $1 AND account_id = $2 AND name = 'available' AND slot > 0 FOR UPDATE SKIP LOCKED) f`,
					merchant, account).Scan(&lockable)
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if slots := count(t, db, `SELECT count(*) FROM ledger_buckets WHERE account_id = $1 AND name = 'available' AND slot > 0`, account); lockable != slots {
			t.Errorf("the debit held %d of the %d available slots, want none", slots-lockable, slots)
		}
		if got := rowsHolding(t, db, account, ledger.Available); got != spread {
			t.Errorf("available is held in %d rows after the debit, want the %d before (nothing gathered)", got, spread)
		}
		checkBuckets(t, db, account, map[ledger.Bucket]int64{ledger.Available: 600 + 300, ledger.External: -600 - 300})
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// checkBuckets compares an account's bucket totals (ledger.Balances and
// the rows summed) with want, which lists every non-zero bucket.
func checkBuckets(t *testing.T, db *store.DB, account int64, want map[ledger.Bucket]int64) {
	t.Helper()
	got := buckets(t, db, account)
	for _, b := range []ledger.Bucket{ledger.Available, ledger.Incoming, ledger.Outgoing, ledger.RollingReserve, ledger.External, ledger.Fees} {
		if got[b] != want[b] {
			t.Errorf("%s = %d, want %d", b, got[b], want[b])
		}
	}
	var merchant string
	if err := db.Read().QueryRow(`SELECT merchant_id FROM accounts WHERE id = $1`, account).Scan(&merchant); err != nil {
		t.Fatal(err)
	}
	bs, err := ledger.Balances(t.Context(), db.Read(), merchant, "payments", "JPY")
	if err != nil || len(bs) != 1 {
		t.Fatalf("Balances: %v, %v", bs, err)
	}
	if bs[0].Available != want[ledger.Available] || bs[0].Incoming != want[ledger.Incoming] || bs[0].Withdrawable != want[ledger.Available] {
		t.Errorf("Balances = %+v, want available %d and incoming %d", bs[0], want[ledger.Available], want[ledger.Incoming])
	}
}

// TestSpreadConcurrent races receipts and their clearings, spread by random
// keys, with unspread payouts from available, each in its own transaction:
// every total must be exactly what the accepted movements add up to, no row
// may ever go below zero, and the ledger must verify clean.
func TestSpreadConcurrent(t *testing.T) {
	t.Parallel()
	const (
		goroutines = 12
		rounds     = 30
	)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		var received, paidOut, refused atomic.Int64
		unexpected := make(chan error, goroutines*rounds*3)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 11))
				<-start
				for i := range rounds {
					key := fmt.Sprintf("payin-%d-%d", g, i)
					amount := rng.Int64N(100) + 1
					if _, err := post(db, receipt(merchant, account, key, amount)); err != nil {
						unexpected <- fmt.Errorf("receipt: %w", err)
						continue
					}
					received.Add(amount)
					if _, err := post(db, clearing(merchant, account, key, amount)); err != nil {
						unexpected <- fmt.Errorf("clearing: %w", err)
						continue
					}
					out := rng.Int64N(120) + 1
					_, err := post(db, movement(merchant, account, -out))
					switch {
					case err == nil:
						paidOut.Add(out)
					case fault.Is(err, fault.CodeInsufficientFunds):
						refused.Add(1)
					default:
						unexpected <- fmt.Errorf("payout: %w", err)
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(unexpected)
		for err := range unexpected {
			t.Errorf("%v", err)
		}
		t.Logf("received %d, paid out %d, %d payouts refused", received.Load(), paidOut.Load(), refused.Load())
		if refused.Load() == 0 || paidOut.Load() == 0 {
			t.Errorf("%d payouts refused, %d paid out; want both, or the test proves nothing", refused.Load(), paidOut.Load())
		}
		checkBuckets(t, db, account, map[ledger.Bucket]int64{
			ledger.Available: received.Load() - paidOut.Load(),
			ledger.External:  -received.Load() + paidOut.Load(),
		})
		if n := count(t, db, `SELECT count(*) FROM ledger_buckets WHERE account_id = $1 AND balance < 0 AND name <> 'external'`, account); n != 0 {
			t.Errorf("%d rows below zero", n)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}
