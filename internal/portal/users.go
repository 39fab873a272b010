package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pquerna/otp/totp"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Bounds of users' changes.
const (
	minPasswordLen = 12
	maxPasswordLen = 256
	inviteLife     = 72 * time.Hour
)

// MemberView is a user as the users page lists it.
type MemberView struct {
	ID, Email string
	Role      merchant.Role
	Disabled  bool
	HasTOTP   bool
	CreatedAt time.Time
}

// Members lists the merchant's users.
func (s *Service) Members(ctx context.Context, merchantID string) ([]MemberView, error) {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT id, email, role, disabled_at, totp_secret, created_at FROM users WHERE merchant_id = $1 ORDER BY created_at, email`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []MemberView
	for rows.Next() {
		var m MemberView
		var disabled *int64
		var secret string
		var created int64
		if err := rows.Scan(&m.ID, &m.Email, &m.Role, &disabled, &secret, &created); err != nil {
			return nil, err
		}
		m.Disabled, m.HasTOTP, m.CreatedAt = disabled != nil, secret != "", clock.FromMillis(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Invite adds a user with a role and returns the one-time token of the
// link where they set their password (valid 72 hours). Admins only.
func (s *Service) Invite(ctx context.Context, by Session, email string, role merchant.Role, client string) (string, error) {
	if err := by.May(AddUsers); err != nil {
		return "", err
	}
	email = strings.ToLower(strings.TrimSpace(email))
	f := fault.Fields{}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		f.Add("email", "must be an email address")
	}
	if _, ok := merchant.ParseRole(string(role)); !ok {
		f.Add("role", "must be admin, finance, developer or viewer")
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	token := NewToken()
	err := s.db.Exec(ctx, func(tx *store.Tx) error {
		now, err := s.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return err
		}
		id, err := merchant.InsertUser(ctx, tx, by.MerchantID, email, role, "", now)
		if err != nil {
			return err
		}
		// The token's random bits do not collide: its claim is sent, not asked.
		if err := store.SendKey(ctx, tx, store.KeyPortalInvite, hashToken(token), by.MerchantID); err != nil {
			return err
		}
		if err := tx.Send(ctx, `INSERT INTO portal_invites (token_hash, merchant_id, user_id, expires_at) VALUES ($1, $2, $3, $4)`,
			hashToken(token), by.MerchantID, id, now.Add(inviteLife).UnixMilli()); err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditUserAdded, Subject: email, Detail: "role " + string(role), Client: client, At: now})
	})
	return token, err
}

// AcceptInvite sets an invited user's password through their one-time link.
func (s *Service) AcceptInvite(ctx context.Context, token, password, client string) (string, error) {
	if n := utf8.RuneCountInString(password); n < minPasswordLen || len(password) > maxPasswordLen {
		return "", fault.Field("password", fmt.Sprintf("must be %d to %d characters", minPasswordLen, maxPasswordLen))
	}
	hash, err := merchant.HashPassword(password)
	if err != nil {
		return "", err
	}
	return store.Do(ctx, s.db, func(tx *store.Tx) (string, error) {
		var userID, email string
		var expires int64
		merchantID, err := store.KeyOwner(ctx, tx, store.KeyPortalInvite, hashToken(token))
		if err == nil {
			err = tx.QueryRowContext(ctx, `SELECT i.user_id, i.expires_at, u.email FROM portal_invites i
				JOIN users u ON u.merchant_id = i.merchant_id AND u.id = i.user_id
				WHERE i.merchant_id = $1 AND i.token_hash = $2 AND i.used_at IS NULL`, merchantID, hashToken(token)).Scan(&userID, &expires, &email)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return "", fault.NotFoundf("this link is unknown or was used")
		}
		if err != nil {
			return "", err
		}
		now, err := s.clock.Read(ctx, tx, merchantID)
		if err != nil {
			return "", err
		}
		if now.UnixMilli() >= expires {
			return "", fault.NotFoundf("this link has expired")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE portal_invites SET used_at = $1 WHERE merchant_id = $2 AND token_hash = $3`,
			now.UnixMilli(), merchantID, hashToken(token)); err != nil {
			return "", err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE merchant_id = $2 AND id = $3`, hash, merchantID, userID); err != nil {
			return "", err
		}
		return email, Audit(ctx, tx, Entry{MerchantID: merchantID, Actor: email, Action: AuditInviteAccepted, Subject: email, Client: client, At: now})
	})
}

// SetRole changes a user's role; Disable ends a user's access. Admins only;
// the merchant always keeps one enabled admin.
func (s *Service) SetRole(ctx context.Context, by Session, userID string, role merchant.Role, client string) error {
	if err := by.May(ChangeUsers); err != nil {
		return err
	}
	if _, ok := merchant.ParseRole(string(role)); !ok {
		return fault.Field("role", "must be admin, finance, developer or viewer")
	}
	return s.changeUser(ctx, by, userID, client, AuditRoleChanged, "role "+string(role), role != merchant.Admin,
		`UPDATE users SET role = $1 WHERE id = $2 AND merchant_id = $3`, string(role))
}

// Disable ends a user's access and sessions.
func (s *Service) Disable(ctx context.Context, by Session, userID, client string) error {
	if err := by.May(ChangeUsers); err != nil {
		return err
	}
	return s.changeUser(ctx, by, userID, client, AuditUserDisabled, "", true,
		`UPDATE users SET disabled_at = $1 WHERE id = $2 AND merchant_id = $3`, s.clock.System().UnixMilli())
}

func (s *Service) changeUser(ctx context.Context, by Session, userID, client string, action AuditAction, detail string, losesAdmin bool, update string, value any) error {
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		var email, role string
		var disabled *int64
		err := tx.QueryRowContext(ctx, `SELECT email, role, disabled_at FROM users WHERE id = $1 AND merchant_id = $2`+tx.DB().ForUpdate(), userID, by.MerchantID).
			Scan(&email, &role, &disabled)
		if errors.Is(err, sql.ErrNoRows) {
			return fault.NotFoundf("no user %s", userID)
		}
		if err != nil {
			return err
		}
		if losesAdmin && role == string(merchant.Admin) && disabled == nil {
			// One change of an admin at a time per merchant: two admins
			// demoting each other at once must not leave none.
			var locked string
			if err := tx.QueryRowContext(ctx, `SELECT id FROM merchants WHERE id = $1`+tx.DB().ForUpdate(), by.MerchantID).Scan(&locked); err != nil {
				return err
			}
			var admins int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE merchant_id = $1 AND role = 'admin' AND disabled_at IS NULL`, by.MerchantID).Scan(&admins); err != nil {
				return err
			}
			if admins <= 1 {
				return fault.State("%s is the last admin: make another user admin first", email)
			}
		}
		if _, err := tx.ExecContext(ctx, update, value, userID, by.MerchantID); err != nil {
			return err
		}
		if action == AuditUserDisabled {
			if err := endSessions(ctx, tx, by.MerchantID, `user_id = $2`, userID); err != nil {
				return err
			}
		}
		now, err := s.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: action, Subject: email, Detail: detail, Client: client, At: now})
	})
}

