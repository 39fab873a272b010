package transfer_test

import (
	"context"
	"reflect"
	"testing"

	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
	"payd/internal/transfer"
)

// TestFinishAnswersWhatItStored: a transfer that ends (settlement.Finish)
// answers exactly what reading it back gives: its status, its completion
// time and, failed, its reason; and its money lands once, where the
// outcome says.
func TestFinishAnswersWhatItStored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		status            transfer.Status
		wantReason        bool
		wantTreasury      int64
		wantPaymentsAvail int64
	}{
		{"completed", transfer.Completed, false, 6000, 4000},
		{"failed", transfer.Failed, true, 0, 10000},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				p, acc := setup(t, e, "100")
				tr, err := storetest.Write(ctx, e.DB, e.Transfers.Create, p, transfer.Request{Amount: "60", Description: "sweep", TreasuryAccountID: acc.PublicID})
				if err != nil {
					t.Fatal(err)
				}
				got, err := storetest.Write(ctx, e.DB, e.Transfers.Simulate, p, transfer.SimulateRequest{UUID: tr.UUID, Status: tt.status})
				if err != nil {
					t.Fatal(err)
				}
				stored, err := e.Transfers.Get(ctx, p, tr.UUID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, stored) {
					t.Errorf("Simulate answered %+v, Get reads %+v", got, stored)
				}
				if got.Status != tt.status || got.CompletedAt == nil || (got.FailureReason != nil) != tt.wantReason {
					t.Errorf("status %s, completed_at %v, failure_reason %v; want %s, a time, a reason %v", got.Status, got.CompletedAt, got.FailureReason, tt.status, tt.wantReason)
				}
				if a := treasuryAvailable(t, e, p); a != tt.wantTreasury {
					t.Errorf("treasury available = %d, want %d", a, tt.wantTreasury)
				}
				if b := e.Balance(t, p); b.Available != tt.wantPaymentsAvail || b.Outgoing != 0 {
					t.Errorf("payments balance = %+v, want available %d and nothing outgoing", b, tt.wantPaymentsAvail)
				}
			})
		}
	})
}
