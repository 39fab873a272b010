package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// Target is where a source's notifications go, as the merchant configured
// it ("webhook_notification", "payment_request_notification", ...).
type Target struct {
	EndpointURL         string `json:"endpoint_url" doc:"Receiver of the notifications (https in production)." example:"https://shop.example/payd-hooks"`
	AuthorizationHeader string `json:"authorization_header,omitempty" doc:"Sent verbatim as the Authorization header of every delivery." example:"Basic c2hvcDpzZWNyZXQ="`
}

// IsZero reports whether no endpoint is configured (nothing is sent).
func (t Target) IsZero() bool { return t.EndpointURL == "" }

// Policy says which endpoints a deployment may call.
type Policy struct {
	// AllowPrivate permits http and private, loopback and link-local
	// addresses (the sandbox); production refuses them.
	AllowPrivate bool
}

// Bounds of a target.
const (
	maxURLLen  = 2048
	maxAuthLen = 1024
)

// Validate checks a target when a merchant configures it; field names the
// request member holding the target ("webhook_notification"), or "" when
// the target's members are at the top of the body. Addresses that a host name
// resolves to are checked again when dialling, so a DNS answer that changes
// later cannot reach a private address.
func (p Policy) Validate(field string, t Target) error {
	name, authName := member(field, "endpoint_url"), member(field, "authorization_header")
	if t.IsZero() {
		if t.AuthorizationHeader != "" {
			return fault.Field(name, "is required when authorization_header is set")
		}
		return nil
	}
	if len(t.AuthorizationHeader) > maxAuthLen || strings.ContainsAny(t.AuthorizationHeader, "\r\n\x00") {
		if len(t.EndpointURL) <= maxURLLen {
			return fault.Field(authName, fmt.Sprintf("must be one line of at most %d characters", maxAuthLen))
		}
	}
	return p.checkURL(name, t.EndpointURL)
}

