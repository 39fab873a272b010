package payout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// feeMinor is au_bank_aud's fee per transaction: 0.50 AUD.
const feeMinor = 50

// funded makes an AUD merchant whose available balance is aud whole dollars.
func funded(t *testing.T, e *servertest.Env, aud string) merchant.Principal {
	t.Helper()
	p := e.Merchant(t, "AUD")["AUD"]
	if _, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: money.Input(aud)}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	return p
}

// held makes a merchant of 1,000 AUD whose account needs approvals, and a
// payout of 100 AUD of it, held with its approval pending.
func held(t *testing.T, e *servertest.Env) (merchant.Principal, payout.Payout) {
	t.Helper()
	ctx := context.Background()
	p := funded(t, e, "1000")
	approvals := true
	if _, err := e.Merchants.UpdateAccount(ctx, p.MerchantID, "AUD", merchant.AccountUpdate{Approvals: &approvals}); err != nil {
		t.Fatal(err)
	}
	po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "100"))
	if err != nil || po.Status != payout.Held || po.Approval == nil || po.Approval.Status != payout.ApprovalPending {
		t.Fatalf("Create() = %+v, %v; want held with a pending approval", po, err)
	}
	return p, po
}

// bankPayout pays each amount to an Australian bank account.
func bankPayout(account string, amounts ...money.Input) payout.Request {
	r := payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "supplier run"}
	for _, a := range amounts {
		r.PayoutTransactionDetails = append(r.PayoutTransactionDetails, payout.TransactionRequest{
			Amount: a, PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": account, "account_name": "Jane Doe"}})
	}
	return r
}

// TestJobRoundTrips bounds the round trips of a payout's jobs on PostgreSQL,
// which hold the account's buckets while they run (ledger.LockAccount): the
// submission reads the payout locked with its transactions and sends the
// rest; the rail's outcome reads the submission, then the account's lock,
// the payout, its transaction, the others pending and the merchant's clock
// together, then posts; since every event is kept in the events log
// (CONTRACT §21) whether or not the payout has an endpoint_url, the
// completed payout's transactions are read for its record, and the event's
// row is written with them (two round trips more). What they leave queued
// goes with the job's release (store.Tx.Savepoint).
func TestJobRoundTrips(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has no round trips to the server")
		}
		bounds := map[string]int{"payout.submit": 1, "rail.sandbox.outcome": 5}
		if e.DB.Citus() {
			bounds["rail.sandbox.outcome"]++ // the post's entry is read back there (ledger.postCitus)
		}
		var mu sync.Mutex
		trips := map[string][]int{}
		for kind := range bounds {
			if _, ok := e.Queue.Handler(kind); !ok {
				t.Fatalf("no handler for %s", kind)
			}
			e.Queue.Wrap(kind, func(h job.Handler) job.Handler {
				return func(ctx context.Context, tx *store.Tx, j job.Job) error {
					before := tx.RoundTrips()
					err := h(ctx, tx, j)
					mu.Lock()
					trips[kind] = append(trips[kind], tx.RoundTrips()-before)
					mu.Unlock()
					return err
				}
			})
		}
		p := funded(t, e, "1000")
		po, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, bankPayout("12345678", "100"))
		if err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 10*time.Second)
		e.Advance(t, p.MerchantID, 10*time.Second)
		if got, err := e.Payouts.Get(context.Background(), p, po.UUID); err != nil || got.Status != payout.Completed {
			t.Fatalf("payout after the rail answered: %s, %v; want completed", got.Status, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for kind, bound := range bounds {
			if len(trips[kind]) != 1 || trips[kind][0] > bound {
				t.Errorf("%s took %v round trips, want one run of at most %d", kind, trips[kind], bound)
			}
		}
	})
}

