package ledger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

func createRecord(t *testing.T, db *store.DB, r *ledger.Record) {
	t.Helper()
	ctx := context.Background()
	if err := db.Exec(ctx, func(tx *store.Tx) error { return ledger.CreateRecord(ctx, tx, r) }); err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
}

func TestCreateRecord(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyOut,
			TransactionType: ledger.Payout, Amount: 1000, Fees: 50, Outgoing: 1000, Total: 1050, ReferenceID: "ref-1",
			CreatedAt: t0.Add(123 * time.Millisecond)}
		createRecord(t, db, &r)
		if len(r.ID) != store.BalanceIDLen || strings.Trim(r.ID, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Errorf("ID = %q, want %d upper-case base-36 characters", r.ID, store.BalanceIDLen)
		}
		want := r
		want.Status = ledger.Waiting
		want.UpdatedAt = want.CreatedAt
		got, err := ledger.GetRecord(ctx, db.Read(), merchant, r.ID)
		if err != nil {
			t.Fatalf("GetRecord: %v", err)
		}
		if got != want {
			t.Errorf("GetRecord = %+v\nwant %+v", got, want)
		}
		// Every record gets its own id.
		seen := map[string]bool{r.ID: true}
		for range 20 {
			again := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn,
				TransactionType: ledger.TopUp, CreatedAt: t0}
			createRecord(t, db, &again)
			if seen[again.ID] {
				t.Errorf("id %s handed out twice", again.ID)
			}
			seen[again.ID] = true
		}
	})
}

func TestGetRecordNotFound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		merchant, account := newJPYAccount(t, db)
		other := newMerchant(t, db)
		r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0}
		createRecord(t, db, &r)
		tests := []struct {
			name     string
			merchant string
			id       string
			wantErr  string
		}{
			{"own record", merchant, r.ID, ""},
			{"another merchant's record", other, r.ID, fault.CodeNotFound},
			{"no such id", merchant, "0000000000", fault.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := ledger.GetRecord(context.Background(), db.Read(), tt.merchant, tt.id)
				if got := errCode(err); got != tt.wantErr {
					t.Errorf("GetRecord error = %v, want code %q", err, tt.wantErr)
				}
			})
		}
	})
}

func TestFinish(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		other := newMerchant(t, db)
		finishedAt := t0.Add(time.Hour)
		tests := []struct {
			name       string
			first      ledger.Status // "" leaves the record waiting
			by         string        // "other" finishes as another merchant
			to         ledger.Status
			wantErr    string
			wantStatus ledger.Status
		}{
			{"waiting to done", "", "own", ledger.Done, "", ledger.Done},
			{"waiting to failed", "", "own", ledger.Failed, "", ledger.Failed},
			{"done to failed is refused", ledger.Done, "own", ledger.Failed, fault.CodeInvalidState, ledger.Done},
			{"failed to done is refused", ledger.Failed, "own", ledger.Done, fault.CodeInvalidState, ledger.Failed},
			{"done twice is refused", ledger.Done, "own", ledger.Done, fault.CodeInvalidState, ledger.Done},
			{"to waiting is not a final status", "", "own", ledger.Waiting, "error", ledger.Waiting},
			{"another merchant cannot finish it", "", "other", ledger.Done, fault.CodeInvalidState, ledger.Waiting},
		}
		merchants := map[string]string{"own": merchant, "other": other}
		finish := func(merchantID, id string, to ledger.Status, at time.Time) error {
			return db.Exec(ctx, func(tx *store.Tx) error { return ledger.Finish(ctx, tx, merchantID, id, to, at) })
		}
		// first moves the record before the step under test; Waiting stays put.
		first := map[ledger.Status]func(id string) error{
			"":            func(string) error { return nil },
			ledger.Done:   func(id string) error { return finish(merchant, id, ledger.Done, t0) },
			ledger.Failed: func(id string) error { return finish(merchant, id, ledger.Failed, t0) },
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0}
				createRecord(t, db, &r)
				if err := first[tt.first](r.ID); err != nil {
					t.Fatalf("setup: %v", err)
				}
				err := finish(merchants[tt.by], r.ID, tt.to, finishedAt)
				if got := errCode(err); got != tt.wantErr {
					t.Errorf("Finish error = %v, want code %q", err, tt.wantErr)
				}
				got, err := ledger.GetRecord(ctx, db.Read(), merchant, r.ID)
				if err != nil {
					t.Fatalf("GetRecord: %v", err)
				}
				if got.Status != tt.wantStatus {
					t.Errorf("status = %s, want %s", got.Status, tt.wantStatus)
				}
			})
		}
	})
}

// TestFinishUpdatedAt checks that a finished record carries the instant it finished.
func TestFinishUpdatedAt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0}
		createRecord(t, db, &r)
		at := t0.Add(90 * time.Second)
		if err := db.Exec(ctx, func(tx *store.Tx) error { return ledger.Finish(ctx, tx, merchant, r.ID, ledger.Done, at) }); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		got, err := ledger.GetRecord(ctx, db.Read(), merchant, r.ID)
		if err != nil {
			t.Fatalf("GetRecord: %v", err)
		}
		if !got.UpdatedAt.Equal(at) || !got.CreatedAt.Equal(t0) {
			t.Errorf("created %v, updated %v; want %v, %v", got.CreatedAt, got.UpdatedAt, t0, at)
		}
	})
}

// TestFinishRace lets many goroutines finish one record at once: exactly one
// may win, whatever status each asks for.
func TestFinishRace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		merchant, account := newJPYAccount(t, db)
		r := ledger.Record{MerchantID: merchant, AccountID: account, Currency: "JPY", RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, CreatedAt: t0}
		createRecord(t, db, &r)
		const racers = 8
		errs := make(chan error, racers)
		start := make(chan struct{})
		for i := range racers {
			to := []ledger.Status{ledger.Done, ledger.Failed}[i%2]
			go func() {
				<-start
				errs <- db.Exec(ctx, func(tx *store.Tx) error { return ledger.Finish(ctx, tx, merchant, r.ID, to, t0) })
			}()
		}
		close(start)
		codes := map[string]int{}
		for range racers {
			codes[errCode(<-errs)]++
		}
		if codes[""] != 1 || codes[fault.CodeInvalidState] != racers-1 {
			t.Errorf("outcomes %v, want one success and %d INVALID_STATE", codes, racers-1)
		}
	})
}
