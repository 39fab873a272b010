package feed_test

import (
	"context"
	"testing"

	"payd/internal/feed"
	"payd/internal/feed/feedtest"
	"payd/internal/store/storetest"
)

// FuzzImport: no file, however broken, panics an import or fails it with
// anything but an answer: it is applied (every booked entry marked once)
// or rejected whole with its reason and nothing of it applied.
func FuzzImport(f *testing.F) {
	day := feedtest.File{MsgID: "F-1", Account: "555000111", Currency: "KRW", Date: "2026-03-02", OpeningMinor: 1000, Entries: []feedtest.Entry{
		{Key: "K1", AmountMinor: 5000, Remittance: "ORDER ABCD1234"},
		{Key: "K2", AmountMinor: 700, Debit: true, Reference: "PT7K2M9Q4X1B8C3D"},
		{Key: "K3", AmountMinor: 700, Return: true, Reference: "PT7K2M9Q4X1B8C3D", ReturnReason: "AC04 Closed"},
		{AmountMinor: 12, Remittance: "no key", Proxy: "x@payid.example"},
	}}
	for _, seed := range [][]byte{feedtest.Camt054(day), feedtest.Camt053(day), feedtest.BAI2(day), feedtest.MT940(day), []byte("01,"), []byte("<Document/>")} {
		f.Add(seed)
	}
	fx := newFixture(f, storetest.SQLiteDSN(f))
	f.Fuzz(func(t *testing.T, content []byte) {
		ctx := context.Background()
		before := countEntries(t, fx)
		got, err := fx.srv.Feeds.Import(ctx, fx.feed, "fuzz", content)
		if err != nil {
			t.Fatalf("import failed rather than answered: %v", err)
		}
		switch got.Status {
		case feed.Applied, feed.Duplicate:
		case feed.Rejected:
			if got.Reason == "" {
				t.Errorf("a rejection without its reason: %+v", got)
			}
			if countEntries(t, fx) != before {
				t.Errorf("a rejected file applied entries")
			}
		default:
			t.Errorf("status %q", got.Status)
		}
	})
}

func countEntries(t *testing.T, fx *fixture) int {
	t.Helper()
	var n int
	if err := fx.srv.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM inbox_entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
