package gateway_test

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// checkoutOf creates a v1 gateway payment of amount and returns its checkout.
func checkoutOf(t *testing.T, e *servertest.Env, p merchant.Principal, orderID, amount string) (gateway.Checkout, string) {
	t.Helper()
	ctx := context.Background()
	res, err := store.Do(ctx, e.DB, func(tx *store.Tx) (gateway.CreateResult, error) {
		return e.Gateway.Create(ctx, tx, p, gateway.Request{OrderID: orderID, Amount: money.Input(amount),
			OrderSuccessURL: "https://shop.example/thanks", PaymentGatewayNotification: webhookTarget()})
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	u, _ := url.Parse(res.RedirectURL)
	token := u.Query().Get("t")
	c, err := e.Gateway.Checkout(ctx, res.PaymentID, token)
	if err != nil {
		t.Fatal(err)
	}
	return c, token
}

func receive(e *servertest.Env, payID, amount string) (payid.Receipt, error) {
	return store.Do(context.Background(), e.DB, func(tx *store.Tx) (payid.Receipt, error) {
		return e.PayIDs.Receive(context.Background(), tx, payid.Payment{PayID: payID, Amount: money.Input(amount)})
	})
}

// TestCheckoutPayID: a checkout offers one PayID (the same on every call),
// whose exact payment marks the order paid with PayID in the transaction
// that receives it; the order then takes no card, and its PayID no second
// payment. Below PayID's minimum no PayID is offered.
func TestCheckoutPayID(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		c, token := checkoutOf(t, e, p, "O-1", "50.00")
		offer, err := e.Gateway.OfferPayID(ctx, c)
		if err != nil || offer == nil {
			t.Fatalf("offer %+v %v", offer, err)
		}
		again, err := e.Gateway.OfferPayID(ctx, c)
		if err != nil || again == nil || again.PayID != offer.PayID {
			t.Fatalf("second offer %+v %v, first %s", again, err, offer.PayID)
		}
		if rc, err := receive(e, offer.PayID, "50.00"); err != nil || rc.Outcome != "received" {
			t.Fatalf("receive %+v %v", rc, err)
		}
		got, err := e.Gateway.Get(ctx, p, c.PaymentID)
		if err != nil || got.Status != gateway.Paid || got.PaidWith != "payid" || got.BalanceID == nil {
			t.Fatalf("after the PayID payment: %+v %v", got, err)
		}
		if _, err := e.Gateway.Pay(ctx, c.PaymentID, token, gateway.Attempt{Sandbox: "pay"}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("pay after PayID: %v", err)
		}
		if _, err := receive(e, offer.PayID, "50.00"); !fault.Is(err, payid.CodeDeregistered) {
			t.Errorf("second PayID payment: %v", err)
		}
		small, _ := checkoutOf(t, e, p, "O-2", "19.99")
		if offer, err := e.Gateway.OfferPayID(ctx, small); err != nil || offer != nil {
			t.Errorf("an order below PayID's minimum is offered %+v (%v)", offer, err)
		}
	})
}

// TestCheckoutPayIDRacesCard: a PayID payment and card attempts racing on
// one order pay it once: the other ways find it paid (or the PayID
// withdrawn), and the balance holds one payment.
func TestCheckoutPayIDRacesCard(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		want := int64(0)
		for i := range 4 {
			c, token := checkoutOf(t, e, p, "R-"+strconv.Itoa(i), "40.00")
			offer, err := e.Gateway.OfferPayID(ctx, c)
			if err != nil || offer == nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			wg.Go(func() {
				if _, err := receive(e, offer.PayID, "40.00"); err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				} else if !fault.Is(err, payid.CodeDeregistered) {
					t.Errorf("receive: %v", err)
				}
			})
			for range 3 {
				wg.Go(func() {
					if _, err := e.Gateway.Pay(ctx, c.PaymentID, token, gateway.Attempt{Sandbox: "pay"}); err == nil {
						mu.Lock()
						wins++
						mu.Unlock()
					} else if !fault.Is(err, fault.CodeInvalidState) {
						t.Errorf("pay: %v", err)
					}
				})
			}
			wg.Wait()
			if wins != 1 {
				t.Errorf("order %d paid %d times", i, wins)
			}
			got, err := e.Gateway.Get(ctx, p, c.PaymentID)
			if err != nil || got.Status != gateway.Paid {
				t.Fatalf("order %d: %+v %v", i, got, err)
			}
			// A card credits 40.00; PayID 40.00 less its 0.5 % fee.
			want += map[string]int64{"card": 4000, "payid": 3980}[got.PaidWith]
		}
		e.RunDue(t, p.MerchantID)
		if b := e.Balance(t, p); b.Available != want || b.Incoming != 0 {
			t.Errorf("available %d, incoming %d; want %d and 0 (each order once)", b.Available, b.Incoming, want)
		}
	})
}
