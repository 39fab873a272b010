package portal

import (
	"context"
	"strings"

	"payd/internal/dispute"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/transfer"
	"payd/internal/webhook"
)

// ActionDeps are the services whose records portal users change.
type ActionDeps struct {
	Merchants *merchant.Service
	Payouts   *payout.Service
	Webhooks  *webhook.Dispatcher
	Policies  *policy.Service
	Transfers *transfer.Service
	// Settlements decides beneficiary changes.
	Settlements *settlement.Service
	// Disputes takes the answers to card disputes.
	Disputes *dispute.Service
}

// Actions are what a signed-in portal user does to records other services
// own: payouts, apps and keys, the signing secret, webhook deliveries, the
// embedding origins. Every entry point of the portal (its pages, a JSON API
// to come) does them here, so each is refused to a role that may not
// (Permission; deciding a payout is refused by the payout service itself)
// and commits with its audit entry, or not at all.
type Actions struct {
	ActionDeps
	portal *Service
}

// Actions returns the portal's actions on d's records.
func (s *Service) Actions(d ActionDeps) *Actions {
	return &Actions{ActionDeps: d, portal: s}
}

// decider is by as the payout service knows a decider: by user id, the one
// identity of a maker and a checker.
func decider(by Session) payout.Decider {
	return payout.Decider{UserID: by.ID, Email: by.Email, Role: by.Role}
}

// CreatePayout makes a payout from account p of by's merchant through the
// same payout service as the API. Its maker is by, recorded by user id (and
// shown by email as approval.created_by), who then may not decide it.
func (a *Actions) CreatePayout(ctx context.Context, by Session, p merchant.Principal, req payout.Request, client string) (payout.Payout, error) {
	if err := by.May(CreatePayouts); err != nil {
		return payout.Payout{}, err
	}
	if p.MerchantID != by.MerchantID {
		return payout.Payout{}, fault.NotFoundf("the merchant has no such account")
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (payout.Payout, Entry, error) {
		po, err := a.Payouts.CreateBy(ctx, tx, p, req, payout.Maker{Label: by.Email, UserID: by.ID})
		return po, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditPayoutCreated, Subject: po.UUID,
			Detail: po.TotalAmount.String() + " " + po.Currency, Client: client, At: po.CreatedAt.T}, err
	})
}

// PutSettlementConfig sets the settlement frequency and beneficiary of
// by's merchant's account p through the same settlement service as PUT
// /v2/settlements/config (a guarded beneficiary change waits for approval
// there).
func (a *Actions) PutSettlementConfig(ctx context.Context, by Session, p merchant.Principal, req settlement.ConfigRequest, client string) (settlement.Config, error) {
	if err := by.May(ChangeSettlements); err != nil {
		return settlement.Config{}, err
	}
	if p.MerchantID != by.MerchantID {
		return settlement.Config{}, fault.NotFoundf("the merchant has no such account")
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (settlement.Config, Entry, error) {
		c, err := a.Settlements.PutConfigBy(ctx, tx, p, req, settlement.Requester{Label: by.Email, UserID: by.ID})
		return c, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditSettlementConfigChanged, Subject: p.Currency,
			Detail: string(req.Frequency), Client: client}, err
	})
}

// MayDecide is nil when by may decide the payout uuid (payout.Service.MayDecide).
func (a *Actions) MayDecide(ctx context.Context, by Session, uuid string) error {
	return a.Payouts.MayDecide(ctx, by.MerchantID, uuid, decider(by))
}

// Decide approves or rejects (with reason) by's merchant's held payout uuid
// through the payout service's one decision rule, which refuses a role
// that may not decide and the payout's own maker.
func (a *Actions) Decide(ctx context.Context, by Session, uuid string, approve bool, reason, client string) (payout.Payout, error) {
	d := payout.Decision{MerchantID: by.MerchantID, PayoutUUID: uuid, Approve: approve, Reason: reason, By: decider(by)}
	return audited(ctx, a.portal, func(tx *store.Tx) (payout.Payout, Entry, error) {
		po, err := a.Payouts.Decide(ctx, tx, d)
		e := Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditPayoutApproved, Subject: uuid, Client: client, At: po.UpdatedAt.T}
		if !approve {
			e.Action, e.Detail = AuditPayoutRejected, strings.TrimSpace(reason)
		}
		return po, e, err
	})
}

// CreateApp adds an app (its keys) for by's merchant's account in currency,
// with access (its scopes, expiry and allowed addresses; CONTRACT §23);
// its secret key is in the answer only.
func (a *Actions) CreateApp(ctx context.Context, by Session, currency string, access merchant.Access, client string) (merchant.NewApp, error) {
	if err := by.May(CreateApps); err != nil {
		return merchant.NewApp{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (merchant.NewApp, Entry, error) {
		app, err := a.Merchants.CreateAppWith(ctx, tx, by.MerchantID, currency, access)
		return app, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditAppCreated, Subject: app.AppID, Detail: app.Currency, Client: client}, err
	})
}

// RevokeApp revokes by's merchant's app appID: its keys stop working.
func (a *Actions) RevokeApp(ctx context.Context, by Session, appID, client string) error {
	if err := by.May(RevokeApps); err != nil {
		return err
	}
	_, err := audited(ctx, a.portal, func(tx *store.Tx) (struct{}, Entry, error) {
		return struct{}{}, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditAppRevoked, Subject: appID, Client: client},
			a.Merchants.RevokeAppIn(ctx, tx, by.MerchantID, appID)
	})
	return err
}

// SigningSecret is by's merchant's webhook signing secret.
func (a *Actions) SigningSecret(ctx context.Context, by Session) (string, error) {
	if err := by.May(SeeSigningSecret); err != nil {
		return "", err
	}
	return a.Merchants.WebhookSecret(ctx, by.MerchantID, false)
}

// RotateSigningSecret replaces by's merchant's webhook signing secret.
func (a *Actions) RotateSigningSecret(ctx context.Context, by Session, client string) error {
	if err := by.May(RotateSigningSecret); err != nil {
		return err
	}
	_, err := audited(ctx, a.portal, func(tx *store.Tx) (string, Entry, error) {
		secret, err := a.Merchants.WebhookSecretIn(ctx, tx, by.MerchantID, true)
		return secret, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditSecretRotated, Subject: by.MerchantID, Client: client}, err
	})
	return err
}

// ResendWebhook queues by's merchant's webhook event eventID for another
// attempt now.
func (a *Actions) ResendWebhook(ctx context.Context, by Session, eventID, client string) error {
	if err := by.May(ResendWebhooks); err != nil {
		return err
	}
	_, err := audited(ctx, a.portal, func(tx *store.Tx) (webhook.Delivery, Entry, error) {
		dl, err := a.Webhooks.Resend(ctx, tx, by.MerchantID, eventID)
		return dl, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditWebhookResent, Subject: eventID, Client: client, At: dl.CreatedAt.T}, err
	})
	return err
}

// SetEmbedOrigins replaces the origins that may frame by's merchant's
// Payment Gateway 3 pages (CONTRACT §11).
func (a *Actions) SetEmbedOrigins(ctx context.Context, by Session, origins []string, client string) error {
	if err := by.May(SetEmbedOrigins); err != nil {
		return err
	}
	_, err := audited(ctx, a.portal, func(tx *store.Tx) ([]string, Entry, error) {
		stored, err := merchant.WriteEmbedOrigins(ctx, tx, by.MerchantID, origins)
		return stored, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditEmbedOriginsUpdated, Subject: by.MerchantID,
			Detail: strings.Join(stored, ","), Client: client}, err
	})
	return err
}
