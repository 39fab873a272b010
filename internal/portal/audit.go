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
	Action     string
	Subject    string
	Detail     string
	Client     string
	At         time.Time
}

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
		e.MerchantID, clip(e.Actor), clip(e.Action), clip(e.Subject), clip(e.Detail), clip(e.Client), e.At.UnixMilli())
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
	return s.db.Exec(ctx, func(tx *store.Tx) error {
		e, err := change(tx)
		if err != nil {
			return err
		}
		if e.At.IsZero() {
			now, err := s.clock.Read(ctx, tx, e.MerchantID)
			if err != nil {
				return err
			}
			e.At = now
		}
		return Audit(ctx, tx, e)
	})
}
