package merchant_test

import (
	"context"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/server/servertest"
	"payd/internal/store"
)

func TestCreateRefusesBadParams(t *testing.T) {
	t.Parallel()
	ok := merchant.CreateParams{Name: "Shop", Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"AUD"}}
	tests := []struct {
		name  string
		edit  func(p *merchant.CreateParams)
		field string
	}{
		{"empty name", func(p *merchant.CreateParams) { p.Name = " " }, "name"},
		{"lower-case country", func(p *merchant.CreateParams) { p.Country = "au" }, "country"},
		{"unknown zone", func(p *merchant.CreateParams) { p.Timezone = "Mars/Olympus" }, "timezone"},
		{"Local zone", func(p *merchant.CreateParams) { p.Timezone = "Local" }, "timezone"},
		{"no currency", func(p *merchant.CreateParams) { p.Currencies = nil }, "currencies"},
		{"unknown currency", func(p *merchant.CreateParams) { p.Currencies = []string{"XXX"} }, "currencies"},
		{"currency twice", func(p *merchant.CreateParams) { p.Currencies = []string{"AUD", "AUD"} }, "currencies"},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := ok
				tt.edit(&p)
				_, err := e.Merchants.Create(context.Background(), p)
				ferr, isFault := fault.As(err)
				if !isFault || ferr.Code != fault.CodeValidation || ferr.Fields[tt.field] == "" {
					t.Errorf("Create() error = %v, want a validation error on %s", err, tt.field)
				}
			})
		}
		var merchants int
		if err := e.DB.Read().QueryRow(`SELECT count(*) FROM merchants`).Scan(&merchants); err != nil || merchants != 0 {
			t.Errorf("after refused creates: %d merchants (%v), want 0", merchants, err)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		c, err := e.Merchants.Create(ctx, merchant.CreateParams{Name: "Shop", Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"AUD", "JPY"}})
		if err != nil {
			t.Fatal(err)
		}
		aud, jpy := c.Accounts[0], c.Accounts[1]
		p, err := e.Merchants.Authenticate(ctx, jpy.AppID, jpy.SecretKey)
		if err != nil || p.MerchantID != c.MerchantID || p.Currency != "JPY" || p.AccountNumber != jpy.AccountNumber {
			t.Fatalf("Authenticate(JPY app) = %+v, %v; want the JPY account of %s", p, err, c.MerchantID)
		}
		for name, try := range map[string][2]string{
			"wrong secret":        {aud.AppID, jpy.SecretKey},
			"unknown app":         {"nope", aud.SecretKey},
			"empty secret":        {aud.AppID, ""},
			"secret of other app": {jpy.AppID, aud.SecretKey},
		} {
			if _, err := e.Merchants.Authenticate(ctx, try[0], try[1]); err != merchant.ErrUnauthenticated {
				t.Errorf("%s: Authenticate() error = %v, want ErrUnauthenticated", name, err)
			}
		}
		if err := e.Merchants.RevokeApp(ctx, c.MerchantID, aud.AppID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Merchants.Authenticate(ctx, aud.AppID, aud.SecretKey); err != merchant.ErrUnauthenticated {
			t.Errorf("revoked app: Authenticate() error = %v, want ErrUnauthenticated", err)
		}
		if err := e.Merchants.RevokeApp(ctx, "another-merchant", jpy.AppID); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("revoking another merchant's app: error = %v, want not found", err)
		}
	})
}