// BeginTOTP makes a new second-factor secret for the user, kept pending
// until a code confirms it, and returns its otpauth URI (what an
// authenticator app scans, as a QR code the page draws) and the secret.
func (s *Service) BeginTOTP(ctx context.Context, by Session) (uri, secret string, err error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "payd", AccountName: by.Email})
	if err != nil {
		return "", "", fmt.Errorf("make TOTP secret: %w", err)
	}
	err = s.db.Exec(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET totp_pending = $1 WHERE merchant_id = $2 AND id = $3`, key.Secret(), by.MerchantID, by.ID)
		return err
	})
	return key.URL(), key.Secret(), err
}

// ConfirmTOTP turns the pending secret on when code is right for it.
func (s *Service) ConfirmTOTP(ctx context.Context, by Session, code, client string) error {
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		var pending string
		if err := tx.QueryRowContext(ctx, `SELECT totp_pending FROM users WHERE merchant_id = $1 AND id = $2`, by.MerchantID, by.ID).Scan(&pending); err != nil {
			return err
		}
		step := int64(0)
		if pending != "" {
			step = totpStep(pending, code, s.clock.System())
		}
		if step == 0 {
			return fault.Field("code", "is not the code your authenticator app shows")
		}
		// The enrolment code is used up: it cannot also open a session (RFC 6238 §5.2).
		if _, err := tx.ExecContext(ctx, `UPDATE users SET totp_secret = totp_pending, totp_pending = '', totp_last_step = $1
			WHERE merchant_id = $2 AND id = $3`, step, by.MerchantID, by.ID); err != nil {
			return err
		}
		now, err := s.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditTOTPEnabled, Subject: by.Email, Client: client, At: now})
	})
}

// DisableTOTP turns the second factor off with a current code.
func (s *Service) DisableTOTP(ctx context.Context, by Session, code, client string) error {
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		var secret string
		if err := tx.QueryRowContext(ctx, `SELECT totp_secret FROM users WHERE merchant_id = $1 AND id = $2`, by.MerchantID, by.ID).Scan(&secret); err != nil {
			return err
		}
		if secret == "" || !validTOTP(secret, code, s.clock.System()) {
			return fault.Field("code", "is not the code your authenticator app shows")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET totp_secret = '' WHERE merchant_id = $1 AND id = $2`, by.MerchantID, by.ID); err != nil {
			return err
		}
		now, err := s.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return err
		}
		return Audit(ctx, tx, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditTOTPDisabled, Subject: by.Email, Client: client, At: now})
	})
}
