package webhook

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// Webhook endpoints (CONTRACT §21, §25): receivers a merchant registers for
// every event whose type one of its enabled_events matches, beside each
// record's own endpoint_url. Deliveries there are signed with the
// endpoint's own secret and carry no Authorization.

// EndpointStatus is an endpoint's state.
type EndpointStatus string

const (
	EndpointEnabled  EndpointStatus = "enabled"
	EndpointDisabled EndpointStatus = "disabled"
)

// EventEndpointDisabled is the event an endpoint's disabling sends to the
// merchant's other endpoints.
const EventEndpointDisabled = "webhook_endpoint.disabled"

// Bounds of endpoints.
const (
	// MaxEndpoints bounds a merchant's endpoints.
	MaxEndpoints = 16
	// maxEnabledEvents bounds an endpoint's patterns.
	maxEnabledEvents = 64
	// maxDescriptionLen bounds an endpoint's description.
	maxDescriptionLen = 500
	// SecretOverlap is how long a rotated-out secret keeps signing beside the new one.
	SecretOverlap = 24 * time.Hour
)

// Endpoint is a webhook endpoint as GET /v2/webhook_endpoints lists it (never its secret).
type Endpoint struct {
	ID             string         `json:"id" example:"we_0123456789ABCDEF"`
	URL            string         `json:"url" doc:"Receiver of the events (https in production)." example:"https://shop.example/payd-events"`
	EnabledEvents  []string       `json:"enabled_events" doc:"Event types sent here: exact types, prefixes ending in * (payout.*), or * for every type." example:"[\"payin.*\"]"`
	Description    string         `json:"description"`
	Status         EndpointStatus `json:"status" enum:"enabled,disabled"`
	DisabledReason *string        `json:"disabled_reason" doc:"Why payd or the merchant disabled it; null while enabled."`
	CreatedAt      clock.Time     `json:"created_at"`
	UpdatedAt      clock.Time     `json:"updated_at"`
}

// CreatedEndpoint is a new endpoint with its secret, shown only here.
type CreatedEndpoint struct {
	Endpoint
	Secret string `json:"secret" doc:"The signing secret (whsec_…): shown only in this answer." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
}

// RotatedSecret is the answer of a rotation.
type RotatedSecret struct {
	ID                      string     `json:"id"`
	Secret                  string     `json:"secret" doc:"The new signing secret (whsec_…)."`
	PreviousSecretExpiresAt clock.Time `json:"previous_secret_expires_at" doc:"Until then the old secret signs beside the new one (both signatures in webhook-signature)."`
}

// DeletedEndpoint is the answer of a delete.
type DeletedEndpoint struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// EndpointRequest creates an endpoint.
type EndpointRequest struct {
	URL           string   `json:"url" doc:"https in production; http and private addresses only in the sandbox." example:"https://shop.example/payd-events"`
	EnabledEvents []string `json:"enabled_events" doc:"Event types: exact, a prefix ending in * or *." example:"[\"payin.*\"]"`
	Description   string   `json:"description,omitempty"`
}

// EndpointUpdate changes an endpoint; members left out stay.
type EndpointUpdate struct {
	ID            string          `json:"id" example:"we_0123456789ABCDEF"`
	URL           *string         `json:"url,omitempty"`
	EnabledEvents []string        `json:"enabled_events,omitempty"`
	Description   *string         `json:"description,omitempty"`
	Status        *EndpointStatus `json:"status,omitempty" enum:"enabled,disabled" doc:"disabled stops deliveries; enabled starts them again."`
}

// EndpointID names an endpoint.
type EndpointID struct {
	ID string `json:"id" example:"we_0123456789ABCDEF"`
}

// CheckURL refuses an endpoint url the deployment may not call, naming field.
func (p Policy) CheckURL(field, raw string) error {
	if raw == "" {
		return fault.Field(field, "is required")
	}
	return p.checkURL(field, raw)
}

// checkPatterns refuses an enabled_events list that is empty, too long or
// holds something not a type pattern, and returns it without repeats.
func checkPatterns(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fault.Field("enabled_events", `is required: event types, prefixes such as "payin.*", or ["*"]`)
	}
	if len(patterns) > maxEnabledEvents {
		return nil, fault.Field("enabled_events", fmt.Sprintf("has more than %d entries", maxEnabledEvents))
	}
	var out []string
	for _, p := range patterns {
		if !validPattern(p) {
			return nil, fault.Field("enabled_events", fmt.Sprintf("%q is not an event type, a prefix ending in * (payout.*) or *", p))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func checkDescription(s string) error {
	if len(s) > maxDescriptionLen {
		return fault.Field("description", fmt.Sprintf("is longer than %d characters", maxDescriptionLen))
	}
	return nil
}

// newSecret is a signing secret: "whsec_" and 32 random bytes in base64.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// CreateEndpoint registers a webhook endpoint of merchantID in tx; now is
// the merchant's time.
func (d *Dispatcher) CreateEndpoint(ctx context.Context, tx *store.Tx, merchantID string, req EndpointRequest, now time.Time) (CreatedEndpoint, error) {
	f := fault.Fields{}
	f.AddErr(d.policy.CheckURL("url", req.URL))
	patterns, err := checkPatterns(req.EnabledEvents)
	f.AddErr(err)
	f.AddErr(checkDescription(req.Description))
	if err := f.Err(); err != nil {
		return CreatedEndpoint{}, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1`, merchantID).Scan(&n); err != nil {
		return CreatedEndpoint{}, fmt.Errorf("count webhook endpoints: %w", err)
	}
	if n >= MaxEndpoints {
		return CreatedEndpoint{}, fault.Field("url", fmt.Sprintf("the merchant has %d webhook endpoints already, the most it may have", MaxEndpoints))
	}
	ep := Endpoint{ID: "we_" + store.RandomID(16), URL: req.URL, EnabledEvents: patterns, Description: req.Description, Status: EndpointEnabled,
		CreatedAt: clock.Time{T: now}, UpdatedAt: clock.Time{T: now}}
	secret := newSecret()
	list, _ := json.Marshal(patterns)
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (merchant_id, id, url, description, enabled_events, status, secret, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'enabled', $6, $7, $7)`, merchantID, ep.ID, ep.URL, ep.Description, string(list), secret, now.UnixMilli()); err != nil {
		return CreatedEndpoint{}, fmt.Errorf("create webhook endpoint: %w", err)
	}
	if err := writePatterns(ctx, tx, merchantID, ep.ID, patterns); err != nil {
		return CreatedEndpoint{}, err
	}
	return CreatedEndpoint{Endpoint: ep, Secret: secret}, nil
}

// writePatterns replaces endpoint id's rows of webhook_endpoint_events.
func writePatterns(ctx context.Context, tx *store.Tx, merchantID, id string, patterns []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoint_events WHERE merchant_id = $1 AND endpoint_id = $2`, merchantID, id); err != nil {
		return fmt.Errorf("write endpoint patterns: %w", err)
	}
	for _, p := range patterns {
		prefix, wildcard := strings.CutSuffix(p, "*")
		w := 0
		if wildcard {
			w = 1
		}
		if err := tx.Send(ctx, `INSERT INTO webhook_endpoint_events (merchant_id, endpoint_id, pattern, prefix, wildcard) VALUES ($1, $2, $3, $4, $5)`,
			merchantID, id, p, prefix, w); err != nil {
			return fmt.Errorf("write endpoint patterns: %w", err)
		}
	}
	return nil
}

