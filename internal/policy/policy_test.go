package policy_test

import (
	"context"
	"testing"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

var (
	adminA  = policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
	adminB  = policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
	finance = policy.Actor{UserID: "u-finance", Email: "f@shop.example", Role: merchant.Finance}
)

// write runs fn in a transaction of its own at the fixture's time.
func write(e *servertest.Env, fn func(ctx context.Context, tx *store.Tx) (policy.Policy, error)) (policy.Policy, error) {
	ctx := context.Background()
	return store.Do(ctx, e.DB, func(tx *store.Tx) (policy.Policy, error) { return fn(ctx, tx) })
}

// Active proposes in by admin A and has admin B approve it.
func Active(t *testing.T, e *servertest.Env, merchantID string, in policy.Input) policy.Policy {
	t.Helper()
	p, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
		return e.Policies.Propose(ctx, tx, merchantID, adminA, in, e.Clock.Now())
	})
	if err != nil {
		t.Fatalf("Propose(%+v) = %v", in, err)
	}
	p, err = write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
		return e.Policies.Decide(ctx, tx, merchantID, p.ID, adminB, true, e.Clock.Now())
	})
	if err != nil || p.Status != policy.Active || p.Version != 1 {
		t.Fatalf("Decide(approve) = %+v, %v; want active version 1", p, err)
	}
	return p
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return err.Error()
}

// TestChangesNeedASecondAdmin: a proposal, a change and a deletion are
// pending until an admin other than the proposer approves; only admins
// change policies; a second policy with the same currency and min_amount
// is 422; an approved change raises the version.
func TestChangesNeedASecondAdmin(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"].MerchantID
		in := policy.Input{Name: "Large", Currency: "AUD", MinAmount: "1000", Approvals: 2, Roles: []merchant.Role{merchant.Finance}}
		if _, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.Propose(ctx, tx, m, finance, in, e.Clock.Now())
		}); codeOf(err) != fault.CodeForbidden {
			t.Errorf("finance's Propose() = %v, want FORBIDDEN", err)
		}
		p, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.Propose(ctx, tx, m, adminA, in, e.Clock.Now())
		})
		if err != nil || p.Status != policy.Pending || p.Version != 0 || p.Name != "Large" {
			t.Fatalf("Propose() = %+v, %v; want pending version 0", p, err)
		}
		decide := func(by policy.Actor, approve bool) (policy.Policy, error) {
			return write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
				return e.Policies.Decide(ctx, tx, m, p.ID, by, approve, e.Clock.Now())
			})
		}
		if _, err := decide(adminA, true); codeOf(err) != fault.CodeForbidden {
			t.Errorf("the proposer's approval = %v, want FORBIDDEN", err)
		}
		if _, err := decide(finance, true); codeOf(err) != fault.CodeForbidden {
			t.Errorf("finance's approval = %v, want FORBIDDEN", err)
		}
		if got, err := decide(adminB, true); err != nil || got.Status != policy.Active || got.Version != 1 || got.Approvals != 2 {
			t.Fatalf("admin B's approval = %+v, %v; want active version 1", got, err)
		}
		if _, err := decide(adminB, true); codeOf(err) != policy.CodeDecisionConflict {
			t.Errorf("approval with nothing pending = %v, want DECISION_CONFLICT", err)
		}
		same := in
		same.Name = "Another"
		if _, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.Propose(ctx, tx, m, adminB, same, e.Clock.Now())
		}); codeOf(err) != fault.CodeValidation {
			t.Errorf("a second policy of AUD 1000 = %v, want VALIDATION_FAILED", err)
		}
		changed := in
		changed.Approvals = 3
		if got, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.ProposeUpdate(ctx, tx, m, p.ID, adminB, changed, e.Clock.Now())
		}); err != nil || got.Status != policy.Pending || got.Approvals != 2 || got.Proposed == nil || got.Proposed.Approvals != 3 {
			t.Fatalf("ProposeUpdate() = %+v, %v; want pending, still 2 approvals, proposing 3", got, err)
		}
		if _, err := decide(adminB, true); codeOf(err) != fault.CodeForbidden {
			t.Errorf("the update's proposer approving = %v, want FORBIDDEN", err)
		}
		if got, err := decide(adminA, true); err != nil || got.Version != 2 || got.Approvals != 3 {
			t.Fatalf("the update approved = %+v, %v; want version 2, 3 approvals", got, err)
		}
		if _, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.ProposeDelete(ctx, tx, m, p.ID, adminA, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		rules, err := e.Policies.List(context.Background(), m)
		if err != nil || len(rules.Records) != 1 || rules.Records[0].Status != policy.Pending {
			t.Fatalf("List() during the deletion = %+v, %v; want the policy, pending", rules, err)
		}
		if _, err := decide(adminB, true); err != nil {
			t.Fatal(err)
		}
		if rules, err := e.Policies.List(context.Background(), m); err != nil || len(rules.Records) != 0 {
			t.Errorf("List() after the deletion = %+v, %v; want none", rules, err)
		}
	})
}

