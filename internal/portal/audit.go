package portal

import (
	"context"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/store"
)

// Entry is one line of the audit log: who did what to what, when, from which
// address. The log is append-only: this file writes it with INSERT only, and
// nothing in payd updates or deletes it (audit_test.go checks the code).
type Entry struct {
	MerchantID string
	Actor      string
	Action     AuditAction
	Subject    string
	Detail     string
	Client     string
	At         time.Time
}

// AuditAction is what an entry records.
type AuditAction string

// The actions the log records (CONTRACT §13: every decision, payout created
// in the portal, key created or revoked, signing secret rotated, user added
// or changed, and sign-in, failed or not).
const (
	AuditLogin               AuditAction = "login"
	AuditLoginFailed         AuditAction = "login_failed"
	AuditUserAdded           AuditAction = "user_added"
	AuditInviteAccepted      AuditAction = "invite_accepted"
	AuditRoleChanged         AuditAction = "role_changed"
	AuditUserDisabled        AuditAction = "user_disabled"
	AuditTOTPEnabled         AuditAction = "totp_enabled"
	AuditTOTPDisabled        AuditAction = "totp_disabled"
	AuditPayoutCreated       AuditAction = "payout_created"
	AuditPayoutApproved      AuditAction = "payout_approved"
	AuditPayoutRejected      AuditAction = "payout_rejected"
	AuditAppCreated          AuditAction = "app_created"
	AuditAppRevoked          AuditAction = "app_revoked"
	AuditSecretRotated       AuditAction = "webhook_secret_rotated"
	AuditWebhookResent       AuditAction = "webhook_resent"
	AuditEmbedOriginsUpdated AuditAction = "embed_origins_updated"
	// AuditSettlementConfigChanged is a settlement config set in the portal.
	AuditSettlementConfigChanged AuditAction = "settlement_config_changed"
)

// maxAuditText bounds each text of an entry.
const maxAuditText = 500

func clip(s string) string {
	if len(s) > maxAuditText {
		return s[:maxAuditText]
	}
	return s
}

// Audit appends e to the log in tx, with the change it records.
func Audit(ctx context.Context, tx *store.Tx, e Entry) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (merchant_id, actor, action, subject, detail, client, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.MerchantID, clip(e.Actor), clip(string(e.Action)), clip(e.Subject), clip(e.Detail), clip(e.Client), e.At.UnixMilli())
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// AuditPage is a page of the log, newest first.
func (s *Service) AuditPage(ctx context.Context, merchantID string, page, perPage int) ([]Entry, int, error) {
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE merchant_id = $1`, merchantID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count audit log: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT actor, action, subject, detail, client, at FROM audit_log WHERE merchant_id = $1
		ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3`, merchantID, perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, fmt.Errorf("read audit log: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e := Entry{MerchantID: merchantID}
		var at int64
		if err := rows.Scan(&e.Actor, &e.Action, &e.Subject, &e.Detail, &e.Client, &at); err != nil {
			return nil, 0, err
		}
		e.At = clock.FromMillis(at)
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// Change makes a change another service owns and appends the entry it
// returns in the same transaction: the change never commits without its
// audit row.
func (s *Service) Change(ctx context.Context, change func(tx *store.Tx) (Entry, error)) error {
	_, err := audited(ctx, s, func(tx *store.Tx) (struct{}, Entry, error) {
		e, err := change(tx)
		return struct{}{}, e, err
	})
	return err
}

// audited runs change in one transaction with the audit entry it returns:
// the change never commits without its entry, nor the entry without the
// change. An entry without a time is stamped with the merchant's clock.
func audited[T any](ctx context.Context, s *Service, change func(tx *store.Tx) (T, Entry, error)) (T, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (T, error) {
		v, e, err := change(tx)
		if err != nil {
			return v, err
		}
		if e.At.IsZero() {
			if e.At, err = s.clock.Read(ctx, tx, e.MerchantID); err != nil {
				return v, err
			}
		}
		return v, Audit(ctx, tx, e)
	})
}
