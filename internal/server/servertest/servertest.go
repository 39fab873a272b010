// Package servertest runs payd's services, without HTTP, on a throwaway test
// database: the fixture of the domain packages' own tests. Each test gets the
// services wired exactly as `payd serve` wires them, and a manual clock it
// moves itself, so time-driven rules run without waiting.
package servertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/httpapi"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// Start is where every fixture's manual clock begins.
var Start = time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC)

// Env is one sandbox payd's services on a fresh database.
type Env struct {
	*server.Server
	Clock *clock.Manual
}

// Each runs fn once per test database (SQLite, and PostgreSQL when
// PAYD_TEST_POSTGRES_DSN is set), each with fresh services.
func Each(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Helper()
	storetest.EachDSN(t, func(t *testing.T, dsn string) { fn(t, Open(t, dsn)) })
}

// EachProduction is Each with the services of a production deployment: no
// sandbox rail (rail.None), no sandbox card network.
func EachProduction(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Helper()
	storetest.EachDSN(t, func(t *testing.T, dsn string) { fn(t, Open(t, dsn, httpapi.Production)) })
}

// Open builds the services on dsn (in the sandbox, unless env says
// otherwise); they are closed when the test ends. No job worker runs: a
// test runs due jobs itself with RunDue.
func Open(t testing.TB, dsn string, env ...httpapi.Environment) *Env {
	t.Helper()
	clk := clock.NewManual(Start)
	cfg := server.Config{DB: dsn, Clock: clk, StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}}
	if len(env) > 0 {
		cfg.Env = env[0]
	}
	s, err := server.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open services: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &Env{Server: s, Clock: clk}
}

// Merchant creates an AU merchant (Australia/Sydney) with a payments account
// per currency and returns the principal of each account's first app, as an
// API call authenticated with its keys would see it.
func (e *Env) Merchant(t testing.TB, currencies ...string) map[string]merchant.Principal {
	t.Helper()
	ctx := context.Background()
	c, err := e.Merchants.Create(ctx, merchant.CreateParams{Name: "Test Merchant", Country: "AU", Timezone: "Australia/Sydney", Currencies: currencies})
	if err != nil {
		t.Fatalf("create merchant: %v", err)
	}
	out := map[string]merchant.Principal{}
	for _, a := range c.Accounts {
		p, err := e.Merchants.Authenticate(ctx, a.AppID, a.SecretKey)
		if err != nil {
			t.Fatalf("authenticate %s app: %v", a.Currency, err)
		}
		out[a.Currency] = p
	}
	return out
}

// RunDue runs every job of the merchant that is due on its clock.
func (e *Env) RunDue(t testing.TB, merchantID string) {
	t.Helper()
	if err := e.Queue.RunDue(context.Background(), merchantID); err != nil {
		t.Fatalf("run due jobs: %v", err)
	}
}

// Advance moves the clock forward by d and runs what became due for the merchant.
func (e *Env) Advance(t testing.TB, merchantID string, d time.Duration) {
	t.Helper()
	e.Clock.Advance(d)
	e.RunDue(t, merchantID)
}

// Balance is the balance of the principal's account.
func (e *Env) Balance(t testing.TB, p merchant.Principal) ledger.Balance {
	t.Helper()
	all, err := ledger.Balances(context.Background(), e.DB.Read(), p.MerchantID, string(merchant.Payments), p.Currency)
	if err != nil {
		t.Fatalf("read balances: %v", err)
	}
	for _, b := range all {
		if b.AccountID == p.AccountID {
			return b
		}
	}
	t.Fatalf("no balance of account %d", p.AccountID)
	return ledger.Balance{}
}

// JobWork is the work of a job of kind for merchantID's record uuid, its
// handler run as the queue runs it (the payload names the merchant and the
// record, as the payin, payout and deposit jobs' payloads do), for a test
// that runs it in a transaction of its own (LocksAccount).
func (e *Env) JobWork(t testing.TB, kind, merchantID, uuid string) func(ctx context.Context, tx *store.Tx) error {
	t.Helper()
	h, ok := e.Queue.Handler(kind)
	if !ok {
		t.Fatalf("no handler for job kind %s", kind)
	}
	payload, err := json.Marshal(map[string]string{"merchant_id": merchantID, "uuid": uuid})
	if err != nil {
		t.Fatal(err)
	}
	j := job.Job{Kind: kind, ClockOf: merchantID, Payload: payload, Attempt: 1}
	return func(ctx context.Context, tx *store.Tx) error { return h(ctx, tx, j) }
}

// JobBatchWork is JobWork for several jobs of kind at once, through the
// kind's batch handler (job.RegisterBatch): the work of merchantID's jobs
// naming uuids, run together as a worker or lane run would.
func (e *Env) JobBatchWork(t testing.TB, kind, merchantID string, uuids ...string) func(ctx context.Context, tx *store.Tx) error {
	t.Helper()
	b, ok := e.Queue.BatchHandler(kind)
	if !ok {
		t.Fatalf("no batch handler for job kind %s", kind)
	}
	jobs := make([]job.Job, len(uuids))
	for i, uuid := range uuids {
		payload, err := json.Marshal(map[string]string{"merchant_id": merchantID, "uuid": uuid})
		if err != nil {
			t.Fatal(err)
		}
		jobs[i] = job.Job{Kind: kind, ClockOf: merchantID, Payload: payload, Attempt: 1}
	}
	return func(ctx context.Context, tx *store.Tx) error { return b(ctx, tx, jobs) }
}

// LocksAccount runs work in a transaction in lane (store.WithLane; its
// context carries the lane, as a job's does when a worker runs it), rolls it
// back, and reports whether, when work returned, the transaction held every
// principal bucket row of p's account, as ledger.LockAccount takes them
// (PostgreSQL): a post alone locks only the rows of its legs.
func (e *Env) LocksAccount(t testing.TB, p merchant.Principal, lane string, work func(ctx context.Context, tx *store.Tx) error) bool {
	t.Helper()
	ctx := store.WithLane(context.Background(), lane)
	rolledBack := errors.New("rolled back")
	var free int
	err := e.DB.Exec(ctx, func(tx *store.Tx) error {
		if err := work(ctx, tx); err != nil {
			return err
		}
		if err := tx.ReadSent(ctx); err != nil {
			return err
		}
		// Another transaction counts the rows it could lock.
		if err := e.DB.Exec(context.Background(), func(probe *store.Tx) error {
			return probe.QueryRowContext(context.Background(), `SELECT count(*) FROM (SELECT id FROM ledger_buckets
				WHERE merchant_id = $1 AND account_id = $2 AND slot = 0 FOR UPDATE SKIP LOCKED) f`, p.MerchantID, p.AccountID).Scan(&free)
		}); err != nil {
			return fmt.Errorf("probe the account's lock: %w", err)
		}
		return rolledBack
	})
	if !errors.Is(err, rolledBack) {
		t.Fatalf("work in lane %s: %v", lane, err)
	}
	return free == 0
}
