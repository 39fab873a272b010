package payout_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// TestPolicyProperty: random policies, payouts, approvers and orders of
// decisions never let a payout leave held with fewer than its required
// distinct allowed approvers (never its maker), answer each decision as
// the rules say (403, 409 ALREADY_APPROVED, 409 DECISION_CONFLICT), and
// never move the funds twice: the balance is the funding less the payout
// exactly when it was not rejected.
func TestPolicyProperty(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.SQLite && testing.Short() {
			t.Skip("the property runs on PostgreSQL without -short")
		}
		ctx := context.Background()
		users := []payout.Decider{
			{UserID: "u0", Email: "u0@shop.example", Role: merchant.Finance},
			{UserID: "u1", Email: "u1@shop.example", Role: merchant.Finance},
			{UserID: "u2", Email: "u2@shop.example", Role: merchant.Finance},
			{UserID: "u3", Email: "u3@shop.example", Role: merchant.Admin},
			{UserID: "u4", Email: "u4@shop.example", Role: merchant.Admin},
			{UserID: "u5", Email: "u5@shop.example", Role: merchant.Viewer},
		}
		rapid.Check(t, func(rt *rapid.T) {
			p := funded(t, e, "2000")
			approvals := rapid.IntRange(1, 3).Draw(rt, "approvals")
			roles := rapid.SampledFrom([][]merchant.Role{{merchant.Finance}, {merchant.Admin}, {merchant.Admin, merchant.Finance}}).Draw(rt, "roles")
			minAmount := rapid.IntRange(1, 500).Draw(rt, "min_amount")
			activePolicy(t, e, p.MerchantID, policy.Input{Name: "P", Currency: "AUD", MinAmount: money.Input(fmt.Sprint(minAmount)), Approvals: approvals, Roles: roles})
			amount := rapid.IntRange(1, 1000).Draw(rt, "amount")
			maker := payout.Maker{Label: "app:" + p.AppID}
			if rapid.Bool().Draw(rt, "portal maker") {
				maker = payout.Maker{Label: users[0].Email, UserID: users[0].UserID}
			}
			po, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
				return e.Payouts.CreateBy(ctx, tx, p, bankPayout("12345678", money.Input(fmt.Sprint(amount))), maker)
			})
			if err != nil {
				rt.Fatal(err)
			}
			if got, want := po.Status == payout.Held, amount >= minAmount; got != want {
				rt.Fatalf("amount %d, min_amount %d: held = %v", amount, minAmount, got)
			}
			held, rejected := po.Status == payout.Held, false
			allowed := roles
			if po.Approval == nil {
				allowed = payout.DeciderRoles // a payout never held names no policy's roles
			}
			var approvers []string
			for i := range rapid.IntRange(0, 8).Draw(rt, "decisions") {
				by := rapid.SampledFrom(users).Draw(rt, fmt.Sprintf("by %d", i))
				approve := rapid.Float64Range(0, 1).Draw(rt, fmt.Sprintf("approve %d", i)) > 0.15
				want := ""
				switch {
				case !slices.Contains(allowed, by.Role) || by.UserID == maker.UserID:
					want = fault.CodeForbidden
				case !held && po.Approval != nil:
					want = payout.CodeDecisionConflict
				case !held:
					want = fault.CodeInvalidState
				case approve && slices.Contains(approvers, by.UserID):
					want = policy.CodeAlreadyApproved
				}
				got, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
					return e.Payouts.Decide(ctx, tx, payout.Decision{MerchantID: p.MerchantID, PayoutUUID: po.UUID, By: by, Approve: approve, Reason: "not this one"})
				})
				if codeOf(err) != want {
					rt.Fatalf("decision %d by %s (%s, approve %v): %v, want %q", i, by.UserID, by.Role, approve, err, want)
				}
				if err != nil {
					continue
				}
				switch {
				case !approve:
					held, rejected = false, true
				default:
					approvers = append(approvers, by.UserID)
					held = len(approvers) < approvals
				}
				if (got.Status == payout.Held) != held {
					rt.Fatalf("after %d approvals of %d: %s", len(approvers), approvals, got.Status)
				}
			}
			final, err := e.Payouts.Get(ctx, p, po.UUID)
			if err != nil {
				rt.Fatal(err)
			}
			if final.Approval != nil && final.Status != payout.Held && !rejected {
				seen := map[string]bool{}
				for _, st := range final.Approval.Approvals {
					if seen[st.DecidedBy] || st.DecidedBy == maker.Label || !slices.Contains(roles, st.Role) {
						rt.Fatalf("approvals %+v: not distinct allowed approvers", final.Approval.Approvals)
					}
					seen[st.DecidedBy] = true
				}
				if len(seen) < final.Approval.RequiredApprovals {
					rt.Fatalf("left held with %d of %d approvals", len(seen), final.Approval.RequiredApprovals)
				}
			}
			b := e.Balance(t, p)
			want := int64(200000 - amount*100 - feeMinor)
			if rejected {
				want = 200000
			}
			if b.Available != want {
				rt.Fatalf("available %d, want %d (rejected %v)", b.Available, want, rejected)
			}
		})
	})
}
