package transfer

import (
	"context"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/policy"
	"payd/internal/store"
)

// jobExpireHold expires an external transfer still held at the end of its
// hold window: its amount back in available.
var jobExpireHold = job.NewKind[ref]("transfer.expire_hold")

// defaultHold is a held transfer's window when its account has none.
const defaultHold = 7 * 24 * time.Hour

// ApprovalStatus is where a held transfer's approval stands.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalRejected ApprovalStatus = "rejected"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Approval is the approval record of an external transfer a policy held
// (CONTRACT §25: like a payout's).
type Approval struct {
	Status            ApprovalStatus `json:"status" enum:"pending,approved,rejected,expired"`
	CreatedBy         string         `json:"created_by" doc:"Who created the transfer: app:<app-id>."`
	DecidedBy         *string        `json:"decided_by" doc:"The email of the user whose decision ended the hold; null until then."`
	DecidedAt         *clock.Time    `json:"decided_at"`
	RejectionReason   string         `json:"rejection_reason"`
	RequiredApprovals int            `json:"required_approvals"`
	Approvals         []policy.Step  `json:"approvals"`
	Policy            *policy.Ref    `json:"policy"`
}

// approvalFields are the columns of a new transfer's approval ("" status:
// not held).
type approvalFields struct {
	createdBy, status, roles string
	required                 int
	policyName               *string
	policyVersion            *int
	holdUntil                *int64
}

func newApproval(p merchant.Principal, h policy.Hold, from merchant.Account, now time.Time) approvalFields {
	a := approvalFields{createdBy: "app:" + p.AppID}
	if !h.Held {
		return a
	}
	window := from.ApprovalHold
	if window <= 0 {
		window = defaultHold
	}
	until := now.Add(window).UnixMilli()
	a.status, a.roles, a.required, a.holdUntil = string(ApprovalPending), policy.JoinRoles(h.Roles), max(h.Required, 1), &until
	if h.Policy != nil {
		a.policyName, a.policyVersion = &h.Policy.Name, &h.Policy.Version
	}
	return a
}

// evaluate applies the merchant's approval policies to an external transfer
// being created (CONTRACT §20, §25); a transfer between the merchant's own
// accounts is never held.
func (s *Service) evaluate(ctx context.Context, tx *store.Tx, p merchant.Principal, currency string, amount int64, r Request, now time.Time) (policy.Hold, error) {
	if r.ExternalBankAccount == nil || s.policies == nil {
		return policy.Hold{}, nil
	}
	return s.policies.Evaluate(ctx, tx, policy.Subject{MerchantID: p.MerchantID, Currency: currency, Amount: amount,
		CreatorLabel: "app:" + p.AppID, Now: now, Zone: p.Timezone})
}

func (r row) approval() *Approval {
	a := &Approval{Status: ApprovalStatus(r.approvalStatus), CreatedBy: r.createdBy, RejectionReason: r.rejectionReason,
		RequiredApprovals: max(r.requiredApprovals, 1), Approvals: r.steps}
	if a.Approvals == nil {
		a.Approvals = []policy.Step{}
	}
	if r.decidedBy != "" {
		a.DecidedBy = &r.decidedBy
	}
	if r.decidedAt.Valid {
		a.DecidedAt = &clock.Time{T: clock.FromMillis(r.decidedAt.Int64)}
	}
	if r.policyName.Valid && r.policyVersion.Valid {
		a.Policy = &policy.Ref{Name: r.policyName.String, Version: int(r.policyVersion.Int64)}
	}
	return a
}

// Decision is an approval or a rejection (with its reason) of a held transfer.
type Decision struct {
	MerchantID   string
	TransferUUID string
	By           policy.Actor
	Approve      bool
	Reason       string
}

