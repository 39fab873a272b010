package e2e

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/server"
	"payd/internal/store/storetest"
)

// mailbox is a mail server on 127.0.0.1 for payd to send to: it speaks just
// enough SMTP (no TLS, no AUTH) and keeps the mails it accepts.
type mailbox struct {
	ln net.Listener
	// rejectRcpt answers RCPT TO with 550.
	rejectRcpt atomic.Bool
	wg         sync.WaitGroup
	mu         sync.Mutex
	mails      []receivedMail
}

// receivedMail is one mail the mailbox accepted.
type receivedMail struct {
	To   string // the envelope recipient
	Data []byte
}

func newMailbox(t *testing.T) *mailbox {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &mailbox{ln: ln}
	b.wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			b.wg.Go(func() { b.session(conn) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		b.wg.Wait()
	})
	return b
}

// smtp points payd's SMTP settings at the mailbox.
func (b *mailbox) smtp(c *server.Config) {
	c.SMTPURL = "smtp://" + b.ln.Addr().String()
	c.SMTPFrom = "Test Merchant <noreply@shop.test>"
}

func (b *mailbox) session(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(conn)
	reply := func(line string) { _ = tp.PrintfLine("%s", line) }
	reply("220 mailbox ESMTP")
	var to string
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO", "MAIL", "RSET", "NOOP":
			reply("250 ok")
		case "RCPT":
			if b.rejectRcpt.Load() {
				reply("550 5.1.1 mailbox unavailable")
				continue
			}
			_, rest, _ := strings.Cut(arg, "<")
			to, _, _ = strings.Cut(rest, ">")
			reply("250 ok")
		case "DATA":
			reply("354 end with .")
			data, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.mails = append(b.mails, receivedMail{To: to, Data: data})
			b.mu.Unlock()
			reply("250 queued")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// wait returns the mails once there are n, or ends the test after 10 s.
func (b *mailbox) wait(t *testing.T, n int) []receivedMail {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b.mu.Lock()
		got := append([]receivedMail(nil), b.mails...)
		b.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("the mailbox did not receive %d mails within 10s", n)
	return nil
}

// read parses a mail as a mail client would: headers, decoded subject and
// body (quoted-printable).
func (m receivedMail) read(t *testing.T) (h mail.Header, subject, body string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("read mail: %v\n%s", err, m.Data)
	}
	if subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatalf("subject: %v", err)
	}
	raw, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return msg.Header, subject, string(raw)
}

// outboxStatus waits until the message's outbox row leaves pending and
// returns it.
func (p *payd) outboxStatus(as creds, email, id string) map[string]any {
	p.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range p.contactOutbox(as, email) {
			if m["id"] == id && m["status"] != "pending" {
				return m
			}
		}
	}
	p.t.Fatalf("message %s still pending after 10s", id)
	return nil
}

// emailedLink checks that the mailbox received one verification email to
// the contact and returns the link it holds, which must be under payd's
// public URL.
func emailedLink(t *testing.T, p *payd, box *mailbox, to string) string {
	t.Helper()
	mails := box.wait(t, 1)
	if len(mails) != 1 || mails[0].To != to {
		t.Fatalf("mailbox has %d mails (first to %q), want one to %s", len(mails), mails[0].To, to)
	}
	h, subject, body := mails[0].read(t)
	if h.Get("To") != "<"+to+">" || h.Get("From") != `"Test Merchant" <noreply@shop.test>` || subject != "Verify your identity" ||
		!strings.Contains(body, "Hello Jane") {
		t.Errorf("mail From %q, To %q, subject %q, body %q; want payd's verification email to Jane", h.Get("From"), h.Get("To"), subject, body)
	}
	link := regexp.MustCompile(regexp.QuoteMeta(p.root) + `/verify/[A-Za-z0-9_-]{43}`).FindString(body)
	if link == "" {
		t.Fatalf("no %s/verify/… link in %q", p.root, body)
	}
	return link
}

// follow GETs a link as the contact's browser would.
func follow(t *testing.T, link string) response {
	t.Helper()
	res, err := http.Get(link)
	if err != nil {
		t.Fatalf("GET %s: %v", link, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", link, err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// TestVerificationEmailSMTP: with --smtp-url, resend_verification emails the
// contact a link that opens the hosted verification page, and the sandbox
// outbox shows the message sent.
func TestVerificationEmailSMTP(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		box := newMailbox(t)
		p := start(t, dsn, box.smtp)
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)

		r := p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com", "resend_to": "email"})
		want(t, r, 200)
		link := emailedLink(t, p, box, "jane@example.com")
		wantPage(t, follow(t, link), 200, "Jane Doe")

		row := p.outboxStatus(m, "jane@example.com", r.JSON(t)["message_id"].(string))
		sentAt, _ := row["sent_at"].(string)
		if row["status"] != "sent" || !timePattern.MatchString(sentAt) || row["error"] != nil || row["subject"] != "Verify your identity" ||
			!strings.Contains(row["body"].(string), link) {
			t.Errorf("outbox row %v, want sent with the emailed link", row)
		}
	})
}

// TestVerificationEmailRefused: a mail server that refuses the recipient
// leaves the message failed in the outbox, with the server's answer; the
// API call itself succeeded.
func TestVerificationEmailRefused(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		box := newMailbox(t)
		box.rejectRcpt.Store(true)
		p := start(t, dsn, box.smtp)
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)

		r := p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com"})
		want(t, r, 200)
		row := p.outboxStatus(m, "jane@example.com", r.JSON(t)["message_id"].(string))
		if why, _ := row["error"].(string); row["status"] != "failed" || row["sent_at"] != nil || !strings.Contains(why, "550") {
			t.Errorf("outbox row %v, want failed with the server's 550", row)
		}
	})
}

// TestVerificationEmailProduction: production sends through SMTP too; the
// link in the email opens the page.
func TestVerificationEmailProduction(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		box := newMailbox(t)
		p := start(t, dsn, production, box.smtp)
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)

		want(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com"}), 200)
		wantPage(t, follow(t, emailedLink(t, p, box, "jane@example.com")), 200, "Jane Doe")
	})
}

// TestVerificationEmailProductionWithoutSMTP: production without a mail
// server still answers 200, and records the message failed with why.
func TestVerificationEmailProductionWithoutSMTP(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.newContact(m, "jane@example.com", nil)
		want(t, p.post("/v2/contacts/resend_verification", m, map[string]any{"email": "jane@example.com"}), 200)
		var status, why string
		if err := p.srv.DB.Read().QueryRow(`SELECT status, error FROM verification_messages`).Scan(&status, &why); err != nil {
			t.Fatal(err)
		}
		if status != "failed" || why != "no email sender configured (set --smtp-url)" {
			t.Errorf("message %s (%q), want failed: no email sender configured", status, why)
		}
	}, production)
}
