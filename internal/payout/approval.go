package payout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/store"
)

// DeciderRoles are the roles whose users decide held payouts (CONTRACT §13).
var DeciderRoles = []merchant.Role{merchant.Admin, merchant.Finance}

// Decider is the portal user deciding a held payout, known by user id (the
// maker's identity too); Email is what decided_by shows.
type Decider struct {
	UserID string
	Email  string
	Role   merchant.Role
}

// Decision is an approval or a rejection (with its reason) of a held payout.
type Decision struct {
	MerchantID string
	PayoutUUID string
	By         Decider
	Approve    bool
	Reason     string
}

// Bounds of a rejection reason (CONTRACT §13).
const (
	minReasonLen = 5
	maxReasonLen = 500
)

// Decide applies d to a held payout: the one place a payout is approved or
// rejected, whoever asks (CONTRACT §5, spec rules 1 and 2). Only admin and
// finance users decide, and never the portal user who created the payout
// (403, mayDecide). The first decision wins: it is a conditional update of a pending
// approval, so a later or concurrent one finds it decided and is refused with
// 409 DECISION_CONFLICT, changing nothing; a payout that never needed a
// decision is 409 INVALID_STATE. Approved, the payout is processed (or
// scheduled); rejected, its funds return, in the same transaction.
func (s *Service) Decide(ctx context.Context, tx *store.Tx, d Decision) (Payout, error) {
	r, err := s.get(ctx, tx, d.MerchantID, d.PayoutUUID)
	if err != nil {
		return Payout{}, err
	}
	if err := mayDecide(r.createdByUser, d.By); err != nil {
		return Payout{}, err
	}
	// The reason is read after who may decide: a user who may not is told so
	// (403), whatever the form carried.
	if !d.Approve {
		if n := utf8.RuneCountInString(strings.TrimSpace(d.Reason)); n < minReasonLen || n > maxReasonLen {
			return Payout{}, fault.Field("reason", fmt.Sprintf("must be %d to %d characters", minReasonLen, maxReasonLen))
		}
	}
	now, err := s.clock.Read(ctx, tx, d.MerchantID)
	if err != nil {
		return Payout{}, err
	}
	outcome, reason := ApprovalApproved, ""
	if !d.Approve {
		outcome, reason = ApprovalRejected, strings.TrimSpace(d.Reason)
	}
	// A decision may post (a rejection returns the funds), so either locks
	// the account before the payout, as every change that posts does
	// (ledger.LockAccount). The lock goes to the server with the decision's
	// update.
	if err := sendAccountLock(ctx, tx, d.MerchantID, d.PayoutUUID); err != nil {
		return Payout{}, err
	}
	won, err := store.OneRow(tx.ExecContext(ctx, `UPDATE payouts SET approval_status = $1, decided_by = $2, decided_at = $3,
		rejection_reason = $4, updated_at = $3 WHERE id = $5 AND merchant_id = $6 AND status = $7 AND approval_status = $8`,
		string(outcome), d.By.Email, now.UnixMilli(), reason, r.id, r.merchantID, string(Held), string(ApprovalPending)))
	if err != nil {
		return Payout{}, fmt.Errorf("decide payout %s: %w", r.uuid, err)
	}
	if !won {
		return Payout{}, s.lostDecision(ctx, tx, d)
	}
	r, err = s.lock(ctx, tx, d.MerchantID, d.PayoutUUID)
	if err != nil {
		return Payout{}, err
	}
	if d.Approve {
		err = s.approved(ctx, tx, &r, now)
	} else {
		err = s.end(ctx, tx, &r, Rejected, "the payout was rejected: "+reason, now)
	}
	if err != nil {
		return Payout{}, err
	}
	return r.view(), nil
}

// mayDecide is the maker-checker rule, the one place it is written
// (CONTRACT §5 and §13, spec rules 1 and 2): only users of DeciderRoles
// decide a payout, and never the portal user who made it, known by user id
// (created_by_user; created_by is only its label, an email or app:<app-id>).
// A payout the API made has no maker user.
func mayDecide(makerUserID string, by Decider) error {
	if !slices.Contains(DeciderRoles, by.Role) {
		return fault.New(fault.Forbidden, fault.CodeForbidden, "only admin and finance users decide payouts")
	}
	if makerUserID != "" && makerUserID == by.UserID {
		return fault.New(fault.Forbidden, fault.CodeForbidden, "the creator of a payout may not decide it")
	}
	return nil
}

// MayDecide answers as Decide would for who by is (nil, or its 403), without
// deciding anything: a page offers the decision only to a user who may make
// it. It does not look at the payout's state; an unknown payout is 404.
func (s *Service) MayDecide(ctx context.Context, merchantID, uuid string, by Decider) error {
	var maker string
	err := s.db.Read().QueryRowContext(ctx, `SELECT created_by_user FROM payouts WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID).Scan(&maker)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(uuid)
	}
	if err != nil {
		return fmt.Errorf("read payout %s: %w", uuid, err)
	}
	return mayDecide(maker, by)
}

// lostDecision says why a decision found nothing to decide.
func (s *Service) lostDecision(ctx context.Context, tx *store.Tx, d Decision) error {
	r, err := s.get(ctx, tx, d.MerchantID, d.PayoutUUID)
	if err != nil {
		return err
	}
	switch r.approvalStatus {
	case ApprovalApproved, ApprovalRejected:
		return fault.New(fault.Conflict, CodeDecisionConflict, "payout %s was already %s by %s at %s", r.uuid, r.approvalStatus,
			r.decidedBy, clock.Format(clock.FromMillis(*r.decidedAt)))
	case ApprovalExpired:
		return fault.New(fault.Conflict, CodeDecisionConflict, "payout %s expired undecided at %s", r.uuid,
			clock.Format(clock.FromMillis(*r.decidedAt)))
	}
	return fault.State("payout %s is %s; only a held payout can be decided", r.uuid, r.status)
}

// approved starts an approved payout: scheduled while scheduled_at is ahead,
// else processing.
func (s *Service) approved(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	if r.scheduledAt != nil && clock.FromMillis(*r.scheduledAt).After(now) {
		if err := s.setStatus(ctx, tx, r, Scheduled, now.UnixMilli()); err != nil {
			return err
		}
		return s.start(ctx, tx, *r, now)
	}
	return s.process(ctx, tx, r, now)
}

// end finishes a payout that will never be processed, funds returned.
func (s *Service) end(ctx context.Context, tx *store.Tx, r *row, to Status, reason string, now time.Time) error {
	if err := s.giveBack(ctx, tx, r, reason, now); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, r, to, now.UnixMilli())
}

// expireHoldJob expires a payout still held at the end of its account's hold
// window: approval expired, funds returned.
func (s *Service) expireHoldJob(ctx context.Context, tx *store.Tx, j job.Job, ref ref) error {
	r, now, err := s.jobPayout(ctx, tx, j, ref, true)
	if err != nil || r.status != Held || r.approvalStatus != ApprovalPending {
		return err
	}
	at := now.UnixMilli()
	r.approvalStatus, r.decidedAt = ApprovalExpired, &at
	return s.end(ctx, tx, &r, Expired, "the payout was not approved in time", now)
}
