// Package settlement moves a payments account's money to the merchant: to
// its own bank account through the rail, or to its treasury account inside
// payd (CONTRACT §12, §15). A settlement is asked for (on_demand) or made at
// the end of each local day (end_of_day); its amount and fee leave
// available for outgoing at once, as one balance record, and leave for good
// when the rail confirms (or come back when it fails). JPY, VND, IDR and INR
// settlements wait for a funding check first.
package settlement

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/rail"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Frequency of an account's settlements.
type Frequency string

const (
	EndOfDay Frequency = "end_of_day"
	OnDemand Frequency = "on_demand"
)

// Status of a settlement.
type Status string

const (
	Processing Status = "processing"
	Completed  Status = "completed"
	Failed     Status = "failed"
	// Returned: completed, then sent back by the beneficiary's bank
	// (CONTRACT §25); amount and fee are back in available.
	Returned Status = "returned"
)

// keyPrefix marks the rail transfers of settlements.
const keyPrefix = "stl_"

// Job kinds, each with its payload.
var (
	jobEndOfDay = job.NewKind[dayRef]("settlement.end_of_day")
	jobFunded   = job.NewKind[ref]("settlement.funded")
)

// fundingChecked are the currencies whose settlements wait for a funding
// check before they go to the rail (CONTRACT §12).
var fundingChecked = map[string]bool{"JPY": true, "VND": true, "IDR": true, "INR": true}

// feeMinor is each currency's fixed settlement fee, in minor units; a
// currency not listed settles for free.
var feeMinor = map[string]int64{"AUD": 100, "USD": 500, "JPY": 250}

// DefaultFundingDelay is how long a funding check takes unless configured.
const DefaultFundingDelay = time.Hour

// Service runs settlements.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	rail     rail.Rail
	banks    Zengin
	// FundingDelay is how long the sandbox's funding check takes.
	FundingDelay time.Duration
	policies     *policy.Service
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	Rail     rail.Rail
	// Banks checks JPY beneficiaries' Zengin codes.
	Banks Zengin
	// FundingDelay is how long the funding check holds a JPY, VND, IDR or
	// INR settlement, on the merchant's clock (default an hour).
	FundingDelay time.Duration
	// Policies says whether the merchant's beneficiary approval is on.
	Policies *policy.Service
}

// NewService returns the service, its jobs registered and its rail outcomes heard.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy, rail: d.Rail, banks: d.Banks, FundingDelay: d.FundingDelay, policies: d.Policies}
	if s.FundingDelay <= 0 {
		s.FundingDelay = DefaultFundingDelay
	}
	job.Register(d.Queue, jobEndOfDay, s.endOfDayJob)
	job.Register(d.Queue, jobFunded, s.fundedJob)
	d.Rail.Listen(keyPrefix, s.outcome)
	return s
}

// BankAccount is an external beneficiary, validated per currency: BSB for
// AUD, Zengin bank and branch codes for JPY, a NAPAS BIN for VND, SWIFT
// otherwise.
type BankAccount struct {
	BankName      string `json:"bank_name,omitempty" example:"Westpac"`
	BSB           string `json:"bsb,omitempty" doc:"AUD: 6 digits." example:"062000"`
	BankCode      string `json:"bank_code,omitempty" doc:"JPY: 4-digit Zengin bank code; VND: 6-digit NAPAS BIN."`
	BranchCode    string `json:"branch_code,omitempty" doc:"JPY: 3-digit Zengin branch code."`
	SwiftCode     string `json:"swift_code,omitempty" doc:"Other currencies: the bank's SWIFT/BIC."`
	AccountNumber string `json:"account_number" example:"12345678"`
	AccountName   string `json:"account_name" example:"Shop Pty Ltd"`
	AccountType   string `json:"account_type,omitempty" doc:"JPY: ordinary or current."`
}

var (
	bsbPattern     = regexp.MustCompile(`^[0-9]{6}$`)
	zenginBank     = regexp.MustCompile(`^[0-9]{4}$`)
	zenginBranch   = regexp.MustCompile(`^[0-9]{3}$`)
	napasBIN       = regexp.MustCompile(`^[0-9]{6}$`)
	swiftPattern   = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	accountPattern = regexp.MustCompile(`^[0-9A-Za-z-]{4,34}$`)
)

