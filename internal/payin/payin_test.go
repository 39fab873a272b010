package payin_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// idr is the minor units of one rupiah (ISO 4217 gives IDR two digits).
const idr = 100

// qris is a valid IDR QRIS payin of amount.
func qris(amount money.Input) payin.Request {
	return payin.Request{Currency: "IDR", Amount: amount, PayinMethodName: "id_bank_qris_idr"}
}

// received is a QRIS payin of amount that p's customer has paid (its
// clearing not yet run).
func received(t *testing.T, e *servertest.Env, p merchant.Principal, amount money.Input) payin.Payin {
	t.Helper()
	ctx := context.Background()
	pin, err := storetest.Write(ctx, e.DB, e.Payins.Create, p, qris(amount))
	if err != nil {
		t.Fatal(err)
	}
	if pin, err = storetest.Write(ctx, e.DB, e.Payins.Simulate, p, payin.SimulateRequest{UUID: pin.UUID, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	return pin
}

func TestCreateRules(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) clock.Input { return clock.Input{T: servertest.Start.Add(d), Set: true} }
	tests := []struct {
		name  string
		as    string
		req   payin.Request
		code  string
		field string
	}{
		{"unknown method", "IDR", payin.Request{Currency: "IDR", Amount: "10000", PayinMethodName: "id_bank_nope_idr"}, fault.CodeValidation, "payin_method_name"},
		{"method of another currency", "IDR", payin.Request{Currency: "IDR", Amount: "10000", PayinMethodName: "vn_vietqr_vnd"}, fault.CodeMethodNotEnabled, ""},
		{"currency not the app's", "IDR", payin.Request{Currency: "AUD", Amount: "100", PayinMethodName: "id_bank_qris_idr"}, fault.CodeCurrency, ""},
		{"under the minimum", "IDR", qris("999"), fault.CodeAmountOutOfRange, ""},
		{"over the maximum", "IDR", qris("10000001"), fault.CodeAmountOutOfRange, ""},
		{"GST outside AUD", "IDR", func() payin.Request { r := qris("10000"); r.GST = true; return r }(), payin.CodeGSTNotAllowed, ""},
		{"expiry too soon", "IDR", func() payin.Request { r := qris("10000"); r.ExpiredAt = at(30 * time.Second); return r }(), fault.CodeValidation, "expired_at"},
		{"expiry too late", "IDR", func() payin.Request { r := qris("10000"); r.ExpiredAt = at(31 * 24 * time.Hour); return r }(), fault.CodeValidation, "expired_at"},
		{"bad email", "IDR", func() payin.Request { r := qris("10000"); r.Email = "nobody"; return r }(), fault.CodeValidation, "email"},
		{"missing method param", "KRW", payin.Request{Currency: "KRW", Amount: "10000", PayinMethodName: "kr_bank_krw"}, fault.CodeValidation, "payin_method_params.user_name"},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "IDR", "KRW")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.Payins.Create, m[tt.as], tt.req)
				ferr, ok := fault.As(err)
				if !ok || ferr.Code != tt.code || (tt.field != "" && ferr.Fields[tt.field] == "") {
					t.Errorf("Create() error = %v, want %s on %q", err, tt.code, tt.field)
				}
			})
		}
		if _, total, err := e.Payins.List(ctx, m["IDR"], payin.ListQuery{}); err != nil || total != 0 {
			t.Errorf("after refusals: %d payins (%v), want none", total, err)
		}
	})
}