// Decide applies d to a held external transfer, as payouts are decided
// (CONTRACT §20, §25): only the roles its evaluation allowed, never its
// maker (403); each distinct approval is recorded (the same user again 409
// ALREADY_APPROVED); at the last required one the transfer goes on
// (processing), at the first rejection its amount returns to available
// (rejected); once it left held, 409 DECISION_CONFLICT. The transfer is read
// under its accounts' ledger locks, so concurrent decisions run one after
// another and it leaves held once, with one webhook.
func (s *Service) Decide(ctx context.Context, tx *store.Tx, d Decision) (Transfer, error) {
	t, err := s.get(ctx, tx, d.MerchantID, d.TransferUUID)
	if err != nil {
		return Transfer{}, err
	}
	if t.approvalStatus == "" {
		return Transfer{}, fault.State("transfer %s was never held: there is nothing to decide", t.uuid)
	}
	if err := policy.MayApprove(t.createdByUser, policy.SplitRoles(t.approvalRoles), d.By); err != nil {
		return Transfer{}, err
	}
	reason := ""
	if !d.Approve {
		if reason, err = policy.Reason(d.Reason); err != nil {
			return Transfer{}, err
		}
	}
	t, now, err := s.locked(ctx, tx, d.MerchantID, d.TransferUUID)
	if err != nil {
		return Transfer{}, err
	}
	if t.status != Held || t.approvalStatus != string(ApprovalPending) {
		return Transfer{}, fault.New(fault.Conflict, policy.CodeDecisionConflict, "transfer %s is no longer held: it is %s (approval %s)", t.uuid, t.status, t.approvalStatus)
	}
	if !d.Approve {
		if err := s.endHold(ctx, tx, &t, Rejected, ApprovalRejected, d.By.Email, reason, now); err != nil {
			return Transfer{}, err
		}
		return t.view()
	}
	n, err := policy.Approve(ctx, tx, t.merchantID, policy.TransferSubject, t.uuid, d.By, now)
	if err != nil {
		return Transfer{}, err
	}
	if n < max(t.requiredApprovals, 1) {
		if _, err := tx.ExecContext(ctx, `UPDATE transfers SET updated_at = $1 WHERE merchant_id = $2 AND uuid = $3`, now.UnixMilli(), t.merchantID, t.uuid); err != nil {
			return Transfer{}, err
		}
		if t, err = s.get(ctx, tx, d.MerchantID, d.TransferUUID); err != nil {
			return Transfer{}, err
		}
		return t.view()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE transfers SET status = $1, approval_status = $6, decided_by = $2, decided_at = $3, updated_at = $3
		WHERE merchant_id = $4 AND uuid = $5`, string(Processing), d.By.Email, now.UnixMilli(), t.merchantID, t.uuid, string(ApprovalApproved)); err != nil {
		return Transfer{}, err
	}
	if t, err = s.get(ctx, tx, d.MerchantID, d.TransferUUID); err != nil {
		return Transfer{}, err
	}
	if err := s.emit(ctx, tx, t, now); err != nil {
		return Transfer{}, err
	}
	release, err := s.released(ctx, tx, t)
	if err != nil {
		return Transfer{}, err
	}
	if release {
		if err := job.Enqueue(ctx, tx, s.queue, jobRelease, ref{MerchantID: t.merchantID, UUID: t.uuid}, job.Options{ClockOf: t.merchantID, RunAt: now}); err != nil {
			return Transfer{}, err
		}
	}
	return t.view()
}

// endHold ends a held transfer that will never be sent (rejected, expired):
// its amount returns to available, and transfer.<to> is sent.
func (s *Service) endHold(ctx context.Context, tx *store.Tx, t *row, to Status, approvalStatus ApprovalStatus, decidedBy, reason string, now time.Time) error {
	if err := ledger.Land(ctx, tx, ledger.Outflow{MerchantID: t.merchantID, Currency: t.currency, Operation: "transfer", RecordID: t.uuid,
		Reference: t.uuid, From: t.fromAccountID, To: t.toAccountID, Amount: t.amount}, false, now); err != nil {
		return err
	}
	failure := "the transfer was not approved in time"
	if to == Rejected {
		failure = "the transfer was rejected: " + reason
	}
	if _, err := tx.ExecContext(ctx, `UPDATE transfers SET status = $1, approval_status = $2, decided_by = $3, decided_at = $4, rejection_reason = $5,
		failure_reason = $6, updated_at = $4 WHERE merchant_id = $7 AND uuid = $8`,
		string(to), string(approvalStatus), decidedBy, now.UnixMilli(), reason, failure, t.merchantID, t.uuid); err != nil {
		return err
	}
	fresh, err := s.get(ctx, tx, t.merchantID, t.uuid)
	if err != nil {
		return err
	}
	*t = fresh
	return s.emit(ctx, tx, *t, now)
}

// expireHoldJob expires a transfer still held at the end of its window.
func (s *Service) expireHoldJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	t, now, err := s.locked(ctx, tx, rf.MerchantID, rf.UUID)
	if err != nil || t.status != Held || t.approvalStatus != string(ApprovalPending) {
		return err
	}
	return s.endHold(ctx, tx, &t, Expired, ApprovalExpired, "", "", now)
}

// MayDecide answers as Decide would for who by is, without deciding.
func (s *Service) MayDecide(ctx context.Context, merchantID, uuid string, by policy.Actor) error {
	t, err := s.get(ctx, s.db.Read(), merchantID, uuid)
	if err != nil {
		return err
	}
	return policy.MayApprove(t.createdByUser, policy.SplitRoles(t.approvalRoles), by)
}
