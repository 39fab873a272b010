// Package portal is the merchant portal's domain (CONTRACT §13): who is
// signed in (sessions kept in the database, so any payd process serves
// them), sign-in with its lockout and optional TOTP second factor, the
// merchant's users and their invitations, and the append-only audit log.
// Who may do what is one table (Permission, permission.go), enforced here
// for every entry point; the changes portal users make to other services'
// records (payouts, apps, the signing secret, deliveries) are Actions
// (actions.go), each committed with its audit entry. The pages themselves
// are in internal/web; payout decisions are the payout package's rule,
// never a copy here.
package portal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Session bounds (CONTRACT §13).
const (
	IdleTimeout     = 30 * time.Minute
	AbsoluteTimeout = 12 * time.Hour
	// Sign-in failures for one email: slowed after slowAfter, refused for
	// LockFor after lockAfter.
	slowAfter = 3
	lockAfter = 10
	LockFor   = 15 * time.Minute
)

// Error codes of sign-in.
const (
	CodeLoginFailed  = "LOGIN_FAILED"
	CodeTOTPRequired = "TOTP_REQUIRED"
)

// Errors of sign-in: one answer for a wrong password and an unknown email.
var (
	ErrBadLogin = fault.New(fault.Unauthenticated, CodeLoginFailed, "the email or password is wrong")
	ErrLocked   = fault.New(fault.RateLimited, fault.CodeRateLimited, "too many failed sign-ins: try again in 15 minutes")
	ErrNoTOTP   = fault.New(fault.Unauthenticated, CodeTOTPRequired, "enter the code of your authenticator app")
	errExpired  = fault.New(fault.Unauthenticated, fault.CodeRequireLogin, "the session has ended: sign in again")
)

// Service runs the portal's sign-in, users and audit.
type Service struct {
	db    *store.DB
	clock merchant.Clock
}

// Deps are what a Service needs.
type Deps struct {
	DB    *store.DB
	Clock merchant.Clock
}

// NewService returns the service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, clock: d.Clock}
}

// User is a signed-in portal user.
type User struct {
	ID, MerchantID, Email string
	Role                  merchant.Role
	HasTOTP               bool
}

// Session is a signed-in user's session.
type Session struct {
	User
	// Token is the cookie's value (only its hash is stored).
	Token string
	// CSRF is the token every form of the session carries.
	CSRF string
}

// Credentials are what the sign-in form sends.
type Credentials struct {
	Email, Password, TOTPCode string
	// Client is the sign-in's address, for the audit log.
	Client string
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// NewToken is 32 random bytes, URL-safe.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Login checks credentials and opens a session. Failures for one email are
// counted whether or not a user has it: after slowAfter each costs the
// caller a delay (returned), after lockAfter the email is locked for 15
// minutes, the right password included.
func (s *Service) Login(ctx context.Context, c Credentials) (Session, time.Duration, error) {
	email := strings.ToLower(strings.TrimSpace(c.Email))
	if email == "" || len(email) > 254 || len(c.Password) > 256 {
		return Session{}, 0, ErrBadLogin
	}
	now := s.clock.System()
	var locked *int64
	var failures int
	err := s.db.Read().QueryRowContext(ctx, `SELECT failures, locked_until FROM portal_login_failures WHERE email = $1`, email).Scan(&failures, &locked)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Session{}, 0, fmt.Errorf("sign in: %w", err)
	}
	if locked != nil && now.UnixMilli() < *locked {
		return Session{}, 0, ErrLocked
	}
	var (
		u          User
		hash, totp string
		disabled   *int64
		lastStep   int64
	)
	merchantID, err := store.KeyOwner(ctx, s.db.Read(), store.KeyPortalEmail, email)
	if err == nil {
		err = s.db.Read().QueryRowContext(ctx, `SELECT id, merchant_id, email, role, password_hash, totp_secret, totp_last_step, disabled_at
			FROM users WHERE merchant_id = $1 AND email = $2`, merchantID, email).
			Scan(&u.ID, &u.MerchantID, &u.Email, &u.Role, &hash, &totp, &lastStep, &disabled)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Session{}, 0, fmt.Errorf("sign in: %w", err)
	}
	found := err == nil && disabled == nil && hash != ""
	if !found {
		// An unknown, disabled or not yet activated account costs the same
		// argon2id work as a wrong password: the timing tells nothing.
		hash = dummyHash()
	}
	ok := merchant.CheckPassword(hash, c.Password) && found
	var step int64
	if ok && totp != "" {
		if step = totpStep(totp, c.TOTPCode, now); step <= lastStep {
			if c.TOTPCode == "" {
				return Session{}, 0, ErrNoTOTP
			}
			ok = false
		}
	}
	if !ok {
		delay, lockErr := s.failed(ctx, email, u, c.Client, now)
		if lockErr != nil {
			return Session{}, delay, lockErr
		}
		return Session{}, delay, ErrBadLogin
	}
	u.HasTOTP = totp != ""
	sess := Session{User: u, Token: NewToken(), CSRF: NewToken()}
	var rehash string
	if merchant.NeedsRehash(hash) {
		if rehash, err = merchant.HashPassword(c.Password); err != nil {
			return Session{}, 0, fmt.Errorf("sign in: %w", err)
		}
	}
	err = s.db.Exec(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM portal_login_failures WHERE email = $1`, email); err != nil {
			return err
		}
		if rehash != "" {
			// Unless the password changed meanwhile, the proven password's
			// hash moves to today's parameters.
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE merchant_id = $2 AND id = $3 AND password_hash = $4`,
				rehash, u.MerchantID, u.ID, hash); err != nil {
				return err
			}
		}
		if totp != "" {
			// The code is used up: the same code cannot open a second session.
			won, err := store.OneRow(tx.ExecContext(ctx, `UPDATE users SET totp_last_step = $1 WHERE merchant_id = $2 AND id = $3 AND totp_last_step < $1`,
				step, u.MerchantID, u.ID))
			if err != nil {
				return err
			}
			if !won {
				return ErrBadLogin
			}
		}
		return s.openSession(ctx, tx, sess, "", "method "+MethodPassword, c.Client)
	})
	if errors.Is(err, ErrBadLogin) {
		return Session{}, 0, err
	}
	if err != nil {
		return Session{}, 0, fmt.Errorf("sign in: %w", err)
	}
	return sess, 0, nil
}

