package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Subject types of approvals.
const (
	PayoutSubject   = "payout"
	TransferSubject = "transfer"
)

// MayApprove is the maker-checker rule, the one place it is written
// (CONTRACT §5, §13, §20): only users of roles (DeciderRoles when none)
// decide a held record, and never the portal user who made it, known by
// user id (an API record has no maker user). A refusal is 403.
func MayApprove(makerUserID string, roles []merchant.Role, by Actor) error {
	if len(roles) == 0 {
		roles = DeciderRoles
	}
	if !slices.Contains(roles, by.Role) {
		return fault.New(fault.Forbidden, fault.CodeForbidden, "only %s users decide this", joinWords(roles))
	}
	if makerUserID != "" && makerUserID == by.UserID {
		return fault.New(fault.Forbidden, fault.CodeForbidden, "the creator of a payout may not decide it")
	}
	return nil
}

func joinWords(roles []merchant.Role) string {
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = string(r)
	}
	return strings.Join(parts, " and ")
}

// Reason checks a rejection's reason (CONTRACT §13: 5 to 500 characters)
// and returns it trimmed.
func Reason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if n := utf8.RuneCountInString(reason); n < minReasonLen || n > maxReasonLen {
		return "", fault.Field("reason", fmt.Sprintf("must be %d to %d characters", minReasonLen, maxReasonLen))
	}
	return reason, nil
}

// Approve records by's approval of the held record subjectType uuid and
// returns how many distinct users have approved it now. The caller holds
// the record's row lock, so concurrent approvals count one after another;
// the key of approvals makes a user's second approval 409 ALREADY_APPROVED.
func Approve(ctx context.Context, tx *store.Tx, merchantID, subjectType, uuid string, by Actor, at time.Time) (int, error) {
	inserted, err := store.OneRow(tx.ExecContext(ctx, `INSERT INTO approvals (merchant_id, subject_type, subject_uuid, user_id, email, role, decided_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (merchant_id, subject_type, subject_uuid, user_id) DO NOTHING`,
		merchantID, subjectType, uuid, by.UserID, by.Email, string(by.Role), at.UnixMilli()))
	if err != nil {
		return 0, fmt.Errorf("record approval of %s %s: %w", subjectType, uuid, err)
	}
	if !inserted {
		return 0, fault.New(fault.Conflict, CodeAlreadyApproved, "you have already approved %s %s", subjectType, uuid)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE merchant_id = $1 AND subject_type = $2 AND subject_uuid = $3`,
		merchantID, subjectType, uuid).Scan(&n); err != nil {
		return 0, fmt.Errorf("count approvals of %s %s: %w", subjectType, uuid, err)
	}
	return n, nil
}

// maxSteps bounds the approvals read per record: no policy asks for more
// than MaxApprovals, and a record leaves held at its last one.
const maxSteps = 10

// Steps are the approvals of merchantID's records subjectType uuids, by
// uuid, oldest first.
func Steps(ctx context.Context, q store.Querier, merchantID, subjectType string, uuids []string) (map[string][]Step, error) {
	out := map[string][]Step{}
	if len(uuids) == 0 {
		return out, nil
	}
	args := []any{merchantID, subjectType}
	marks := make([]string, len(uuids))
	for i, u := range uuids {
		args = append(args, u)
		marks[i] = fmt.Sprintf("$%d", i+3)
	}
	rows, err := q.QueryContext(ctx, `SELECT subject_uuid, email, role, decided_at FROM approvals
		WHERE merchant_id = $1 AND subject_type = $2 AND subject_uuid IN (`+strings.Join(marks, ", ")+`) ORDER BY decided_at, email`, args...)
	if err != nil {
		return nil, fmt.Errorf("read approvals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var uuid string
		var st Step
		var at int64
		if err := rows.Scan(&uuid, &st.DecidedBy, &st.Role, &at); err != nil {
			return nil, fmt.Errorf("read approvals: %w", err)
		}
		st.DecidedAt = clock.Time{T: clock.FromMillis(at)}
		if len(out[uuid]) < maxSteps {
			out[uuid] = append(out[uuid], st)
		}
	}
	return out, rows.Err()
}
