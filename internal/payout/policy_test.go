package payout_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

// activePolicy proposes in by one admin and has another approve it.
func activePolicy(t *testing.T, e *servertest.Env, merchantID string, in policy.Input) {
	t.Helper()
	ctx := context.Background()
	a := policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
	b := policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
	_, err := store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) {
		p, err := e.Policies.Propose(ctx, tx, merchantID, a, in, e.Clock.Now())
		if err != nil {
			return p, err
		}
		return e.Policies.Decide(ctx, tx, merchantID, p.ID, b, true, e.Clock.Now())
	})
	if err != nil {
		t.Fatalf("activate policy %+v: %v", in, err)
	}
}

// activeDailyLimit sets currency's daily limit, approved by a second admin.
func activeDailyLimit(t *testing.T, e *servertest.Env, merchantID, currency string, amount money.Input) {
	t.Helper()
	ctx := context.Background()
	a := policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
	b := policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
	_, err := store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) {
		p, err := e.Policies.ProposeDailyLimit(ctx, tx, merchantID, a, currency, amount, e.Clock.Now())
		if err != nil {
			return p, err
		}
		return e.Policies.Decide(ctx, tx, merchantID, p.ID, b, true, e.Clock.Now())
	})
	if err != nil {
		t.Fatalf("activate daily limit: %v", err)
	}
}

func financeUser(n int) payout.Decider {
	return payout.Decider{UserID: fmt.Sprintf("u-finance-%d", n), Email: fmt.Sprintf("f%d@shop.example", n), Role: merchant.Finance}
}