// openSession writes sess in tx with its login entry in the audit log
// (detail names the sign-in's method). role is the session's own role
// (single sign-on's mapped one), "" for the user's.
func (s *Service) openSession(ctx context.Context, tx *store.Tx, sess Session, role merchant.Role, detail, client string) error {
	u := sess.User
	at, err := s.clock.Read(ctx, tx, u.MerchantID)
	if err != nil {
		return err
	}
	// Sessions of this user that have ended are dropped here, so the
	// table keeps only live ones and the ones about to end.
	if err := endSessions(ctx, tx, u.MerchantID, `user_id = $2 AND (last_seen_at <= $3 OR created_at <= $4)`,
		u.ID, at.Add(-IdleTimeout).UnixMilli(), at.Add(-AbsoluteTimeout).UnixMilli()); err != nil {
		return err
	}
	// The token's 256 random bits do not collide: its claim is sent, not asked.
	if err := store.SendKey(ctx, tx, store.KeyPortalSession, hashToken(sess.Token), u.MerchantID); err != nil {
		return err
	}
	if err := tx.Send(ctx, `INSERT INTO portal_sessions (token_hash, merchant_id, user_id, csrf_token, role, created_at, last_seen_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, hashToken(sess.Token), u.MerchantID, u.ID, sess.CSRF, string(role), at.UnixMilli()); err != nil {
		return err
	}
	return Audit(ctx, tx, Entry{MerchantID: u.MerchantID, Actor: u.Email, Action: AuditLogin, Subject: u.Email, Detail: detail, Client: client, At: at})
}

// failed counts a failed sign-in for email and says how long to hold the
// answer back, and whether the email is now locked.
func (s *Service) failed(ctx context.Context, email string, u User, client string, now time.Time) (time.Duration, error) {
	var failures int
	err := s.db.Exec(ctx, func(tx *store.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO portal_login_failures (email, failures, updated_at) VALUES ($1, 1, $2)
			ON CONFLICT (email) DO UPDATE SET failures = portal_login_failures.failures + 1, updated_at = $2 RETURNING failures`,
			email, now.UnixMilli()).Scan(&failures); err != nil {
			return err
		}
		if failures >= lockAfter {
			if _, err := tx.ExecContext(ctx, `UPDATE portal_login_failures SET failures = 0, locked_until = $1 WHERE email = $2`,
				now.Add(LockFor).UnixMilli(), email); err != nil {
				return err
			}
		}
		if u.MerchantID == "" {
			return nil
		}
		at, err := s.clock.Read(ctx, tx, u.MerchantID)
		if err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: u.MerchantID, Actor: email, Action: AuditLoginFailed, Subject: email, Client: client, At: at})
	})
	if err != nil {
		return 0, fmt.Errorf("count sign-in failure: %w", err)
	}
	if failures >= lockAfter {
		return 0, ErrLocked
	}
	return min(time.Duration(max(failures-slowAfter, 0))*200*time.Millisecond, 2*time.Second), nil
}

