package ledger_test

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// posting is one row of postings, with its account named "a" or "b".
type posting struct {
	Account      string
	Bucket       ledger.Bucket
	Amount       int64
	BalanceAfter int64
}

// entryPostings reads the postings of entryID in id order, naming accounts by names.
func entryPostings(t *testing.T, db *store.DB, entryID int64, names map[int64]string) []posting {
	t.Helper()
	rows, err := db.Read().Query(`SELECT b.account_id, b.name, p.amount, p.balance_after
		FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id WHERE p.entry_id = $1 ORDER BY p.id`, entryID)
	if err != nil {
		t.Fatalf("read postings: %v", err)
	}
	defer rows.Close()
	var out []posting
	for rows.Next() {
		var p posting
		var account int64
		if err := rows.Scan(&account, &p.Bucket, &p.Amount, &p.BalanceAfter); err != nil {
			t.Fatalf("read postings: %v", err)
		}
		p.Account = names[account]
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read postings: %v", err)
	}
	return out
}

type balances = map[ledger.Bucket]int64

func TestPost(t *testing.T) {
	t.Parallel()
	const (
		avail = ledger.Available
		ext   = ledger.External
		fees  = ledger.Fees
		inc   = ledger.Incoming
	)
	tests := []struct {
		name     string
		funded   int64 // deposited into a's available bucket first
		currency string
		legs     func(a, b int64) []ledger.Leg
		wantErr  string
		wantA    balances
		wantB    balances
		// wantPostings are the postings of the new entry, in lock order.
		wantPostings []posting
	}{
		{
			name: "money in", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: ext, Amount: -1000}, {Account: a, Bucket: avail, Amount: 1000}}
			},
			wantA:        balances{avail: 1000, ext: -1000},
			wantPostings: []posting{{"a", avail, 1000, 1000}, {"a", ext, -1000, -1000}},
		},
		{
			name: "money out of a funded account", funded: 500, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -200}, {Account: a, Bucket: ext, Amount: 200}}
			},
			wantA:        balances{avail: 300, ext: -300},
			wantPostings: []posting{{"a", avail, -200, 300}, {"a", ext, 200, -300}},
		},
		{
			name: "between two accounts", funded: 300, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: b, Bucket: avail, Amount: 300}, {Account: a, Bucket: avail, Amount: -300}}
			},
			wantA:        balances{ext: -300},
			wantB:        balances{avail: 300},
			wantPostings: []posting{{"a", avail, -300, 0}, {"b", avail, 300, 300}},
		},
		{
			name: "unbalanced legs", funded: 500, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -200}, {Account: a, Bucket: ext, Amount: 100}}
			},
			wantErr: "error",
			wantA:   balances{avail: 500, ext: -500},
		},
		{
			name: "legs on one bucket are merged", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{
					{Account: a, Bucket: ext, Amount: -100}, {Account: a, Bucket: avail, Amount: 100},
					{Account: a, Bucket: avail, Amount: -30}, {Account: a, Bucket: ext, Amount: 30},
				}
			},
			wantA:        balances{avail: 70, ext: -70},
			wantPostings: []posting{{"a", avail, 70, 70}, {"a", ext, -70, -70}},
		},
		{
			name: "zero legs are dropped", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{
					{Account: a, Bucket: inc, Amount: 40}, {Account: a, Bucket: ext, Amount: -10},
					{Account: a, Bucket: avail, Amount: 10}, {Account: a, Bucket: inc, Amount: -40},
				}
			},
			wantA:        balances{avail: 10, ext: -10},
			wantPostings: []posting{{"a", avail, 10, 10}, {"a", ext, -10, -10}},
		},
		{
			name: "legs that cancel out move nothing", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: 50}, {Account: a, Bucket: avail, Amount: -50}}
			},
			wantErr: "error",
		},
		{
			name: "no legs", funded: 0, currency: "JPY",
			legs:    func(a, b int64) []ledger.Leg { return nil },
			wantErr: "error",
		},
		{
			name: "leg without bucket", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Amount: 5}, {Account: a, Bucket: ext, Amount: -5}}
			},
			wantErr: "error",
		},
		{
			name: "leg without account", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Bucket: avail, Amount: 5}, {Account: a, Bucket: ext, Amount: -5}}
			},
			wantErr: "error",
		},
		{
			name: "bucket in another currency", funded: 100, currency: "USD",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -5}, {Account: a, Bucket: ext, Amount: 5}}
			},
			wantErr: "error",
			wantA:   balances{avail: 100, ext: -100},
		},
		{
			name: "overdraft refused", funded: 100, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -150}, {Account: a, Bucket: ext, Amount: 150}}
			},
			wantErr: fault.CodeInsufficientFunds,
			wantA:   balances{avail: 100, ext: -100},
		},
		{
			name: "debit down to exactly zero", funded: 100, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -100}, {Account: a, Bucket: ext, Amount: 100}}
			},
			wantA:        balances{},
			wantPostings: []posting{{"a", avail, -100, 0}, {"a", ext, 100, 0}},
		},
		{
			// a's leg is applied first (lock order); b's refusal must undo it.
			name: "refusal on a later leg undoes the earlier ones", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: 50}, {Account: b, Bucket: avail, Amount: -50}}
			},
			wantErr: fault.CodeInsufficientFunds,
		},
		{
			name: "incoming may not go negative", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: inc, Amount: -1}, {Account: a, Bucket: avail, Amount: 1}}
			},
			wantErr: fault.CodeInsufficientFunds,
		},
		{
			name: "MayGoNegative takes available below zero", funded: 20, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{{Account: a, Bucket: avail, Amount: -50, MayGoNegative: true}, {Account: a, Bucket: ext, Amount: 50}}
			},
			wantA:        balances{avail: -30, ext: 30},
			wantPostings: []posting{{"a", avail, -50, -30}, {"a", ext, 50, 30}},
		},
		{
			name: "MayGoNegative on one part of a merged leg", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{
					{Account: a, Bucket: avail, Amount: -30, MayGoNegative: true},
					{Account: a, Bucket: avail, Amount: -20}, {Account: a, Bucket: ext, Amount: 50},
				}
			},
			wantA:        balances{avail: -50, ext: 50},
			wantPostings: []posting{{"a", avail, -50, -50}, {"a", ext, 50, 50}},
		},
		{
			name: "external and fees may go negative", funded: 0, currency: "JPY",
			legs: func(a, b int64) []ledger.Leg {
				return []ledger.Leg{
					{Account: a, Bucket: ext, Amount: -100}, {Account: a, Bucket: fees, Amount: -5},
					{Account: a, Bucket: avail, Amount: 105},
				}
			},
			wantA:        balances{avail: 105, ext: -100, fees: -5},
			wantPostings: []posting{{"a", avail, 105, 105}, {"a", ext, -100, -100}, {"a", fees, -5, -5}},
		},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				merchant, a := newJPYAccount(t, db)
				b := newAccount(t, db, merchant, "treasury", "JPY")
				deposit(t, db, merchant, a, tt.funded)
				entriesBefore := count(t, db, `SELECT count(*) FROM journal_entries`)

				entryID, err := post(db, ledger.Entry{MerchantID: merchant, Currency: tt.currency, Kind: "test.move", At: t0, Legs: tt.legs(a, b)})

				if got := errCode(err); got != tt.wantErr {
					t.Errorf("Post error = %v (code %q), want code %q", err, got, tt.wantErr)
				}
				if got := buckets(t, db, a); !maps.Equal(got, tt.wantA) {
					t.Errorf("account a buckets = %v, want %v", got, tt.wantA)
				}
				if got := buckets(t, db, b); !maps.Equal(got, tt.wantB) {
					t.Errorf("account b buckets = %v, want %v", got, tt.wantB)
				}
				if got := entryPostings(t, db, entryID, map[int64]string{a: "a", b: "b"}); !slices.Equal(got, tt.wantPostings) {
					t.Errorf("postings = %v, want %v", got, tt.wantPostings)
				}
				// The only entry written, if any, is the one Post returned.
				if got, want := count(t, db, `SELECT count(*) FROM journal_entries`)-entriesBefore,
					count(t, db, `SELECT count(*) FROM journal_entries WHERE id = $1`, entryID); got != want {
					t.Errorf("%d journal entries written, want %d (entry %d)", got, want, entryID)
				}
			})
		}
	})
}