// events counts merchantID's webhook events of type for the record uuid.
func events(t *testing.T, e *servertest.Env, merchantID, eventType, uuid string) int {
	t.Helper()
	var n int
	if err := e.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND event_type = $2 AND record_uuid = $3`,
		merchantID, eventType, uuid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPolicyHoldsPayout: with the account's approvals off, a payout a policy
// catches is held with the policy's snapshot and required approvals; only
// its roles approve, the same user twice is 409 ALREADY_APPROVED, the maker
// is 403, and it leaves held at the last required approval, once. A later
// change of the policy does not touch it; a payout below every min_amount is
// not held.
func TestPolicyHoldsPayout(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		activePolicy(t, e, p.MerchantID, policy.Input{Name: "Two to sign", Currency: "AUD", MinAmount: "100", Approvals: 2, Roles: []merchant.Role{merchant.Finance}})
		small, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "99.99"))
		if err != nil || small.Status != payout.Processing || small.Approval != nil {
			t.Fatalf("a payout below min_amount: %+v, %v; want processing, no approval", small, err)
		}
		req := bankPayout("12345678", "60", "40")
		req.WebhookNotification = webhook.Target{EndpointURL: "http://127.0.0.1:1/hook"}
		maker := payout.Maker{Label: "f0@shop.example", UserID: financeUser(0).UserID}
		po, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) { return e.Payouts.CreateBy(ctx, tx, p, req, maker) })
		if err != nil || po.Status != payout.Held || po.Approval == nil || po.Approval.RequiredApprovals != 2 ||
			po.Approval.Policy == nil || *po.Approval.Policy != (policy.Ref{Name: "Two to sign", Version: 1}) {
			t.Fatalf("CreateBy() = %+v, %v; want held for 2 approvals by policy Two to sign v1", po, err)
		}
		decide := func(by payout.Decider) (payout.Payout, error) {
			return store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
				return e.Payouts.Decide(ctx, tx, payout.Decision{MerchantID: p.MerchantID, PayoutUUID: po.UUID, By: by, Approve: true})
			})
		}
		tests := []struct {
			name string
			by   payout.Decider
			want string
		}{
			{"an admin (not the policy's role)", payout.Decider{UserID: "u-admin", Email: "admin@shop.example", Role: merchant.Admin}, fault.CodeForbidden},
			{"the maker", financeUser(0), fault.CodeForbidden},
			{"a first finance user", financeUser(1), ""},
			{"the same user again", financeUser(1), policy.CodeAlreadyApproved},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := decide(tt.by)
				if codeOf(err) != tt.want {
					t.Errorf("Decide() = %v, want %q", err, tt.want)
				}
				if err == nil && (got.Status != payout.Held || got.Approval.Status != payout.ApprovalPending || len(got.Approval.Approvals) != 1) {
					t.Errorf("after one approval: %+v; want held, pending, one approval", got)
				}
			})
		}
		activePolicy(t, e, p.MerchantID, policy.Input{Name: "One to sign", Currency: "AUD", MinAmount: "50", Approvals: 1, Roles: []merchant.Role{merchant.Finance}})
		got, err := decide(financeUser(2))
		if err != nil || got.Status != payout.Processing || got.Approval.Status != payout.ApprovalApproved || len(got.Approval.Approvals) != 2 ||
			got.Approval.Approvals[1].DecidedBy != "f2@shop.example" {
			t.Fatalf("the second approval = %+v, %v; want processing, approved, two approvals", got, err)
		}
		if _, err := decide(financeUser(3)); codeOf(err) != payout.CodeDecisionConflict {
			t.Errorf("an approval after it left held = %v, want DECISION_CONFLICT", err)
		}
		if n := events(t, e, p.MerchantID, "payout.processing", po.UUID); n != 1 {
			t.Errorf("%d payout.processing events, want 1", n)
		}
	})
}

// TestPolicyRejection: any rejection of a payout a policy holds ends it,
// its funds back; a scheduled payout caught is held, then scheduled when
// approved.
func TestPolicyRejectionAndSchedule(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		activePolicy(t, e, p.MerchantID, policy.Input{Name: "Two", Currency: "AUD", MinAmount: "10", Approvals: 2, Roles: []merchant.Role{merchant.Finance, merchant.Admin}})
		po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "100"))
		if err != nil || po.Status != payout.Held {
			t.Fatalf("Create() = %+v, %v; want held", po, err)
		}
		decide := func(uuid string, by payout.Decider, approve bool) (payout.Payout, error) {
			return store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
				return e.Payouts.Decide(ctx, tx, payout.Decision{MerchantID: p.MerchantID, PayoutUUID: uuid, By: by, Approve: approve, Reason: "not this one"})
			})
		}
		if _, err := decide(po.UUID, financeUser(1), true); err != nil {
			t.Fatal(err)
		}
		if got, err := decide(po.UUID, financeUser(2), false); err != nil || got.Status != payout.Rejected {
			t.Fatalf("a rejection after one approval = %+v, %v; want rejected", got, err)
		}
		if b := e.Balance(t, p); b.Available != 100000 || b.Outgoing != 0 {
			t.Errorf("after the rejection: %+v, want the funds back", b)
		}
		req := bankPayout("12345678", "100")
		req.ScheduledAt = servertest.Start.Add(48 * time.Hour).Format(time.RFC3339)
		sched, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, req)
		if err != nil || sched.Status != payout.Held {
			t.Fatalf("a scheduled payout caught = %+v, %v; want held", sched, err)
		}
		decide(sched.UUID, financeUser(1), true)
		if got, err := decide(sched.UUID, payout.Decider{UserID: "u-admin", Email: "admin@shop.example", Role: merchant.Admin}, true); err != nil || got.Status != payout.Scheduled {
			t.Errorf("approved = %+v, %v; want scheduled", got, err)
		}
	})
}

// TestDailyLimit: a creator's payouts of one local day above the daily limit
// are held for one approval, the one that crosses it and every later one;
// another creator's are not; a new local day starts again.
func TestDailyLimit(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "5000")
		activeDailyLimit(t, e, p.MerchantID, "AUD", "300")
		create := func(amount money.Input, maker payout.Maker) payout.Payout {
			t.Helper()
			po, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
				return e.Payouts.CreateBy(ctx, tx, p, bankPayout("12345678", amount), maker)
			})
			if err != nil {
				t.Fatal(err)
			}
			return po
		}
		app := payout.Maker{Label: "app:" + p.AppID}
		user := payout.Maker{Label: "f1@shop.example", UserID: "u-finance-1"}
		steps := []struct {
			name   string
			amount money.Input
			maker  payout.Maker
			want   payout.Status
		}{
			{"first", "100", app, payout.Processing},
			{"up to the limit", "200", app, payout.Processing},
			{"crossing it", "1", app, payout.Held},
			{"later that day", "1", app, payout.Held},
			{"another creator", "250", user, payout.Processing},
		}
		for _, st := range steps {
			po := create(st.amount, st.maker)
			if po.Status != st.want {
				t.Errorf("%s: %s, want %s", st.name, po.Status, st.want)
			}
			if st.want == payout.Held && (po.Approval.RequiredApprovals != 1 || po.Approval.Policy != nil) {
				t.Errorf("%s: approval %+v, want 1 approval, no policy", st.name, po.Approval)
			}
		}
		// Sydney midnight is 13:00 UTC (AEDT) on 2 March 2026: the next local day.
		e.Clock.Advance(13 * time.Hour)
		if po := create("1", app); po.Status != payout.Processing {
			t.Errorf("the next local day: %s, want processing", po.Status)
		}
	})
}

// TestConcurrentApprovals: twenty finance users approve a payout that needs
// three at once: exactly three approvals count, the rest are refused with
// DECISION_CONFLICT, the payout leaves held once with one webhook.
func TestConcurrentApprovals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		activePolicy(t, e, p.MerchantID, policy.Input{Name: "Three", Currency: "AUD", MinAmount: "1", Approvals: 3, Roles: []merchant.Role{merchant.Finance}})
		req := bankPayout("12345678", "100")
		req.WebhookNotification = webhook.Target{EndpointURL: "http://127.0.0.1:1/hook"}
		po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, req)
		if err != nil || po.Status != payout.Held {
			t.Fatalf("Create() = %+v, %v", po, err)
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			counted  int
			finished int
		)
		for i := range 20 {
			wg.Go(func() {
				got, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
					return e.Payouts.Decide(ctx, tx, payout.Decision{MerchantID: p.MerchantID, PayoutUUID: po.UUID, By: financeUser(i + 1), Approve: true})
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					counted++
					if got.Status == payout.Processing {
						finished++
					}
				case !fault.Is(err, payout.CodeDecisionConflict):
					t.Errorf("Decide() = %v, want success or DECISION_CONFLICT", err)
				}
			})
		}
		wg.Wait()
		if counted != 3 || finished != 1 {
			t.Errorf("%d approvals counted, %d left held; want 3 and 1", counted, finished)
		}
		got, err := e.Payouts.Get(ctx, p, po.UUID)
		if err != nil || got.Status != payout.Processing || len(got.Approval.Approvals) != 3 {
			t.Errorf("after the race: %+v, %v; want processing with 3 approvals", got, err)
		}
		if n := events(t, e, p.MerchantID, "payout.processing", po.UUID); n != 1 {
			t.Errorf("%d payout.processing events, want 1", n)
		}
		if b := e.Balance(t, p); b.Outgoing != 10000+feeMinor {
			t.Errorf("balance %+v, want the payout outgoing once", b)
		}
	})
}

// TestConcurrentApprovalsTwoServers: the approval race of
// TestConcurrentApprovals across two payd instances sharing one PostgreSQL
// database (their own pools, as two processes have): three approvals count,
// the payout leaves held once, with one webhook.
func TestConcurrentApprovalsTwoServers(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		one := servertest.Open(t, dsn)
		if one.DB.Dialect() != store.Postgres {
			t.Skip("SQLite is one process's file")
		}
		two := servertest.Open(t, dsn)
		ctx := context.Background()
		p := funded(t, one, "1000")
		activePolicy(t, one, p.MerchantID, policy.Input{Name: "Three", Currency: "AUD", MinAmount: "1", Approvals: 3, Roles: []merchant.Role{merchant.Finance}})
		req := bankPayout("12345678", "100")
		req.WebhookNotification = webhook.Target{EndpointURL: "http://127.0.0.1:1/hook"}
		po, err := storetest.Write(ctx, one.DB, one.Payouts.Create, p, req)
		if err != nil || po.Status != payout.Held {
			t.Fatalf("Create() = %+v, %v", po, err)
		}
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			counted, passed int
		)
		for i := range 20 {
			e := one
			if i%2 == 1 {
				e = two
			}
			wg.Go(func() {
				got, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
					return e.Payouts.Decide(ctx, tx, payout.Decision{MerchantID: p.MerchantID, PayoutUUID: po.UUID, By: financeUser(i + 1), Approve: true})
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					counted++
					if got.Status == payout.Processing {
						passed++
					}
				case !fault.Is(err, payout.CodeDecisionConflict):
					t.Errorf("Decide() = %v, want success or DECISION_CONFLICT", err)
				}
			})
		}
		wg.Wait()
		if counted != 3 || passed != 1 {
			t.Errorf("%d approvals counted, %d left held; want 3 and 1", counted, passed)
		}
		if n := events(t, one, p.MerchantID, "payout.processing", po.UUID); n != 1 {
			t.Errorf("%d payout.processing events, want 1", n)
		}
	})
}