// TestPaidThenRefunded follows one payin through the ledger: received into
// incoming, cleared to available less the fee, refunded through outgoing.
func TestPaidThenRefunded(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "IDR")["IDR"]
		pin, err := storetest.Write(ctx, e.DB, e.Payins.Create, p, qris("100000"))
		if err != nil {
			t.Fatal(err)
		}
		if pin.Status != payin.Pending || pin.PayCode["qr_string"] == nil {
			t.Fatalf("created payin = %s with pay_code %v, want pending with a QR string", pin.Status, pin.PayCode)
		}
		pin, err = storetest.Write(ctx, e.DB, e.Payins.Simulate, p, payin.SimulateRequest{UUID: pin.UUID, Status: "completed"})
		if err != nil || pin.Status != payin.Received {
			t.Fatalf("Simulate() = %s, %v; want received", pin.Status, err)
		}
		if b := e.Balance(t, p); b.Incoming != 100000*idr {
			t.Errorf("incoming after payment = %d, want 100000", b.Incoming)
		}
		e.RunDue(t, p.MerchantID)
		fee := int64(700 * idr) // 0.70 % of 100,000
		if b := e.Balance(t, p); b.Incoming != 0 || b.Available != 100000*idr-fee {
			t.Errorf("after clearing: %+v, want available %d", b, 100000*idr-fee)
		}
		pin, err = storetest.Write(ctx, e.DB, e.Payins.Refund, p, payin.RefundRequest{UUID: pin.UUID, Amount: "40000", Description: "partial refund"})
		if err != nil || pin.Status != payin.ReturnPending {
			t.Fatalf("Refund() = %s, %v; want return_pending", pin.Status, err)
		}
		if b := e.Balance(t, p); b.Available != 60000*idr-fee || b.Outgoing != 40000*idr {
			t.Errorf("refund under way: %+v, want 40000 outgoing", b)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Payins.Refund, p, payin.RefundRequest{UUID: pin.UUID, Amount: "1000", Description: "second refund"}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("refund while one is pending: error = %v, want a state refusal", err)
		}
		e.Advance(t, p.MerchantID, e.Payins.RefundDelay+time.Second)
		if b := e.Balance(t, p); b.Available != 60000*idr-fee || b.Outgoing != 0 {
			t.Errorf("refund done: %+v, want nothing outgoing", b)
		}
		got, err := e.Payins.Get(ctx, p, pin.UUID)
		if err != nil || got.Status != payin.ReturnReceived {
			t.Errorf("payin after the refund = %s, %v; want return_received", got.Status, err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Payins.Refund, p, payin.RefundRequest{UUID: pin.UUID, Amount: "60001", Description: "too much now"}); !fault.Is(err, fault.CodeAmountOutOfRange) {
			t.Errorf("refunding more than is left: error = %v, want %s", err, fault.CodeAmountOutOfRange)
		}
	})
}

// TestRacingRefunds: twenty refunds of 30 % of one payment at once. At most
// one runs at a time, so the payment is never refunded past what was paid
// and no balance goes below zero.
func TestRacingRefunds(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "IDR")["IDR"]
		pin := received(t, e, p, "100000")
		e.RunDue(t, p.MerchantID)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int64
		)
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := storetest.Write(ctx, e.DB, e.Payins.Refund, p, payin.RefundRequest{UUID: pin.UUID, Amount: "30000", Description: "racing refund"})
				if err == nil {
					mu.Lock()
					accepted += 30000 * idr
					mu.Unlock()
				} else if _, ok := fault.As(err); !ok {
					t.Errorf("Refund() error = %v, want a refusal", err)
				}
			}()
		}
		wg.Wait()
		if accepted != 30000*idr {
			t.Errorf("%d accepted at once, want one refund of 30000 (a refund in progress blocks another)", accepted)
		}
		b := e.Balance(t, p)
		if b.Available != (100000-700)*idr-accepted || b.Outgoing != accepted {
			t.Errorf("balances %+v, want available %d and outgoing %d", b, (100000-700)*idr-accepted, accepted)
		}
	})
}

func TestExpiryAndCancel(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "IDR")["IDR"]
		req := qris("50000")
		req.ExpiredAt = clock.Input{T: servertest.Start.Add(10 * time.Minute), Set: true}
		expiring, err := storetest.Write(ctx, e.DB, e.Payins.Create, p, req)
		if err != nil {
			t.Fatal(err)
		}
		cancelled, err := storetest.Write(ctx, e.DB, e.Payins.Create, p, qris("50000"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := storetest.Write(ctx, e.DB, e.Payins.Cancel, p, payin.UUIDRequest{UUID: cancelled.UUID}); err != nil || got.Status != payin.Cancelled {
			t.Errorf("Cancel() = %s, %v; want cancelled", got.Status, err)
		}
		e.Advance(t, p.MerchantID, 9*time.Minute)
		if got, _ := e.Payins.Get(ctx, p, expiring.UUID); got.Status != payin.Pending {
			t.Errorf("a minute before expiry: %s, want pending", got.Status)
		}
		e.Advance(t, p.MerchantID, time.Minute)
		if got, _ := e.Payins.Get(ctx, p, expiring.UUID); got.Status != payin.Expired {
			t.Errorf("at expiry: %s, want expired", got.Status)
		}
		for _, uuid := range []string{expiring.UUID, cancelled.UUID} {
			if _, err := storetest.Write(ctx, e.DB, e.Payins.Simulate, p, payin.SimulateRequest{UUID: uuid, Status: "completed"}); !fault.Is(err, fault.CodeInvalidState) {
				t.Errorf("paying an ended payin: error = %v, want a state refusal", err)
			}
		}
		if b := e.Balance(t, p); b.Available != 0 || b.Incoming != 0 || b.Outgoing != 0 {
			t.Errorf("balances moved: %+v", b)
		}
	})
}