// TestCreateRoundTrips bounds the round trips of a payout's creation on
// PostgreSQL before its commit, which is what bounds one account's payouts:
// they run one after another in the merchant's lane. The account's read
// goes with the post that holds the funds (the account is the key's own),
// then the payout's insert returns its id; its transactions, their balance
// records, its job and its event go with the commit.
func TestCreateRoundTrips(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has no round trips to the server")
		}
		p := funded(t, e, "1000")
		trips := storetest.RoundTrips(t, e.DB, func(ctx context.Context, tx *store.Tx) error {
			_, err := e.Payouts.Create(ctx, tx, p, bankPayout("12345678", "100", "50"))
			return err
		})
		bound := 2
		if e.DB.Citus() {
			bound++ // the post's entry is read back there (ledger.postCitus)
		}
		if trips > bound {
			t.Errorf("a payout's creation took %d round trips before its commit, want at most %d", trips, bound)
		}
	})
}

// TestPaidOutThroughTheRail: the amounts and fees leave available at once,
// wait in outgoing, and leave for good when the rail confirms; a transaction
// the rail fails comes back to available.
func TestPaidOutThroughTheRail(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "100", "50"))
		if err != nil {
			t.Fatal(err)
		}
		failing, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("000000000", "200"))
		if err != nil {
			t.Fatal(err)
		}
		if po.Status != payout.Processing || po.Approval != nil {
			t.Errorf("created payout is %s with approval %v, want processing without approval", po.Status, po.Approval)
		}
		spent := int64(35000 + 3*feeMinor)
		if b := e.Balance(t, p); b.Available != 100000-spent || b.Outgoing != spent {
			t.Errorf("submitted: %+v, want available %d and outgoing %d", b, 100000-spent, spent)
		}
		// Submission, then the sandbox rail's answer a few seconds later.
		e.Advance(t, p.MerchantID, 10*time.Second)
		e.Advance(t, p.MerchantID, 10*time.Second)
		for uuid, want := range map[string]payout.TxStatus{po.UUID: payout.TxDone, failing.UUID: payout.TxFailed} {
			got, err := e.Payouts.Get(ctx, p, uuid)
			if err != nil || got.Status != payout.Completed {
				t.Fatalf("payout after the rail answered: %s, %v; want completed", got.Status, err)
			}
			for _, tx := range got.PayoutTransactions {
				if tx.Status != want {
					t.Errorf("transaction %s is %s, want %s", tx.UUID, tx.Status, want)
				}
			}
		}
		if b := e.Balance(t, p); b.Available != 100000-15000-2*feeMinor || b.Outgoing != 0 {
			t.Errorf("settled: %+v, want available %d (the failed 200 returned with its fee)", b, 100000-15000-2*feeMinor)
		}
	})
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "100")
		short := bankPayout("12345678", "10")
		short.Description = "tiny"
		tests := []struct {
			name  string
			req   payout.Request
			code  string
			field string
		}{
			{"more than available", bankPayout("12345678", "99.60"), fault.CodeInsufficientFunds, ""},
			{"description under 5", short, fault.CodeValidation, "description"},
			{"under 1 AUD", bankPayout("12345678", "0.99"), fault.CodeAmountOutOfRange, ""},
			{"BSB not 6 digits", func() payout.Request {
				r := bankPayout("12345678", "10")
				r.PayoutTransactionDetails[0].PayoutMethodParams["bsb"] = "06200"
				return r
			}(), fault.CodeValidation, "payout_transaction_details[0].payout_method_params.bsb"},
			{"no transactions", bankPayout("12345678"), fault.CodeValidation, "payout_transaction_details"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, tt.req)
				ferr, ok := fault.As(err)
				if !ok || ferr.Code != tt.code || (tt.field != "" && ferr.Fields[tt.field] == "") {
					t.Errorf("Create() error = %v, want %s on %q", err, tt.code, tt.field)
				}
			})
		}
		if _, total, err := e.Payouts.List(ctx, p, payout.ListQuery{}); err != nil || total != 0 {
			t.Errorf("after refusals: %d payouts (%v), want none", total, err)
		}
		if b := e.Balance(t, p); b.Available != 10000 || b.Outgoing != 0 {
			t.Errorf("balances moved: %+v", b)
		}
	})
}