// Authenticate finds the session of a cookie token. A session idle for 30
// minutes or older than 12 hours, on the merchant's clock, is ended; a live
// one is touched.
func (s *Service) Authenticate(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 128 {
		return Session{}, errExpired
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (Session, error) {
		var sess Session
		var created, seen int64
		var totp string
		var sessionRole merchant.Role
		var disabled *int64
		merchantID, err := store.KeyOwner(ctx, tx, store.KeyPortalSession, hashToken(token))
		if err == nil {
			err = tx.QueryRowContext(ctx, `SELECT u.id, u.merchant_id, u.email, u.role, s.role, u.totp_secret, u.disabled_at, s.csrf_token, s.created_at, s.last_seen_at
				FROM portal_sessions s JOIN users u ON u.merchant_id = s.merchant_id AND u.id = s.user_id WHERE s.merchant_id = $1 AND s.token_hash = $2`,
				merchantID, hashToken(token)).
				Scan(&sess.ID, &sess.MerchantID, &sess.Email, &sess.Role, &sessionRole, &totp, &disabled, &sess.CSRF, &created, &seen)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return Session{}, errExpired
		}
		if err != nil {
			return Session{}, fmt.Errorf("read session: %w", err)
		}
		now, err := s.clock.Read(ctx, tx, sess.MerchantID)
		if err != nil {
			return Session{}, err
		}
		if disabled != nil || now.Sub(clock.FromMillis(seen)) >= IdleTimeout || now.Sub(clock.FromMillis(created)) >= AbsoluteTimeout {
			if err := endSessions(ctx, tx, sess.MerchantID, `token_hash = $2`, hashToken(token)); err != nil {
				return Session{}, err
			}
			return Session{}, errExpired
		}
		if _, err := tx.ExecContext(ctx, `UPDATE portal_sessions SET last_seen_at = $1 WHERE merchant_id = $2 AND token_hash = $3`,
			now.UnixMilli(), sess.MerchantID, hashToken(token)); err != nil {
			return Session{}, err
		}
		sess.Token, sess.HasTOTP = token, totp != ""
		if sessionRole != "" {
			// Single sign-on's role from the identity provider's groups.
			sess.Role = sessionRole
		}
		return sess, nil
	})
}

// Logout ends a session.
func (s *Service) Logout(ctx context.Context, sess Session) error {
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		return endSessions(ctx, tx, sess.MerchantID, `token_hash = $2`, hashToken(sess.Token))
	})
}

// endSessions deletes the merchant's sessions that match cond (its
// arguments from $2) and releases their tokens' global keys.
func endSessions(ctx context.Context, tx *store.Tx, merchantID, cond string, args ...any) error {
	var ended []string
	err := tx.Query(ctx, `DELETE FROM portal_sessions WHERE merchant_id = $1 AND `+cond+` RETURNING token_hash`, append([]any{merchantID}, args...),
		func(r store.Row) error {
			var hash string
			err := r.Scan(&hash)
			ended = append(ended, hash)
			return err
		})
	for _, hash := range ended {
		if err == nil {
			err = store.ReleaseKey(ctx, tx, store.KeyPortalSession, hash, merchantID)
		}
	}
	return err
}

// CSRFMatches compares a form's token with the session's in constant time.
func CSRFMatches(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// dummyHash is checked when no account can sign in with the email.
// It is made on first use, not at start: a hash holds its memory while it runs.
var dummyHash = sync.OnceValue(func() string {
	h, _ := merchant.HashPassword("no such portal user")
	return h
})

// totpPeriod is the step of the codes (RFC 6238's default, what
// authenticator apps use).
const totpPeriod = 30 * time.Second

// totpStep returns the step (counter) at which code is secret's code, trying
// now's step and one on either side for clock drift, or 0 when it is none.
// Remembering the step accepted last turns a code into a one-time password.
func totpStep(secret, code string, now time.Time) int64 {
	if len(code) != 6 {
		return 0
	}
	for _, skew := range []int64{0, -1, 1} {
		at := now.Add(time.Duration(skew) * totpPeriod)
		want, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: uint(totpPeriod / time.Second), Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return at.Unix() / int64(totpPeriod/time.Second)
		}
	}
	return 0
}

// validTOTP checks a 6-digit code of secret at now (RFC 6238, 30 s steps,
// one step of skew).
func validTOTP(secret, code string, now time.Time) bool {
	return totpStep(secret, code, now) > 0
}
