package contact

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Channels a verification link is sent through.
const (
	ChannelEmail = "email"
	ChannelSMS   = "sms"
)

// Where resend_verification sends a link (resend_to).
const (
	ResendToEmail = "email"
	ResendToPhone = "phone"
)

// tokenBytes is the entropy of a verification link's token; the link is the
// only secret guarding the page, so it is long and single-use.
const tokenBytes = 32

// ResendRequest is the body of POST /v2/contacts/resend_verification.
type ResendRequest struct {
	Email    string `json:"email" doc:"Identifies the contact (case-insensitive)."`
	ResendTo string `json:"resend_to,omitempty" enum:"email,phone" doc:"email (the default) sends the link to the contact's email address; phone sends it by SMS to the contact's phone number, which the contact must have."`
}

// Message is a verification message as the outbox keeps it: the sandbox's
// sender, and the delivery log of the configured one. A Sender reads its To,
// Subject, Body and Channel.
type Message struct {
	ID        string         `json:"id" doc:"The message id (resend_verification answers it as message_id)."`
	Email     string         `json:"email" doc:"The contact's email."`
	Channel   string         `json:"channel" enum:"email,sms"`
	To        string         `json:"to" doc:"The email address or phone number it was sent to."`
	Subject   string         `json:"subject" doc:"The email's subject; empty for an SMS."`
	Body      string         `json:"body" doc:"The text sent (plain text), holding the verification link."`
	Status    DeliveryStatus `json:"status" enum:"pending,sent,failed" doc:"pending until the mail server has answered; sent once it accepted the message (or, in the sandbox without a mail server, at once: the outbox is the delivery); failed when the last attempt failed (error says why; it is retried for about a day)."`
	SentAt    *clock.Time    `json:"sent_at" doc:"When the message was sent; null until then."`
	Error     *string        `json:"error" doc:"Why the last attempt failed; null unless status is failed."`
	CreatedAt clock.Time     `json:"created_at"`
	// merchantID is the merchant whose contact the message goes to.
	merchantID string
}

// ResendVerification sends a contact a new identity-verification link,
// {PublicURL}/verify/{token}, valid for LinkLifetime on the merchant's clock.
// Every earlier link of the contact stops working. The message is written to
// the outbox, which ListMessages reads, in the transaction that issues the
// link; it is delivered once that commits (see outbox).
func (s *Service) ResendVerification(ctx context.Context, tx *store.Tx, p merchant.Principal, r ResendRequest) (Message, error) {
	f := fault.Fields{}
	text(f, "email", &r.Email, maxEmailLen, true)
	oneOf(f, "resend_to", &r.ResendTo, false, ResendToEmail, ResendToPhone)
	if err := f.Err(); err != nil {
		return Message{}, err
	}
	now := s.clock.Of(p)
	c, err := contactByEmail(ctx, tx, p.MerchantID, r.Email, true)
	if err != nil {
		return Message{}, err
	}
	if c.VerifiedAt != nil {
		return Message{}, fault.State("contact %s has already verified their identity", c.Email)
	}
	m := Message{Email: c.Email, Channel: ChannelEmail, To: c.Email, CreatedAt: clock.Time{T: now}}
	if r.ResendTo == ResendToPhone {
		if c.Phone == "" {
			return Message{}, fault.Field("resend_to", "cannot be phone: the contact has no phone number (add one with PUT /v2/contact/update_info)")
		}
		m.Channel, m.To = ChannelSMS, c.Phone
	}
	expires := now.Add(s.LinkLifetime)
	token, err := s.newLink(ctx, tx, p.MerchantID, c.id, now, expires)
	if err != nil {
		return Message{}, err
	}
	var merchantName string
	if err := tx.QueryRowContext(ctx, `SELECT name FROM merchants WHERE id = $1`, p.MerchantID).Scan(&merchantName); err != nil {
		return Message{}, fmt.Errorf("resend verification: %w", err)
	}
	m.Body = messageBody(m.Channel, c.FirstName, merchantName, s.link(token), expires)
	if m.Channel == ChannelEmail {
		m.Subject = verifySubject
	}
	if err := s.writeMessage(ctx, tx, p.MerchantID, c.id, &m); err != nil {
		return Message{}, err
	}
	return m, nil
}

