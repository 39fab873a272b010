package contact

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Sender delivers a message (its To, Subject, Body and Channel) to its
// recipient. Send must return by ctx's deadline: the outbox schedules the
// next attempt on the assumption that this one has ended by then.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// DeliveryStatus is where a message's delivery stands: the outcome of its
// last finished attempt.
type DeliveryStatus string

const (
	// DeliveryPending: handed to the sender, no attempt has finished yet.
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySent: accepted by the mail server, or kept in the sandbox
	// outbox, which is then the delivery.
	DeliverySent DeliveryStatus = "sent"
	// DeliveryFailed: the last attempt failed (Message.Error says why); a
	// retry may still be due.
	DeliveryFailed DeliveryStatus = "failed"
)

// Why a message that no sender can carry is recorded failed in production.
const (
	errNoEmailSender = "no email sender configured (set --smtp-url)"
	errNoSMSSender   = "no SMS sender configured"
)

// verifySubject is the subject of every verification email.
const verifySubject = "Verify your identity"

// Delivery says how a Service delivers verification messages (CONTRACT §8).
type Delivery struct {
	// Sandbox keeps a message for which no sender is configured in the
	// outbox, which is then its delivery; in production such a message is
	// recorded failed.
	Sandbox bool
	// Email sends email; nil when no sender is configured.
	Email Sender
	// Queue runs the retries; it is required with Email.
	Queue *job.Queue
	// Timeout bounds one attempt, dial to QUIT (default 10 s).
	Timeout time.Duration
	// RetrySchedule is the delay before each retry (default 1m, 5m, 30m, 2h,
	// 6h, 12h); its length bounds the retries.
	RetrySchedule []time.Duration
}

// defaultRetrySchedule spreads the retries of an email over about a day,
// long enough to ride out a mail server's outage.
var defaultRetrySchedule = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}

const defaultSendTimeout = 10 * time.Second

// jobSendMessage is the job that makes one attempt at sending a message.
var jobSendMessage = job.NewKind[sendJob]("contact.send_message")

// sendJob is the payload of jobSendMessage.
type sendJob struct {
	Merchant string `json:"merchant"`
	Message  string `json:"message"`
	Attempt  int    `json:"attempt"`
}

