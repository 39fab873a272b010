package contact

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

// fakeSMTP is a mail server on 127.0.0.1 that speaks just enough SMTP (no
// TLS; AUTH PLAIN only when offerAuth) and keeps what it is sent.
type fakeSMTP struct {
	ln        net.Listener
	offerAuth bool
	// rejectRcpt answers RCPT TO with 550.
	rejectRcpt atomic.Bool
	wg         sync.WaitGroup
	mu         sync.Mutex
	mails      []fakeMail
	auths      []string
}

// fakeMail is one message the fake accepted.
type fakeMail struct {
	From string
	To   []string
	Data []byte // as received, dot-unstuffed, with \n line endings
}

func newFakeSMTP(t *testing.T, offerAuth bool) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{ln: ln, offerAuth: offerAuth}
	f.wg.Go(f.serve)
	t.Cleanup(func() {
		ln.Close()
		f.wg.Wait()
	})
	return f
}

func (f *fakeSMTP) url() string { return "smtp://" + f.ln.Addr().String() }

func (f *fakeSMTP) serve() {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() { f.session(conn) })
	}
}

func (f *fakeSMTP) session(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(conn)
	reply := func(lines ...string) {
		for _, l := range lines {
			_ = tp.PrintfLine("%s", l)
		}
	}
	reply("220 fake ESMTP")
	var m fakeMail
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			if f.offerAuth {
				reply("250-fake", "250-AUTH PLAIN", "250 8BITMIME")
				continue
			}
			reply("250-fake", "250 8BITMIME")
		case "HELO", "NOOP":
			reply("250 ok")
		case "AUTH":
			f.record(func() { f.auths = append(f.auths, arg) })
			reply("235 ok")
		case "RSET":
			m = fakeMail{}
			reply("250 ok")
		case "MAIL":
			m = fakeMail{From: angle(arg)}
			reply("250 ok")
		case "RCPT":
			if f.rejectRcpt.Load() {
				reply("550 5.1.1 mailbox unavailable")
				continue
			}
			m.To = append(m.To, angle(arg))
			reply("250 ok")
		case "DATA":
			reply("354 end with .")
			if m.Data, err = tp.ReadDotBytes(); err != nil {
				return
			}
			mail := m
			f.record(func() { f.mails = append(f.mails, mail) })
			reply("250 queued")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// angle is the address between < and > in a MAIL or RCPT argument.
func angle(arg string) string {
	_, rest, _ := strings.Cut(arg, "<")
	addr, _, _ := strings.Cut(rest, ">")
	return addr
}

func (f *fakeSMTP) record(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeSMTP) authsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

func (f *fakeSMTP) received() []fakeMail {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeMail(nil), f.mails...)
}

// read parses a received message as a mail client would: its headers, its
// subject decoded, its body decoded from quoted-printable.
func (m fakeMail) read(t *testing.T) (h mail.Header, subject, body string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, m.Data)
	}
	subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject: %v", err)
	}
	raw, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return msg.Header, subject, strings.ReplaceAll(string(raw), "\r\n", "\n")
}

func newSender(t *testing.T, rawURL string) *SMTPSender {
	t.Helper()
	s, err := NewSMTPSender(rawURL, "Shop <noreply@shop.test>")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSMTPSenderSends: what a mail client reads back is what was sent,
// whatever the characters, line lengths and leading dots of the text.
func TestSMTPSenderSends(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		subject string
		body    string
	}{
		{"verification email", verifySubject, messageBody(ChannelEmail, "Jane", "Shop", "https://pay.example.com/verify/"+strings.Repeat("A", 43), time.Now())},
		{"non-ASCII", "Vérifiez votre identité", "Bonjour Zoë,\n\nouvrez ce lien : https://pay.example.com/verify/x\n"},
		{"leading dots and a long line", verifySubject, ".\n..hidden\n" + strings.Repeat("long ", 60) + "\n.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeSMTP(t, false)
			err := newSender(t, fake.url()).Send(context.Background(), Message{Channel: ChannelEmail, To: "jane@example.com", Subject: tt.subject, Body: tt.body})
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			got := fake.received()
			if len(got) != 1 || got[0].From != "noreply@shop.test" || len(got[0].To) != 1 || got[0].To[0] != "jane@example.com" {
				t.Fatalf("received %+v, want one mail from noreply@shop.test to jane@example.com", got)
			}
			h, subject, body := got[0].read(t)
			if h.Get("From") != `"Shop" <noreply@shop.test>` || h.Get("To") != "<jane@example.com>" || h.Get("Date") == "" || h.Get("Message-Id") == "" {
				t.Errorf("headers %v", h)
			}
			if subject != tt.subject {
				t.Errorf("subject = %q, want %q", subject, tt.subject)
			}
			if body != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
		})
	}
}

