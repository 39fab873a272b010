package ledger_test

import (
	"context"
	"slices"
	"testing"

	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

func TestBalances(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant := newMerchant(t, db)
		jpy := newAccount(t, db, merchant, "payments", "JPY")
		usd := newAccount(t, db, merchant, "payments", "USD")
		eur := newAccount(t, db, merchant, "payments", "EUR")
		treasury := newAccount(t, db, merchant, "treasury", "JPY")
		other := newMerchant(t, db)
		otherJPY := newAccount(t, db, other, "payments", "JPY")

		move := func(merchantID string, account int64, currency string, legs map[ledger.Bucket]int64) {
			t.Helper()
			var ls []ledger.Leg
			var sum int64
			for b, amount := range legs {
				ls = append(ls, ledger.Leg{Account: account, Bucket: b, Amount: amount})
				sum += amount
			}
			ls = append(ls, ledger.Leg{Account: account, Bucket: ledger.External, Amount: -sum})
			if _, err := post(db, ledger.Entry{MerchantID: merchantID, Currency: currency, Kind: "test.fund", At: t0, Legs: ls}); err != nil {
				t.Fatalf("fund %d: %v", account, err)
			}
		}
		move(merchant, jpy, "JPY", map[ledger.Bucket]int64{ledger.Available: 10_000, ledger.Incoming: 2_000, ledger.Outgoing: 300, ledger.RollingReserve: 45})
		move(merchant, usd, "USD", map[ledger.Bucket]int64{ledger.Available: 500})
		move(merchant, eur, "EUR", map[ledger.Bucket]int64{ledger.Available: 700})
		move(merchant, treasury, "JPY", map[ledger.Bucket]int64{ledger.Available: 9})
		move(other, otherJPY, "JPY", map[ledger.Bucket]int64{ledger.Available: 1})
		// Withdrawable is available less min_balance, floored at zero.
		exec(t, db, `UPDATE accounts SET min_balance = 2500 WHERE id = $1`, jpy)
		exec(t, db, `UPDATE accounts SET min_balance = 800 WHERE id = $1`, usd)
		exec(t, db, `UPDATE accounts SET min_balance = 700 WHERE id = $1`, eur)

		wantJPY := ledger.Balance{AccountID: jpy, Currency: "JPY", Available: 10_000, Incoming: 2_000, Outgoing: 300, RollingReserve: 45, Withdrawable: 7_500}
		wantUSD := ledger.Balance{AccountID: usd, Currency: "USD", Available: 500, Withdrawable: 0}
		wantEUR := ledger.Balance{AccountID: eur, Currency: "EUR", Available: 700, Withdrawable: 0}
		tests := []struct {
			name               string
			merchant, kind, cu string
			want               []ledger.Balance
		}{
			{"every currency, by currency", merchant, "payments", "", []ledger.Balance{wantEUR, wantJPY, wantUSD}},
			{"one currency", merchant, "payments", "USD", []ledger.Balance{wantUSD}},
			{"treasury kind", merchant, "treasury", "", []ledger.Balance{{AccountID: treasury, Currency: "JPY", Available: 9, Withdrawable: 9}}},
			{"other merchant sees only its own", other, "payments", "", []ledger.Balance{{AccountID: otherJPY, Currency: "JPY", Available: 1, Withdrawable: 1}}},
			{"currency without account", merchant, "payments", "GBP", nil},
			{"unknown merchant", "NOSUCHID", "payments", "", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := ledger.Balances(context.Background(), db.Read(), tt.merchant, tt.kind, tt.cu)
				if err != nil {
					t.Fatalf("Balances: %v", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("Balances = %+v\nwant %+v", got, tt.want)
				}
			})
		}
	})
}

// TestBalancesWithdrawable runs the min_balance rule through its edges on one account.
func TestBalancesWithdrawable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		deposit(t, db, merchant, account, 1000)
		tests := []struct {
			name       string
			minBalance int64
			want       int64
		}{
			{"no minimum", 0, 1000},
			{"minimum below available", 999, 1},
			{"minimum equal to available", 1000, 0},
			{"minimum above available", 5000, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				exec(t, db, `UPDATE accounts SET min_balance = $1 WHERE id = $2`, tt.minBalance, account)
				got, err := ledger.Balances(context.Background(), db.Read(), merchant, "payments", "JPY")
				if err != nil || len(got) != 1 {
					t.Fatalf("Balances = %+v, %v; want one balance", got, err)
				}
				if got[0].Withdrawable != tt.want || got[0].Available != 1000 {
					t.Errorf("available %d, withdrawable %d; want 1000, %d", got[0].Available, got[0].Withdrawable, tt.want)
				}
			})
		}
	})
}
