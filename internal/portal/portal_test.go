package portal_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"golang.org/x/crypto/argon2"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

const password = "correct horse battery"

// user adds a portal user with role to merchantID.
func user(t *testing.T, e *servertest.Env, merchantID, email string, role merchant.Role) merchant.NewUser {
	t.Helper()
	u, err := e.Merchants.CreateUser(context.Background(), merchantID, email, role, password)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func login(e *servertest.Env, email, pw, code string) (portal.Session, error) {
	s, _, err := e.Portal.Login(context.Background(), portal.Credentials{Email: email, Password: pw, TOTPCode: code, Client: "192.0.2.1"})
	return s, err
}

// TestLoginLockout: ten failures for one email lock it for 15 minutes, the
// right password included, and an unknown email is answered exactly alike.
func TestLoginLockout(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "victim@shop.example", merchant.Finance)
		for _, email := range []string{"victim@shop.example", "ghost@shop.example"} {
			var got []error
			for range 10 {
				_, err := login(e, email, "wrong password!", "")
				got = append(got, err)
			}
			for i, err := range got[:9] {
				if !errors.Is(err, portal.ErrBadLogin) {
					t.Errorf("%s: failure %d answered %v, want ErrBadLogin", email, i+1, err)
				}
			}
			if !errors.Is(got[9], portal.ErrLocked) {
				t.Errorf("%s: the tenth failure answered %v, want ErrLocked", email, got[9])
			}
			if _, err := login(e, email, password, ""); !errors.Is(err, portal.ErrLocked) {
				t.Errorf("%s: the right password while locked: %v, want ErrLocked", email, err)
			}
		}
		e.Clock.Advance(portal.LockFor - time.Second)
		if _, err := login(e, "victim@shop.example", password, ""); !errors.Is(err, portal.ErrLocked) {
			t.Errorf("a second before the lock ends: %v, want ErrLocked", err)
		}
		e.Clock.Advance(time.Second)
		if _, err := login(e, "victim@shop.example", password, ""); err != nil {
			t.Errorf("after 15 minutes: %v, want a session", err)
		}
	})
}

