package merchant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/store"
)

// NewApp is a freshly made key pair; SecretKey is shown this once.
type NewApp struct {
	AppID     string `json:"app_id"`
	SecretKey string `json:"secret_key"`
	Currency  string `json:"currency"`
}

const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func randomToken(n int) string {
	b := make([]byte, n)
	limit := 256 - 256%len(alnum)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err))
		}
		if int(buf[0]) >= limit {
			continue
		}
		b[i] = alnum[int(buf[0])%len(alnum)]
		i++
	}
	return string(b)
}

// hashSecret is how secrets and tokens are stored. They carry 238 random bits,
// so a fast hash is enough: there is nothing to guess.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func createApp(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, now time.Time, access Access) (NewApp, error) {
	secret := "sk_" + randomToken(40)
	scopes := AllScopes
	if len(access.Scopes) > 0 {
		scopes = strings.Join(access.Scopes, ",")
	}
	var expires any
	if !access.ExpiresAt.IsZero() {
		expires = access.ExpiresAt.UnixMilli()
	}
	appID, err := store.ClaimNew(ctx, tx, store.KeyApp, merchantID, func() string { return randomToken(24) })
	if err == nil {
		err = tx.Send(ctx, `INSERT INTO apps (app_id, merchant_id, account_id, secret_hash, created_at, scopes, expires_at, allowed_ips)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			appID, merchantID, accountID, hashSecret(secret), now.UnixMilli(), scopes, expires, joinPrefixes(access.AllowedIPs))
	}
	if err != nil {
		return NewApp{}, fmt.Errorf("create app: %w", err)
	}
	return NewApp{AppID: appID, SecretKey: secret}, nil
}

// CreateApp issues a new key pair for the merchant's payments account in currency.
func (s *Service) CreateApp(ctx context.Context, merchantID, currency string) (NewApp, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (NewApp, error) { return s.CreateAppIn(ctx, tx, merchantID, currency) })
}

// CreateAppIn is CreateApp in the caller's transaction (the portal audits
// it in the same one).
func (s *Service) CreateAppIn(ctx context.Context, tx *store.Tx, merchantID, currency string) (NewApp, error) {
	return s.CreateAppWith(ctx, tx, merchantID, currency, Access{})
}

// CreateAppWith is CreateAppIn for an app with access: its scopes, expiry
// and allowed addresses (CONTRACT §23; the zero Access is every scope, no
// expiry, from anywhere).
func (s *Service) CreateAppWith(ctx context.Context, tx *store.Tx, merchantID, currency string, access Access) (NewApp, error) {
	if !access.ExpiresAt.IsZero() && !access.ExpiresAt.After(s.clock.Now()) {
		return NewApp{}, fault.Field("expires_at", "is not in the future")
	}
	{
		var accountID int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE merchant_id = $1 AND kind = $2 AND currency = $3`,
			merchantID, string(Payments), currency).Scan(&accountID)
		if isNoRows(err) {
			return NewApp{}, fault.NotFoundf("merchant %s has no %s payments account", merchantID, currency)
		}
		if err != nil {
			return NewApp{}, fmt.Errorf("create app: %w", err)
		}
		app, err := createApp(ctx, tx, merchantID, accountID, s.clock.Now(), access)
		app.Currency = currency
		return app, err
	}
}

// RevokeApp disables an app and, with it, every access token it was issued.
func (s *Service) RevokeApp(ctx context.Context, merchantID, appID string) error {
	return s.db.Exec(ctx, func(tx *store.Tx) error { return s.RevokeAppIn(ctx, tx, merchantID, appID) })
}

