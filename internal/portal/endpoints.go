package portal

import (
	"context"
	"time"

	"payd/internal/store"
	"payd/internal/webhook"
)

// Webhook endpoints from the developers page (CONTRACT §21, §25): the same
// webhook service as /v2/webhook_endpoints and /v2/events/replay, each
// change audited in its transaction. Admins and developers manage them
// (CreateApps: they hold the app keys, which can do the same by the API).

// The audit log's entries of the endpoints' changes.
const (
	AuditEndpointCreated       AuditAction = "webhook_endpoint_created"
	AuditEndpointSecretRotated AuditAction = "webhook_endpoint_secret_rotated"
	AuditEndpointDisabled      AuditAction = "webhook_endpoint_disabled"
	AuditEndpointEnabled       AuditAction = "webhook_endpoint_enabled"
	AuditEventsReplayed        AuditAction = "events_replayed"
)

// CreateEndpoint registers a webhook endpoint of by's merchant; its
// secret is in the answer only.
func (a *Actions) CreateEndpoint(ctx context.Context, by Session, req webhook.EndpointRequest, client string) (webhook.CreatedEndpoint, error) {
	if err := by.May(CreateApps); err != nil {
		return webhook.CreatedEndpoint{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (webhook.CreatedEndpoint, Entry, error) {
		now, err := a.portal.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return webhook.CreatedEndpoint{}, Entry{}, err
		}
		ep, err := a.Webhooks.CreateEndpoint(ctx, tx, by.MerchantID, req, now.Truncate(time.Millisecond))
		return ep, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditEndpointCreated, Subject: ep.ID, Detail: req.URL, Client: client}, err
	})
}

// RotateEndpointSecret gives by's merchant's endpoint id a new secret; the
// old one signs beside it for a day.
func (a *Actions) RotateEndpointSecret(ctx context.Context, by Session, id, client string) (webhook.RotatedSecret, error) {
	if err := by.May(CreateApps); err != nil {
		return webhook.RotatedSecret{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (webhook.RotatedSecret, Entry, error) {
		now, err := a.portal.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return webhook.RotatedSecret{}, Entry{}, err
		}
		// The merchant clock's offset: the endpoint's updated_at is on it.
		rs, err := a.Webhooks.RotateSecret(ctx, tx, by.MerchantID, webhook.EndpointID{ID: id}, now.Sub(a.portal.clock.System()))
		return rs, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditEndpointSecretRotated, Subject: id, Client: client}, err
	})
}

// SetEndpointStatus disables (or enables again) by's merchant's endpoint id.
func (a *Actions) SetEndpointStatus(ctx context.Context, by Session, id string, status webhook.EndpointStatus, client string) error {
	if err := by.May(CreateApps); err != nil {
		return err
	}
	action := AuditEndpointDisabled
	if status == webhook.EndpointEnabled {
		action = AuditEndpointEnabled
	}
	_, err := audited(ctx, a.portal, func(tx *store.Tx) (webhook.Endpoint, Entry, error) {
		now, err := a.portal.clock.Read(ctx, tx, by.MerchantID)
		if err != nil {
			return webhook.Endpoint{}, Entry{}, err
		}
		ep, err := a.Webhooks.UpdateEndpoint(ctx, tx, by.MerchantID, webhook.EndpointUpdate{ID: id, Status: &status}, now.Truncate(time.Millisecond))
		return ep, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: action, Subject: id, Client: client, At: now}, err
	})
	return err
}

// ReplayEvents queues the events of r's range again for its endpoint.
func (a *Actions) ReplayEvents(ctx context.Context, by Session, r webhook.Replay, client string) (webhook.Replayed, error) {
	if err := by.May(ResendWebhooks); err != nil {
		return webhook.Replayed{}, err
	}
	return audited(ctx, a.portal, func(tx *store.Tx) (webhook.Replayed, Entry, error) {
		res, err := a.Webhooks.ReplayEvents(ctx, tx, by.MerchantID, r)
		return res, Entry{MerchantID: by.MerchantID, Actor: by.Email, Action: AuditEventsReplayed, Subject: r.EndpointID,
			Detail: r.From.UTC().Format(time.RFC3339) + ".." + r.To.UTC().Format(time.RFC3339), Client: client}, err
	})
}
