package payout_test

import (
	"context"
	"testing"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// TestMakerChecker: the maker-checker rule, by user id: only admin and
// finance users decide, never the portal user who made the payout, whatever
// email they show; a payout the API made has no maker user. MayDecide
// answers as Decide does (one rule, mayDecide), changes nothing, and an
// unknown payout is 404.
func TestMakerChecker(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, apiPayout := held(t, e)
		portalPayout, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) {
			return e.Payouts.CreateBy(ctx, tx, p, bankPayout("12345678", "10"), payout.Maker{Label: "maker@shop.example", UserID: "u-maker"})
		})
		if err != nil || portalPayout.Approval == nil || portalPayout.Approval.CreatedBy != "maker@shop.example" {
			t.Fatalf("CreateBy() = %+v, %v; want held, created by maker@shop.example", portalPayout, err)
		}
		tests := []struct {
			name string
			uuid string
			by   payout.Decider
			want string
		}{
			{"the maker", portalPayout.UUID, payout.Decider{UserID: "u-maker", Email: "maker@shop.example", Role: merchant.Finance}, fault.CodeForbidden},
			{"the maker by another email", portalPayout.UUID, payout.Decider{UserID: "u-maker", Email: "someone@shop.example", Role: merchant.Admin}, fault.CodeForbidden},
			{"another user with the maker's email", portalPayout.UUID, payout.Decider{UserID: "u-other", Email: "maker@shop.example", Role: merchant.Finance}, ""},
			{"a viewer", portalPayout.UUID, payout.Decider{UserID: "u-viewer", Role: merchant.Viewer}, fault.CodeForbidden},
			{"a developer", portalPayout.UUID, payout.Decider{UserID: "u-dev", Role: merchant.Developer}, fault.CodeForbidden},
			{"finance on an API payout", apiPayout.UUID, payout.Decider{UserID: "u-maker", Role: merchant.Finance}, ""},
			{"an unknown payout", "no-such-payout", payout.Decider{UserID: "u-other", Role: merchant.Admin}, fault.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := codeOf(e.Payouts.MayDecide(ctx, p.MerchantID, tt.uuid, tt.by)); got != tt.want {
					t.Errorf("MayDecide() = %q, want %q", got, tt.want)
				}
			})
		}
		maker := payout.Decision{MerchantID: p.MerchantID, PayoutUUID: portalPayout.UUID, By: tests[0].by, Approve: true}
		if _, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payout.Payout, error) { return e.Payouts.Decide(ctx, tx, maker) }); !fault.Is(err, fault.CodeForbidden) {
			t.Errorf("the maker's Decide() = %v, want forbidden", err)
		}
		for _, uuid := range []string{portalPayout.UUID, apiPayout.UUID} {
			if po, err := e.Payouts.Get(ctx, p, uuid); err != nil || po.Status != payout.Held {
				t.Errorf("payout %s after the refusals: %+v, %v; want held", uuid, po, err)
			}
		}
	})
}

// codeOf is err's code, "" for nil.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return err.Error()
}