// TestTokenExpiresOnMerchantClock checks the spec's 3600-second token
// lifetime, counted on the merchant's (sandbox test) clock.
func TestTokenExpiresOnMerchantClock(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		token, err := e.Merchants.IssueToken(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.Merchants.AuthenticateToken(ctx, token); err != nil || got.AppID != p.AppID {
			t.Fatalf("fresh token: %+v, %v", got, err)
		}
		var owner string
		if err := e.DB.Read().QueryRow(`SELECT merchant_id FROM access_tokens WHERE app_id = $1`, p.AppID).Scan(&owner); err != nil || owner != p.MerchantID {
			t.Errorf("the token names merchant %q (%v), want %s", owner, err, p.MerchantID)
		}
		advance := func(d time.Duration) {
			_, err := store.Do(ctx, e.DB, func(tx *store.Tx) (time.Time, error) {
				return e.Merchants.AdvanceClock(ctx, tx, p.MerchantID, func(now time.Time) (time.Time, error) { return now.Add(d), nil })
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		advance(merchant.TokenLifetime - time.Second)
		if _, err := e.Merchants.AuthenticateToken(ctx, token); err != nil {
			t.Errorf("token a second before expiry: %v", err)
		}
		advance(time.Second)
		if _, err := e.Merchants.AuthenticateToken(ctx, token); err != merchant.ErrUnauthenticated {
			t.Errorf("token at expiry: error = %v, want ErrUnauthenticated", err)
		}
	})
}

func TestClockOnlyMovesForward(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		move := func(to func(time.Time) time.Time) (time.Time, error) {
			return store.Do(ctx, e.DB, func(tx *store.Tx) (time.Time, error) {
				return e.Merchants.AdvanceClock(ctx, tx, p.MerchantID, func(now time.Time) (time.Time, error) { return to(now), nil })
			})
		}
		if _, err := move(func(now time.Time) time.Time { return now.Add(-time.Millisecond) }); err == nil {
			t.Error("moving the clock back was accepted")
		}
		if _, err := move(func(now time.Time) time.Time { return now.Add(merchant.MaxClockAdvance + time.Hour) }); err == nil {
			t.Error("moving the clock past the bound was accepted")
		}
		want, err := move(func(now time.Time) time.Time { return now.Add(48 * time.Hour) })
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Merchants.Now(ctx, e.DB.Read(), p.MerchantID)
		if err != nil || got.Before(want) || got.Sub(want) > time.Millisecond {
			t.Errorf("clock after advance = %v, %v; want %v", got, err, want)
		}
		other := e.Merchant(t, "AUD")["AUD"]
		if got, _ := e.Merchants.Now(ctx, e.DB.Read(), other.MerchantID); !got.Equal(servertest.Start) {
			t.Errorf("another merchant's clock = %v, want it untouched at %v", got, servertest.Start)
		}
	})
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		u, err := e.Merchants.CreateUser(ctx, p.MerchantID, " Finance@Example.com ", merchant.Finance, "correct horse battery")
		if err != nil || u.Email != "finance@example.com" || u.Role != merchant.Finance {
			t.Fatalf("CreateUser() = %+v, %v", u, err)
		}
		if _, err := e.Merchants.CreateUser(ctx, p.MerchantID, "finance@example.com", merchant.Admin, "another long one"); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("same email twice: error = %v, want a state conflict", err)
		}
		// An email signs in to one merchant: another merchant cannot take
		// it (global_keys keeps it unique across merchants), and the refusal
		// writes no user.
		other := e.Merchant(t, "AUD")["AUD"]
		if _, err := e.Merchants.CreateUser(ctx, other.MerchantID, "finance@example.com", merchant.Admin, "another long one"); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("another merchant's user with the same email: error = %v, want a state conflict", err)
		}
		var users int
		if err := e.DB.Read().QueryRow(`SELECT count(*) FROM users WHERE merchant_id = $1`, other.MerchantID).Scan(&users); err != nil || users != 0 {
			t.Errorf("the other merchant has %d users (%v), want none", users, err)
		}
		for name, try := range map[string]struct {
			email, password string
			role            merchant.Role
		}{
			"short password": {"a@example.com", "short", merchant.Viewer},
			"bad email":      {"not an email", "long enough password", merchant.Viewer},
			"unknown role":   {"b@example.com", "long enough password", "owner"},
		} {
			if _, err := e.Merchants.CreateUser(ctx, p.MerchantID, try.email, try.role, try.password); !fault.Is(err, fault.CodeValidation) {
				t.Errorf("%s: error = %v, want a validation error", name, err)
			}
		}
		if _, err := e.Merchants.CreateUser(ctx, "no-such-merchant", "c@example.com", merchant.Viewer, "long enough password"); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("unknown merchant: error = %v, want not found", err)
		}
	})
}
