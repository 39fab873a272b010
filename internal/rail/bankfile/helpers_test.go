package bankfile

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/bank"
	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/payfile"
	"payd/internal/rail"
	"payd/internal/store"
)

// sydney is the zone of the tests' AUD rails.
var sydney = mustZone("Australia/Sydney")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// uniqueName is a rail name no other test uses: the rails' locks are
// advisory locks, shared by the tests' PostgreSQL schemas.
func uniqueName(prefix string) string {
	return prefix + "-" + strings.ToLower(store.RandomID(8))
}

// abaSettings is an aba rail of AUD bank payouts, settlements and transfers.
func abaSettings(name string) Settings {
	cutoffs, _ := ParseCutoffs("09:30,15:00")
	return Settings{Name: name, Format: payfile.ABA, Currency: "AUD", Methods: []string{"au_bank_aud", Settlements, Transfers},
		DebtorName: "PAYD OPERATIONS", DebtorAccount: "123456789", DebtorBSB: "062-000", OriginatorID: "301500", BankAbbrev: "CBA",
		Cutoffs: cutoffs, Timezone: "Australia/Sydney", Outbox: "dir:/srv/payd/" + name + "/out", Inbox: "dir:/srv/payd/" + name + "/in"}
}

// zenginSettings is a zengin rail of JPY bank payouts and settlements.
func zenginSettings(name string) Settings {
	cutoffs, _ := ParseCutoffs("10:00")
	return Settings{Name: name, Format: payfile.Zengin, Currency: "JPY", Methods: []string{"jp_bank_jpy", Settlements},
		DebtorName: "ﾍﾟｲﾄﾞ", DebtorAccount: "1234567", DebtorBankCode: "0001", DebtorBranchCode: "001", OriginatorID: "1234567890",
		Cutoffs: cutoffs, Timezone: "Asia/Tokyo", Outbox: "dir:/srv/payd/" + name + "/out", Inbox: "dir:/srv/payd/" + name + "/in"}
}

// pain001Settings is a pain001 rail of AUD PayID payouts.
func pain001Settings(name string) Settings {
	s := abaSettings(name)
	s.Format, s.Methods, s.BankAbbrev, s.OriginatorID = payfile.Pain001, []string{"au_payid_npp_aud"}, "", "PAYD"
	return s
}

// fixture is a database with the bank-file rail on a manual clock, the
// outcomes its listener heard, and an outbox in memory.
type fixture struct {
	t        *testing.T
	db       *store.DB
	clock    *clock.Manual
	files    *Files
	outbox   *memOutbox
	heard    *heard
	merchant *merchant.Service
}

func newFixture(t *testing.T, db *store.DB, now time.Time) *fixture {
	t.Helper()
	banks, err := bank.Load()
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(now)
	out := &memOutbox{files: map[string][]byte{}}
	fx := &fixture{t: t, db: db, clock: clk, outbox: out, heard: &heard{}, merchant: merchant.NewService(db, clk)}
	fx.files = New(Deps{DB: db, Clock: clk, Banks: banks, Writers: FormatWriters(), RetryBase: time.Minute,
		Open: func(ctx context.Context, url string, keys Keys) (Outbox, error) { return out.open(url) }})
	fx.files.Listen("", fx.heard.hear)
	return fx
}

// set sets a rail, as payd rail set does, and has Files see it at once.
func (fx *fixture) set(s Settings) Rail {
	fx.t.Helper()
	r, err := store.Do(context.Background(), fx.db, func(tx *store.Tx) (Rail, error) { return fx.files.Set(context.Background(), tx, s) })
	if err != nil {
		fx.t.Fatalf("set rail %s: %v", s.Name, err)
	}
	fx.files.Forget()
	return r
}

// newMerchant creates a merchant with an AUD account.
func (fx *fixture) newMerchant(name string) string {
	fx.t.Helper()
	m, err := fx.merchant.Create(context.Background(), merchant.CreateParams{Name: name, Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"AUD", "JPY"}})
	if err != nil {
		fx.t.Fatal(err)
	}
	return m.MerchantID
}

