package merchant

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/store"
)

// Account is a payments or treasury account of a merchant.
type Account struct {
	ID            int64
	MerchantID    string
	Kind          AccountKind
	Currency      string
	AccountNumber string
	// PublicID is a treasury account's id in the API (CONTRACT §15); empty
	// for payments accounts, which the API names by currency.
	PublicID    string
	AccountType AccountType
	Status      string
	// Methods lists the enabled method codes; nil means the catalogue's defaults for the currency.
	Methods   []string
	Approvals bool
	// ApprovalHold is how long a held payout waits for a decision before it expires.
	ApprovalHold time.Duration
	// ReserveBPS is the rolling reserve held from each payin, in basis points.
	ReserveBPS  int64
	ReserveDays int
	MinBalance  int64
	// DisputeFee is what a lost card dispute debits (minor units).
	DisputeFee int64
	CreatedAt  time.Time
}

// DefaultDisputeFee is an account's dispute fee until the operator sets
// one (payd account update --dispute-fee): 25.00 in its currency.
func DefaultDisputeFee(currency string) int64 { return money.UnitsOf(currency, 25) }

const accountColumns = `id, merchant_id, kind, currency, account_number, COALESCE(public_id, ''), account_type, status, methods, approvals,
	approval_hold_ms, reserve_bps, reserve_days, min_balance, dispute_fee, created_at`

func scanAccount(row interface{ Scan(...any) error }) (Account, error) {
	var a Account
	var methods *string
	var created, holdMS int64
	var disputeFee *int64
	err := row.Scan(&a.ID, &a.MerchantID, &a.Kind, &a.Currency, &a.AccountNumber, &a.PublicID, &a.AccountType, &a.Status, &methods,
		&a.Approvals, &holdMS, &a.ReserveBPS, &a.ReserveDays, &a.MinBalance, &disputeFee, &created)
	if err != nil {
		return a, err
	}
	a.DisputeFee = DefaultDisputeFee(a.Currency)
	if disputeFee != nil {
		a.DisputeFee = *disputeFee
	}
	a.ApprovalHold = time.Duration(holdMS) * time.Millisecond
	if methods != nil {
		a.Methods = splitMethods(*methods)
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return a, err
}

func splitMethods(s string) []string {
	out := []string{}
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// AccountByNumber finds one of merchantID's accounts by its number; another
// merchant's number answers as not found.
func AccountByNumber(ctx context.Context, q store.Querier, merchantID, number string) (Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE merchant_id = $1 AND account_number = $2`, merchantID, number))
	if isNoRows(err) {
		return Account{}, fault.NotFoundf("no account with number %s", number)
	}
	if err != nil {
		return Account{}, fmt.Errorf("account %s: %w", number, err)
	}
	return a, nil
}

// AccountByPublicID finds one of merchantID's treasury accounts by its id;
// another merchant's id answers as not found.
func AccountByPublicID(ctx context.Context, q store.Querier, merchantID, id string) (Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE merchant_id = $1 AND public_id = $2`, merchantID, id))
	if isNoRows(err) {
		return Account{}, fault.NotFoundf("no treasury account %s", id)
	}
	if err != nil {
		return Account{}, fmt.Errorf("account %s: %w", id, err)
	}
	return a, nil
}