// TestSMTPSenderRefuses: a recipient or subject that could add headers, a
// recipient that is not a bare address, and an SMS are refused before any
// mail leaves.
func TestSMTPSenderRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    Message
	}{
		{"line break in To", Message{Channel: ChannelEmail, To: "jane@example.com\r\nBcc: all@example.com", Subject: verifySubject}},
		{"bare LF in To", Message{Channel: ChannelEmail, To: "jane@example.com\nBcc: all@example.com", Subject: verifySubject}},
		{"line break in Subject", Message{Channel: ChannelEmail, To: "jane@example.com", Subject: "Hi\r\nBcc: all@example.com"}},
		{"display name in To", Message{Channel: ChannelEmail, To: "Jane <jane@example.com>", Subject: verifySubject}},
		{"not an address", Message{Channel: ChannelEmail, To: "jane", Subject: verifySubject}},
		{"SMS", Message{Channel: ChannelSMS, To: "+61412345678"}},
	}
	fake := newFakeSMTP(t, false)
	s := newSender(t, fake.url())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Send(context.Background(), tt.m); err == nil {
				t.Errorf("sent %+v", tt.m)
			}
		})
	}
	if got := fake.received(); len(got) != 0 {
		t.Errorf("the server received %d mails", len(got))
	}
}