// RevokeAppIn is RevokeApp in the caller's transaction.
func (s *Service) RevokeAppIn(ctx context.Context, tx *store.Tx, merchantID, appID string) error {
	{
		ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE apps SET revoked_at = $1 WHERE app_id = $2 AND merchant_id = $3 AND revoked_at IS NULL`,
			s.clock.Now().UnixMilli(), appID, merchantID))
		if err != nil {
			return fmt.Errorf("revoke app: %w", err)
		}
		if !ok {
			return fault.NotFoundf("merchant %s has no active app %s", merchantID, appID)
		}
		s.principalChanged(tx)
		return nil
	}
}

// Principal is the caller of an API request: the merchant, and the payments
// account its app is bound to ("the currency tied to the calling app-id").
type Principal struct {
	MerchantID    string
	Country       string
	Timezone      string
	AppID         string
	AccountID     int64
	Currency      string
	AccountNumber string
	AccountType   AccountType
	// Methods are the account's enabled payin method codes; nil means the
	// catalogue's defaults for the currency (Account.Methods).
	Methods []string
	// ClockOffset is how far the merchant's sandbox test clock runs ahead of the real clock.
	ClockOffset time.Duration
	// Access is what the app may do (its scopes, expiry and addresses);
	// zero for a caller that is no app.
	Access Access
}

// appAccessColumns are the app's access settings, read after
// principalColumns into scanAccess's destinations.
const appAccessColumns = `a.scopes, a.expires_at, a.allowed_ips`

// accessDest are scanAccess's destinations.
type accessDest struct {
	scopes, ips string
	expires     *int64
}

func (d *accessDest) dest() []any { return []any{&d.scopes, &d.expires, &d.ips} }

func (d *accessDest) access() Access { return readAccess(d.scopes, d.expires, d.ips) }

// ErrUnauthenticated is every authentication failure; the reason is not told.
var ErrUnauthenticated = &fault.Error{Kind: fault.Unauthenticated, Code: fault.CodeRequireLogin, Message: "Not Authorised"}

const principalColumns = `a.app_id, m.id, m.country, m.timezone, m.clock_offset_ms, acc.id, acc.currency, acc.account_number, acc.account_type, acc.methods`

func scanPrincipal(row interface{ Scan(...any) error }, extra ...any) (Principal, error) {
	var p Principal
	var offset int64
	var methods *string
	dest := append([]any{&p.AppID, &p.MerchantID, &p.Country, &p.Timezone, &offset, &p.AccountID, &p.Currency, &p.AccountNumber, &p.AccountType, &methods}, extra...)
	err := row.Scan(dest...)
	p.ClockOffset = time.Duration(offset) * time.Millisecond
	if methods != nil {
		p.Methods = splitMethods(*methods)
	}
	return p, err
}

// dummyHash is compared against when the app does not exist, so an unknown
// app-id costs the same time as a wrong secret.
var dummyHash = hashSecret("no such app")

// Authenticate checks an app-id/secret-key pair, against the principal
// cache (principals.go) when it holds the app.
func (s *Service) Authenticate(ctx context.Context, appID, secretKey string) (Principal, error) {
	if appID == "" || secretKey == "" || len(appID) > 64 || len(secretKey) > 128 || input.Problem("app-id", appID) != "" {
		return Principal{}, ErrUnauthenticated
	}
	if e, ok := s.principals.get(appID); ok {
		if subtle.ConstantTimeCompare([]byte(e.secretHash), []byte(hashSecret(secretKey))) != 1 {
			return Principal{}, ErrUnauthenticated
		}
		return e.principal, nil
	}
	readAt := s.principals.machine.Now()
	var stored string
	var access accessDest
	merchantID, err := s.appOwner(ctx, appID)
	var p Principal
	if err == nil {
		p, err = scanPrincipal(s.db.Read().QueryRowContext(ctx, `SELECT `+principalColumns+`, `+appAccessColumns+`, a.secret_hash
			FROM apps a JOIN merchants m ON m.id = a.merchant_id
			JOIN accounts acc ON acc.merchant_id = a.merchant_id AND acc.id = a.account_id
			WHERE a.merchant_id = $1 AND a.app_id = $2 AND a.revoked_at IS NULL`, merchantID, appID), append(access.dest(), &stored)...)
		p.Access = access.access()
	}
	if errors.Is(err, sql.ErrNoRows) {
		subtle.ConstantTimeCompare([]byte(dummyHash), []byte(hashSecret(secretKey)))
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hashSecret(secretKey))) != 1 {
		return Principal{}, ErrUnauthenticated
	}
	s.principals.put(appID, cachedPrincipal{principal: p, secretHash: stored}, readAt)
	return p, nil
}

// appOwner returns the merchant of appID, from Service.appOwners when it
// can.
func (s *Service) appOwner(ctx context.Context, appID string) (string, error) {
	s.appOwnersMu.Lock()
	merchantID, ok := s.appOwners[appID]
	s.appOwnersMu.Unlock()
	if ok {
		return merchantID, nil
	}
	merchantID, err := store.KeyOwner(ctx, s.db.Read(), store.KeyApp, appID)
	if err != nil {
		return "", err
	}
	s.appOwnersMu.Lock()
	if len(s.appOwners) >= maxAppOwners {
		clear(s.appOwners)
	}
	s.appOwners[appID] = merchantID
	s.appOwnersMu.Unlock()
	return merchantID, nil
}

// TokenLifetime is how long an access token is accepted (spec: 3600 seconds).
const TokenLifetime = 3600 * time.Second

// IssueToken makes an access token for the principal's app, valid for
// TokenLifetime on the merchant's clock.
func (s *Service) IssueToken(ctx context.Context, p Principal) (string, error) {
	token := "at_" + randomToken(48)
	now := NewClock(s.clock).Of(p)
	err := s.db.Exec(ctx, func(tx *store.Tx) error {
		// The token's 285 random bits do not collide: its claim is sent, not asked.
		if err := store.SendKey(ctx, tx, store.KeyAccessToken, hashSecret(token), p.MerchantID); err != nil {
			return err
		}
		return tx.Send(ctx, `INSERT INTO access_tokens (token_hash, merchant_id, app_id, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
			hashSecret(token), p.MerchantID, p.AppID, now.Add(TokenLifetime).UnixMilli(), now.UnixMilli())
	})
	if err != nil {
		return "", fmt.Errorf("issue token: %w", err)
	}
	return token, nil
}

