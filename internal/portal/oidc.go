package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Sign-in by OpenID Connect (CONTRACT §23, §25), beside password + TOTP:
// the pages (internal/web/portal_oidc.go) run the Authorization Code flow
// and verify the identity provider's ID token; this file keeps each
// sign-in's state until its callback, decides who may sign in (only an
// already invited user whose email the identity provider has verified) and
// with which role, and opens the session with its audit entry.

// OIDCLoginLife is how long a sign-in started at the identity provider may
// take to come back.
const OIDCLoginLife = 10 * time.Minute

// Error code of a refused single sign-on.
const CodeSSORefused = "SSO_REFUSED"

// Refusals of single sign-on, each saying what the user can do about it.
var (
	ErrSSOState      = fault.New(fault.Unauthenticated, CodeSSORefused, "this single sign-on was already used or has expired: start again")
	ErrSSONoEmail    = fault.New(fault.Forbidden, CodeSSORefused, "the identity provider gave no email address")
	ErrSSOUnverified = fault.New(fault.Forbidden, CodeSSORefused, "the identity provider has not verified your email address")
	ErrSSONotInvited = fault.New(fault.Forbidden, CodeSSORefused, "no portal user is invited with your email address: ask an admin of your account to invite you")
)

// Sign-in methods, as the audit log's login entries name them.
const (
	MethodPassword = "password"
	MethodOIDC     = "oidc"
)

// roleRank orders the roles for a user in several mapped groups: the
// highest wins (CONTRACT §25), in the contract's order admin, finance,
// developer, viewer.
var roleRank = map[merchant.Role]int{merchant.Viewer: 1, merchant.Developer: 2, merchant.Finance: 3, merchant.Admin: 4}

// RoleMap maps the identity provider's groups to portal roles.
type RoleMap map[string]merchant.Role

// ParseRoleMap reads --oidc-role-map: ROLE=GROUP pairs, comma-separated
// (admin=payd-admins,finance=accounts). A role may be named more than once;
// a group only once, since it could not give two roles.
func ParseRoleMap(s string) (RoleMap, error) {
	m := RoleMap{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, group, ok := strings.Cut(strings.TrimSpace(pair), "=")
		role, known := merchant.ParseRole(strings.TrimSpace(name))
		group = strings.TrimSpace(group)
		switch {
		case !ok || group == "":
			return nil, fmt.Errorf("%q is not ROLE=GROUP", pair)
		case !known:
			return nil, fmt.Errorf("%q: the role must be admin, finance, developer or viewer", pair)
		case m[group] != "":
			return nil, fmt.Errorf("the group %q is mapped twice", group)
		}
		m[group] = role
	}
	return m, nil
}

// RoleFor is the role of a user in groups: the highest of their mapped
// groups; false when none is mapped, and the user keeps the role they were
// invited with.
func (m RoleMap) RoleFor(groups []string) (merchant.Role, bool) {
	var best merchant.Role
	for _, g := range groups {
		if r := m[g]; roleRank[r] > roleRank[best] {
			best = r
		}
	}
	return best, best != ""
}

// Identity is what a verified ID token says of the one signing in.
type Identity struct {
	Email         string
	EmailVerified bool
	Groups        []string
	// Client is the sign-in's address, for the audit log.
	Client string
}

// BeginOIDC keeps a sign-in's state, nonce and PKCE verifier until its
// callback (OIDCLoginLife). Rows of sign-ins never finished are dropped
// here, so the table holds only the last minutes' ones.
func (s *Service) BeginOIDC(ctx context.Context, state, nonce, verifier string) error {
	now := s.clock.System()
	err := s.db.Exec(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM portal_oidc_logins WHERE expires_at <= $1`, now.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO portal_oidc_logins (state_hash, nonce, code_verifier, expires_at) VALUES ($1, $2, $3, $4)`,
			hashToken(state), nonce, verifier, now.Add(OIDCLoginLife).UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("begin single sign-on: %w", err)
	}
	return nil
}