// endpointColumns are what scanEndpoint reads.
const endpointColumns = `id, url, enabled_events, description, status, disabled_reason, created_at, updated_at`

func scanEndpoint(row interface{ Scan(...any) error }) (Endpoint, error) {
	var ep Endpoint
	var list string
	var reason sql.NullString
	var created, updated int64
	if err := row.Scan(&ep.ID, &ep.URL, &list, &ep.Description, &ep.Status, &reason, &created, &updated); err != nil {
		return Endpoint{}, err
	}
	if err := json.Unmarshal([]byte(list), &ep.EnabledEvents); err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %s enabled_events: %w", ep.ID, err)
	}
	if reason.Valid {
		ep.DisabledReason = &reason.String
	}
	ep.CreatedAt, ep.UpdatedAt = clock.Time{T: clock.FromMillis(created)}, clock.Time{T: clock.FromMillis(updated)}
	return ep, nil
}

// Endpoints lists merchantID's webhook endpoints, oldest first.
func (d *Dispatcher) Endpoints(ctx context.Context, merchantID string) ([]Endpoint, error) {
	rows, err := d.db.Read().QueryContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE merchant_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	defer rows.Close()
	out := []Endpoint{}
	for rows.Next() {
		ep, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, rows.Err()
}

// Endpoint reads one of merchantID's endpoints.
func (d *Dispatcher) Endpoint(ctx context.Context, q store.Querier, merchantID, id string) (Endpoint, error) {
	ep, err := scanEndpoint(q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if store.IsNoRows(err) {
		return Endpoint{}, fault.NotFoundf("no webhook endpoint %s", id)
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("read webhook endpoint %s: %w", id, err)
	}
	return ep, nil
}

// checkID refuses an endpoint id that is missing or too long to be one.
func checkID(id string) error {
	if id == "" || len(id) > 64 {
		return fault.Field("id", "is required: a webhook endpoint's id")
	}
	return nil
}

// UpdateEndpoint changes merchantID's endpoint in tx; now is the merchant's time.
func (d *Dispatcher) UpdateEndpoint(ctx context.Context, tx *store.Tx, merchantID string, req EndpointUpdate, now time.Time) (Endpoint, error) {
	f := fault.Fields{}
	f.AddErr(checkID(req.ID))
	if req.URL != nil {
		f.AddErr(d.policy.CheckURL("url", *req.URL))
	}
	var patterns []string
	if req.EnabledEvents != nil {
		var err error
		patterns, err = checkPatterns(req.EnabledEvents)
		f.AddErr(err)
	}
	if req.Description != nil {
		f.AddErr(checkDescription(*req.Description))
	}
	if req.Status != nil && *req.Status != EndpointEnabled && *req.Status != EndpointDisabled {
		f.Add("status", "must be enabled or disabled")
	}
	if err := f.Err(); err != nil {
		return Endpoint{}, err
	}
	ep, err := d.Endpoint(ctx, tx, merchantID, req.ID)
	if err != nil {
		return Endpoint{}, err
	}
	if req.URL != nil {
		ep.URL = *req.URL
	}
	if patterns != nil {
		ep.EnabledEvents = patterns
		if err := writePatterns(ctx, tx, merchantID, ep.ID, patterns); err != nil {
			return Endpoint{}, err
		}
	}
	if req.Description != nil {
		ep.Description = *req.Description
	}
	if req.Status != nil && *req.Status != ep.Status {
		ep.Status = *req.Status
		ep.DisabledReason = nil
		if ep.Status == EndpointDisabled {
			reason := "disabled by the merchant"
			ep.DisabledReason = &reason
		}
	}
	ep.UpdatedAt = clock.Time{T: now}
	list, _ := json.Marshal(ep.EnabledEvents)
	// Enabled again, its failures start over.
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $1, enabled_events = $2, description = $3, status = $4, disabled_reason = $5,
		failing_since = CASE WHEN $4 = 'enabled' AND status = 'disabled' THEN NULL ELSE failing_since END, updated_at = $6
		WHERE merchant_id = $7 AND id = $8`, ep.URL, string(list), ep.Description, string(ep.Status), ep.DisabledReason, now.UnixMilli(), merchantID, ep.ID); err != nil {
		return Endpoint{}, fmt.Errorf("update webhook endpoint %s: %w", ep.ID, err)
	}
	return ep, nil
}

// DeleteEndpoint removes merchantID's endpoint in tx; its deliveries still
// pending fail when they come up (no endpoint signs them).
func (d *Dispatcher) DeleteEndpoint(ctx context.Context, tx *store.Tx, merchantID string, req EndpointID) (DeletedEndpoint, error) {
	if err := checkID(req.ID); err != nil {
		return DeletedEndpoint{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoint_events WHERE merchant_id = $1 AND endpoint_id = $2`, merchantID, req.ID); err != nil {
		return DeletedEndpoint{}, fmt.Errorf("delete webhook endpoint %s: %w", req.ID, err)
	}
	ok, err := store.OneRow(tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2`, merchantID, req.ID))
	if err != nil {
		return DeletedEndpoint{}, fmt.Errorf("delete webhook endpoint %s: %w", req.ID, err)
	}
	if !ok {
		return DeletedEndpoint{}, fault.NotFoundf("no webhook endpoint %s", req.ID)
	}
	return DeletedEndpoint{ID: req.ID, Deleted: true}, nil
}

// RotateSecret gives merchantID's endpoint a new secret in tx; the current
// one keeps signing beside it for SecretOverlap (on the real clock). now
// is the merchant's time, offset its clock's offset.
func (d *Dispatcher) RotateSecret(ctx context.Context, tx *store.Tx, merchantID string, req EndpointID, offset time.Duration) (RotatedSecret, error) {
	if err := checkID(req.ID); err != nil {
		return RotatedSecret{}, err
	}
	real := d.clock.Now()
	expires := real.Add(SecretOverlap)
	secret := newSecret()
	ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $1, secret = $2, updated_at = $3
		WHERE merchant_id = $4 AND id = $5`, expires.UnixMilli(), secret, real.Add(offset).UnixMilli(), merchantID, req.ID))
	if err != nil {
		return RotatedSecret{}, fmt.Errorf("rotate webhook endpoint %s: %w", req.ID, err)
	}
	if !ok {
		return RotatedSecret{}, fault.NotFoundf("no webhook endpoint %s", req.ID)
	}
	return RotatedSecret{ID: req.ID, Secret: secret, PreviousSecretExpiresAt: clock.Time{T: expires.Add(offset).Truncate(time.Millisecond)}}, nil
}

