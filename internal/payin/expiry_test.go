package payin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/payin"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

// TestExpiryByMinute: the payins that expire within one minute of the
// merchant's clock share one expiry job, yet each expires at its own
// expired_at to the millisecond: at 99 ms into the minute nothing has, at
// 100 ms the payin due then and no other; more payins due at once than one
// run takes (101) all expire; a payin paid before its expiry is left alone;
// every expiry sends payin.expired, and no expiry job is left afterwards.
// A job an earlier version left for a second still expires its payins.
func TestExpiryByMinute(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "IDR")["IDR"]
		minute := servertest.Start.Add(10 * time.Minute).Truncate(time.Minute)
		at := func(ms int) time.Time { return minute.Add(time.Duration(ms) * time.Millisecond) }
		var created []string
		create := func(ms, n int) {
			t.Helper()
			req := qris("50000")
			req.ExpiredAt = clock.Input{T: at(ms), Set: true}
			req.WebhookNotification = webhook.Target{EndpointURL: "https://shop.example/hooks"}
			if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
				for range n {
					pin, err := e.Payins.Create(ctx, tx, p, req)
					if err != nil {
						return err
					}
					created = append(created, pin.UUID)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		create(100, 1)
		create(59_999, 1)
		create(60_000, 1)
		create(700, 1)
		create(500, 101) // more than one run takes
		first, last, next, paid, crowd := created[0], created[1], created[2], created[3], created[4:]
		if _, err := storetest.Write(ctx, e.DB, e.Payins.Simulate, p, payin.SimulateRequest{UUID: paid, Status: "completed"}); err != nil {
			t.Fatal(err)
		}
		count := func(query string) int {
			t.Helper()
			var n int
			if err := e.DB.Read().QueryRowContext(ctx, query, p.MerchantID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		jobs := func() int {
			return count(`SELECT count(*) FROM jobs WHERE merchant_id = $1 AND kind IN ('payin.expire_minute', 'payin.expire_second', 'payin.expire')`)
		}
		if n := jobs(); n != 2 {
			t.Errorf("105 payins expiring within two minutes wait with %d expiry jobs, want 2", n)
		}
		status := func(uuid string) payin.Status {
			t.Helper()
			pin, err := e.Payins.Get(ctx, p, uuid)
			if err != nil {
				t.Fatal(err)
			}
			return pin.Status
		}
		moveTo := func(ms int) {
			t.Helper()
			e.Clock.Set(at(ms))
			e.RunDue(t, p.MerchantID)
		}

		moveTo(99)
		if got := status(first); got != payin.Pending {
			t.Errorf("1 ms before its expiry: %s, want pending", got)
		}
		moveTo(100)
		if got, crowdGot := status(first), status(crowd[0]); got != payin.Expired || crowdGot != payin.Pending {
			t.Errorf("at 100 ms: the payin due then is %s (want expired), one due at 500 ms %s (want pending)", got, crowdGot)
		}
		moveTo(59_998)
		for i, uuid := range crowd {
			if got := status(uuid); got != payin.Expired {
				t.Fatalf("payin %d of the 101 due at 500 ms, at 59.998 s: %s, want expired", i, got)
			}
		}
		if got, paidGot := status(last), status(paid); got != payin.Pending || paidGot != payin.Received {
			t.Errorf("at 59.998 s: the payin due at 59.999 s is %s (want pending), the paid one %s (want received)", got, paidGot)
		}
		moveTo(60_000)
		if got, nextGot := status(last), status(next); got != payin.Expired || nextGot != payin.Expired {
			t.Errorf("at the next minute: %s and %s, want both expired", got, nextGot)
		}
		if n := jobs(); n != 0 {
			t.Errorf("%d expiry jobs left, want 0", n)
		}
		if n := count(`SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND event_type = 'payin.expired'`); n != 104 {
			t.Errorf("%d payin.expired events, want 104", n)
		}

		// A second's job as an earlier version queued it, in place of the
		// minute's job its payin got.
		created = nil
		create(120_300, 1)
		legacy := created[0]
		second := at(120_000).UnixMilli()
		if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
			if _, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE merchant_id = $1 AND kind = 'payin.expire_minute'`, p.MerchantID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO jobs (kind, merchant_id, payload, run_at, max_attempts, state, unique_key, created_at)
				VALUES ('payin.expire_second', $1, $2, $3, 25, 'available', $4, $3)`,
				p.MerchantID, fmt.Sprintf(`{"merchant_id":%q,"second":%d}`, p.MerchantID, second), second, fmt.Sprintf("payin.expire_second:%d", second))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		moveTo(120_299)
		if got := status(legacy); got != payin.Pending {
			t.Errorf("1 ms before its expiry, under a second's job: %s, want pending", got)
		}
		moveTo(120_300)
		if got := status(legacy); got != payin.Expired {
			t.Errorf("at its expiry, under a second's job: %s, want expired", got)
		}
		if n := jobs(); n != 0 {
			t.Errorf("%d expiry jobs left after the second's job, want 0", n)
		}
	})
}