// TestOtherMerchantsPayinsAreUnknown: a payin is found only by its own merchant.
func TestOtherMerchantsPayinsAreUnknown(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		owner := e.Merchant(t, "IDR")["IDR"]
		stranger := e.Merchant(t, "IDR")["IDR"]
		pin, err := storetest.Write(ctx, e.DB, e.Payins.Create, owner, qris("10000"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Payins.Get(ctx, stranger, pin.UUID); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("Get() by another merchant: error = %v, want not found", err)
		}
		for name, call := range map[string]func() error{
			"simulate": func() error {
				_, err := storetest.Write(ctx, e.DB, e.Payins.Simulate, stranger, payin.SimulateRequest{UUID: pin.UUID, Status: "completed"})
				return err
			},
			"cancel": func() error {
				_, err := storetest.Write(ctx, e.DB, e.Payins.Cancel, stranger, payin.UUIDRequest{UUID: pin.UUID})
				return err
			},
		} {
			if err := call(); !fault.Is(err, fault.CodeNotFound) {
				t.Errorf("%s by another merchant: error = %v, want not found", name, err)
			}
		}
		if got, _ := e.Payins.Get(ctx, owner, pin.UUID); got.Status != payin.Pending {
			t.Errorf("owner's payin is %s after the stranger's calls, want pending", got.Status)
		}
	})
}

// TestReceiptRoundTrips bounds the round trips of a receipt on PostgreSQL,
// which is what bounds receipts into one hot account: they run one after
// another in the lane of their slot (payin.Lane). Lock and read the payin;
// post, with the account's reserve rate read and the balance record
// inserted (its id drawn at random: store.Tx.InsertDrawn) in the same
// exchange. The clearing's job (held for its lane run in its row, found by
// a key drawn for it) and the payin's update go with the commit.
func TestReceiptRoundTrips(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has no round trips to the server")
		}
		p := e.Merchant(t, "IDR")["IDR"]
		pin, err := storetest.Write(context.Background(), e.DB, e.Payins.Create, p, qris("100000"))
		if err != nil {
			t.Fatal(err)
		}
		trips := storetest.RoundTrips(t, e.DB, func(ctx context.Context, tx *store.Tx) error {
			_, err := e.Payins.Simulate(ctx, tx, p, payin.SimulateRequest{UUID: pin.UUID, Status: "completed"})
			return err
		})
		bound := 2
		if e.DB.Citus() {
			bound++ // the post's entry is read back there (ledger.postCitus)
		}
		if trips > bound {
			t.Errorf("a receipt took %d round trips before its commit, want at most %d", trips, bound)
		}
	})
}

// TestCreateRoundTrips bounds the round trips of a payin's creation on
// PostgreSQL before its commit: none. The method is checked against the
// principal's account, and the BEGIN, the uuid's claim (store.ClaimRandom),
// the payin's insert and its jobs all go with the commit.
func TestCreateRoundTrips(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has no round trips to the server")
		}
		p := e.Merchant(t, "IDR")["IDR"]
		trips := storetest.RoundTrips(t, e.DB, func(ctx context.Context, tx *store.Tx) error {
			_, err := e.Payins.Create(ctx, tx, p, qris("100000"))
			return err
		})
		if bound := 0; trips > bound {
			t.Errorf("a payin's creation took %d round trips before its commit, want at most %d", trips, bound)
		}
	})
}

