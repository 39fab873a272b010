package portal

import (
	"context"
	"strings"
	"time"

	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/transfer"
)

// The audit log's entries of approval policies (CONTRACT §20: audited).
const (
	AuditPolicyProposed AuditAction = "policy_proposed"
	AuditPolicyApproved AuditAction = "policy_approved"
	AuditPolicyRejected AuditAction = "policy_rejected"
)

// actor is by as the policy service knows a user.
func actor(by Session) policy.Actor {
	return policy.Actor{UserID: by.ID, Email: by.Email, Role: by.Role}
}

// changePolicy runs a change of by's merchant's approval rules at the
// merchant's time, with its audit entry, refused to a role that may not.
func (a *Actions) changePolicy(ctx context.Context, by Session, action AuditAction, detail, client string,
	change func(tx *store.Tx, now time.Time) (policy.Policy, error)) (policy.Policy, error) {
	if err := by.May(ChangePolicies); err != nil {
		return policy.Policy{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (policy.Policy, Entry, error) {
		now, err := a.portal.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return policy.Policy{}, Entry{}, err
		}
		p, err := change(tx, now)
		d := detail
		if d == "" {
			d = string(p.Kind) + " " + p.Name
		}
		return p, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: action, Subject: p.ID, Detail: d, Client: client, At: now}, err
	})
}

// ProposePolicy proposes a threshold policy (pending until another admin approves it).
func (a *Actions) ProposePolicy(ctx context.Context, by Session, in policy.Input, client string) (policy.Policy, error) {
	return a.changePolicy(ctx, by, AuditPolicyProposed, "", client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.Propose(ctx, tx, by.MerchantID, actor(by), in, now)
	})
}

// UpdatePolicy proposes new values of the policy id.
func (a *Actions) UpdatePolicy(ctx context.Context, by Session, id string, in policy.Input, client string) (policy.Policy, error) {
	return a.changePolicy(ctx, by, AuditPolicyProposed, "", client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.ProposeUpdate(ctx, tx, by.MerchantID, id, actor(by), in, now)
	})
}

// DeletePolicy proposes the deletion of the rule id.
func (a *Actions) DeletePolicy(ctx context.Context, by Session, id, client string) (policy.Policy, error) {
	return a.changePolicy(ctx, by, AuditPolicyProposed, "delete "+id, client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.ProposeDelete(ctx, tx, by.MerchantID, id, actor(by), now)
	})
}

// DecidePolicy approves or rejects the pending change of the rule id: never
// approved by its proposer (the policy service's rule).
func (a *Actions) DecidePolicy(ctx context.Context, by Session, id string, approve bool, client string) (policy.Policy, error) {
	action := AuditPolicyApproved
	if !approve {
		action = AuditPolicyRejected
	}
	return a.changePolicy(ctx, by, action, "", client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.Decide(ctx, tx, by.MerchantID, id, actor(by), approve, now)
	})
}

// ProposeDailyLimit proposes currency's per-creator daily limit ("" removes it).
func (a *Actions) ProposeDailyLimit(ctx context.Context, by Session, currency string, amount money.Input, client string) (policy.Policy, error) {
	return a.changePolicy(ctx, by, AuditPolicyProposed, "daily limit "+currency+" "+string(amount), client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.ProposeDailyLimit(ctx, tx, by.MerchantID, actor(by), currency, amount, now)
	})
}

// ProposeBeneficiaryApproval proposes turning beneficiary approval on or off.
func (a *Actions) ProposeBeneficiaryApproval(ctx context.Context, by Session, on bool, client string) (policy.Policy, error) {
	detail := "beneficiary approval off"
	if on {
		detail = "beneficiary approval on"
	}
	return a.changePolicy(ctx, by, AuditPolicyProposed, detail, client, func(tx *store.Tx, now time.Time) (policy.Policy, error) {
		return a.Policies.ProposeBeneficiaryApproval(ctx, tx, by.MerchantID, actor(by), on, now)
	})
}

// The audit log's entries of held external transfers' decisions.
const (
	AuditTransferApproved AuditAction = "transfer_approved"
	AuditTransferRejected AuditAction = "transfer_rejected"
)

// DecideTransfer approves or rejects (with reason) by's merchant's held
// external transfer uuid through the transfer service's decision, which
// applies the maker-checker rule of payouts (policy.MayApprove).
func (a *Actions) DecideTransfer(ctx context.Context, by Session, uuid string, approve bool, reason, client string) (transfer.Transfer, error) {
	if err := by.May(DecideTransfers); err != nil {
		return transfer.Transfer{}, err
	}
	d := transfer.Decision{MerchantID: by.MerchantID, TransferUUID: uuid, By: actor(by), Approve: approve, Reason: reason}
	return audited(ctx, a.portal, func(tx *store.Tx) (transfer.Transfer, Entry, error) {
		t, err := a.Transfers.Decide(ctx, tx, d)
		e := Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditTransferApproved, Subject: uuid, Client: client}
		if !approve {
			e.Action, e.Detail = AuditTransferRejected, strings.TrimSpace(reason)
		}
		return t, e, err
	})
}

// MayDecideTransfer is nil when by may decide the transfer uuid.
func (a *Actions) MayDecideTransfer(ctx context.Context, by Session, uuid string) error {
	if err := by.May(DecideTransfers); err != nil {
		return err
	}
	return a.Transfers.MayDecide(ctx, by.MerchantID, uuid, actor(by))
}

// The audit log's entries of beneficiary changes' decisions.
const (
	AuditBeneficiaryApproved AuditAction = "beneficiary_approved"
	AuditBeneficiaryRejected AuditAction = "beneficiary_rejected"
)

// DecideBeneficiary approves or rejects the pending beneficiary change of
// by's merchant's currency settlement config (settlement.DecideBeneficiary:
// an admin or finance user other than its maker).
func (a *Actions) DecideBeneficiary(ctx context.Context, by Session, currency string, approve bool, client string) (settlement.Config, error) {
	if err := by.May(DecideBeneficiaries); err != nil {
		return settlement.Config{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (settlement.Config, Entry, error) {
		now, err := a.portal.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return settlement.Config{}, Entry{}, err
		}
		c, err := a.Settlements.DecideBeneficiary(ctx, tx, by.MerchantID, currency, actor(by), approve, now)
		e := Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditBeneficiaryApproved, Subject: c.Currency, Client: client, At: now}
		if !approve {
			e.Action = AuditBeneficiaryRejected
		}
		return c, e, err
	})
}