// TestSignInRehashesOldParameters: a password hashed with the earlier
// 64 MiB parameters still signs in, and that sign-in stores a hash with
// today's; a wrong password changes nothing.
func TestSignInRehashesOldParameters(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		u := user(t, e, m.MerchantID, "old@shop.example", merchant.Admin)
		salt := []byte("0123456789abcdef")
		enc := base64.RawStdEncoding
		old := fmt.Sprintf("$argon2id$v=19$m=65536,t=2,p=1$%s$%s", enc.EncodeToString(salt),
			enc.EncodeToString(argon2.IDKey([]byte(password), salt, 2, 64*1024, 1, 32)))
		if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, old, u.UserID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		stored := func() string {
			var h string
			if err := e.DB.Read().QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = $1`, u.UserID).Scan(&h); err != nil {
				t.Fatal(err)
			}
			return h
		}
		if _, err := login(e, "old@shop.example", "wrong password!", ""); !errors.Is(err, portal.ErrBadLogin) {
			t.Fatalf("wrong password: %v", err)
		}
		if got := stored(); got != old {
			t.Fatalf("a failed sign-in changed the hash to %s", got)
		}
		if _, err := login(e, "old@shop.example", password, ""); err != nil {
			t.Fatalf("sign in with a 64 MiB hash: %v", err)
		}
		got := stored()
		if got == old || merchant.NeedsRehash(got) || !merchant.CheckPassword(got, password) {
			t.Errorf("after sign-in the hash is %s, want one with today's parameters that checks", got)
		}
		if _, err := login(e, "old@shop.example", password, ""); err != nil {
			t.Errorf("sign in with the new hash: %v", err)
		}
	})
}

// TestSessionTimeouts: a session ends after 30 idle minutes or 12 hours,
// whichever comes first, on the merchant's clock; logging out ends it now.
func TestSessionTimeouts(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		idle, err := login(e, "viewer@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		busy, err := login(e, "viewer@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		for elapsed := time.Duration(0); elapsed < portal.AbsoluteTimeout-20*time.Minute; elapsed += 20 * time.Minute {
			e.Clock.Advance(20 * time.Minute)
			if _, err := e.Portal.Authenticate(ctx, busy.Token); err != nil {
				t.Fatalf("a session used every 20 minutes ended after %v: %v", elapsed+20*time.Minute, err)
			}
		}
		if _, err := e.Portal.Authenticate(ctx, idle.Token); err == nil {
			t.Error("a session idle for hours is still live")
		}
		e.Clock.Advance(20 * time.Minute)
		if _, err := e.Portal.Authenticate(ctx, busy.Token); err == nil {
			t.Error("a session is live after 12 hours")
		}

		fresh, err := login(e, "viewer@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(portal.IdleTimeout - time.Second)
		if _, err := e.Portal.Authenticate(ctx, fresh.Token); err != nil {
			t.Errorf("after 29:59 idle: %v", err)
		}
		if err := e.Portal.Logout(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Portal.Authenticate(ctx, fresh.Token); err == nil {
			t.Error("a session is live after logout")
		}
	})
}

// TestTOTPCodeWorksOnce: with a second factor on, sign-in needs a current
// code, and a code that opened a session cannot open another.
func TestTOTPCodeWorksOnce(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "admin@shop.example", merchant.Admin)
		s, err := login(e, "admin@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := e.Portal.BeginTOTP(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Portal.ConfirmTOTP(ctx, s, "000000", "192.0.2.1"); err == nil {
			t.Error("a wrong code turned the second factor on")
		}
		code, _ := totp.GenerateCode(secret, e.Clock.Now())
		if err := e.Portal.ConfirmTOTP(ctx, s, code, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
		if _, err := login(e, "admin@shop.example", password, ""); !errors.Is(err, portal.ErrNoTOTP) {
			t.Errorf("sign-in without a code: %v, want ErrNoTOTP", err)
		}
		if _, err := login(e, "admin@shop.example", password, code); !errors.Is(err, portal.ErrBadLogin) {
			t.Errorf("the enrolment code signing in: %v, want ErrBadLogin (it is used up)", err)
		}
		e.Clock.Advance(time.Minute)
		code, _ = totp.GenerateCode(secret, e.Clock.Now())
		if _, err := login(e, "admin@shop.example", password, code); err != nil {
			t.Fatalf("sign-in with a current code: %v", err)
		}
		if _, err := login(e, "admin@shop.example", password, code); !errors.Is(err, portal.ErrBadLogin) {
			t.Errorf("the same code again: %v, want ErrBadLogin", err)
		}
		old, _ := totp.GenerateCode(secret, e.Clock.Now().Add(-5*time.Minute))
		if _, err := login(e, "admin@shop.example", password, old); !errors.Is(err, portal.ErrBadLogin) {
			t.Errorf("a five-minute-old code: %v, want ErrBadLogin", err)
		}
	})
}

// TestLastAdminStays: two admins demoting each other at once leave one admin.
func TestLastAdminStays(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		a := user(t, e, m.MerchantID, "a@shop.example", merchant.Admin)
		b := user(t, e, m.MerchantID, "b@shop.example", merchant.Admin)
		sa, err := login(e, "a@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		sb, err := login(e, "b@shop.example", password, "")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = e.Portal.SetRole(ctx, sa, b.UserID, merchant.Viewer, "192.0.2.1") })
		wg.Go(func() { errs[1] = e.Portal.Disable(ctx, sb, a.UserID, "192.0.2.2") })
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Errorf("demote and disable at once: %v and %v, want exactly one to succeed", errs[0], errs[1])
		}
		members, err := e.Portal.Members(ctx, m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		admins := 0
		for _, u := range members {
			if u.Role == merchant.Admin && !u.Disabled {
				admins++
			}
		}
		if admins != 1 {
			t.Errorf("%d enabled admins remain, want 1", admins)
		}
	})
}

// TestRolesAndTenancy: only admins change users, and an admin reaches no
// user of another merchant.
func TestRolesAndTenancy(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		other := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "admin@shop.example", merchant.Admin)
		user(t, e, m.MerchantID, "fin@shop.example", merchant.Finance)
		stranger := user(t, e, other.MerchantID, "admin@other.example", merchant.Admin)
		admin, _ := login(e, "admin@shop.example", password, "")
		fin, _ := login(e, "fin@shop.example", password, "")
		if _, err := e.Portal.Invite(ctx, fin, "new@shop.example", merchant.Viewer, "192.0.2.1"); !isKind(err, "FORBIDDEN") {
			t.Errorf("a finance user invites: %v, want FORBIDDEN", err)
		}
		if err := e.Portal.SetRole(ctx, admin, stranger.UserID, merchant.Viewer, "192.0.2.1"); !isKind(err, "NOT_FOUND") {
			t.Errorf("changing another merchant's user: %v, want NOT_FOUND", err)
		}
		if err := e.Portal.Disable(ctx, admin, stranger.UserID, "192.0.2.1"); !isKind(err, "NOT_FOUND") {
			t.Errorf("disabling another merchant's user: %v, want NOT_FOUND", err)
		}
		token, err := e.Portal.Invite(ctx, admin, "new@shop.example", merchant.Developer, "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Portal.AcceptInvite(ctx, token, "too short", "192.0.2.1"); err == nil {
			t.Error("an 9-character password was accepted")
		}
		e.Clock.Advance(72 * time.Hour)
		if _, err := e.Portal.AcceptInvite(ctx, token, "a long enough password", "192.0.2.1"); !isKind(err, "NOT_FOUND") {
			t.Errorf("a 72-hour-old invitation: %v, want NOT_FOUND", err)
		}
	})
}

func isKind(err error, code string) bool { return fault.Is(err, code) }

// TestAuditLogRefusesChanges: the database itself refuses to update or
// delete audit rows, on both databases.
func TestAuditLogRefusesChanges(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		entry := portal.Entry{MerchantID: m.MerchantID, Actor: "a@shop.example", Action: "login", Subject: "a@shop.example", Client: "192.0.2.1"}
		if err := e.Portal.Change(ctx, func(*store.Tx) (portal.Entry, error) { return entry, nil }); err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{`UPDATE audit_log SET actor = 'someone else'`, `DELETE FROM audit_log`} {
			err := e.DB.Exec(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, stmt)
				return err
			})
			if err == nil {
				t.Errorf("%s succeeded", stmt)
			}
		}
		entries, total, err := e.Portal.AuditPage(ctx, m.MerchantID, 1, 20)
		if err != nil || total != 1 || entries[0].Actor != "a@shop.example" || entries[0].Client != "192.0.2.1" {
			t.Errorf("the log after the refused changes: %v %d %+v", err, total, entries)
		}
	})
}