// TestPostStaysInItsMerchant checks that an entry moves only its merchant's
// buckets: a leg on another merchant's account finds no bucket, and nothing
// is written.
func TestPostStaysInItsMerchant(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, a := newJPYAccount(t, db)
		other, b := newJPYAccount(t, db)
		deposit(t, db, other, b, 100)

		_, err := post(db, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.move", At: t0, Legs: []ledger.Leg{
			{Account: a, Bucket: ledger.External, Amount: -100}, {Account: b, Bucket: ledger.Available, Amount: 100},
		}})

		if got := errCode(err); got != "error" {
			t.Errorf("Post error = %v (code %q), want code %q", err, got, "error")
		}
		if got := buckets(t, db, a); len(got) != 0 {
			t.Errorf("account a buckets = %v, want none moved", got)
		}
		if got, want := buckets(t, db, b), (map[ledger.Bucket]int64{ledger.Available: 100, ledger.External: -100}); !maps.Equal(got, want) {
			t.Errorf("account b buckets = %v, want %v", got, want)
		}
		if got := count(t, db, `SELECT count(*) FROM journal_entries WHERE merchant_id = $1`, merchant); got != 0 {
			t.Errorf("%d journal entries of the posting merchant, want 0", got)
		}
	})
}

// TestPostWritesEntry checks the journal entry row: merchant, kind, instant,
// and the balance record it belongs to (NULL when none).
func TestPostWritesEntry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		record := &ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn,
			TransactionType: ledger.TopUp, Amount: 100, Total: 100, CreatedAt: t0}
		legs := []ledger.Leg{{Account: account, Bucket: ledger.External, Amount: -100}, {Account: account, Bucket: ledger.Available, Amount: 100}}
		withRecord, err := store.Do(ctx, db, func(tx *store.Tx) (int64, error) {
			if err := ledger.CreateRecord(ctx, tx, record); err != nil {
				return 0, err
			}
			return ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "deposit.receive",
				RecordID: record.ID, Legs: legs, At: t0.Add(1500 * time.Millisecond)})
		})
		if err != nil {
			t.Fatalf("post with record: %v", err)
		}
		without, err := post(db, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.plain", Legs: legs, At: t0})
		if err != nil {
			t.Fatalf("post without record: %v", err)
		}
		type entryRow struct {
			Merchant, Kind string
			Record         sql.NullString
			CreatedAt      int64
		}
		tests := []struct {
			name string
			id   int64
			want entryRow
		}{
			{"with record", withRecord, entryRow{merchant, "deposit.receive", sql.NullString{String: record.ID, Valid: true}, t0.UnixMilli() + 1500}},
			{"without record", without, entryRow{merchant, "test.plain", sql.NullString{}, t0.UnixMilli()}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got entryRow
				err := db.Read().QueryRow(`SELECT merchant_id, kind, balance_record_id, created_at FROM journal_entries WHERE id = $1`, tt.id).
					Scan(&got.Merchant, &got.Kind, &got.Record, &got.CreatedAt)
				if err != nil {
					t.Fatalf("read entry %d: %v", tt.id, err)
				}
				if got != tt.want {
					t.Errorf("entry %d = %+v, want %+v", tt.id, got, tt.want)
				}
				var postings, theirs int
				if err := db.Read().QueryRow(`SELECT count(*), count(*) FILTER (WHERE merchant_id = $2) FROM postings WHERE entry_id = $1`, tt.id, merchant).
					Scan(&postings, &theirs); err != nil {
					t.Fatalf("read postings of %d: %v", tt.id, err)
				}
				if postings != 2 || theirs != 2 {
					t.Errorf("entry %d: %d postings, %d naming merchant %s; want 2 and 2", tt.id, postings, theirs, merchant)
				}
			})
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// TestPostRefusalRollsBackTransaction checks that a refused Post undoes the
// whole transaction it ran in, including work done before it.
func TestPostRefusalRollsBackTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		deposit(t, db, merchant, account, 100)
		before := count(t, db, `SELECT count(*) FROM postings`)
		err := db.Exec(ctx, func(tx *store.Tx) error {
			r := &ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyOut,
				TransactionType: ledger.Payout, Amount: 80, Total: 80, CreatedAt: t0}
			if err := ledger.CreateRecord(ctx, tx, r); err != nil {
				return err
			}
			// The first movement fits; the second would overdraw.
			for _, amount := range []int64{80, 80} {
				if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "payout", RecordID: r.ID, At: t0,
					Legs: []ledger.Leg{{Account: account, Bucket: ledger.Available, Amount: -amount}, {Account: account, Bucket: ledger.External, Amount: amount}}}); err != nil {
					return err
				}
			}
			return nil
		})
		f, ok := fault.As(err)
		if !ok || f.Code != fault.CodeInsufficientFunds || f.Kind != fault.Invalid {
			t.Fatalf("Exec = %v, want a *fault.Error INSUFFICIENT_FUNDS of kind Invalid", err)
		}
		if got, want := buckets(t, db, account), (balances{ledger.Available: 100, ledger.External: -100}); !maps.Equal(got, want) {
			t.Errorf("buckets = %v, want %v", got, want)
		}
		if got := count(t, db, `SELECT count(*) FROM balance_records`); got != 0 {
			t.Errorf("%d balance records, want 0", got)
		}
		if got := count(t, db, `SELECT count(*) FROM postings`); got != before {
			t.Errorf("%d postings, want %d", got, before)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// TestPostRunningBalance posts a series of movements and checks every
// posting's balance_after is the bucket's running total.
func TestPostRunningBalance(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		moves := []int64{500, -120, 30, -410, 7, 1000, -1007}
		var want []int64
		var running int64
		for _, m := range moves {
			running += m
			want = append(want, running)
			_, err := post(db, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.move", At: t0,
				Legs: []ledger.Leg{{Account: account, Bucket: ledger.Available, Amount: m}, {Account: account, Bucket: ledger.External, Amount: -m}}})
			if err != nil {
				t.Fatalf("post %d: %v", m, err)
			}
		}
		rows, err := db.Read().Query(`SELECT p.balance_after FROM postings p JOIN ledger_buckets b ON b.merchant_id = p.merchant_id AND b.id = p.bucket_id
			WHERE b.account_id = $1 AND b.name = 'available' ORDER BY p.id`, account)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []int64
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !slices.Equal(got, want) {
			t.Errorf("available balance_after = %v, want %v", got, want)
		}
		if got := buckets(t, db, account)[ledger.Available]; got != running {
			t.Errorf("available = %d, want %d", got, running)
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}

// TestPostBounds checks the limits that keep balances far from int64
// overflow: a leg beyond money.MaxMinor is refused outright, and a movement
// that would take a bucket beyond ledger.MaxBalance either way is refused
// with AMOUNT_OUT_OF_RANGE and changes nothing.
func TestPostBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// start sets the account's available and external buckets directly.
		startAvailable, startExternal int64
		amount                        int64 // moved from external into available
		wantErr                       string
		wantAvailable                 int64
	}{
		{"largest amount", 0, 0, money.MaxMinor, "", money.MaxMinor},
		{"beyond the largest amount", 0, 0, money.MaxMinor + 1, "error", 0},
		{"up to MaxBalance", ledger.MaxBalance - 100, -(ledger.MaxBalance - 100), 100, "", ledger.MaxBalance},
		{"past MaxBalance", ledger.MaxBalance - 100, -(ledger.MaxBalance - 100), 101, fault.CodeAmountOutOfRange, ledger.MaxBalance - 100},
		{"counterpart past -MaxBalance", 0, -ledger.MaxBalance, 1, fault.CodeAmountOutOfRange, 0},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				merchant, account := newJPYAccount(t, db)
				exec(t, db, `UPDATE ledger_buckets SET balance = $1 WHERE account_id = $2 AND name = 'available' AND slot = 0`, tt.startAvailable, account)
				exec(t, db, `UPDATE ledger_buckets SET balance = $1 WHERE account_id = $2 AND name = 'external' AND slot = 0`, tt.startExternal, account)
				_, err := post(db, movement(merchant, account, tt.amount))
				if got := errCode(err); got != tt.wantErr {
					t.Errorf("Post error = %v (code %q), want code %q", err, got, tt.wantErr)
				}
				if got := buckets(t, db, account)[ledger.Available]; got != tt.wantAvailable {
					t.Errorf("available = %d, want %d", got, tt.wantAvailable)
				}
			})
		}
	})
}

