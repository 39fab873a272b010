package portal_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server/servertest"
)

// TestFlashOnce: a session's flash is for its page only, is taken by one
// view of it (of many at once), is never another session's, and is not
// readable in the session's row.
func TestFlashOnce(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "dev@shop.example", merchant.Developer)
		s, err := login(e, "dev@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		other, err := login(e, "dev@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		const secret = "sk_flash_secret_shown_once"
		if err := e.Portal.SetFlash(ctx, s, portal.Flash{Page: "/portal/developers", Subject: "app1", Secret: secret}); err != nil {
			t.Fatal(err)
		}
		var row string
		if err := e.DB.Read().QueryRowContext(ctx, `SELECT flash FROM portal_sessions WHERE merchant_id = $1 AND flash <> ''`, m.MerchantID).Scan(&row); err != nil || strings.Contains(row, secret) || strings.Contains(row, "app1") {
			t.Errorf("the session's row holds %q (%v): want it sealed", row, err)
		}
		if _, ok, err := e.Portal.TakeFlash(ctx, s, "/portal/users"); ok || err != nil {
			t.Errorf("another page took the flash (%v)", err)
		}
		if _, ok, err := e.Portal.TakeFlash(ctx, other, "/portal/developers"); ok || err != nil {
			t.Errorf("another session took the flash (%v)", err)
		}
		var taken atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				f, ok, err := e.Portal.TakeFlash(ctx, s, "/portal/developers")
				if err != nil {
					t.Error(err)
				}
				if ok && f.Secret == secret && f.Subject == "app1" {
					taken.Add(1)
				}
			})
		}
		wg.Wait()
		if n := taken.Load(); n != 1 {
			t.Errorf("%d of 8 views at once took the flash, want 1", n)
		}
	})
}