// TestRacingPayoutsNeverOverdraw: forty payouts of 30 AUD against 1,000 AUD
// at once; the accepted ones fit the balance and it never goes below zero.
func TestRacingPayoutsNeverOverdraw(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int64
		)
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "30"))
				switch {
				case err == nil:
					mu.Lock()
					accepted++
					mu.Unlock()
				case !fault.Is(err, fault.CodeInsufficientFunds):
					t.Errorf("Create() error = %v, want success or INSUFFICIENT_FUNDS", err)
				}
			}()
		}
		wg.Wait()
		each := int64(3000 + feeMinor)
		if want := 100000 / each; accepted != want {
			t.Errorf("%d payouts accepted, want %d (all that fit)", accepted, want)
		}
		if b := e.Balance(t, p); b.Available != 100000-accepted*each || b.Outgoing != accepted*each {
			t.Errorf("balances %+v after %d payouts", b, accepted)
		}
	})
}

// TestFirstDecisionWins: admins and finance users approve and reject one
// held payout at once; exactly one decision is taken and the money follows it.
func TestFirstDecisionWins(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, po := held(t, e)
		decide := func(d payout.Decision) (payout.Payout, error) {
			d.MerchantID, d.PayoutUUID = p.MerchantID, po.UUID
			return store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) { return e.Payouts.Decide(ctx, tx, d) })
		}
		if _, err := decide(payout.Decision{By: payout.Decider{UserID: "u-viewer", Email: "v@example.com", Role: merchant.Viewer}, Approve: true}); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("a viewer's decision: error = %v, want forbidden", err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []payout.Payout
		)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				role := merchant.Admin
				if i%2 == 1 {
					role = merchant.Finance
				}
				got, err := decide(payout.Decision{By: payout.Decider{UserID: "u", Email: "checker@example.com", Role: role}, Approve: i%3 != 0, Reason: "not this week"})
				switch {
				case err == nil:
					mu.Lock()
					wins = append(wins, got)
					mu.Unlock()
				case !fault.Is(err, payout.CodeDecisionConflict):
					t.Errorf("Decide() error = %v, want success or %s", err, payout.CodeDecisionConflict)
				}
			}()
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("%d decisions won, want exactly 1", len(wins))
		}
		b := e.Balance(t, p)
		switch won := wins[0]; won.Status {
		case payout.Processing:
			if b.Outgoing != 10000+feeMinor {
				t.Errorf("approved: %+v, want the payout outgoing", b)
			}
		case payout.Rejected:
			if b.Available != 100000 || b.Outgoing != 0 {
				t.Errorf("rejected: %+v, want the funds back in available", b)
			}
		default:
			t.Errorf("the winning decision left the payout %s", won.Status)
		}
	})
}

// TestChangesThatPostLockTheAccountFirst: what returns a held payout's funds
// (its hold's expiry, a job a worker runs among the merchant's other jobs in
// one transaction; a rejection) locks the account before the payout, as
// every change that posts does (ledger.LockAccount): holding the payout while
// waiting for the account, it would deadlock with a transaction that holds
// the account and waits for the payout.
func TestChangesThatPostLockTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		ctx := context.Background()
		p, po := held(t, e)
		reject := payout.Decision{MerchantID: p.MerchantID, PayoutUUID: po.UUID, Reason: "not this week",
			By: payout.Decider{UserID: "u", Email: "checker@example.com", Role: merchant.Finance}}
		tests := []struct {
			name string
			work func(ctx context.Context, tx *store.Tx) error
		}{
			{"the hold's expiry", e.JobWork(t, "payout.expire_hold", p.MerchantID, po.UUID)},
			{"a rejection", func(ctx context.Context, tx *store.Tx) error { _, err := e.Payouts.Decide(ctx, tx, reject); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if !e.LocksAccount(t, p, store.MerchantLane(p.MerchantID), tt.work) {
					t.Error("the account was not locked")
				}
			})
		}
		if got, err := e.Payouts.Get(ctx, p, po.UUID); err != nil || got.Status != payout.Held {
			t.Errorf("after the rolled-back changes: %s, %v; want still held", got.Status, err)
		}
	})
}