// TestNewSMTPSender reads the settings: scheme, default ports, and refusals
// that never show the password.
func TestNewSMTPSender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, from string
		wantAddr        string // "" when refused
		wantTLS         bool
	}{
		{"smtp default port", "smtp://mail.example.com", "noreply@shop.test", "mail.example.com:25", false},
		{"submission port with user", "smtp://u:secret@mail.example.com:587", "noreply@shop.test", "mail.example.com:587", false},
		{"smtps default port", "smtps://u:secret@mail.example.com", "Shop <noreply@shop.test>", "mail.example.com:465", true},
		{"IPv6", "smtp://[::1]:2525", "noreply@shop.test", "[::1]:2525", false},
		{"other scheme", "https://u:secret@mail.example.com", "noreply@shop.test", "", false},
		{"no host", "smtp://u:secret@:25", "noreply@shop.test", "", false},
		{"a path", "smtp://u:secret@mail.example.com/inbox", "noreply@shop.test", "", false},
		{"a query", "smtp://u:secret@mail.example.com?tls=no", "noreply@shop.test", "", false},
		{"no From", "smtp://u:secret@mail.example.com", "", "", false},
		{"From not an address", "smtp://u:secret@mail.example.com", "shop", "", false},
		{"From with a line break", "smtp://u:secret@mail.example.com", "noreply@shop.test\r\nBcc: all@example.com", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSMTPSender(tt.url, tt.from)
			var gotAddr string
			var gotTLS bool
			if err == nil {
				gotAddr, gotTLS = s.addr, s.implicitTLS
			}
			if gotAddr != tt.wantAddr || gotTLS != tt.wantTLS {
				t.Errorf("addr %q, TLS %v (err %v); want %q, %v", gotAddr, gotTLS, err, tt.wantAddr, tt.wantTLS)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestSMTPSenderAuth: a user in the URL authenticates with PLAIN (net/smtp
// allows it without TLS only to localhost); a server without AUTH is refused
// rather than sent to unauthenticated.
func TestSMTPSenderAuth(t *testing.T) {
	t.Parallel()
	m := Message{Channel: ChannelEmail, To: "jane@example.com", Subject: verifySubject, Body: "hello\n"}
	withAuth := newFakeSMTP(t, true)
	if err := newSender(t, "smtp://user%40shop:p%3Ass@"+withAuth.ln.Addr().String()).Send(context.Background(), m); err != nil {
		t.Fatalf("send with AUTH: %v", err)
	}
	wantAuth := "PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00user@shop\x00p:ss"))
	if auths := withAuth.authsSeen(); len(auths) != 1 || auths[0] != wantAuth || len(withAuth.received()) != 1 {
		t.Errorf("auths %q, %d mails; want [%q] and one mail", auths, len(withAuth.received()), wantAuth)
	}

	without := newFakeSMTP(t, false)
	if err := newSender(t, "smtp://user:pass@"+without.ln.Addr().String()).Send(context.Background(), m); err == nil {
		t.Error("sent with credentials to a server that offers no AUTH")
	}
	if got := without.received(); len(got) != 0 {
		t.Errorf("the server without AUTH received %d mails", len(got))
	}
}

// TestSMTPSenderTimeout: a server that never answers holds a send no longer
// than its context allows.
func TestSMTPSenderTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, conn) // never greets
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	started := time.Now()
	err = newSender(t, "smtp://"+ln.Addr().String()).Send(ctx, Message{Channel: ChannelEmail, To: "jane@example.com", Subject: verifySubject})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(started) > 5*time.Second {
		t.Errorf("send = %v after %v; want the deadline, soon", err, time.Since(started))
	}
}

// deliveryTimeout bounds one attempt in the delivery tests.
const deliveryTimeout = 2 * time.Second

// deliveryFixture is a Service that delivers through d, its queue and clock,
// and a merchant with a contact, Jane, who has a phone.
type deliveryFixture struct {
	s     *Service
	q     *job.Queue
	db    *store.DB
	clk   *clock.Manual
	m     merchant.Principal
	email string
}

