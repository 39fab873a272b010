package ledger_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// historyFixture is an account with 45 balance records, three per second
// from t0 to t0+14s, plus records that History must never show.
type historyFixture struct {
	db       *store.DB
	merchant string
	account  int64
	// records is every record of the account, in the order History must give them.
	records []ledger.Record
}

func newHistoryFixture(t *testing.T, db *store.DB) historyFixture {
	t.Helper()
	f := historyFixture{db: db}
	f.merchant, f.account = newJPYAccount(t, db)
	usd := newAccount(t, db, f.merchant, "payments", "USD")
	otherMerchant, otherAccount := newJPYAccount(t, db)
	for i := range 45 {
		r := ledger.Record{MerchantID: f.merchant, AccountID: f.account, Currency: "JPY", RequestType: ledger.MoneyIn,
			TransactionType: ledger.TopUp, Amount: int64(i), Total: int64(i), CreatedAt: t0.Add(time.Duration(i/3) * time.Second)}
		createRecord(t, db, &r)
		f.records = append(f.records, r)
	}
	// Same instants on another account of the merchant and on another merchant.
	createRecord(t, db, &ledger.Record{MerchantID: f.merchant, AccountID: usd, Currency: "USD", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0})
	createRecord(t, db, &ledger.Record{MerchantID: otherMerchant, AccountID: otherAccount, Currency: "JPY", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0})
	sortHistory(f.records)
	return f
}

// sortHistory puts records in History's order: created_at, then id, descending.
func sortHistory(rs []ledger.Record) {
	slices.SortFunc(rs, func(a, b ledger.Record) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
}

// between returns the ids of records created in [from, to), in order.
func between(rs []ledger.Record, from, to time.Time) []string {
	var out []string
	for _, r := range rs {
		if !r.CreatedAt.Before(from) && r.CreatedAt.Before(to) {
			out = append(out, r.ID)
		}
	}
	return out
}

// walk follows NextCursor from the first page to the last and returns every
// id seen, each page's size and each page's HasMore.
func walk(t *testing.T, db *store.DB, hq ledger.HistoryQuery) (ids []string, sizes []int, more []bool) {
	t.Helper()
	for range 100 {
		page, err := ledger.History(context.Background(), db.Read(), hq)
		if err != nil {
			t.Fatalf("History(%+v): %v", hq, err)
		}
		for _, r := range page.Records {
			ids = append(ids, r.ID)
		}
		sizes = append(sizes, len(page.Records))
		more = append(more, page.HasMore)
		if !page.HasMore {
			if page.NextCursor != "" {
				t.Errorf("last page has NextCursor %q, want none", page.NextCursor)
			}
			return ids, sizes, more
		}
		hq.Cursor = page.NextCursor
	}
	t.Fatalf("History did not end after 100 pages")
	return nil, nil, nil
}

func TestHistoryPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newHistoryFixture(t, db)
		end := t0.Add(time.Hour)
		tests := []struct {
			name      string
			merchant  string
			from, to  time.Time
			size      int
			wantIDs   []string
			wantSizes []int
			wantMore  []bool
		}{
			{"pages of 20", f.merchant, time.Time{}, time.Time{}, 20, between(f.records, t0, end), []int{20, 20, 5}, []bool{true, true, false}},
			{"one page exactly full", f.merchant, time.Time{}, time.Time{}, 45, between(f.records, t0, end), []int{45}, []bool{false}},
			{"one short of a page", f.merchant, time.Time{}, time.Time{}, 44, between(f.records, t0, end), []int{44, 1}, []bool{true, false}},
			// Page boundaries fall inside groups of records with one created_at.
			{"pages of 2 split equal instants", f.merchant, time.Time{}, time.Time{}, 2, between(f.records, t0, end),
				slices.Concat(slices.Repeat([]int{2}, 22), []int{1}), slices.Concat(slices.Repeat([]bool{true}, 22), []bool{false})},
			{"from is inclusive, to exclusive", f.merchant, t0.Add(5 * time.Second), t0.Add(10 * time.Second), 4,
				between(f.records, t0.Add(5*time.Second), t0.Add(10*time.Second)), []int{4, 4, 4, 3}, []bool{true, true, true, false}},
			{"from only", f.merchant, t0.Add(10 * time.Second), time.Time{}, 20, between(f.records, t0.Add(10*time.Second), end), []int{15}, []bool{false}},
			{"to only", f.merchant, time.Time{}, t0.Add(time.Second), 20, between(f.records, t0, t0.Add(time.Second)), []int{3}, []bool{false}},
			{"to at a millisecond past an instant", f.merchant, time.Time{}, t0.Add(time.Millisecond), 20, between(f.records, t0, t0.Add(time.Millisecond)), []int{3}, []bool{false}},
			{"empty range", f.merchant, t0.Add(3 * time.Second), t0.Add(3 * time.Second), 20, nil, []int{0}, []bool{false}},
			{"range after every record", f.merchant, end, time.Time{}, 20, nil, []int{0}, []bool{false}},
			{"another merchant sees none of it", "NOSUCHID", time.Time{}, time.Time{}, 20, nil, []int{0}, []bool{false}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ids, sizes, more := walk(t, db, ledger.HistoryQuery{MerchantID: tt.merchant, AccountID: f.account, From: tt.from, To: tt.to, Size: tt.size})
				if !slices.Equal(ids, tt.wantIDs) {
					t.Errorf("ids\n got %v\nwant %v", ids, tt.wantIDs)
				}
				if !slices.Equal(sizes, tt.wantSizes) || !slices.Equal(more, tt.wantMore) {
					t.Errorf("page sizes %v, HasMore %v; want %v, %v", sizes, more, tt.wantSizes, tt.wantMore)
				}
			})
		}
	})
}