// signingKeys are the secrets an endpoint's delivery is signed with now:
// its own, and the one it rotated out of until that one expires. ok is
// false when the endpoint is gone or disabled.
func (d *Dispatcher) signingKeys(ctx context.Context, merchantID, id string) (secret, previous string, ok bool, err error) {
	var status string
	var prev sql.NullString
	var expires sql.NullInt64
	err = d.db.Read().QueryRowContext(ctx, `SELECT status, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints
		WHERE merchant_id = $1 AND id = $2`, merchantID, id).Scan(&status, &secret, &prev, &expires)
	if store.IsNoRows(err) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	if prev.Valid && expires.Valid && d.clock.Now().UnixMilli() < expires.Int64 {
		previous = prev.String
	}
	return secret, previous, status == string(EndpointEnabled), nil
}

// EndpointDeliveries lists the latest deliveries to merchantID's endpoint
// id, newest first, with their attempts (the endpoint's delivery log).
func (d *Dispatcher) EndpointDeliveries(ctx context.Context, merchantID, id string, limit int) ([]Delivery, error) {
	return d.listed(ctx, merchantID, `SELECT `+deliveryColumns+` FROM webhook_events WHERE merchant_id = $1 AND endpoint_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, merchantID, id, min(max(limit, 1), maxListed))
}