// writeMessage adds m to the outbox with the delivery status its channel's
// sender gives it, and schedules its sending when there is one.
func (s *Service) writeMessage(ctx context.Context, tx *store.Tx, merchantID string, contactID int64, m *Message) error {
	status, why, send := s.outbox.route(m.Channel)
	m.Status, m.merchantID = status, merchantID
	if status == DeliverySent {
		sent := m.CreatedAt
		m.SentAt = &sent
	}
	if why != "" {
		m.Error = &why
	}
	var sentAt *int64
	if m.SentAt != nil {
		ms := m.SentAt.T.UnixMilli()
		sentAt = &ms
	}
	var err error
	m.ID, err = store.InsertWithID(ctx, store.UUIDLen, func(uuid string) (bool, error) {
		return store.OneRow(tx.ExecContext(ctx, `INSERT INTO verification_messages (uuid, merchant_id, contact_id, channel,
			recipient, subject, body, status, sent_at, error, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (merchant_id, uuid) DO NOTHING`,
			uuid, merchantID, contactID, m.Channel, m.To, m.Subject, m.Body, string(m.Status), sentAt, m.Error, m.CreatedAt.T.UnixMilli()))
	})
	if err != nil {
		return fmt.Errorf("send verification message: %w", err)
	}
	if !send {
		return nil
	}
	return s.outbox.schedule(ctx, tx, *m, 1)
}