// AccountsOfKind lists merchantID's accounts of kind, by currency.
func AccountsOfKind(ctx context.Context, q store.Querier, merchantID string, kind AccountKind) ([]Account, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE merchant_id = $1 AND kind = $2 ORDER BY currency`,
		merchantID, string(kind))
	if err != nil {
		return nil, fmt.Errorf("%s accounts: %w", kind, err)
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("%s accounts: %w", kind, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// accountByCurrency reads the account of a merchant ($1) of a kind ($2) in a currency ($3).
const accountByCurrency = `SELECT ` + accountColumns + ` FROM accounts WHERE merchant_id = $1 AND kind = $2 AND currency = $3`

// AccountByCurrency finds merchantID's account of kind in currency.
func AccountByCurrency(ctx context.Context, q store.Querier, merchantID string, kind AccountKind, currency string) (Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, accountByCurrency, merchantID, string(kind), currency))
	if isNoRows(err) {
		return Account{}, fault.NotFoundf("no %s %s account", currency, kind)
	}
	if err != nil {
		return Account{}, fmt.Errorf("%s account: %w", currency, err)
	}
	return a, nil
}

// SendAccountByCurrency is AccountByCurrency sent with tx's next statement
// that goes to the server (store.SendQuery), for a caller that knows the
// account's id already and needs the rest only later: the Pending holds
// the account, or none, once that statement has returned.
func SendAccountByCurrency(ctx context.Context, tx *store.Tx, merchantID string, kind AccountKind, currency string) (*store.Pending[[]Account], error) {
	p, err := store.SendQuery(ctx, tx, accountByCurrency, []any{merchantID, string(kind), currency}, scanAccount)
	if err != nil {
		return nil, fmt.Errorf("%s account: %w", currency, err)
	}
	return p, nil
}

// AccountUpdate changes account settings; nil members stay as they are.
type AccountUpdate struct {
	Approvals   *bool
	Methods     *[]string
	AccountType *AccountType
	// ApprovalHold is between MinApprovalHold and MaxApprovalHold.
	ApprovalHold *time.Duration
	// DisputeFee is an amount in the account's currency, 0 or more.
	DisputeFee *string
}

// Bounds of an account's approval hold window.
const (
	MinApprovalHold = time.Hour
	MaxApprovalHold = 90 * 24 * time.Hour
)

var methodCode = regexp.MustCompile(`^[a-z0-9_]{3,64}$`)

// UpdateAccount applies u to merchantID's payments account in currency and returns it.
func (s *Service) UpdateAccount(ctx context.Context, merchantID, currency string, u AccountUpdate) (Account, error) {
	f := fault.Fields{}
	if u.AccountType != nil && *u.AccountType != Aggregated && *u.AccountType != Dedicated {
		f.Add("account_type", "must be aggregated or dedicated")
	}
	if u.Methods != nil {
		for _, m := range *u.Methods {
			if !methodCode.MatchString(m) {
				f.Add("methods", fmt.Sprintf("%q is not a method code", m))
			}
		}
	}
	if h := u.ApprovalHold; h != nil && (*h < MinApprovalHold || *h > MaxApprovalHold) {
		f.Add("approval_hold", "must be from 1h to 2160h (90 days)")
	}
	if err := f.Err(); err != nil {
		return Account{}, err
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Account, error) {
		acc, err := AccountByCurrency(ctx, tx, merchantID, Payments, currency)
		if err != nil {
			return Account{}, err
		}
		if u.Approvals != nil {
			acc.Approvals = *u.Approvals
		}
		if u.Methods != nil {
			acc.Methods = *u.Methods
		}
		if u.AccountType != nil {
			acc.AccountType = *u.AccountType
		}
		if u.ApprovalHold != nil {
			acc.ApprovalHold = *u.ApprovalHold
		}
		if u.DisputeFee != nil {
			c, err := money.Lookup(acc.Currency)
			if err != nil {
				return Account{}, err
			}
			fee, _, err := money.Parse(*u.DisputeFee, c)
			if err != nil || fee < 0 || fee > money.MaxMinor {
				return Account{}, fault.Field("dispute_fee", "must be an amount in "+c.Code+", 0 or more, such as 25.00")
			}
			acc.DisputeFee = fee
		}
		var methods any
		if acc.Methods != nil {
			methods = strings.Join(acc.Methods, ",")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET approvals = $1, methods = $2, account_type = $3, approval_hold_ms = $4,
			dispute_fee = $5 WHERE merchant_id = $6 AND id = $7`,
			acc.Approvals, methods, string(acc.AccountType), acc.ApprovalHold.Milliseconds(), acc.DisputeFee, merchantID, acc.ID); err != nil {
			return Account{}, fmt.Errorf("update account: %w", err)
		}
		if u.AccountType != nil || u.Methods != nil {
			s.principalChanged(tx)
		}
		return acc, nil
	})
}

// Treasury account statuses (CONTRACT §15).
const (
	TreasuryActive   = "active"
	TreasuryInReview = "in_review"
	TreasuryRejected = "rejected"
)

// OpenTreasury opens an active treasury account for the merchant in currency.
func (s *Service) OpenTreasury(ctx context.Context, merchantID, currency string) (Account, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (Account, error) {
		return OpenTreasury(ctx, tx, merchantID, currency, TreasuryActive, s.clock.Now())
	})
}

// OpenTreasury opens a treasury account in tx with the given status: its
// ledger buckets, its account number (shown once it is active) and its id.
func OpenTreasury(ctx context.Context, tx *store.Tx, merchantID, currency, status string, now time.Time) (Account, error) {
	opened, err := openAccount(ctx, tx, merchantID, Treasury, currency, false, now)
	if err != nil {
		return Account{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET public_id = $1, status = $2 WHERE merchant_id = $3 AND id = $4`,
		store.RandomID(store.UUIDLen), status, merchantID, opened.id); err != nil {
		return Account{}, fmt.Errorf("open treasury account: %w", err)
	}
	return AccountByCurrency(ctx, tx, merchantID, Treasury, currency)
}
