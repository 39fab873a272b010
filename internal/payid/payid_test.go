package payid_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/payid"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// TestRequestLifecycle: created pending with a PayID of its own, paid its
// total (incoming, then available less the fee), deregistered after.
func TestRequestLifecycle(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		req, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "200.00"})
		if err != nil {
			t.Fatal(err)
		}
		if req.Status != payid.Pending || req.ID == 0 || req.RequestPayID == "" {
			t.Fatalf("Create() = %+v", req)
		}
		got, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payid.Receipt, error) {
			return e.PayIDs.Receive(ctx, tx, payid.Payment{PayID: req.RequestPayID, Amount: "200.00", PayerName: "PAYER"})
		})
		if err != nil || got.Outcome != "received" {
			t.Fatalf("Receive() = %+v, %v", got, err)
		}
		e.RunDue(t, p.MerchantID)
		if b := e.Balance(t, p); b.Available != 20000-100 || b.Incoming != 0 {
			t.Errorf("after clearing: %+v, want 199.00 available (0.5 %% fee)", b)
		}
		_, err = store.Do(ctx, e.DB, func(tx *store.Tx) (payid.Receipt, error) {
			return e.PayIDs.Receive(ctx, tx, payid.Payment{PayID: req.RequestPayID, Amount: "200.00"})
		})
		if !fault.Is(err, payid.CodeDeregistered) {
			t.Errorf("a second payment: error = %v, want %s", err, payid.CodeDeregistered)
		}
	})
}

// TestPayIDsNeverRepeat: a hundred requests and static PayIDs, all different.
func TestPayIDsNeverRepeat(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		seen := map[string]bool{}
		for i := range 100 {
			req, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "20"})
			if err != nil {
				t.Fatal(err)
			}
			st, err := storetest.Write(ctx, e.DB, e.PayIDs.CreateStatic, p, payid.StaticRequest{Name: "C", Email: "c@example.com", ExternalID: string(rune('a'+i%26)) + time.Duration(i).String()})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{req.RequestPayID, st.StaticPayID} {
				if seen[id] {
					t.Fatalf("PayID %s handed out twice", id)
				}
				seen[id] = true
			}
		}
	})
}

// TestExpiresOnMerchantClock: a request expires at expired_at on its
// merchant's clock, not before.
func TestExpiresOnMerchantClock(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		_, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "20", ExpiredAt: clock.Input{T: servertest.Start.Add(14 * time.Minute), Set: true}})
		if !fault.Is(err, fault.CodeValidation) {
			t.Errorf("expiry 14 minutes ahead: error = %v, want a validation error", err)
		}
		req, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "20", ExpiredAt: clock.Input{T: servertest.Start.Add(time.Hour), Set: true}})
		if err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 59*time.Minute)
		if got, _ := e.PayIDs.Get(ctx, p, payid.Lookup{ID: req.ID}); got.Status != payid.Pending {
			t.Errorf("before expired_at: %s", got.Status)
		}
		e.Advance(t, p.MerchantID, time.Minute)
		if got, _ := e.PayIDs.Get(ctx, p, payid.Lookup{ID: req.ID}); got.Status != payid.Expired {
			t.Errorf("at expired_at: %s, want expired", got.Status)
		}
	})
}