// TakeOIDC returns the nonce and verifier kept for state and forgets them:
// a state is good once, by whichever process gets it first
// (ErrSSOState for a replayed, unknown or expired one).
func (s *Service) TakeOIDC(ctx context.Context, state string) (nonce, verifier string, err error) {
	if state == "" || len(state) > 128 {
		return "", "", ErrSSOState
	}
	var expires int64
	err = s.db.Exec(ctx, func(tx *store.Tx) error {
		return tx.QueryRowContext(ctx, `DELETE FROM portal_oidc_logins WHERE state_hash = $1 RETURNING nonce, code_verifier, expires_at`,
			hashToken(state)).Scan(&nonce, &verifier, &expires)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrSSOState
	}
	if err != nil {
		return "", "", fmt.Errorf("take single sign-on state: %w", err)
	}
	if s.clock.System().UnixMilli() >= expires {
		return "", "", ErrSSOState
	}
	return nonce, verifier, nil
}

// LoginOIDC opens a session for the invited user an ID token names. Only
// an email the identity provider has verified signs in (anyone can put an
// unverified address on an account there); the role comes from the mapped
// groups (roles.RoleFor). The identity provider holds the second factor,
// so the user's TOTP is not asked for.
func (s *Service) LoginOIDC(ctx context.Context, id Identity, roles RoleMap) (Session, error) {
	email := strings.ToLower(strings.TrimSpace(id.Email))
	if email == "" || len(email) > 254 {
		return Session{}, ErrSSONoEmail
	}
	u, err := s.invited(ctx, email)
	if err != nil {
		return Session{}, err
	}
	if !id.EmailVerified {
		return Session{}, s.auditSSORefused(ctx, u, id.Client, ErrSSOUnverified)
	}
	sess := Session{User: u, Token: NewToken(), CSRF: NewToken()}
	detail := "method " + MethodOIDC
	// A mapped role is the session's own: the user's invited role stays
	// theirs, for a later sign-in without a mapped group and for password.
	mapped, ok := roles.RoleFor(id.Groups)
	if ok {
		sess.Role = mapped
		detail += ", role " + string(mapped) + " from the identity provider's groups"
	}
	err = s.db.Exec(ctx, func(tx *store.Tx) error {
		return s.openSession(ctx, tx, sess, mapped, detail, id.Client)
	})
	if err != nil {
		return Session{}, fmt.Errorf("single sign-on: %w", err)
	}
	return sess, nil
}

// invited is the active portal user with email, or ErrSSONotInvited.
func (s *Service) invited(ctx context.Context, email string) (User, error) {
	var u User
	var totp string
	var disabled *int64
	merchantID, err := store.KeyOwner(ctx, s.db.Read(), store.KeyPortalEmail, email)
	if err == nil {
		err = s.db.Read().QueryRowContext(ctx, `SELECT id, merchant_id, email, role, totp_secret, disabled_at FROM users WHERE merchant_id = $1 AND email = $2`,
			merchantID, email).Scan(&u.ID, &u.MerchantID, &u.Email, &u.Role, &totp, &disabled)
	}
	if errors.Is(err, sql.ErrNoRows) || (err == nil && disabled != nil) {
		return User{}, ErrSSONotInvited
	}
	if err != nil {
		return User{}, fmt.Errorf("single sign-on: %w", err)
	}
	u.HasTOTP = totp != ""
	return u, nil
}

// auditSSORefused records a refused sign-in of a known user and returns
// refusal.
func (s *Service) auditSSORefused(ctx context.Context, u User, client string, refusal *fault.Error) error {
	err := s.db.Exec(ctx, func(tx *store.Tx) error {
		at, err := s.clock.Read(ctx, tx, u.MerchantID)
		if err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: u.MerchantID, Actor: u.Email, Action: AuditLoginFailed, Subject: u.Email,
			Detail: "method " + MethodOIDC + ": " + refusal.Message, Client: client, At: at})
	})
	if err != nil {
		return fmt.Errorf("single sign-on: %w", err)
	}
	return refusal
}
