// Package merchant is payd's tenancy: merchants, their payments and treasury
// accounts (one per currency each), the apps (app-id + secret-key pairs) bound
// to one payments account, portal users with roles, and the sandbox test
// clock each merchant carries. Every query here is scoped by merchant.
package merchant

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/money"
	"payd/internal/store"
)

// AccountKind separates the accounts payins and payouts run through from
// treasury accounts.
type AccountKind string

const (
	Payments AccountKind = "payments"
	Treasury AccountKind = "treasury"
)

// AccountType is how a payments account is held (CONTRACT §1).
type AccountType string

const (
	Aggregated AccountType = "aggregated"
	Dedicated  AccountType = "dedicated"
)

// Service manages merchants. It is used by the operator command line, the
// first sandbox start, and the API's authentication.
type Service struct {
	db    *store.DB
	clock clock.Clock
	// appOwners caches the merchant of each app-id Authenticate has found
	// (global_keys, store/keys.go), so that an API request reads its app
	// alone: an app never changes merchant and its id is never claimed
	// again. It is emptied when it reaches maxAppOwners.
	appOwnersMu sync.Mutex
	appOwners   map[string]string
	// principals caches Authenticate's reads (principals.go).
	principals *principals
}

// maxAppOwners bounds Service.appOwners.
const maxAppOwners = 10_000

// NewService returns a Service on db reading time from clk.
func NewService(db *store.DB, clk clock.Clock) *Service {
	return &Service{db: db, clock: clk, appOwners: map[string]string{}, principals: newPrincipals()}
}

// CreateParams describes a new merchant.
type CreateParams struct {
	Name       string
	Country    string
	Timezone   string
	Currencies []string
	Approvals  bool
}

// Created is what `payd merchant create --json` prints: the secrets appear
// here once and are stored only as hashes.
type Created struct {
	MerchantID string           `json:"merchant_id"`
	Accounts   []CreatedAccount `json:"accounts"`
}

// CreatedAccount is one payments account of a new merchant with its first app.
type CreatedAccount struct {
	Currency      string `json:"currency"`
	AccountNumber string `json:"account_number"`
	AppID         string `json:"app_id"`
	SecretKey     string `json:"secret_key"`
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

func (p CreateParams) validate() error {
	f := fault.Fields{}
	if strings.TrimSpace(p.Name) == "" || len(p.Name) > 200 {
		f.Add("name", "must be 1 to 200 characters")
	}
	if !countryCode.MatchString(p.Country) {
		f.Add("country", "must be an ISO 3166-1 alpha-2 code such as AU")
	}
	if _, err := time.LoadLocation(p.Timezone); err != nil || p.Timezone == "" || p.Timezone == "Local" {
		f.Add("timezone", "must be an IANA time zone such as Australia/Sydney")
	}
	if len(p.Currencies) == 0 {
		f.Add("currencies", "must name at least one currency")
	}
	seen := map[string]bool{}
	for _, c := range p.Currencies {
		if _, err := money.Lookup(c); err != nil {
			f.Add("currencies", err.Error())
		}
		if seen[c] {
			f.Add("currencies", fmt.Sprintf("%s is listed twice", c))
		}
		seen[c] = true
	}
	return f.Err()
}

// Create makes a merchant with a payments account and an app per currency.
func (s *Service) Create(ctx context.Context, p CreateParams) (Created, error) {
	if err := p.validate(); err != nil {
		return Created{}, err
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Created, error) {
		return createMerchant(ctx, tx, p, s.clock.Now())
	})
}

func createMerchant(ctx context.Context, tx *store.Tx, p CreateParams, now time.Time) (Created, error) {
	secret, err := newWebhookSecret()
	if err != nil {
		return Created{}, err
	}
	id, err := store.InsertWithID(ctx, store.UUIDLen, func(id string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO merchants (id, name, country, timezone, webhook_secret, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`, id, p.Name, p.Country, p.Timezone, secret, now.UnixMilli()))
	})
	if err != nil {
		return Created{}, fmt.Errorf("create merchant: %w", err)
	}
	out := Created{MerchantID: id}
	for _, cur := range p.Currencies {
		acc, err := openAccount(ctx, tx, id, Payments, cur, p.Approvals, now)
		if err != nil {
			return Created{}, err
		}
		app, err := createApp(ctx, tx, id, acc.id, now, Access{})
		if err != nil {
			return Created{}, err
		}
		out.Accounts = append(out.Accounts, CreatedAccount{Currency: cur, AccountNumber: acc.number, AppID: app.AppID, SecretKey: app.SecretKey})
	}
	return out, nil
}

type openedAccount struct {
	id     int64
	number string
}

// accountNumberLen is the length of the account numbers payd hands out.
const accountNumberLen = 12

func openAccount(ctx context.Context, tx *store.Tx, merchantID string, kind AccountKind, currency string, approvals bool, now time.Time) (openedAccount, error) {
	var acc openedAccount
	number, err := store.ClaimNew(ctx, tx, store.KeyAccountNumber, merchantID, func() string { return store.RandomDigits(accountNumberLen) })
	if err == nil {
		err = tx.QueryRowContext(ctx, `INSERT INTO accounts (merchant_id, kind, currency, account_number, approvals, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			merchantID, string(kind), currency, number, approvals, now.UnixMilli()).Scan(&acc.id)
	}
	if err != nil {
		if store.IsUniqueViolation(err) {
			return acc, fault.State("the merchant already has a %s %s account", currency, kind)
		}
		return acc, fmt.Errorf("open %s account: %w", currency, err)
	}
	acc.number = number
	if err := ledger.OpenAccount(ctx, tx, merchantID, acc.id, currency); err != nil {
		return acc, err
	}
	return acc, nil
}

// newWebhookSecret returns a Standard Webhooks signing secret: "whsec_" and 32
// random bytes in base64.
func newWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
}

// WebhookSecret returns the merchant's signing secret, replacing it first when rotate is set.
func (s *Service) WebhookSecret(ctx context.Context, merchantID string, rotate bool) (string, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (string, error) { return s.WebhookSecretIn(ctx, tx, merchantID, rotate) })
}

// WebhookSecretIn is WebhookSecret in the caller's transaction.
func (s *Service) WebhookSecretIn(ctx context.Context, tx *store.Tx, merchantID string, rotate bool) (string, error) {
	{
		if rotate {
			secret, err := newWebhookSecret()
			if err != nil {
				return "", err
			}
			ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE merchants SET webhook_secret = $1 WHERE id = $2`, secret, merchantID))
			if err != nil {
				return "", fmt.Errorf("rotate webhook secret: %w", err)
			}
			if !ok {
				return "", fault.NotFoundf("no merchant %s", merchantID)
			}
		}
		var secret string
		err := tx.QueryRowContext(ctx, `SELECT webhook_secret FROM merchants WHERE id = $1`, merchantID).Scan(&secret)
		if isNoRows(err) {
			return "", fault.NotFoundf("no merchant %s", merchantID)
		}
		return secret, err
	}
}