// newLink replaces the contact's live link with a new one and returns its
// token; only the token's hash is stored.
func (s *Service) newLink(ctx context.Context, tx *store.Tx, merchantID string, contactID int64, now, expires time.Time) (string, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE verification_tokens SET replaced_at = $1
		WHERE merchant_id = $2 AND contact_id = $3 AND replaced_at IS NULL AND used_at IS NULL`,
		now.UnixMilli(), merchantID, contactID); err != nil {
		return "", fmt.Errorf("replace verification link: %w", err)
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("verification token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	// The token's random bits do not collide: its claim is sent, not asked.
	if err := store.SendKey(ctx, tx, store.KeyVerification, hashToken(token), merchantID); err != nil {
		return "", fmt.Errorf("store verification link: %w", err)
	}
	if err := tx.Send(ctx, `INSERT INTO verification_tokens (token_hash, merchant_id, contact_id, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5)`, hashToken(token), merchantID, contactID, expires.UnixMilli(), now.UnixMilli()); err != nil {
		return "", fmt.Errorf("store verification link: %w", err)
	}
	return token, nil
}

// link is the hosted verification page of token.
func (s *Service) link(token string) string {
	return strings.TrimRight(s.PublicURL, "/") + "/verify/" + token
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// wellFormedToken reports whether token could be one payd issued, so that
// anything else is refused without a database read.
func wellFormedToken(token string) bool {
	if len(token) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil
}

func messageBody(channel, firstName, merchantName, link string, expires time.Time) string {
	until := expires.UTC().Format("2 January 2006 15:04 UTC")
	if channel == ChannelSMS {
		return fmt.Sprintf("%s: verify your identity at %s (expires %s)", merchantName, link, until)
	}
	return fmt.Sprintf("Hello %s,\n\n%s asks you to verify your identity. Open this link to continue:\n\n%s\n\n"+
		"The link works once and expires on %s. If you did not expect this message, you can ignore it.\n",
		firstName, merchantName, link, until)
}

const messageColumns = `uuid, (SELECT email FROM contacts c
	WHERE c.merchant_id = verification_messages.merchant_id AND c.id = verification_messages.contact_id), channel, recipient, subject, body,
	status, sent_at, error, created_at`

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var (
		m       Message
		status  string
		sentAt  sql.NullInt64
		why     sql.NullString
		created int64
	)
	if err := row.Scan(&m.ID, &m.Email, &m.Channel, &m.To, &m.Subject, &m.Body, &status, &sentAt, &why, &created); err != nil {
		return Message{}, err
	}
	m.Status, m.CreatedAt = DeliveryStatus(status), clock.Time{T: clock.FromMillis(created)}
	if sentAt.Valid {
		m.SentAt = &clock.Time{T: clock.FromMillis(sentAt.Int64)}
	}
	if why.Valid {
		m.Error = &why.String
	}
	return m, nil
}

// ListMessages returns a page of the merchant's outbox, newest first; with
// lq.Email, only the messages to that contact.
func (s *Service) ListMessages(ctx context.Context, p merchant.Principal, lq ListQuery) (Listed[Message], error) {
	if err := lq.validate(); err != nil {
		return Listed[Message]{}, err
	}
	w := newWhere(p.MerchantID, lq)
	if key := emailKey(lq.Email); key != "" {
		w.add("contact_id IN (SELECT id FROM contacts WHERE merchant_id = $1 AND email_key = ?)", key)
	}
	return list(ctx, s.db.Read(), "verification_messages", messageColumns, w, lq, scanMessage)
}

// Verification is what the hosted verification page shows.
type Verification struct {
	FirstName, LastName string
	MerchantName        string
}

// errNoLink is the one answer for a token that is unknown, replaced, used or
// expired: the page cannot tell them apart, so neither can a guesser.
var errNoLink = fault.NotFoundf("this verification link is not valid: it may have expired or been replaced by a newer one")

// link is a live verification link found by its token.
type liveLink struct {
	Verification
	contactID  int64
	merchantID string
	now        time.Time
}

// findLink returns the live link of token, read on its merchant's clock.
func (s *Service) findLink(ctx context.Context, q store.Querier, token string) (liveLink, error) {
	if !wellFormedToken(token) {
		return liveLink{}, errNoLink
	}
	var (
		l               liveLink
		expires, offset int64
	)
	merchantID, err := store.KeyOwner(ctx, q, store.KeyVerification, hashToken(token))
	if err == nil {
		err = q.QueryRowContext(ctx, `SELECT c.first_name, c.last_name, m.name, t.contact_id, t.merchant_id, t.expires_at, m.clock_offset_ms
			FROM verification_tokens t JOIN contacts c ON c.merchant_id = t.merchant_id AND c.id = t.contact_id
			JOIN merchants m ON m.id = t.merchant_id
			WHERE t.merchant_id = $1 AND t.token_hash = $2 AND t.replaced_at IS NULL AND t.used_at IS NULL`, merchantID, hashToken(token)).
			Scan(&l.FirstName, &l.LastName, &l.MerchantName, &l.contactID, &l.merchantID, &expires, &offset)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return liveLink{}, errNoLink
	}
	if err != nil {
		return liveLink{}, fmt.Errorf("verification link: %w", err)
	}
	l.now = s.clock.At(time.Duration(offset) * time.Millisecond)
	if l.now.UnixMilli() >= expires {
		return liveLink{}, errNoLink
	}
	return l, nil
}

// OpenVerification returns what the page of a live link shows.
func (s *Service) OpenVerification(ctx context.Context, token string) (Verification, error) {
	l, err := s.findLink(ctx, s.db.Read(), token)
	return l.Verification, err
}

// ConfirmVerification records that the contact verified their identity and
// uses the link up: a link works once.
func (s *Service) ConfirmVerification(ctx context.Context, token string) (Verification, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (Verification, error) {
		l, err := s.findLink(ctx, tx, token)
		if err != nil {
			return Verification{}, err
		}
		// The conditional update decides a race between two submits of one link.
		ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE verification_tokens SET used_at = $1
			WHERE merchant_id = $2 AND token_hash = $3 AND replaced_at IS NULL AND used_at IS NULL`,
			l.now.UnixMilli(), l.merchantID, hashToken(token)))
		if err != nil {
			return Verification{}, fmt.Errorf("use verification link: %w", err)
		}
		if !ok {
			return Verification{}, errNoLink
		}
		if _, err := tx.ExecContext(ctx, `UPDATE contacts SET verified_at = COALESCE(verified_at, $1), updated_at = $1
			WHERE id = $2 AND merchant_id = $3`, l.now.UnixMilli(), l.contactID, l.merchantID); err != nil {
			return Verification{}, fmt.Errorf("verify contact: %w", err)
		}
		return l.Verification, nil
	})
}