// checkURL refuses a receiver's url, in member name, that the deployment
// may not call.
func (p Policy) checkURL(name, raw string) error {
	if len(raw) > maxURLLen {
		return fault.Field(name, fmt.Sprintf("is longer than %d characters", maxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fault.Field(name, "must be an absolute http(s) URL without credentials")
	}
	if p.AllowPrivate {
		return nil
	}
	if u.Scheme != "https" {
		return fault.Field(name, "must use https")
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return fault.Field(name, "must not point at this machine (localhost)")
	}
	if ip, err := netip.ParseAddr(host); err == nil && !publicAddr(ip) {
		return fault.Field(name, fmt.Sprintf("must not point at a private, loopback or link-local address (%s)", ip))
	}
	return nil
}

// member names a nested request member ("webhook_notification.endpoint_url").
func member(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// publicAddr reports whether ip is a routable public address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() &&
		!ip.IsInterfaceLocalMulticast() && !ip.IsMulticast() && !ip.IsUnspecified() && !sharedOrReserved(ip)
}

// sharedOrReserved covers ranges the netip predicates miss: carrier-grade NAT
// (100.64.0.0/10), 0.0.0.0/8, the benchmarking and documentation ranges, and
// 240.0.0.0/4.
func sharedOrReserved(ip netip.Addr) bool {
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// Event is one notification to send.
type Event struct {
	MerchantID string
	// Type is sent as X-Event-Type ("payin.received", "payout.rejected", "ping").
	Type string
	// RecordUUID is the record the event is about; the delivery log is looked up by it.
	RecordUUID string
	Target     Target
	// Payload is the record exactly as its detail endpoint returns it.
	Payload any
	At      time.Time
}

// maxBodyBytes bounds an event body.
const maxBodyBytes = 4 << 20

// Emit writes ev in tx: to the events log (GET /v2/events and its stream),
// to the outbox for its record's own target (when it has one), and to the
// outbox for every enabled webhook endpoint of the merchant whose
// enabled_events match its type (CONTRACT §21). It is delivered if and only
// if tx commits. It returns the event's id: the webhook-id of every
// delivery of it.
func (d *Dispatcher) Emit(ctx context.Context, tx *store.Tx, ev Event) (string, error) {
	body, at, err := d.encode(ev)
	if err != nil {
		return "", err
	}
	id := newEventID()
	if err := d.keep(ctx, tx, id, ev, body, at); err != nil {
		return "", fmt.Errorf("emit %s: %w", ev.Type, err)
	}
	if ev.Target.IsZero() {
		return id, nil
	}
	dl, err := d.emit(ctx, tx, id, ev, body, at)
	return dl.ID, err
}

// newEventID is a new event's id: twenty random base-36 characters (103
// bits), so no two events share one; if two ever did, the insert would
// fail the transaction, never overwrite.
func newEventID() string { return "msg_" + store.RandomID(20) }

// encode is ev's body and the instant it is stamped with.
func (d *Dispatcher) encode(ev Event) ([]byte, time.Time, error) {
	body, err := json.Marshal(ev.Payload)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("emit %s: %w", ev.Type, err)
	}
	if len(body) > maxBodyBytes {
		return nil, time.Time{}, fmt.Errorf("emit %s: body of %d bytes is over the %d byte bound", ev.Type, len(body), maxBodyBytes)
	}
	at := ev.At
	if at.IsZero() {
		at = d.clock.Now()
	}
	return body, at, nil
}

// emit writes the event id to the outbox for ev's own target and returns
// it as GET /v2/webhooks/deliveries shows it once tx commits, but for its
// next_attempt_at, which is on the real clock here (the log shows it on
// the merchant's).
func (d *Dispatcher) emit(ctx context.Context, tx *store.Tx, id string, ev Event, body []byte, at time.Time) (Delivery, error) {
	now := d.clock.Now().UnixMilli()
	// The insert is sent without waiting for its answer (store.Tx.Send): an
	// event costs no round trip of its own.
	// seq numbers events in the order they are written (inRecordOrder):
	// PostgreSQL's identity column does; SQLite, with its one writer, takes
	// the largest plus one.
	seqColumn, seqValue := "", ""
	if tx.DB().OneWriter() {
		seqColumn, seqValue = ", seq", ", (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_events)"
	}
	// On SQLite the seq subquery spans merchants: SQLite is never distributed.
	insert := `INSERT INTO webhook_events (id, merchant_id, event_type, record_uuid, endpoint_url,
		authorization_header, body, status, next_attempt_at, created_at, updated_at` + seqColumn
	values := `VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $8` + seqValue
	args := []any{id, ev.MerchantID, ev.Type, ev.RecordUUID, ev.Target.EndpointURL, ev.Target.AuthorizationHeader, body, now, at.UnixMilli()}
	if leaseEnd, ok := d.birthLease(tx.DB(), ev.Target.EndpointURL, now); ok {
		// Handed to this process's dispatcher at birth (handoff.go).
		c := claimed{id: id, eventID: id, merchantID: ev.MerchantID, eventType: ev.Type, endpoint: ev.Target.EndpointURL, auth: ev.Target.AuthorizationHeader, body: body}
		type born struct {
			leased bool
			c      claimed
		}
		sent, err := store.SendRowLate(ctx, tx, insert+`, locked_until) `+values+`, `+leasedIfFirst+`)`+bornLeased,
			append(args, leaseEnd), func(row store.Row) (born, error) {
				b := born{c: c}
				err := row.Scan(&b.leased, &b.c.secret, &b.c.clockOffsetMS)
				return b, err
			})
		if err != nil {
			return Delivery{}, fmt.Errorf("emit %s: %w", ev.Type, err)
		}
		tx.AfterCommit(func() {
			b, err := sent.Get()
			switch {
			case err == nil && b.leased:
				d.handOff(b.c, leaseEnd)
			case err == nil:
				d.wakeFor(c.endpoint)
			default: // leased or not, a claim finds it once any lease ends
				d.log.Error("webhook event written without its answer", "event_id", c.id)
			}
		})
	} else {
		if err := tx.Send(ctx, insert+`) `+values+`)`, args...); err != nil {
			return Delivery{}, fmt.Errorf("emit %s: %w", ev.Type, err)
		}
		tx.AfterCommit(func() { d.wakeFor(ev.Target.EndpointURL) })
	}
	return Delivery{ID: id, EventType: ev.Type, UUID: ev.RecordUUID, EndpointURL: ev.Target.EndpointURL, Status: Pending,
		NextAttemptAt: &clock.Time{T: clock.FromMillis(now)}, CreatedAt: clock.Time{T: clock.FromMillis(at.UnixMilli())},
		Attempts: []Attempt{}}, nil
}
