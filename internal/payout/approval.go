package payout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/policy"
	"payd/internal/store"
)

// DeciderRoles are the roles whose users decide held payouts when no policy
// narrows them (CONTRACT §13).
var DeciderRoles = policy.DeciderRoles

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

// Decide applies d to a held payout: the one place a payout is approved or
// rejected, whoever asks (CONTRACT §5, §20, §25). Only the roles its
// evaluation allowed (admin and finance without a policy) decide, and never
// the portal user who created the payout (403, mayDecide). Each approval by
// a distinct allowed user is recorded (the same user again is 409
// ALREADY_APPROVED); the payout leaves held at its required_approvals-th
// approval, processed (or scheduled), or at the first rejection, its funds
// returned, in the same transaction; a decision after that is 409
// DECISION_CONFLICT and changes nothing; a payout that never needed a
// decision is 409 INVALID_STATE. The payout's row is locked first, so
// concurrent approvals count one after another and the payout leaves held
// once, with one webhook.
func (s *Service) Decide(ctx context.Context, tx *store.Tx, d Decision) (Payout, error) {
	r, err := s.get(ctx, tx, d.MerchantID, d.PayoutUUID)
	if err != nil {
		return Payout{}, err
	}
	if err := mayDecide(r.createdByUser, r.approvalRoles, d.By); err != nil {
		return Payout{}, err
	}
	// The reason is read after who may decide: a user who may not is told so
	// (403), whatever the form carried.
	reason := ""
	if !d.Approve {
		if reason, err = policy.Reason(d.Reason); err != nil {
			return Payout{}, err
		}
	}
	now, err := s.clock.Read(ctx, tx, d.MerchantID)
	if err != nil {
		return Payout{}, err
	}
	// A decision may post (a rejection returns the funds), so either locks
	// the account before the payout, as every change that posts does
	// (ledger.LockAccount). The lock goes to the server with the payout's.
	if err := sendAccountLock(ctx, tx, d.MerchantID, d.PayoutUUID); err != nil {
		return Payout{}, err
	}
	if r, err = s.lock(ctx, tx, d.MerchantID, d.PayoutUUID); err != nil {
		return Payout{}, err
	}
	if r.status != Held || r.approvalStatus != ApprovalPending {
		return Payout{}, lostDecision(r)
	}
	at := now.UnixMilli()
	if !d.Approve {
		r.approvalStatus, r.decidedBy, r.decidedAt, r.rejectionReason = ApprovalRejected, d.By.Email, &at, reason
		if err := s.end(ctx, tx, &r, Rejected, "the payout was rejected: "+reason, now); err != nil {
			return Payout{}, err
		}
		return r.view(), nil
	}
	n, err := policy.Approve(ctx, tx, r.merchantID, policy.PayoutSubject, r.uuid, d.By.actor(), now)
	if err != nil {
		return Payout{}, err
	}
	if err := r.readSteps(ctx, tx); err != nil {
		return Payout{}, err
	}
	if n < r.required() {
		return r.view(), s.touch(ctx, tx, &r, now)
	}
	r.approvalStatus, r.decidedBy, r.decidedAt = ApprovalApproved, d.By.Email, &at
	if err := s.approved(ctx, tx, &r, now); err != nil {
		return Payout{}, err
	}
	return r.view(), nil
}

func (d Decider) actor() policy.Actor {
	return policy.Actor{UserID: d.UserID, Email: d.Email, Role: d.Role}
}

// mayDecide is the maker-checker rule of payouts, policy.MayApprove: only
// the roles the payout's evaluation allowed (roles; "" is admin and
// finance) decide it, and never the portal user who made it, known by user
// id (created_by_user; created_by is only its label, an email or
// app:<app-id>). A payout the API made has no maker user.
func mayDecide(makerUserID, roles string, by Decider) error {
	return policy.MayApprove(makerUserID, policy.SplitRoles(roles), by.actor())
}

// MayDecide answers as Decide would for who by is (nil, or its 403), without
// deciding anything: a page offers the decision only to a user who may make
// it. It does not look at the payout's state; an unknown payout is 404.
func (s *Service) MayDecide(ctx context.Context, merchantID, uuid string, by Decider) error {
	var maker, roles string
	err := s.db.Read().QueryRowContext(ctx, `SELECT created_by_user, approval_roles FROM payouts WHERE uuid = $1 AND merchant_id = $2`,
		uuid, merchantID).Scan(&maker, &roles)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(uuid)
	}
	if err != nil {
		return fmt.Errorf("read payout %s: %w", uuid, err)
	}
	return mayDecide(maker, roles, by)
}

// lostDecision says why a decision found nothing to decide.
func lostDecision(r row) error {
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
