package merchant_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

// shop creates a merchant with one AUD payments account and its app.
func shop(t *testing.T, e *servertest.Env) merchant.Created {
	t.Helper()
	c, err := e.Merchants.Create(context.Background(), merchant.CreateParams{Name: "Shop", Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"AUD"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// onMachineClock returns a merchant service whose principal cache measures
// its entries' lifetimes on machine, a clock the test moves.
func onMachineClock(e *servertest.Env) (svc *merchant.Service, machine *clock.Manual) {
	svc = merchant.NewService(e.DB, e.Clock)
	machine = clock.NewManual(servertest.Start)
	merchant.SetPrincipalCacheClock(svc, machine)
	return svc, machine
}

// TestPrincipalCacheHoldsForItsLifetime checks that Authenticate answers
// from what it read while the entry is good, even when the database has
// changed behind it, and reads again once it has expired.
func TestPrincipalCacheHoldsForItsLifetime(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		c := shop(t, e)
		app := c.Accounts[0]
		svc, machine := onMachineClock(e)
		if _, err := svc.Authenticate(ctx, app.AppID, app.SecretKey); err != nil {
			t.Fatal(err)
		}
		// Revoked behind the service's back, as no payd command does.
		if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE apps SET revoked_at = 1 WHERE merchant_id = $1 AND app_id = $2`, c.MerchantID, app.AppID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, app.AppID, app.SecretKey); err != nil {
			t.Errorf("within the entry's lifetime: Authenticate() error = %v, want the cached principal", err)
		}
		if _, err := svc.Authenticate(ctx, app.AppID, "wrong"+app.SecretKey); err != merchant.ErrUnauthenticated {
			t.Errorf("wrong secret against a cached app: error = %v, want ErrUnauthenticated", err)
		}
		machine.Advance(merchant.PrincipalCacheTTL)
		if _, err := svc.Authenticate(ctx, app.AppID, app.SecretKey); err != merchant.ErrUnauthenticated {
			t.Errorf("once the entry expired: Authenticate() error = %v, want ErrUnauthenticated", err)
		}
	})
}

// TestPrincipalChangesReachOtherProcesses checks the cache's rule: a change
// of what a principal holds, made by another payd on the same database (an
// operator command, another server), is what the next request here sees
// once the change has answered.
func TestPrincipalChangesReachOtherProcesses(t *testing.T) {
	t.Parallel()
	dedicated := merchant.Dedicated
	tests := []struct {
		name   string
		change func(ctx context.Context, e *servertest.Env, other *merchant.Service, merchantID, appID string) error
		check  func(p merchant.Principal, err error) string
	}{
		{"app revoked",
			func(ctx context.Context, e *servertest.Env, other *merchant.Service, merchantID, appID string) error {
				return other.RevokeApp(ctx, merchantID, appID)
			},
			func(p merchant.Principal, err error) string {
				if err != merchant.ErrUnauthenticated {
					return "the revoked app was accepted"
				}
				return ""
			}},
		{"test clock moved",
			func(ctx context.Context, e *servertest.Env, other *merchant.Service, merchantID, appID string) error {
				_, err := store.Do(ctx, e.DB, func(tx *store.Tx) (time.Time, error) {
					return other.AdvanceClock(ctx, tx, merchantID, func(now time.Time) (time.Time, error) { return now.Add(48 * time.Hour), nil })
				})
				return err
			},
			func(p merchant.Principal, err error) string {
				if err != nil || p.ClockOffset < 48*time.Hour {
					return "the principal's clock has not moved"
				}
				return ""
			}},
		{"account type changed",
			func(ctx context.Context, e *servertest.Env, other *merchant.Service, merchantID, appID string) error {
				_, err := other.UpdateAccount(ctx, merchantID, "AUD", merchant.AccountUpdate{AccountType: &dedicated})
				return err
			},
			func(p merchant.Principal, err error) string {
				if err != nil || p.AccountType != merchant.Dedicated {
					return "the principal's account type is the old one"
				}
				return ""
			}},
		{"payin methods changed",
			func(ctx context.Context, e *servertest.Env, other *merchant.Service, merchantID, appID string) error {
				_, err := other.UpdateAccount(ctx, merchantID, "AUD", merchant.AccountUpdate{Methods: &[]string{"au_bank_aud"}})
				return err
			},
			func(p merchant.Principal, err error) string {
				if err != nil || !slices.Equal(p.Methods, []string{"au_bank_aud"}) {
					return "the principal's methods are the old ones"
				}
				return ""
			}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				c := shop(t, e)
				app := c.Accounts[0]
				here, other := merchant.NewService(e.DB, e.Clock), merchant.NewService(e.DB, e.Clock)
				if _, err := here.Authenticate(ctx, app.AppID, app.SecretKey); err != nil {
					t.Fatal(err)
				}
				if err := tt.change(ctx, e, other, c.MerchantID, app.AppID); err != nil {
					t.Fatal(err)
				}
				p, err := here.Authenticate(ctx, app.AppID, app.SecretKey)
				if msg := tt.check(p, err); msg != "" {
					t.Errorf("after the change answered: %s (%+v, %v)", msg, p, err)
				}
			})
		}
	})
}

// TestTokenCacheHoldsForItsLifetime checks the same of AuthenticateToken,
// and that a cached token still expires on the merchant's clock at once.
func TestTokenCacheHoldsForItsLifetime(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		c := shop(t, e)
		app := c.Accounts[0]
		svc, machine := onMachineClock(e)
		p, err := svc.Authenticate(ctx, app.AppID, app.SecretKey)
		if err != nil {
			t.Fatal(err)
		}
		deleted, err := svc.IssueToken(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := svc.AuthenticateToken(ctx, deleted); err != nil || got.MerchantID != c.MerchantID {
			t.Fatalf("AuthenticateToken() = %+v, %v; want the merchant's principal", got, err)
		}
		// Deleted behind the service's back, as no payd command does.
		if err := e.DB.Exec(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM access_tokens WHERE merchant_id = $1`, c.MerchantID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AuthenticateToken(ctx, deleted); err != nil {
			t.Errorf("within the entry's lifetime: AuthenticateToken() error = %v, want the cached principal", err)
		}
		expiring, err := svc.IssueToken(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AuthenticateToken(ctx, expiring); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(merchant.TokenLifetime)
		if _, err := svc.AuthenticateToken(ctx, expiring); err != merchant.ErrUnauthenticated {
			t.Errorf("a cached token past its expiry: error = %v, want ErrUnauthenticated", err)
		}
		machine.Advance(merchant.PrincipalCacheTTL)
		if _, err := svc.AuthenticateToken(ctx, deleted); err != merchant.ErrUnauthenticated {
			t.Errorf("once the entry expired: AuthenticateToken() error = %v, want ErrUnauthenticated", err)
		}
	})
}

// TestRevokedAppsTokensFailInOtherProcesses: an app revoked by another payd
// on the same database takes its tokens with it for the next request here,
// though this process had just accepted one of them.
func TestRevokedAppsTokensFailInOtherProcesses(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		c := shop(t, e)
		app := c.Accounts[0]
		here, other := merchant.NewService(e.DB, e.Clock), merchant.NewService(e.DB, e.Clock)
		p, err := here.Authenticate(ctx, app.AppID, app.SecretKey)
		if err != nil {
			t.Fatal(err)
		}
		token, err := here.IssueToken(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := here.AuthenticateToken(ctx, token); err != nil {
			t.Fatal(err)
		}
		if err := other.RevokeApp(ctx, c.MerchantID, app.AppID); err != nil {
			t.Fatal(err)
		}
		if _, err := here.AuthenticateToken(ctx, token); err != merchant.ErrUnauthenticated {
			t.Errorf("the revoked app's token: error = %v, want ErrUnauthenticated", err)
		}
	})
}
