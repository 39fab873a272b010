package portal

import (
	"context"

	"payd/internal/dispute"
	"payd/internal/merchant"
	"payd/internal/store"
)

// The audit log's entries of the answers to card disputes.
const (
	AuditDisputeAccepted  AuditAction = "dispute_accepted"
	AuditDisputeEvidence  AuditAction = "dispute_evidence_staged"
	AuditDisputeSubmitted AuditAction = "dispute_evidence_submitted"
)

// AcceptDispute gives up by's merchant's dispute uuid through the dispute
// service's rule (only one that needs a response).
func (a *Actions) AcceptDispute(ctx context.Context, by Session, uuid, client string) (dispute.Dispute, error) {
	if err := by.May(AnswerDisputes); err != nil {
		return dispute.Dispute{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (dispute.Dispute, Entry, error) {
		d, err := a.Disputes.Accept(ctx, tx, merchant.Principal{MerchantID: by.MerchantID}, dispute.UUIDRequest{UUID: uuid})
		return d, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditDisputeAccepted, Subject: uuid, Client: client}, err
	})
}

// AnswerDispute stages, or with in.Submit submits, evidence for by's
// merchant's dispute uuid.
func (a *Actions) AnswerDispute(ctx context.Context, by Session, uuid string, in dispute.EvidenceInput, client string) (dispute.Dispute, error) {
	if err := by.May(AnswerDisputes); err != nil {
		return dispute.Dispute{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (dispute.Dispute, Entry, error) {
		d, err := a.Disputes.Answer(ctx, tx, merchant.Principal{MerchantID: by.MerchantID}, uuid, in)
		e := Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditDisputeEvidence, Subject: uuid, Client: client}
		if in.Submit {
			e.Action = AuditDisputeSubmitted
		}
		return d, e, err
	})
}
