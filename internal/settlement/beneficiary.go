package settlement

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/policy"
	"payd/internal/store"
)

// PendingChange is a change of an account's external beneficiary waiting
// for approval (CONTRACT §20, §25).
type PendingChange struct {
	ExternalBankAccount BankAccount `json:"external_bank_account"`
	RequestedBy         string      `json:"requested_by" doc:"Who asked for the change: app:<app-id>, or a portal user's email."`
	RequestedAt         clock.Time  `json:"requested_at"`
	// requestedByUser is the maker's portal user id ("" for an app).
	requestedByUser string
}

// pendingJSON is the stored form of a PendingChange.
type pendingJSON struct {
	ExternalBankAccount BankAccount `json:"external_bank_account"`
	RequestedBy         string      `json:"requested_by"`
	RequestedByUser     string      `json:"requested_by_user"`
	RequestedAt         int64       `json:"requested_at"`
}

func readPending(raw sql.NullString) *PendingChange {
	if !raw.Valid || raw.String == "" {
		return nil
	}
	var pj pendingJSON
	if err := json.Unmarshal([]byte(raw.String), &pj); err != nil {
		return nil
	}
	return &PendingChange{ExternalBankAccount: pj.ExternalBankAccount, RequestedBy: pj.RequestedBy, requestedByUser: pj.RequestedByUser,
		RequestedAt: clock.Time{T: clock.FromMillis(pj.RequestedAt)}}
}

// guarded reports whether setting the account's beneficiary to bank waits
// for approval: the merchant's beneficiary approval is on and bank is not
// the external account settlements go to now. A switch to a treasury
// account (bank nil) applies at once. The config's row is locked.
func (s *Service) guarded(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, bank *BankAccount) (bool, error) {
	if bank == nil || s.policies == nil {
		return false, nil
	}
	on, err := s.policies.BeneficiaryApprovalOn(ctx, tx, merchantID)
	if err != nil || !on {
		return false, err
	}
	var current string
	err = tx.QueryRowContext(ctx, `SELECT bank_account FROM settlement_configs WHERE merchant_id = $1 AND account_id = $2`+s.db.ForUpdate(),
		merchantID, accountID).Scan(&current)
	if err != nil && !isNoRows(err) {
		return false, fmt.Errorf("read settlement config: %w", err)
	}
	raw, _ := json.Marshal(bank)
	return current != string(raw), nil
}

// proposeBeneficiary records r's external account as the config's pending
// change (a newer one replaces it) and applies the rest of r (frequency,
// webhook); the beneficiary stays what it was.
func (s *Service) proposeBeneficiary(ctx context.Context, tx *store.Tx, p merchant.Principal, accountID int64, currency string, r ConfigRequest,
	by Requester, now time.Time) (Config, error) {
	pending, _ := json.Marshal(pendingJSON{ExternalBankAccount: *r.ExternalBankAccount, RequestedBy: by.Label, RequestedByUser: by.UserID,
		RequestedAt: now.UnixMilli()})
	if _, err := tx.ExecContext(ctx, `INSERT INTO settlement_configs (account_id, merchant_id, currency, frequency, treasury_account_id, bank_account,
		endpoint_url, authorization_header, updated_at, pending_change) VALUES ($1, $2, $3, $4, NULL, '', $5, $6, $7, $8)
		ON CONFLICT (merchant_id, account_id) DO UPDATE SET frequency = excluded.frequency, endpoint_url = excluded.endpoint_url,
		authorization_header = excluded.authorization_header, updated_at = excluded.updated_at, pending_change = excluded.pending_change`,
		accountID, p.MerchantID, currency, string(r.Frequency), r.WebhookNotification.EndpointURL, r.WebhookNotification.AuthorizationHeader,
		now.UnixMilli(), string(pending)); err != nil {
		return Config{}, fmt.Errorf("set settlement config: %w", err)
	}
	if r.Frequency == EndOfDay {
		if err := s.scheduleDay(ctx, tx, p.MerchantID, accountID, merchant.LocalDate(now, merchant.Location(p.Timezone))); err != nil {
			return Config{}, err
		}
	}
	c, _, err := s.readConfig(ctx, tx, p.MerchantID, accountID)
	c.Currency = currency
	return c, err
}

// DecideBeneficiary approves or rejects the pending beneficiary change of
// merchantID's currency account (CONTRACT §20): an admin or finance user
// other than its maker (403); nothing pending is 409 DECISION_CONFLICT.
// Approved, later settlements go to the new account.
func (s *Service) DecideBeneficiary(ctx context.Context, tx *store.Tx, merchantID, currency string, by policy.Actor, approve bool, now time.Time) (Config, error) {
	currency = strings.ToUpper(strings.TrimSpace(currency))
	if currency == "" {
		return Config{}, fault.Field("currency", "is required")
	}
	acc, err := merchant.AccountByCurrency(ctx, tx, merchantID, merchant.Payments, currency)
	if err != nil {
		return Config{}, fault.NotFoundf("no %s payments account", currency)
	}
	var raw sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT pending_change FROM settlement_configs WHERE merchant_id = $1 AND account_id = $2`+s.db.ForUpdate(),
		merchantID, acc.ID).Scan(&raw)
	if err != nil && !isNoRows(err) {
		return Config{}, fmt.Errorf("read settlement config: %w", err)
	}
	pending := readPending(raw)
	if err := policy.MayApprove(pendingMaker(pending), policy.DeciderRoles, by); err != nil {
		return Config{}, err
	}
	if pending == nil {
		return Config{}, fault.New(fault.Conflict, policy.CodeDecisionConflict, "the %s settlement config has no beneficiary change waiting", currency)
	}
	q := `UPDATE settlement_configs SET pending_change = NULL, updated_at = $1 WHERE merchant_id = $2 AND account_id = $3`
	args := []any{now.UnixMilli(), merchantID, acc.ID}
	if approve {
		bank, _ := json.Marshal(pending.ExternalBankAccount)
		q = `UPDATE settlement_configs SET pending_change = NULL, bank_account = $4, treasury_account_id = NULL, updated_at = $1
			WHERE merchant_id = $2 AND account_id = $3`
		args = append(args, string(bank))
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return Config{}, fmt.Errorf("decide beneficiary change: %w", err)
	}
	c, _, err := s.readConfig(ctx, tx, merchantID, acc.ID)
	c.Currency = currency
	return c, err
}

func pendingMaker(p *PendingChange) string {
	if p == nil {
		return ""
	}
	return p.requestedByUser
}