// TestProposalRefusals: what a proposal may not be, each a 422 naming its
// field, nothing written.
func TestProposalRefusals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"].MerchantID
		ok := policy.Input{Name: "Large", Currency: "AUD", MinAmount: "1000", Approvals: 2, Roles: []merchant.Role{merchant.Finance}}
		tests := []struct {
			name  string
			edit  func(*policy.Input)
			field string
		}{
			{"no name", func(in *policy.Input) { in.Name = " " }, "name"},
			{"unknown currency", func(in *policy.Input) { in.Currency = "XXX" }, "currency"},
			{"no min_amount", func(in *policy.Input) { in.MinAmount = "" }, "min_amount"},
			{"too precise", func(in *policy.Input) { in.MinAmount = "1.234" }, "min_amount"},
			{"no approvals", func(in *policy.Input) { in.Approvals = 0 }, "approvals"},
			{"four approvals", func(in *policy.Input) { in.Approvals = 4 }, "approvals"},
			{"no roles", func(in *policy.Input) { in.Roles = nil }, "roles"},
			{"a viewer role", func(in *policy.Input) { in.Roles = []merchant.Role{merchant.Viewer} }, "roles"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				in := ok
				tt.edit(&in)
				_, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
					return e.Policies.Propose(ctx, tx, m, adminA, in, e.Clock.Now())
				})
				f, isFault := fault.As(err)
				if !isFault || f.Fields[tt.field] == "" {
					t.Errorf("Propose() = %v, want a problem with %s", err, tt.field)
				}
			})
		}
		if rules, err := e.Policies.List(context.Background(), m); err != nil || len(rules.Records) != 0 {
			t.Errorf("after the refusals: %+v, %v; want no policy", rules, err)
		}
	})
}

// TestEvaluate: the active threshold policy with the highest min_amount at
// or below the amount applies; a pending one does not.
func TestEvaluate(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"].MerchantID
		Active(t, e, m, policy.Input{Name: "Medium", Currency: "AUD", MinAmount: "100", Approvals: 1, Roles: []merchant.Role{merchant.Finance}})
		Active(t, e, m, policy.Input{Name: "Large", Currency: "AUD", MinAmount: "1000", Approvals: 2, Roles: []merchant.Role{merchant.Admin, merchant.Finance}})
		if _, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.Propose(ctx, tx, m, adminA, policy.Input{Name: "Pending", Currency: "AUD", MinAmount: "50", Approvals: 3, Roles: []merchant.Role{merchant.Admin}}, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			currency string
			amount   int64
			want     string
			required int
		}{
			{"below every policy", "AUD", 9999, "", 0},
			{"at Medium's min_amount", "AUD", 10000, "Medium", 1},
			{"between", "AUD", 99999, "Medium", 1},
			{"at Large's", "AUD", 100000, "Large", 2},
			{"another currency", "JPY", 100000, "", 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h, err := store.Do(context.Background(), e.DB, func(tx *store.Tx) (policy.Hold, error) {
					return e.Policies.Evaluate(context.Background(), tx, policy.Subject{MerchantID: m, Currency: tt.currency, Amount: tt.amount,
						CreatorLabel: "app:x", Now: e.Clock.Now(), Zone: "Australia/Sydney"})
				})
				got := ""
				if h.Policy != nil {
					got = h.Policy.Name
				}
				if err != nil || got != tt.want || h.Held != (tt.want != "") || h.Required != tt.required {
					t.Errorf("Evaluate() = %+v (%s), %v; want %q, %d approvals", h, got, err, tt.want, tt.required)
				}
			})
		}
	})
}

// TestDailyLimitNeedsASecondAdmin: a daily limit is proposed and approved
// like a policy, and GET /v2/approval_policies' daily_limits shows it only
// once approved.
func TestDailyLimitNeedsASecondAdmin(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"].MerchantID
		p, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.ProposeDailyLimit(ctx, tx, m, adminA, "AUD", money.Input("300"), e.Clock.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
		if rules, _ := e.Policies.List(context.Background(), m); len(rules.DailyLimits) != 0 || len(rules.Pending) != 1 {
			t.Errorf("List() before approval = %+v; want no daily limit, one pending", rules)
		}
		if _, err := write(e, func(ctx context.Context, tx *store.Tx) (policy.Policy, error) {
			return e.Policies.Decide(ctx, tx, m, p.ID, adminB, true, e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if rules, _ := e.Policies.List(context.Background(), m); rules.DailyLimits["AUD"] != "300.00" {
			t.Errorf("daily_limits = %v, want AUD 300.00", rules.DailyLimits)
		}
	})
}
