package ledger_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// movement moves amount into the account's available bucket from outside
// (a credit) or, when amount is negative, out of it (a debit).
func movement(merchant string, account, amount int64) ledger.Entry {
	return ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.race", At: t0, Legs: []ledger.Leg{
		{Account: account, Bucket: ledger.Available, Amount: amount},
		{Account: account, Bucket: ledger.External, Amount: -amount},
	}}
}

// TestPostConcurrentNoOverdraft races goroutines crediting and debiting one
// account's available bucket, each movement in its own transaction, from a
// small balance so that many debits must be refused. The balance must be
// exactly the sum of the accepted movements, and no posting may ever have
// seen it below zero.
func TestPostConcurrentNoOverdraft(t *testing.T) {
	t.Parallel()
	const (
		goroutines = 16
		movements  = 50
		opening    = 100
	)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		deposit(t, db, merchant, account, opening)

		var accepted, refused, acceptedSum atomic.Int64
		unexpected := make(chan error, goroutines*movements)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 7))
				<-start
				for range movements {
					// Debits slightly outnumber credits, so the balance keeps
					// coming back down to where debits are refused.
					amount := rng.Int64N(150) + 1
					if rng.IntN(100) < 55 {
						amount = -amount
					}
					_, err := post(db, movement(merchant, account, amount))
					switch {
					case err == nil:
						accepted.Add(1)
						acceptedSum.Add(amount)
					case fault.Is(err, fault.CodeInsufficientFunds):
						refused.Add(1)
					default:
						unexpected <- err
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(unexpected)
		for err := range unexpected {
			t.Errorf("Post: %v", err)
		}

		t.Logf("%d accepted, %d refused", accepted.Load(), refused.Load())
		if accepted.Load()+refused.Load() != goroutines*movements {
			t.Errorf("%d accepted + %d refused, want %d movements", accepted.Load(), refused.Load(), goroutines*movements)
		}
		if refused.Load() == 0 || accepted.Load() == 0 {
			t.Errorf("%d accepted, %d refused; want both, or the test proves nothing", accepted.Load(), refused.Load())
		}
		want := opening + acceptedSum.Load()
		got := buckets(t, db, account)
		if got[ledger.Available] != want || got[ledger.External] != -want {
			t.Errorf("available %d, external %d; want %d, %d", got[ledger.Available], got[ledger.External], want, -want)
		}
		var postings, minAfter int64
		err := db.Read().QueryRow(`SELECT count(*), COALESCE(MIN(p.balance_after), 0) FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
			WHERE b.account_id = $1 AND b.name = 'available'`, account).Scan(&postings, &minAfter)
		if err != nil {
			t.Fatalf("read postings: %v", err)
		}
		if postings != accepted.Load()+1 {
			t.Errorf("%d available postings, want %d (accepted movements and the opening deposit)", postings, accepted.Load()+1)
		}
		if minAfter < 0 {
			t.Errorf("an available posting has balance_after %d, want never below zero", minAfter)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// TestPostConcurrentTransfers races transfers in both directions between two
// accounts. Legs lock buckets in a fixed order, so opposite transfers must not
// deadlock; money is neither made nor lost, and neither account overdraws.
func TestPostConcurrentTransfers(t *testing.T) {
	t.Parallel()
	const (
		goroutines = 8
		transfers  = 40
		opening    = 300
	)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, a := newJPYAccount(t, db)
		b := newAccount(t, db, merchant, "treasury", "JPY")
		deposit(t, db, merchant, a, opening)
		deposit(t, db, merchant, b, opening)

		var refused atomic.Int64
		unexpected := make(chan error, goroutines*transfers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range goroutines {
			from, to := []int64{a, b}[g%2], []int64{b, a}[g%2]
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 11))
				<-start
				for range transfers {
					amount := rng.Int64N(200) + 1
					_, err := post(db, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.transfer", At: t0, Legs: []ledger.Leg{
						{Account: from, Bucket: ledger.Available, Amount: -amount},
						{Account: to, Bucket: ledger.Available, Amount: amount},
					}})
					switch {
					case err == nil:
					case fault.Is(err, fault.CodeInsufficientFunds):
						refused.Add(1)
					default:
						unexpected <- err
					}
				}
			})
		}
		close(start)
		wg.Wait()
		close(unexpected)
		for err := range unexpected {
			t.Errorf("Post: %v", err)
		}
		t.Logf("%d of %d transfers refused", refused.Load(), goroutines*transfers)
		balA, balB := buckets(t, db, a)[ledger.Available], buckets(t, db, b)[ledger.Available]
		if balA+balB != 2*opening || balA < 0 || balB < 0 {
			t.Errorf("available a %d + b %d, want %d in total, neither negative", balA, balB, 2*opening)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}