// hand hands a transfer to the rail as a payout's submission does, with a
// fresh bank reference, and returns the reference.
func (fx *fixture) hand(merchantID, key, method string, amountMinor int64, params map[string]any) string {
	fx.t.Helper()
	return fx.handIn("AUD", merchantID, key, method, amountMinor, params)
}

// handIn is hand in currency.
func (fx *fixture) handIn(currency, merchantID, key, method string, amountMinor int64, params map[string]any) string {
	fx.t.Helper()
	ref, err := store.Do(context.Background(), fx.db, func(tx *store.Tx) (string, error) {
		ctx := context.Background()
		ref, err := rail.DrawReference(ctx, tx, fx.files, merchantID, currency, method)
		if err != nil {
			return "", err
		}
		return ref, fx.files.Submit(ctx, tx, rail.Transfer{Key: key, MerchantID: merchantID, Method: method, Currency: currency,
			AmountMinor: amountMinor, Params: params, At: fx.clock.Now(), BankReference: ref, Payee: "Jane Doe", Description: "Invoice " + key})
	})
	if err != nil {
		fx.t.Fatalf("hand %s to the rail: %v", key, err)
	}
	return ref
}

// cut makes a cut-off now, as payd bankfile cut does.
func (fx *fixture) cut(railName string) string {
	fx.t.Helper()
	name, err := store.Do(context.Background(), fx.db, func(tx *store.Tx) (string, error) {
		return fx.files.Cut(context.Background(), tx, railName, fx.clock.Now())
	})
	if err != nil {
		fx.t.Fatalf("cut %s: %v", railName, err)
	}
	return name
}

func bsbAccount(number, name string) map[string]any {
	return map[string]any{"bsb": "062000", "account_number": number, "account_name": name}
}

// heard keeps the outcomes the rail's listener was given, and plays the
// transfers' records: each starts pending and follows the outcome order
// (rail.Judge).
type heard struct {
	mu       sync.Mutex
	outcomes []rail.Outcome
	states   map[string]rail.State
	// failing fails the outcome of its key (a crash in the middle).
	failing string
}

func (h *heard) hear(_ context.Context, _ *store.Tx, o rail.Outcome) (rail.Applied, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o.Key == h.failing {
		return rail.Applied{}, fmt.Errorf("the listener of %s fails", o.Key)
	}
	h.outcomes = append(h.outcomes, o)
	if h.states == nil {
		h.states = map[string]rail.State{}
	}
	was, ok := h.states[o.Key]
	if !ok {
		was = rail.StatePending
	}
	applied := rail.Applied{Effect: rail.Judge(was, o.Verdict), Was: string(was), Status: string(was)}
	if applied.Effect == rail.Changed {
		h.states[o.Key] = rail.State(o.Verdict)
		applied.Status = string(o.Verdict)
	}
	return applied, nil
}

// fail makes the outcome of key fail ("" for none).
func (h *heard) fail(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing = key
}

func (h *heard) all() []rail.Outcome {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]rail.Outcome(nil), h.outcomes...)
}

// memOutbox is an outbox in memory that fails its next failures Puts.
type memOutbox struct {
	mu       sync.Mutex
	files    map[string][]byte
	puts     int
	failures int
}

func (m *memOutbox) open(url string) (Outbox, error) { return memConn{m}, nil }

type memConn struct{ m *memOutbox }

func (c memConn) Put(_ context.Context, name string, content []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.puts++
	if c.m.failures > 0 {
		c.m.failures--
		return fmt.Errorf("connection refused")
	}
	if old, ok := c.m.files[name]; ok && string(old) != string(content) {
		return fmt.Errorf("%s exists with other bytes", name)
	}
	c.m.files[name] = append([]byte(nil), content...)
	return nil
}

func (c memConn) Close() error { return nil }

func (m *memOutbox) get(name string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	return b, ok
}