// TestHistoryRecordContents checks History returns whole records, not just ids.
func TestHistoryRecordContents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newHistoryFixture(t, db)
		page, err := ledger.History(context.Background(), db.Read(), ledger.HistoryQuery{MerchantID: f.merchant, AccountID: f.account, Size: 5})
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		want := f.records[:5]
		for i := range want {
			want[i].Status = ledger.Waiting
			want[i].UpdatedAt = want[i].CreatedAt
		}
		if !slices.Equal(page.Records, want) {
			t.Errorf("records\n got %+v\nwant %+v", page.Records, want)
		}
	})
}

// TestHistoryCursorIsStable adds records between pages: a newer one, and two
// at the instant of the last record returned. The rest of the walk must give
// every original record after the cursor once, in order, plus exactly those
// new records whose position is after the cursor; never the newer one.
func TestHistoryCursorIsStable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newHistoryFixture(t, db)
		ctx := context.Background()
		hq := ledger.HistoryQuery{MerchantID: f.merchant, AccountID: f.account, Size: 10}
		first, err := ledger.History(ctx, db.Read(), hq)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		last := first.Records[len(first.Records)-1]
		want := slices.Clone(f.records[len(first.Records):])
		for _, at := range []time.Time{t0.Add(time.Minute), last.CreatedAt, last.CreatedAt} {
			r := ledger.Record{MerchantID: f.merchant, AccountID: f.account, Currency: "JPY",
				RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: at}
			createRecord(t, db, &r)
			if at.Equal(last.CreatedAt) && r.ID < last.ID {
				want = append(want, r)
			}
		}
		sortHistory(want)
		hq.Cursor = first.NextCursor
		got, _, _ := walk(t, db, hq)
		var wantIDs []string
		for _, r := range want {
			wantIDs = append(wantIDs, r.ID)
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("rest of the walk\n got %v\nwant %v", got, wantIDs)
		}
	})
}