// Zengin is the part of the Zengin directory the checks need.
type Zengin interface {
	HasBranch(bankCode, branchCode string) bool
}

// Check adds to f what is wrong with b as a beneficiary in currency.
func (b BankAccount) Check(f fault.Fields, currency string, banks Zengin) {
	const p = "external_bank_account."
	if !accountPattern.MatchString(b.AccountNumber) {
		f.Add(p+"account_number", "must be 4 to 34 letters, digits or dashes")
	}
	if n := len(strings.TrimSpace(b.AccountName)); n == 0 || n > 140 {
		f.Add(p+"account_name", "must be 1 to 140 characters")
	}
	if len(b.BankName) > 140 {
		f.Add(p+"bank_name", "must be at most 140 characters")
	}
	switch currency {
	case "AUD":
		if !bsbPattern.MatchString(b.BSB) {
			f.Add(p+"bsb", "must be 6 digits")
		}
	case "JPY":
		if !zenginBank.MatchString(b.BankCode) || !zenginBranch.MatchString(b.BranchCode) {
			f.Add(p+"bank_code", "JPY takes a 4-digit Zengin bank_code and a 3-digit branch_code")
		} else if banks != nil && !banks.HasBranch(b.BankCode, b.BranchCode) {
			f.Add(p+"branch_code", fmt.Sprintf("bank %s has no branch %s in the Zengin directory", b.BankCode, b.BranchCode))
		}
		if b.AccountType != "ordinary" && b.AccountType != "current" {
			f.Add(p+"account_type", "must be ordinary or current")
		}
	case "VND":
		if !napasBIN.MatchString(b.BankCode) {
			f.Add(p+"bank_code", "VND takes the bank's 6-digit NAPAS BIN")
		}
	default:
		if !swiftPattern.MatchString(b.SwiftCode) {
			f.Add(p+"swift_code", "must be a SWIFT/BIC code (8 or 11 characters)")
		}
	}
}

// RailParams are b's details as a rail transfer carries them.
func (b BankAccount) RailParams() map[string]any {
	return map[string]any{"account_number": b.AccountNumber, "account_name": b.AccountName, "bsb": b.BSB, "bank_code": b.BankCode,
		"branch_code": b.BranchCode, "swift_code": b.SwiftCode}
}

// Config is an account's settlement setup.
type Config struct {
	Currency            string          `json:"currency"`
	Frequency           Frequency       `json:"frequency" enum:"end_of_day,on_demand"`
	TreasuryAccountID   *string         `json:"treasury_account_id" doc:"The beneficiary when it is the merchant's treasury account of the same currency (its id); null otherwise."`
	ExternalBankAccount *BankAccount    `json:"external_bank_account" doc:"The beneficiary when it is a bank account; null otherwise."`
	WebhookNotification *webhook.Target `json:"webhook_notification" doc:"Where settlement.<status> events go; null for none."`
	UpdatedAt           *clock.Time     `json:"updated_at" doc:"null until the config is first set."`
	PendingChange       *PendingChange  `json:"pending_change" doc:"A change of the external beneficiary waiting for approval (the merchant's beneficiary_approval is on), or null; settlements go to the beneficiary above until an admin or finance user other than its maker approves it."`
}

// ConfigRequest is the body of PUT /v2/settlements/config.
type ConfigRequest struct {
	Currency            string         `json:"currency,omitempty" doc:"Absent: the calling app's currency."`
	Frequency           Frequency      `json:"frequency" required:"true" enum:"end_of_day,on_demand"`
	TreasuryAccountID   string         `json:"treasury_account_id,omitempty" doc:"Exactly one of treasury_account_id and external_bank_account."`
	ExternalBankAccount *BankAccount   `json:"external_bank_account,omitempty"`
	WebhookNotification webhook.Target `json:"webhook_notification,omitempty"`
}

