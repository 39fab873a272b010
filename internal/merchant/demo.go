package merchant

import (
	"context"
	"fmt"

	"payd/internal/fault"
	"payd/internal/store"
)

// DemoCurrencies are the payments accounts of the sandbox's demo merchant.
var DemoCurrencies = []string{"AUD", "USD", "JPY", "VND", "IDR", "KRW", "THB"}

// DemoEmail is the demo merchant's portal login.
const DemoEmail = "admin@demo.payd.test"

// Demo is what a first sandbox start prints, once.
type Demo struct {
	Created
	Email    string
	Password string
	// TreasuryAccountNumber is the demo merchant's AUD treasury account.
	TreasuryAccountNumber string
}

// EnsureDemo creates the demo merchant when the database has no merchant at
// all, and reports whether it did. Two processes starting together on one
// empty PostgreSQL database cannot both create it: the portal login is unique.
func (s *Service) EnsureDemo(ctx context.Context) (Demo, bool, error) {
	var n int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM merchants`).Scan(&n); err != nil {
		return Demo{}, false, fmt.Errorf("ensure demo merchant: %w", err)
	}
	if n > 0 {
		return Demo{}, false, nil
	}
	demo := Demo{Email: DemoEmail, Password: randomToken(16)}
	hash, err := HashPassword(demo.Password)
	if err != nil {
		return Demo{}, false, err
	}
	created, err := store.Do(ctx, s.db, func(tx *store.Tx) (bool, error) {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM merchants`).Scan(&n); err != nil || n > 0 {
			return false, err
		}
		now := s.clock.Now()
		c, err := createMerchant(ctx, tx, CreateParams{Name: "Demo Merchant", Country: "AU", Timezone: "Australia/Sydney", Currencies: DemoCurrencies}, now)
		if err != nil {
			return false, err
		}
		demo.Created = c
		treasury, err := OpenTreasury(ctx, tx, c.MerchantID, "AUD", TreasuryActive, now)
		if err != nil {
			return false, err
		}
		demo.TreasuryAccountNumber = treasury.AccountNumber
		_, err = InsertUser(ctx, tx, c.MerchantID, DemoEmail, Admin, hash, now)
		return err == nil, err
	})
	if fe, ok := fault.As(err); ok && fe.Kind == fault.Conflict || store.IsUniqueViolation(err) {
		return Demo{}, false, nil // another process made it first
	}
	if err != nil {
		return Demo{}, false, fmt.Errorf("ensure demo merchant: %w", err)
	}
	return demo, created, nil
}