func TestHistoryBadCursor(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name   string
		cursor string
	}{
		{"not base64", "%%%not-a-cursor%%%"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte("17409942000:ABCDEFGHIJ"))},
		{"no separator", enc("1740994200000ABCDEFGHIJ")},
		{"instant not a number", enc("yesterday:ABCDEFGHIJ")},
		{"negative instant", enc("-1:ABCDEFGHIJ")},
		{"id too short", enc("1740994200000:ABC")},
		{"id too long", enc("1740994200000:ABCDEFGHIJK")},
		{"far too long", strings.Repeat("A", 65)},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := ledger.History(context.Background(), db.Read(), ledger.HistoryQuery{MerchantID: merchant, AccountID: account, Cursor: tt.cursor, Size: 20})
				f, ok := fault.As(err)
				if !ok || f.Code != fault.CodeValidation || f.Fields["cursor"] == "" {
					t.Errorf("History(cursor %q) error = %v, want VALIDATION_FAILED naming cursor", tt.cursor, err)
				}
			})
		}
	})
}

// TestBetween: a period's records, oldest first, of one account only:
// History's order reversed.
func TestBetween(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newHistoryFixture(t, db)
		from, to := t0.Add(5*time.Second), t0.Add(10*time.Second)
		got, err := ledger.Between(context.Background(), db.Read(), f.merchant, f.account, from, to)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		want := between(f.records, from, to)
		slices.Reverse(want)
		if !slices.Equal(ids, want) {
			t.Errorf("Between = %v, want %v", ids, want)
		}
		if none, err := ledger.Between(context.Background(), db.Read(), "NOSUCHID", f.account, from, to); err != nil || len(none) != 0 {
			t.Errorf("another merchant's Between = %d records, %v", len(none), err)
		}
	})
}

// TestBucketHistory: the opening balance is every posting made before the
// period; the moves are those made in it, in the order of their times,
// whatever order they were applied in.
func TestBucketHistory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchantID, account := newJPYAccount(t, db)
		_, other := newJPYAccount(t, db)
		move := func(merchantID string, account int64, at time.Time, amount int64) {
			t.Helper()
			if _, err := post(db, ledger.Entry{MerchantID: merchantID, Currency: "JPY", Kind: "test.move", At: at, Legs: []ledger.Leg{
				{Account: account, Bucket: ledger.External, Amount: -amount},
				{Account: account, Bucket: ledger.Available, Amount: amount},
			}}); err != nil {
				t.Fatal(err)
			}
		}
		from, to := t0.Add(time.Minute), t0.Add(3*time.Hour)
		move(merchantID, account, t0, 100)                      // before the period
		move(merchantID, account, t0.Add(2*time.Hour), 10)      // in it
		move(merchantID, account, t0.Add(time.Hour), 5)         // in it, made earlier, applied later
		move(merchantID, account, to, 1)                        // at its end: after it
		move(merchantID, account, t0.Add(-time.Millisecond), 7) // before it, applied late
		opening, moves, err := ledger.BucketHistory(context.Background(), db.Read(), merchantID, account, ledger.Available, from, to)
		if err != nil {
			t.Fatal(err)
		}
		var amounts []int64
		for _, m := range moves {
			amounts = append(amounts, m.Amount)
		}
		if opening != 107 || !slices.Equal(amounts, []int64{5, 10}) || !moves[0].At.Equal(t0.Add(time.Hour)) {
			t.Errorf("opening %d, moves %+v; want 107, then 5 and 10 in time order", opening, moves)
		}
		if opening, moves, err := ledger.BucketHistory(context.Background(), db.Read(), merchantID, account, ledger.Available, t0.Add(-time.Hour), t0.Add(-time.Hour)); err != nil || opening != 0 || len(moves) != 0 {
			t.Errorf("before any posting: opening %d, %d moves, %v", opening, len(moves), err)
		}
		if _, _, err := ledger.BucketHistory(context.Background(), db.Read(), merchantID, other, ledger.Available, from, to); err == nil {
			t.Error("another merchant's account: no error")
		}
	})
}
