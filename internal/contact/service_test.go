package contact

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

// newTestService returns a Service on db and a new merchant's principal.
func newTestService(t *testing.T, db *store.DB, clk clock.Clock) (*Service, func() merchant.Principal) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	policy := webhook.Policy{AllowPrivate: true}
	s := NewService(Deps{DB: db, Clock: merchant.NewClock(clk), Log: log, Webhooks: webhook.NewDispatcher(db, clk, log, policy, nil), Policy: policy,
		PublicURL: "https://pay.example.com/"})
	merchants := merchant.NewService(db, clk)
	newMerchant := func() merchant.Principal {
		c, err := merchants.Create(context.Background(), merchant.CreateParams{Name: "Shop", Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"AUD"}})
		if err != nil {
			t.Fatalf("create merchant: %v", err)
		}
		return merchant.Principal{MerchantID: c.MerchantID, Timezone: "Australia/Sydney", Currency: "AUD"}
	}
	return s, newMerchant
}

// TestStanding: what a payin sees of a contact: found by email whatever its
// case, only within the merchant, with its KYC status.
func TestStanding(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, newMerchant := newTestService(t, db, clock.Real{})
		m, other := newMerchant(), newMerchant()
		standing := func(p merchant.Principal, email string) Standing {
			t.Helper()
			st, err := s.Standing(ctx, db.Read(), p.MerchantID, email)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		if got := standing(m, "jane@example.com"); got != (Standing{}) {
			t.Errorf("before create: %+v", got)
		}
		if _, err := storetest.Write(ctx, db, s.Create, m, NewContact{Email: "Jane@Example.com", FirstName: "Jane", LastName: "Doe"}); err != nil {
			t.Fatal(err)
		}
		if got := standing(m, " jane@EXAMPLE.com"); got != (Standing{Exists: true, KYC: KYCNone}) {
			t.Errorf("after create: %+v", got)
		}
		if got := standing(other, "jane@example.com"); got != (Standing{}) {
			t.Errorf("another merchant sees %+v", got)
		}
		k := validSubmission(t)
		k.Email, k.WebhookNotification, k.IssueDate, k.ExpiryDate = "JANE@example.com", "", "2020-01-01", "2099-01-01"
		id, err := storetest.Write(ctx, db, s.SubmitKYC, m, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, func(tx *store.Tx) error { return s.Review(ctx, tx, m, id) }); err != nil {
			t.Fatal(err)
		}
		if got := standing(m, "jane@example.com"); got != (Standing{Exists: true, KYC: KYCApproved}) {
			t.Errorf("after KYC: %+v", got)
		}
		// Standing works inside the caller's transaction too.
		err = db.Exec(ctx, func(tx *store.Tx) error {
			st, err := s.Standing(ctx, tx, m.MerchantID, "jane@example.com")
			if err == nil && !st.Exists {
				t.Errorf("in a transaction: %+v", st)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestCreateRace: many creates of one email (in different cases) at once:
// exactly one contact is made, every other answer is CONTACT_EXISTS.
func TestCreateRace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, newMerchant := newTestService(t, db, clock.Real{})
		m := newMerchant()
		const n = 16
		var (
			wg              sync.WaitGroup
			mu              sync.Mutex
			created, exists int
		)
		for i := range n {
			wg.Go(func() {
				email := "race@example.com"
				if i%2 == 1 {
					email = strings.ToUpper(email)
				}
				_, err := storetest.Write(ctx, db, s.Create, m, NewContact{Email: email, FirstName: "Race", LastName: "Condition"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case fault.Is(err, CodeContactExists):
					exists++
				default:
					t.Errorf("create: %v", err)
				}
			})
		}
		wg.Wait()
		if created != 1 || exists != n-1 {
			t.Errorf("%d created and %d CONTACT_EXISTS, want 1 and %d", created, exists, n-1)
		}
	})
}

// TestVerificationLinkRaces: of many links sent at once only the last one
// stays live, and of many submits of that link exactly one verifies.
func TestVerificationLinkRaces(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, newMerchant := newTestService(t, db, clock.Real{})
		m := newMerchant()
		if _, err := storetest.Write(ctx, db, s.Create, m, NewContact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe"}); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := storetest.Write(ctx, db, s.ResendVerification, m, ResendRequest{Email: "jane@example.com"}); err != nil {
					t.Errorf("resend: %v", err)
				}
			})
		}
		wg.Wait()
		var live int
		if err := db.Read().QueryRow(`SELECT count(*) FROM verification_tokens WHERE replaced_at IS NULL AND used_at IS NULL`).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live != 1 {
			t.Fatalf("%d live links, want 1", live)
		}
		msgs, err := s.ListMessages(ctx, m, ListQuery{Page: 1, PerPage: 100})
		if err != nil || msgs.Total != n {
			t.Fatalf("outbox: %d messages (%v), want %d", msgs.Total, err, n)
		}
		var tokens []string
		for _, msg := range msgs.Records {
			_, token, _ := strings.Cut(msg.Body, "https://pay.example.com/verify/")
			tokens = append(tokens, token[:43])
		}
		var opened []string
		for _, token := range tokens {
			if _, err := s.OpenVerification(ctx, token); err == nil {
				opened = append(opened, token)
			}
		}
		if len(opened) != 1 {
			t.Fatalf("%d links open, want 1", len(opened))
		}
		var (
			mu       sync.Mutex
			verified int
		)
		for range n {
			wg.Go(func() {
				_, err := s.ConfirmVerification(ctx, opened[0])
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					verified++
				case !fault.Is(err, fault.CodeNotFound):
					t.Errorf("confirm: %v", err)
				}
			})
		}
		wg.Wait()
		if verified != 1 {
			t.Errorf("%d submits verified, want 1", verified)
		}
		c, err := s.Detail(ctx, m, "jane@example.com")
		if err != nil || c.VerifiedAt == nil {
			t.Errorf("contact %+v (%v): want verified_at set", c, err)
		}
	})
}

// TestVerificationLinkExpires: a link works for LinkLifetime on the
// merchant's clock and not a moment longer.
func TestVerificationLinkExpires(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC))
		s, newMerchant := newTestService(t, db, clk)
		m := newMerchant()
		if _, err := storetest.Write(ctx, db, s.Create, m, NewContact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe"}); err != nil {
			t.Fatal(err)
		}
		msg, err := storetest.Write(ctx, db, s.ResendVerification, m, ResendRequest{Email: "jane@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		_, token, _ := strings.Cut(msg.Body, "/verify/")
		token = token[:43]
		clk.Advance(s.LinkLifetime - time.Millisecond)
		if _, err := s.OpenVerification(ctx, token); err != nil {
			t.Errorf("just before expiry: %v", err)
		}
		clk.Advance(time.Millisecond)
		if _, err := s.OpenVerification(ctx, token); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("at expiry: %v, want NOT_FOUND", err)
		}
	})
}