func newDeliveryFixture(t *testing.T, db *store.DB, d Delivery) *deliveryFixture {
	t.Helper()
	clk := clock.NewManual(time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC))
	s, newMerchant := newTestService(t, db, clk)
	q := job.New(db, clk, slog.New(slog.DiscardHandler), nil)
	d.Queue, d.Timeout = q, deliveryTimeout
	s.Deliver(d)
	t.Cleanup(s.Close)
	f := &deliveryFixture{s: s, q: q, db: db, clk: clk, m: newMerchant(), email: "jane@example.com"}
	if _, err := storetest.Write(context.Background(), db, s.Create, f.m, NewContact{Email: f.email, FirstName: "Jane", LastName: "Doe", Phone: "+61 412 345 678"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// resend sends Jane a link and waits until its first attempt has ended.
func (f *deliveryFixture) resend(t *testing.T, to string) Message {
	t.Helper()
	m, err := storetest.Write(context.Background(), f.db, f.s.ResendVerification, f.m, ResendRequest{Email: f.email, ResendTo: to})
	if err != nil {
		t.Fatalf("resend: %v", err)
	}
	f.s.outbox.running.Wait()
	return m
}

// runJobs runs every job due now and waits for the sends they start.
func (f *deliveryFixture) runJobs(t *testing.T) int {
	t.Helper()
	ran := 0
	for {
		ok, err := f.q.RunOne(context.Background(), "")
		if err != nil {
			t.Fatalf("run job: %v", err)
		}
		if !ok {
			break
		}
		ran++
	}
	f.s.outbox.running.Wait()
	return ran
}

// message reads the outbox's row of id.
func (f *deliveryFixture) message(t *testing.T, id string) Message {
	t.Helper()
	l, err := f.s.ListMessages(context.Background(), f.m, ListQuery{Page: 1, PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range l.Records {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("message %s not in the outbox", id)
	return Message{}
}

func (f *deliveryFixture) jobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.Read().QueryRow(`SELECT count(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func errorText(e *string) string {
	if e == nil {
		return "<nil>"
	}
	return *e
}

// TestDeliverySendsAfterCommit: with a mail server, the message is written
// pending with the link, then sent: the server receives it, to the contact,
// with the subject and the body the outbox shows, and the row says sent. The
// queued next attempt then finds it sent and sends nothing more.
func TestDeliverySendsAfterCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fake := newFakeSMTP(t, false)
		f := newDeliveryFixture(t, db, Delivery{Email: newSender(t, fake.url())})
		m := f.resend(t, ResendToEmail)
		if m.Status != DeliveryPending || m.SentAt != nil || m.Subject != verifySubject {
			t.Errorf("resend answered %+v, want pending with the subject", m)
		}
		got := fake.received()
		if len(got) != 1 || got[0].To[0] != f.email {
			t.Fatalf("received %+v, want one mail to %s", got, f.email)
		}
		h, subject, body := got[0].read(t)
		if h.Get("To") != "<"+f.email+">" || subject != "Verify your identity" || body != m.Body ||
			!strings.Contains(body, "Hello Jane") || !strings.Contains(body, "https://pay.example.com/verify/") {
			t.Errorf("mail To %q, subject %q, body %q; want Jane's verification link as the outbox has it: %q", h.Get("To"), subject, body, m.Body)
		}
		row := f.message(t, m.ID)
		if row.Status != DeliverySent || row.SentAt == nil || !row.SentAt.T.Equal(f.clk.Now()) || row.Error != nil {
			t.Errorf("row %+v, want sent now without error", row)
		}

		f.clk.Advance(2*deliveryTimeout + time.Minute)
		if ran := f.runJobs(t); ran != 1 {
			t.Errorf("ran %d jobs, want the queued next attempt", ran)
		}
		if got := fake.received(); len(got) != 1 || f.jobs(t) != 0 {
			t.Errorf("after the next attempt: %d mails, %d jobs; want 1 and 0", len(got), f.jobs(t))
		}
	})
}

// TestDeliveryRetries: a send the server refuses leaves the row failed with
// the server's answer; the retry waits for its delay, then sends it. A
// message that keeps failing stays failed once the schedule is used up.
func TestDeliveryRetries(t *testing.T) {
	t.Parallel()
	type step struct {
		name       string
		reject     bool
		advance    time.Duration
		wantRan    int
		wantStatus DeliveryStatus
		wantError  string // a part of it; "" for none
		wantMails  int
		wantJobs   int
	}
	delay := 2*deliveryTimeout + time.Minute // of the first retry
	tests := []struct {
		name  string
		steps []step
	}{
		{"recovers", []step{
			{"first attempt refused", true, 0, 0, DeliveryFailed, "5.1.1 mailbox unavailable", 0, 1},
			{"retry waits for its delay", false, delay - time.Millisecond, 0, DeliveryFailed, "550", 0, 1},
			{"retry sends", false, time.Millisecond, 1, DeliverySent, "", 1, 0},
		}},
		{"gives up", []step{
			{"first attempt refused", true, 0, 0, DeliveryFailed, "550", 0, 1},
			{"last attempt refused", true, delay, 1, DeliveryFailed, "550", 0, 0},
			{"nothing more", true, 24 * time.Hour, 0, DeliveryFailed, "550", 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				fake := newFakeSMTP(t, false)
				fake.rejectRcpt.Store(true)
				f := newDeliveryFixture(t, db, Delivery{Email: newSender(t, fake.url()), RetrySchedule: []time.Duration{time.Minute}})
				m := f.resend(t, ResendToEmail)
				for _, st := range tt.steps {
					fake.rejectRcpt.Store(st.reject)
					f.clk.Advance(st.advance)
					ran := f.runJobs(t)
					row := f.message(t, m.ID)
					gotError := errorText(row.Error)
					if ran != st.wantRan || row.Status != st.wantStatus || len(fake.received()) != st.wantMails || f.jobs(t) != st.wantJobs ||
						(st.wantError == "") != (row.Error == nil) || !strings.Contains(gotError, st.wantError) {
						t.Fatalf("%s: ran %d, status %s, error %s, %d mails, %d jobs; want %d, %s, %q, %d, %d", st.name,
							ran, row.Status, gotError, len(fake.received()), f.jobs(t), st.wantRan, st.wantStatus, st.wantError, st.wantMails, st.wantJobs)
					}
				}
			})
		})
	}
}

// TestDeliveryRoutes: without a sender for its channel, a message is
// delivered by the sandbox outbox (sent at once) or, in production, recorded
// failed with why; nothing is queued and no mail leaves.
func TestDeliveryRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		sandbox    bool
		smtp       bool
		resendTo   string
		wantStatus DeliveryStatus
		wantError  string
	}{
		{"sandbox email without SMTP", true, false, ResendToEmail, DeliverySent, "<nil>"},
		{"sandbox SMS without SMTP", true, false, ResendToPhone, DeliverySent, "<nil>"},
		{"sandbox SMS with SMTP", true, true, ResendToPhone, DeliverySent, "<nil>"},
		{"production email without SMTP", false, false, ResendToEmail, DeliveryFailed, "no email sender configured (set --smtp-url)"},
		{"production SMS without SMTP", false, false, ResendToPhone, DeliveryFailed, "no SMS sender configured"},
		{"production SMS with SMTP", false, true, ResendToPhone, DeliveryFailed, "no SMS sender configured"},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fake := newFakeSMTP(t, false)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				d := Delivery{Sandbox: tt.sandbox}
				if tt.smtp {
					d.Email = newSender(t, fake.url())
				}
				f := newDeliveryFixture(t, db, d)
				m := f.resend(t, tt.resendTo)
				row := f.message(t, m.ID)
				wantSentAt := tt.wantStatus == DeliverySent
				if row.Status != tt.wantStatus || errorText(row.Error) != tt.wantError || (row.SentAt != nil) != wantSentAt ||
					row.Status != m.Status || errorText(m.Error) != tt.wantError {
					t.Errorf("row %+v (answered %+v); want status %s, error %q, sent_at set %v", row, m, tt.wantStatus, tt.wantError, wantSentAt)
				}
				if n := f.jobs(t); n != 0 {
					t.Errorf("%d jobs queued", n)
				}
			})
		}
		if got := fake.received(); len(got) != 0 {
			t.Errorf("%d mails sent", len(got))
		}
	})
}

// syncBuffer is a bytes.Buffer that several goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDeliveryWarnsWithoutEmailSender: production without an email sender
// says so at start; the sandbox, whose outbox delivers, and a configured
// sender do not.
func TestDeliveryWarnsWithoutEmailSender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		sandbox  bool
		email    Sender
		wantWarn bool
	}{
		{"production without SMTP", false, nil, true},
		{"production with SMTP", false, newSender(t, "smtp://127.0.0.1:1"), false},
		{"sandbox without SMTP", true, nil, false},
	}
	db := storetest.Open(t, storetest.SQLiteDSN(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			s := NewService(Deps{DB: db, Clock: merchant.NewClock(clock.Real{}), Log: log, Policy: webhook.Policy{}, PublicURL: "https://pay.example.com"})
			s.Deliver(Delivery{Sandbox: tt.sandbox, Email: tt.email, Queue: job.New(db, clock.Real{}, log, nil)})
			if got := strings.Contains(logs.String(), "no email sender configured"); got != tt.wantWarn {
				t.Errorf("warned %v, want %v: %s", got, tt.wantWarn, logs.String())
			}
		})
	}
}
