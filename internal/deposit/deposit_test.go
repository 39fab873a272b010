package deposit_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestSimulateClears checks a deposit's path: incoming at once, available
// once the clearing delay has passed on the merchant's clock, and once only.
func TestSimulateClears(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		e.Deposits.ClearAfter = time.Hour
		p := e.Merchant(t, "AUD")["AUD"]
		d, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "125"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != deposit.Received || d.Currency != "AUD" || d.Amount.Minor != 12500 {
			t.Errorf("Simulate() = %+v, want 125 AUD received", d)
		}
		if b := e.Balance(t, p); b.Incoming != 12500 || b.Available != 0 {
			t.Errorf("before clearing: incoming %d, available %d; want 12500, 0", b.Incoming, b.Available)
		}
		e.RunDue(t, p.MerchantID)
		if b := e.Balance(t, p); b.Incoming != 12500 {
			t.Errorf("cleared before its time: incoming %d", b.Incoming)
		}
		e.Advance(t, p.MerchantID, time.Hour)
		e.Advance(t, p.MerchantID, time.Hour)
		if b := e.Balance(t, p); b.Incoming != 0 || b.Available != 12500 {
			t.Errorf("after clearing: incoming %d, available %d; want 0, 12500", b.Incoming, b.Available)
		}
	})
}

func TestSimulateRefuses(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD", "JPY")
		aud, jpy := m["AUD"], m["JPY"]
		stranger := e.Merchant(t, "AUD")["AUD"]
		tests := []struct {
			name  string
			req   deposit.Request
			code  string
			field string
		}{
			{"no account", deposit.Request{Amount: "10"}, fault.CodeValidation, "account_number"},
			{"no amount", deposit.Request{AccountNumber: aud.AccountNumber}, fault.CodeValidation, "amount"},
			{"JPY fraction", deposit.Request{AccountNumber: jpy.AccountNumber, Amount: "10.5", RemitterName: "ﾔﾏﾀﾞ"}, fault.CodeValidation, "amount"},
			{"JPY name not katakana", deposit.Request{AccountNumber: jpy.AccountNumber, Amount: "1000", RemitterName: "Yamada"}, fault.CodeValidation, "remitter_name"},
			{"long remarks", deposit.Request{AccountNumber: aud.AccountNumber, Amount: "10", Remarks: string(make([]byte, 141))}, fault.CodeValidation, "remarks"},
			{"another merchant's account", deposit.Request{AccountNumber: stranger.AccountNumber, Amount: "10"}, fault.CodeNotFound, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, aud, tt.req)
				ferr, ok := fault.As(err)
				if !ok || ferr.Code != tt.code || (tt.field != "" && ferr.Fields[tt.field] == "") {
					t.Errorf("Simulate() error = %v, want %s on %q", err, tt.code, tt.field)
				}
			})
		}
		var deposits int
		if err := e.DB.Read().QueryRow(`SELECT count(*) FROM deposits`).Scan(&deposits); err != nil || deposits != 0 {
			t.Errorf("after refusals: %d deposits (%v), want 0", deposits, err)
		}
		if b := e.Balance(t, stranger); b.Incoming != 0 {
			t.Errorf("the other merchant's account was credited: %+v", b)
		}
	})
}

// TestCreditLocksTheAccountFirst: a deposit is group-committed in the
// merchant's lane with the lane's other work, a worker's jobs among it, each
// of which locks the account before anything else (ledger.LockAccount); so
// does the deposit, or the batch could hold the rows of its post (incoming,
// external) while a job after it waits for the account that a refund
// holds, waiting for those rows.
func TestCreditLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		p := e.Merchant(t, "AUD")["AUD"]
		credit := func(ctx context.Context, tx *store.Tx) error {
			_, err := e.Deposits.Simulate(ctx, tx, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "125"})
			return err
		}
		if !e.LocksAccount(t, p, store.MerchantLane(p.MerchantID), credit) {
			t.Error("the deposit did not lock the account")
		}
	})
}

// TestWorkerClearingLocksTheAccountFirst: a worker runs a deposit's clearing
// among the merchant's other jobs in one transaction, each of which locks
// the account before anything else (ledger.LockAccount); so does the
// clearing, or it could hold its buckets while a job after it waits for the
// account that another transaction holds, waiting for those buckets.
func TestWorkerClearingLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		p := e.Merchant(t, "AUD")["AUD"]
		d, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "125"})
		if err != nil {
			t.Fatal(err)
		}
		clear := e.JobWork(t, deposit.JobClear.String(), p.MerchantID, d.UUID)
		if !e.LocksAccount(t, p, store.MerchantLane(p.MerchantID), clear) {
			t.Error("the clearing did not lock the account")
		}
	})
}