// Settlement is a settlement as the API returns it and its webhooks carry it.
type Settlement struct {
	UUID          string       `json:"uuid"`
	Currency      string       `json:"currency"`
	Amount        money.String `json:"amount"`
	Fee           money.String `json:"fee"`
	Status        Status       `json:"status" enum:"processing,completed,failed,returned" doc:"processing until the bank confirms; completed or failed; returned when a completed settlement came back from the beneficiary's bank (amount and fee back in available, failure_reason says why)."`
	Frequency     Frequency    `json:"frequency" enum:"end_of_day,on_demand"`
	Beneficiary   Beneficiary  `json:"beneficiary" doc:"As configured when the settlement was submitted."`
	BalanceID     string       `json:"balance_id"`
	Reference     string       `json:"reference" doc:"The local date of an end-of-day settlement; the uuid otherwise."`
	BankReference *string      `json:"bank_reference" doc:"What the bank and the beneficiary's statement name the settlement by, from its creation (16 upper-case letters and digits; 10 digits when a zengin bank-file rail serves the account's settlements); null only on settlements made before payd gave references."`
	CreatedAt     clock.Time   `json:"created_at"`
	CompletedAt   *clock.Time  `json:"completed_at"`
	FailureReason *string      `json:"failure_reason"`
}

// Beneficiary is where a settlement goes.
type Beneficiary struct {
	TreasuryAccountID   *string      `json:"treasury_account_id"`
	ExternalBankAccount *BankAccount `json:"external_bank_account"`
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// currencyOf is the request's currency, or the caller's.
func currencyOf(p merchant.Principal, c string) string {
	if c == "" {
		return p.Currency
	}
	return strings.ToUpper(c)
}

// account is the payments account a caller settles.
func account(ctx context.Context, q store.Querier, p merchant.Principal, currency string) (merchant.Account, error) {
	acc, err := merchant.AccountByCurrency(ctx, q, p.MerchantID, merchant.Payments, currency)
	if err != nil {
		return merchant.Account{}, fault.NotFoundf("no %s payments account", currency)
	}
	return acc, nil
}

// GetConfig is an account's config (on_demand with no beneficiary until set).
func (s *Service) GetConfig(ctx context.Context, p merchant.Principal, currency string) (Config, error) {
	currency = currencyOf(p, currency)
	acc, err := account(ctx, s.db.Read(), p, currency)
	if err != nil {
		return Config{}, err
	}
	c, _, err := s.readConfig(ctx, s.db.Read(), p.MerchantID, acc.ID)
	if err != nil {
		return Config{}, err
	}
	c.Currency = currency
	return c, nil
}

// readConfig reads the stored config of an account and its treasury
// account's id (0 without one).
func (s *Service) readConfig(ctx context.Context, q store.Querier, merchantID string, accountID int64) (Config, int64, error) {
	var (
		c        = Config{Frequency: OnDemand}
		treasury sql.NullInt64
		number   sql.NullString
		bank     string
		endpoint string
		auth     string
		updated  int64
		pending  sql.NullString
	)
	err := q.QueryRowContext(ctx, `SELECT c.currency, c.frequency, c.treasury_account_id, t.public_id, c.bank_account, c.endpoint_url,
		c.authorization_header, c.updated_at, c.pending_change FROM settlement_configs c
		LEFT JOIN accounts t ON t.merchant_id = c.merchant_id AND t.id = c.treasury_account_id
		WHERE c.merchant_id = $1 AND c.account_id = $2`, merchantID, accountID).
		Scan(&c.Currency, &c.Frequency, &treasury, &number, &bank, &endpoint, &auth, &updated, &pending)
	if isNoRows(err) {
		return c, 0, nil
	}
	if err != nil {
		return Config{}, 0, fmt.Errorf("read settlement config: %w", err)
	}
	if number.Valid {
		c.TreasuryAccountID = &number.String
	}
	if bank != "" {
		var b BankAccount
		if err := json.Unmarshal([]byte(bank), &b); err == nil {
			c.ExternalBankAccount = &b
		}
	}
	if endpoint != "" {
		c.WebhookNotification = &webhook.Target{EndpointURL: endpoint, AuthorizationHeader: auth}
	}
	c.UpdatedAt = &clock.Time{T: clock.FromMillis(updated)}
	c.PendingChange = readPending(pending)
	return c, treasury.Int64, nil
}