// AuthenticateToken checks an access token: it must exist, its app must not be
// revoked, and it must not have expired on the merchant's clock. What it
// read is kept as Authenticate keeps an app's (principals.go); the token's
// expiry is checked against the merchant's clock on every use.
func (s *Service) AuthenticateToken(ctx context.Context, token string) (Principal, error) {
	if token == "" || len(token) > 128 {
		return Principal{}, ErrUnauthenticated
	}
	hash := hashSecret(token)
	now := s.clock.Now()
	if e, ok := s.principals.get(tokenKey(hash)); ok {
		if !e.tokenExpires.After(now.Add(e.principal.ClockOffset)) {
			return Principal{}, ErrUnauthenticated
		}
		return e.principal, nil
	}
	readAt := s.principals.machine.Now()
	merchantID, err := store.KeyOwner(ctx, s.db.Read(), store.KeyAccessToken, hash)
	var p Principal
	var expiresMs int64
	var access accessDest
	if err == nil {
		p, err = scanPrincipal(s.db.Read().QueryRowContext(ctx, `SELECT `+principalColumns+`, `+appAccessColumns+`, t.expires_at
			FROM access_tokens t JOIN apps a ON a.merchant_id = t.merchant_id AND a.app_id = t.app_id
			JOIN merchants m ON m.id = a.merchant_id JOIN accounts acc ON acc.merchant_id = a.merchant_id AND acc.id = a.account_id
			WHERE t.merchant_id = $1 AND t.token_hash = $2 AND a.revoked_at IS NULL AND t.expires_at > $3 + m.clock_offset_ms`,
			merchantID, hash, now.UnixMilli()), append(access.dest(), &expiresMs)...)
		p.Access = access.access()
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate token: %w", err)
	}
	s.principals.put(tokenKey(hash), cachedPrincipal{principal: p, tokenExpires: time.UnixMilli(expiresMs)}, readAt)
	return p, nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// AccountPrincipal is the caller a portal user acting on the merchant's
// payments account in currency is: the account's principal, without an app.
func (s *Service) AccountPrincipal(ctx context.Context, merchantID, currency string) (Principal, error) {
	return PrincipalOf(ctx, s.db.Read(), merchantID, currency)
}

// PrincipalOf is AccountPrincipal read through q (a transaction, say): how
// a domain service acting for the merchant, not for one of its apps, calls
// another.
func PrincipalOf(ctx context.Context, q store.Querier, merchantID, currency string) (Principal, error) {
	p, err := scanPrincipal(q.QueryRowContext(ctx, `SELECT '', m.id, m.country, m.timezone, m.clock_offset_ms, acc.id, acc.currency, acc.account_number, acc.account_type, acc.methods
		FROM merchants m JOIN accounts acc ON acc.merchant_id = m.id WHERE m.id = $1 AND acc.merchant_id = $1 AND acc.kind = $2 AND acc.currency = $3`,
		merchantID, string(Payments), currency))
	if isNoRows(err) {
		return Principal{}, fault.NotFoundf("no %s payments account", currency)
	}
	if err != nil {
		return Principal{}, fmt.Errorf("read account: %w", err)
	}
	return p, nil
}

// AppView is an app as the portal's developers page lists it.
type AppView struct {
	AppID, Currency string
	CreatedAt       time.Time
	Revoked         bool
	// Access is the app's scopes, expiry and allowed addresses.
	Access Access
}

// ScopesText is the app's scopes as the developers page shows them.
func (v AppView) ScopesText() string {
	if len(v.Access.Scopes) == 0 {
		return AllScopes
	}
	return strings.Join(v.Access.Scopes, ", ")
}

// AllowedIPsText is the app's allowed addresses as the developers page
// shows them ("any" for none).
func (v AppView) AllowedIPsText() string {
	if len(v.Access.AllowedIPs) == 0 {
		return "any"
	}
	return strings.ReplaceAll(joinPrefixes(v.Access.AllowedIPs), ",", ", ")
}

// Apps lists the merchant's apps, newest first.
func (s *Service) Apps(ctx context.Context, merchantID string) ([]AppView, error) {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT a.app_id, acc.currency, a.created_at, a.revoked_at, `+appAccessColumns+` FROM apps a
		JOIN accounts acc ON acc.merchant_id = a.merchant_id AND acc.id = a.account_id
		WHERE a.merchant_id = $1 ORDER BY a.created_at DESC, a.app_id LIMIT 200`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	defer rows.Close()
	var out []AppView
	for rows.Next() {
		var v AppView
		var created int64
		var revoked *int64
		var access accessDest
		if err := rows.Scan(append([]any{&v.AppID, &v.Currency, &created, &revoked}, access.dest()...)...); err != nil {
			return nil, err
		}
		v.CreatedAt, v.Revoked, v.Access = time.UnixMilli(created).UTC(), revoked != nil, access.access()
		out = append(out, v)
	}
	return out, rows.Err()
}

// Currencies lists the currencies of the merchant's payments accounts.
func (s *Service) Currencies(ctx context.Context, merchantID string) ([]string, error) {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT currency FROM accounts WHERE merchant_id = $1 AND kind = $2 ORDER BY currency`, merchantID, string(Payments))
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