// TestPostIsOneStatementOnPostgres checks that an accepted post, however
// many legs it has, costs one round trip on PostgreSQL (and three
// statements, two round trips, on Citus), and a refused one two: its debit
// is first taken from the principal row, then from the whole bucket.
func TestPostIsOneStatementOnPostgres(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		legs    func(a, b int64) []ledger.Leg
		wantErr string
	}{
		{"two legs", func(a, b int64) []ledger.Leg {
			return []ledger.Leg{{Account: a, Bucket: ledger.External, Amount: -100}, {Account: a, Bucket: ledger.Available, Amount: 100}}
		}, ""},
		{"four legs on two accounts", func(a, b int64) []ledger.Leg {
			return []ledger.Leg{
				{Account: a, Bucket: ledger.External, Amount: -100}, {Account: a, Bucket: ledger.Available, Amount: 90},
				{Account: a, Bucket: ledger.Fees, Amount: 5}, {Account: b, Bucket: ledger.Available, Amount: 5},
			}
		}, ""},
		{"overdraft refused", func(a, b int64) []ledger.Leg {
			return []ledger.Leg{{Account: b, Bucket: ledger.Available, Amount: -1000}, {Account: b, Bucket: ledger.External, Amount: 1000}}
		}, fault.CodeInsufficientFunds},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect() != store.Postgres {
			t.Skip("SQLite posts one statement per leg")
		}
		merchant, a := newJPYAccount(t, db)
		b := newAccount(t, db, merchant, "treasury", "JPY")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				var statements int
				err := db.Exec(ctx, func(tx *store.Tx) error {
					before := tx.Statements()
					_, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchant, Currency: "JPY", Kind: "test.move", At: t0, Legs: tt.legs(a, b)})
					statements = tx.Statements() - before
					return err
				})
				if got := errCode(err); got != tt.wantErr {
					t.Errorf("Post error = %v (code %q), want code %q", err, got, tt.wantErr)
				}
				// On Citus a movement is three statements, each routed to the
				// merchant's shard: the balances, the entry, its postings.
				want := 1
				switch {
				case tt.wantErr != "":
					want = 2
				case db.Citus():
					want = 3
				}
				if statements != want {
					t.Errorf("Post sent %d statements, want %d", statements, want)
				}
			})
		}
		if got := verifyChecks(t, db); len(got) != 0 {
			t.Errorf("Verify found %v, want nothing", got)
		}
	})
}