// outbox delivers the messages of the verification_messages table.
//
// The row is written in the transaction that issues the link. An email to
// send is then sent outside any transaction: a job handler runs inside one,
// and on SQLite every write waits for it, so holding it across a mail
// server's answer (up to Timeout) would stall all of payd's writes. Instead,
// the transaction that schedules attempt n also enqueues attempt n+1, due
// once attempt n has surely ended (twice Timeout) plus the retry delay; attempt
// n starts after the commit, on its own goroutine, and records its outcome
// on the row. Attempt n+1 does nothing if the row says sent. So a failed
// send, or a process that stops mid-send, is retried: delivery is at least
// once. A duplicate (the same message, the same link) is possible only when
// the outcome of a send the server accepted could not be recorded: a failed
// write, or a process stopped between the server's answer and the write.
type outbox struct {
	sandbox bool
	email   Sender
	queue   *job.Queue
	timeout time.Duration
	retries []time.Duration
	db      *store.DB
	clock   merchant.Clock
	log     *slog.Logger

	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// Deliver sets how s delivers verification messages and registers the send
// job with d.Queue. Without it, s keeps every message in the outbox, as the
// sandbox does without a sender. In production without an email sender it
// warns, once, that verification emails cannot be sent.
func (s *Service) Deliver(d Delivery) {
	o := &outbox{sandbox: d.Sandbox, email: d.Email, queue: d.Queue, timeout: d.Timeout, retries: d.RetrySchedule,
		db: s.db, clock: s.clock, log: s.log}
	if o.timeout <= 0 {
		o.timeout = defaultSendTimeout
	}
	if o.retries == nil {
		o.retries = defaultRetrySchedule
	}
	if o.email != nil {
		job.Register(o.queue, jobSendMessage, o.runJob)
	}
	if !o.sandbox && o.email == nil {
		s.log.Warn("no email sender configured: verification emails are recorded as failed and not sent; set --smtp-url")
	}
	s.outbox = o
}

// Close stops starting sends and waits for those under way, each bounded by
// the timeout; the messages of sends it did not start are sent by their
// queued next attempt, after a restart.
func (s *Service) Close() {
	if s.outbox == nil {
		return
	}
	s.outbox.mu.Lock()
	s.outbox.closed = true
	s.outbox.mu.Unlock()
	s.outbox.running.Wait()
}

// route decides, when a message is written, how it is delivered: by the
// configured sender of its channel (send), else by the sandbox outbox (sent
// at once), else not at all (failed, with why).
func (o *outbox) route(channel string) (status DeliveryStatus, why string, send bool) {
	switch {
	case channel == ChannelEmail && o != nil && o.email != nil:
		return DeliveryPending, "", true
	case o == nil || o.sandbox:
		return DeliverySent, "", false
	case channel == ChannelEmail:
		return DeliveryFailed, errNoEmailSender, false
	default:
		return DeliveryFailed, errNoSMSSender, false
	}
}

// schedule arranges attempt n at sending m: it starts once tx commits, and
// attempt n+1 is queued in tx, due after attempt n has ended and the retry
// delay has passed.
func (o *outbox) schedule(ctx context.Context, tx *store.Tx, m Message, attempt int) error {
	if attempt <= len(o.retries) {
		next := sendJob{Merchant: m.merchantID, Message: m.ID, Attempt: attempt + 1}
		runAt := o.clock.System().Add(2*o.timeout + o.retries[attempt-1])
		if err := job.Enqueue(ctx, tx, o.queue, jobSendMessage, next, job.Options{RunAt: runAt}); err != nil {
			return err
		}
	}
	tx.AfterCommit(func() { o.start(m, attempt) })
	return nil
}

// runJob is attempt n of a message, unless an earlier one sent it.
func (o *outbox) runJob(ctx context.Context, tx *store.Tx, _ job.Job, p sendJob) error {
	if p.Merchant == "" {
		// global lookup: message uuid. A retry queued before migration 0021
		// names no merchant; its message's uuid was unique then.
		if err := tx.QueryRowContext(ctx, `SELECT merchant_id FROM verification_messages WHERE uuid = $1
			ORDER BY created_at LIMIT 1`, p.Message).Scan(&p.Merchant); err != nil {
			return fmt.Errorf("send message %s: %w", p.Message, err)
		}
	}
	m, err := scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM verification_messages
		WHERE merchant_id = $1 AND uuid = $2`, p.Merchant, p.Message))
	if err != nil {
		return fmt.Errorf("send message %s: %w", p.Message, err)
	}
	m.merchantID = p.Merchant
	if m.Status == DeliverySent {
		return nil
	}
	return o.schedule(ctx, tx, m, p.Attempt)
}

// start runs attempt n on its own goroutine. It is called after a commit
// (on SQLite, on the goroutine that commits every write), so it must not block.
func (o *outbox) start(m Message, attempt int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.running.Go(func() { o.send(m, attempt) })
}

// recordTimeout bounds the write of an attempt's outcome.
const recordTimeout = 30 * time.Second

// send makes one attempt and records its outcome on the message's row.
func (o *outbox) send(m Message, attempt int) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	sendErr := o.email.Send(ctx, m)
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := o.record(ctx, m.merchantID, m.ID, sendErr); err != nil {
		o.log.Warn("record verification message delivery", "message_id", m.ID, "err", err.Error())
		return
	}
	if sendErr != nil {
		o.log.Warn("verification message not sent", "message_id", m.ID, "attempt", attempt,
			"will_retry", attempt <= len(o.retries), "err", sendErr.Error())
	}
}

// maxErrorLen bounds the error kept on a message's row.
const maxErrorLen = 1000

// record writes an attempt's outcome on the row: sent, or failed with why
// (unless an earlier attempt sent it). sent_at is on the merchant's clock,
// like created_at.
func (o *outbox) record(ctx context.Context, merchantID, id string, sendErr error) error {
	now := o.clock.System().UnixMilli()
	return o.db.Exec(ctx, func(tx *store.Tx) error {
		if sendErr == nil {
			_, err := tx.ExecContext(ctx, `UPDATE verification_messages SET status = $1, error = NULL,
				sent_at = $2 + `+job.ClockOffsetOf("verification_messages.merchant_id")+`
				WHERE merchant_id = $3 AND uuid = $4`, string(DeliverySent), now, merchantID, id)
			return err
		}
		why := sendErr.Error()
		if len(why) > maxErrorLen {
			why = strings.ToValidUTF8(why[:maxErrorLen], "")
		}
		_, err := tx.ExecContext(ctx, `UPDATE verification_messages SET status = $1, error = $2
			WHERE merchant_id = $3 AND uuid = $4 AND status <> $5`,
			string(DeliveryFailed), why, merchantID, id, string(DeliverySent))
		return err
	})
}

// SMTPSender sends email through a mail server, with net/smtp.
type SMTPSender struct {
	clock       clock.Clock // dates the messages
	addr        string      // host:port
	host        string
	implicitTLS bool
	user        *url.Userinfo
	from        mail.Address
	// TLSConfig, when set, is used for TLS instead of the default (verify
	// the server's certificate for the URL's host).
	TLSConfig *tls.Config
	// LocalName is the name sent with EHLO (default "localhost").
	LocalName string
}

// NewSMTPSender returns a sender to the mail server of rawURL and sending
// from the address from ("noreply@shop.example" or
// "Shop <noreply@shop.example>"). The URL is smtp://[user:password@]host[:port]
// (port 25 by default; STARTTLS when the server offers it) or smtps://…
// (TLS from the start, port 465 by default). With a user, the sender
// authenticates with PLAIN, which net/smtp allows only over TLS or to
// localhost.
func NewSMTPSender(rawURL, from string) (*SMTPSender, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("SMTP URL: %w", err)
	}
	s := &SMTPSender{clock: clock.Real{}, host: u.Hostname(), user: u.User}
	port := u.Port()
	switch u.Scheme {
	case "smtp":
		port = cmp.Or(port, "25")
	case "smtps":
		port, s.implicitTLS = cmp.Or(port, "465"), true
	default:
		return nil, fmt.Errorf("SMTP URL %s: the scheme must be smtp or smtps", u.Redacted())
	}
	if s.host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("SMTP URL %s: want smtp://[user:password@]host[:port]", u.Redacted())
	}
	s.addr = net.JoinHostPort(s.host, port)
	if from == "" {
		return nil, errors.New("an SMTP From address is required with an SMTP URL")
	}
	a, err := mail.ParseAddress(from)
	if err != nil || strings.ContainsAny(from, "\r\n") {
		return nil, fmt.Errorf("SMTP From address %q: not an address such as noreply@shop.example", from)
	}
	s.from = *a
	return s, nil
}

// Send sends the email m through the mail server, within ctx's deadline.
func (s *SMTPSender) Send(ctx context.Context, m Message) error {
	if m.Channel != ChannelEmail {
		return fmt.Errorf("an SMTP sender cannot send %s", m.Channel)
	}
	to, msg, err := s.compose(m, s.clock.Now())
	if err != nil {
		return err
	}
	err = s.deliver(ctx, to, msg)
	if err != nil && ctx.Err() != nil {
		// The connection was closed under the conversation: say why.
		return fmt.Errorf("smtp %s: %w (%v)", s.addr, ctx.Err(), err)
	}
	if err != nil {
		return fmt.Errorf("smtp %s: %w", s.addr, err)
	}
	return nil
}

// compose checks the recipient and writes the message: headers, then the
// body as UTF-8 quoted-printable. A To or Subject with a line break could
// add headers of its own (Bcc, say): it is refused.
func (s *SMTPSender) compose(m Message, now time.Time) (to string, msg []byte, err error) {
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
		return "", nil, errors.New("the recipient or subject contains a line break")
	}
	a, err := mail.ParseAddress(m.To)
	if err != nil || a.Name != "" {
		return "", nil, fmt.Errorf("recipient %q is not an email address", m.To)
	}
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("From", s.from.String())
	header("To", a.String())
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+messageID()+"@"+s.fromDomain()+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(m.Body)); err != nil {
		return "", nil, err
	}
	if err := qp.Close(); err != nil {
		return "", nil, err
	}
	return a.Address, b.Bytes(), nil
}

func messageID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *SMTPSender) fromDomain() string {
	_, domain, _ := strings.Cut(s.from.Address, "@")
	return domain
}

// deliver holds one SMTP conversation. ctx's end closes the connection,
// which ends any read or write under way.
func (s *SMTPSender) deliver(ctx context.Context, to string, msg []byte) error {
	conn, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return err
	}
	if err := s.converse(c, to, msg); err != nil {
		return err
	}
	// The server accepted the message with its answer to the data; a failed
	// QUIT does not make it unsent.
	_ = c.Quit()
	return nil
}

func (s *SMTPSender) dial(ctx context.Context) (net.Conn, error) {
	if s.implicitTLS {
		return (&tls.Dialer{Config: s.tlsConfig()}).DialContext(ctx, "tcp", s.addr)
	}
	return (&net.Dialer{}).DialContext(ctx, "tcp", s.addr)
}

func (s *SMTPSender) tlsConfig() *tls.Config {
	if s.TLSConfig == nil {
		return &tls.Config{ServerName: s.host, MinVersion: tls.VersionTLS12}
	}
	c := s.TLSConfig.Clone()
	c.ServerName = cmp.Or(c.ServerName, s.host)
	return c
}

// converse says hello, upgrades to TLS when it can, authenticates when the
// URL has a user, and hands over the message.
func (s *SMTPSender) converse(c *smtp.Client, to string, msg []byte) error {
	if err := c.Hello(cmp.Or(s.LocalName, "localhost")); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !s.implicitTLS {
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return err
		}
	}
	if s.user != nil {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("the URL has a user but the server offers no AUTH")
		}
		password, _ := s.user.Password()
		if err := c.Auth(smtp.PlainAuth("", s.user.Username(), password, s.host)); err != nil {
			return err
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}