// TestWorkerClearingLocksTheAccountFirst: a clearing run by a worker, among
// the merchant's other jobs in one transaction (in the merchant's lane),
// locks the account before anything else, as those jobs do
// (ledger.LockAccount): holding its payin and its slot's rows while a refund
// job after it in the batch waits for the account, it would deadlock with a
// refund request that holds the account and waits for the whole available
// bucket. Only in its own slot's lane, beside receipts of other slots, does
// it lock no more than its payin and slot.
func TestWorkerClearingLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		p := e.Merchant(t, "IDR")["IDR"]
		pin := received(t, e, p, "100000")
		clear := e.JobWork(t, "payin.clear", p.MerchantID, pin.UUID)
		tests := []struct {
			name string
			lane string
			want bool
		}{
			{"run by a worker in the merchant's lane", store.MerchantLane(p.MerchantID), true},
			{"run in its slot's lane", payin.Lane(p.MerchantID, pin.UUID), false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := e.LocksAccount(t, p, tt.lane, clear)
				if got != tt.want {
					t.Errorf("the clearing locked the account: %v, want %v", got, tt.want)
				}
			})
		}
	})
}

// TestClearingsComeTogether: a hot account's clearings that a worker claims
// together run as one batch (job.RegisterBatch), not one by one, and each
// payment clears as it would alone: incoming to available less its fee and
// its rolling reserve, its balance record done, its reserve's release on
// the clock.
func TestClearingsComeTogether(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "IDR")["IDR"]
		if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE accounts SET reserve_bps = 1000, reserve_days = 7 WHERE id = $1 AND merchant_id = $2`, p.AccountID, p.MerchantID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var singles atomic.Int64
		e.Queue.Wrap("payin.clear", func(h job.Handler) job.Handler {
			return func(ctx context.Context, tx *store.Tx, j job.Job) error {
				singles.Add(1)
				return h(ctx, tx, j)
			}
		})
		var paid []payin.Payin
		var available, reserve int64
		for i := range 8 {
			pin := received(t, e, p, money.Input(strconv.Itoa(10000*(i+1))))
			paid = append(paid, pin)
			total := int64(10000*(i+1)) * idr
			fee := total * 70 / 10000 // 0.70 %
			available += total - fee - (total-fee)/10
			reserve += (total - fee) / 10
		}
		e.RunDue(t, p.MerchantID)
		if n := singles.Load(); n != 0 {
			t.Errorf("%d clearings ran one by one, want all 8 in a batch", n)
		}
		if b := e.Balance(t, p); b.Incoming != 0 || b.Available != available || b.RollingReserve != reserve {
			t.Errorf("after the clearings: %+v, want available %d and reserve %d", b, available, reserve)
		}
		for _, pin := range paid {
			var status string
			err := e.DB.Read().QueryRow(`SELECT status FROM balance_records WHERE merchant_id = $1 AND reference_id = $2`, p.MerchantID, pin.UUID).Scan(&status)
			if err != nil || status != string(ledger.Done) {
				t.Errorf("payin %s's balance record is %q (%v), want done", pin.UUID, status, err)
			}
		}
		e.Advance(t, p.MerchantID, 7*24*time.Hour+time.Second)
		if b := e.Balance(t, p); b.Available != available+reserve || b.RollingReserve != 0 {
			t.Errorf("after the reserve period: %+v, want available %d", b, available+reserve)
		}
		if problems, err := ledger.Verify(ctx, e.DB.Read()); err != nil || len(problems) > 0 {
			t.Errorf("ledger verify: %v %v", problems, err)
		}
	})
}

// TestWorkerClearingBatchLocksTheAccountFirst is
// TestWorkerClearingLocksTheAccountFirst for a batch of clearings: run by a
// worker it locks the account first; in its slot's lane (all its payins'
// slot) only the payins and the slot.
func TestWorkerClearingBatchLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		p := e.Merchant(t, "IDR")["IDR"]
		// Two payins of one slot: a slot's lane's batch holds that slot's.
		bySlot := map[string][]string{}
		var lane string
		for lane == "" {
			pin := received(t, e, p, "100000")
			l := payin.Lane(p.MerchantID, pin.UUID)
			if bySlot[l] = append(bySlot[l], pin.UUID); len(bySlot[l]) == 2 {
				lane = l
			}
		}
		clear := e.JobBatchWork(t, "payin.clear", p.MerchantID, bySlot[lane]...)
		if !e.LocksAccount(t, p, store.MerchantLane(p.MerchantID), clear) {
			t.Error("run by a worker in the merchant's lane, the batch did not lock the account")
		}
		if e.LocksAccount(t, p, lane, clear) {
			t.Error("run in its slot's lane, the batch locked the account")
		}
	})
}
