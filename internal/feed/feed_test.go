package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payd/internal/fault"
	"payd/internal/feed"
	"payd/internal/feed/feedtest"
	"payd/internal/merchant"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// fixture is a payd on a test database, one KRW merchant, and a KRW feed
// with a dir: inbox.
type fixture struct {
	t     testing.TB
	srv   *server.Server
	api   *httptest.Server
	app   merchant.CreatedAccount
	feed  feed.Feed
	inbox string
}

func newFixture(t testing.TB, dsn string) *fixture {
	t.Helper()
	ctx := context.Background()
	srv, err := server.Open(ctx, server.Config{DB: dsn, StoreOptions: store.Options{SQLiteSynchronous: "NORMAL"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	api := httptest.NewServer(srv.Handler())
	t.Cleanup(api.Close)
	m, err := srv.Merchants.Create(ctx, merchant.CreateParams{Name: "Feed Test", Country: "AU", Timezone: "Australia/Sydney", Currencies: []string{"KRW"}})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, srv: srv, api: api, app: m.Accounts[0], inbox: filepath.Join(t.TempDir(), "in")}
	if err := os.MkdirAll(fx.inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	err = srv.DB.Exec(ctx, func(tx *store.Tx) error {
		fx.feed, err = srv.Feeds.Set(ctx, tx, feed.Settings{Name: "krw-" + strings.ToLower(store.RandomID(6)), Currency: "KRW", Account: "555-000-111", Inbox: "dir:" + fx.inbox})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// call posts body to the API as the merchant and decodes the answer.
func (fx *fixture) call(method, path string, body any) map[string]any {
	fx.t.Helper()
	raw, _ := json.Marshal(body)
	r, _ := http.NewRequest(method, fx.api.URL+"/api"+path, bytes.NewReader(raw))
	r.Header.Set("app-id", fx.app.AppID)
	r.Header.Set("secret-key", fx.app.SecretKey)
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		fx.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode >= 300 {
		fx.t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
	}
	return out
}

func (fx *fixture) payin(amount int) string {
	fx.t.Helper()
	p := fx.call("POST", "/v2/payins", map[string]any{"currency": "KRW", "amount": amount, "payin_method_name": "kr_bank_krw",
		"payin_method_params": map[string]any{"user_name": "Kim Minjun"}, "name": "Kim", "email": "kim@example.kr", "description": "order"})
	return p["uuid"].(string)
}

func (fx *fixture) payinStatus(uuid string) (status, ref string) {
	fx.t.Helper()
	d := fx.call("GET", "/v2/payins/detail?uuid="+uuid, nil)
	ref, _ = d["bank_reference"].(string)
	return d["status"].(string), ref
}

func (fx *fixture) file(entries ...feedtest.Entry) feedtest.File {
	return feedtest.File{MsgID: "M-" + store.RandomID(4), Account: "555000111", Currency: "KRW", Date: "2026-03-02", OpeningMinor: 1000000, Entries: entries}
}

func (fx *fixture) imported(name string, content []byte) feed.Imported {
	fx.t.Helper()
	got, err := fx.srv.Feeds.Import(context.Background(), fx.feed, name, content)
	if err != nil {
		fx.t.Fatalf("import %s: %v", name, err)
	}
	return got
}

func (fx *fixture) openExceptions() int64 {
	fx.t.Helper()
	n, err := feed.OpenExceptions(context.Background(), fx.srv.DB.Read())
	if err != nil {
		fx.t.Fatal(err)
	}
	return n
}

// TestEntriesAppliedOnce: a payin named in a camt.054 entry is received
// once, though the entry comes again in the day's camt.053 and the
// statement is imported twice; an entry without a bank key, and one naming
// two payins, are unmatched; a wrong amount is an amount_mismatch and
// receives nothing.
func TestEntriesAppliedOnce(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		one, two, three := fx.payin(50000), fx.payin(7000), fx.payin(8000)
		day := fx.file(
			feedtest.Entry{Key: "KB1", AmountMinor: 50000, Remittance: "invoice " + strings.ToLower(one)},
			feedtest.Entry{Key: "", AmountMinor: 100, Remittance: "no key"},
			feedtest.Entry{Key: "KB3", AmountMinor: 7000, Remittance: two + " and " + three},
			feedtest.Entry{Key: "KB4", AmountMinor: 7999, Remittance: three},
		)
		got := fx.imported("ntf.xml", feedtest.Camt054(day))
		if got.Status != feed.Applied || got.Entries != 4 || got.Applied != 1 || got.Exceptions != 3 {
			t.Errorf("the notification: %+v, want applied, 4 entries, 1 applied, 3 exceptions", got)
		}
		for _, tt := range []struct{ uuid, status, ref string }{{one, "received", "KB1"}, {two, "pending", ""}, {three, "pending", ""}} {
			if status, ref := fx.payinStatus(tt.uuid); status != tt.status || ref != tt.ref {
				t.Errorf("payin %s: %s %q, want %s %q", tt.uuid, status, ref, tt.status, tt.ref)
			}
		}
		if n := fx.openExceptions(); n != 3 {
			t.Errorf("%d open exceptions, want 3", n)
		}
		day.MsgID = "STMT"
		day.Entries = day.Entries[:1]
		stmt := feedtest.Camt053(day)
		if got := fx.imported("stmt.xml", stmt); got.Status != feed.Applied || got.Entries != 1 || got.Applied != 0 {
			t.Errorf("the statement: %+v, want applied, nothing moved (a duplicate entry)", got)
		}
		if got := fx.imported("stmt-again.xml", stmt); got.Status != feed.Duplicate {
			t.Errorf("the statement again: %+v, want duplicate", got)
		}
		var n int
		if err := fx.srv.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM balance_records WHERE reference_id = $1`, one).Scan(&n); err != nil || n != 1 {
			t.Errorf("payin %s has %d balance records (%v), want 1", one, n, err)
		}
	})
}

// TestRejectedWhole: a file that is not the feed's account or currency,
// fails its totals, is truncated, is a reconciliation CSV or is too large
// is rejected whole, its reason named, nothing applied; the same bytes
// again are still rejected.
func TestRejectedWhole(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		uuid := fx.payin(50000)
		credit := feedtest.Entry{Key: "KB9", AmountMinor: 50000, Remittance: uuid}
		other := fx.file(credit)
		other.Account = "999000111"
		usd := fx.file(credit)
		usd.Currency = "USD"
		good := feedtest.Camt053(fx.file(credit))
		broken := bytes.Replace(good, []byte("<Sum>500"), []byte("<Sum>400"), 1)
		tests := []struct {
			name, want string
			content    []byte
		}{
			{"another account", "account 999000111", feedtest.Camt054(other)},
			{"another currency", "in USD", feedtest.Camt054(usd)},
			{"totals", "TxsSummry", broken},
			{"truncated", "camt.053", good[:len(good)/2]},
			{"csv", "reconciliation", []byte("date,amount,reference,description\n2026-03-02,500.00,X," + uuid + "\n")},
			{"bai2 of another account", "account", feedtest.BAI2(other)},
			{"another version", "camt.054.001.02", bytes.ReplaceAll(feedtest.Camt054(fx.file(credit)), []byte("camt.054.001.08"), []byte("camt.054.001.02"))},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := fx.imported(tt.name, tt.content)
				if got.Status != feed.Rejected || !strings.Contains(got.Reason, tt.want) {
					t.Errorf("%+v, want rejected naming %q", got, tt.want)
				}
				if again := fx.imported(tt.name, tt.content); again.Status != feed.Rejected || again.Reason != got.Reason {
					t.Errorf("again: %+v", again)
				}
			})
		}
		if status, _ := fx.payinStatus(uuid); status != "pending" || fx.openExceptions() != 0 {
			t.Errorf("after the rejections the payin is %s with %d exceptions, want pending and none", status, fx.openExceptions())
		}
		small := feed.New(feed.Deps{DB: fx.srv.DB, Payins: fx.srv.Payins, MaxFileBytes: 100})
		if got, err := small.Import(context.Background(), fx.feed, "big.xml", good); err != nil || got.Status != feed.Rejected || !strings.Contains(got.Reason, "more than the 100") {
			t.Errorf("a file above the bound: %+v %v", got, err)
		}
		// In the inbox, a file above the bound is not read at all: it goes to rejected/.
		if err := os.WriteFile(filepath.Join(fx.inbox, "big.xml"), good, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := small.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(fx.inbox, "rejected", "big.xml")); err != nil {
			t.Errorf("the inbox's file above the bound is not in rejected/: %v", err)
		}
		if status, _ := fx.payinStatus(uuid); status != "pending" {
			t.Errorf("after the large file the payin is %s, want pending", status)
		}
	})
}

// TestImportResumes: a file whose import stopped after its first entry
// (its mark committed, the rest not) is finished by the next import, the
// first entry not applied again.
func TestImportResumes(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		a, b := fx.payin(1000), fx.payin(2000)
		content := feedtest.Camt054(fx.file(feedtest.Entry{Key: "R1", AmountMinor: 1000, Remittance: a}, feedtest.Entry{Key: "R2", AmountMinor: 2000, Remittance: b}))
		fx.imported("f.xml", content)
		ctx := context.Background()
		// Undo the file's second entry and its done mark, as if the
		// process died after the first: payin b pending again.
		err := fx.srv.DB.Exec(ctx, func(tx *store.Tx) error {
			for _, q := range []string{`DELETE FROM inbox_entries WHERE entry_key = 'R2'`, `DELETE FROM feed_entries WHERE entry_key = 'R2'`,
				`UPDATE inbox_files SET status = 'applying' WHERE source = '` + fx.feed.Name + `'`} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `UPDATE payins SET status = 'pending', bank_reference = NULL WHERE uuid = $1`, b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := fx.imported("f.xml", content)
		if got.Status != feed.Applied || got.Applied != 2 {
			t.Errorf("resumed: %+v, want applied with both entries", got)
		}
		for _, uuid := range []string{a, b} {
			if status, _ := fx.payinStatus(uuid); status != "received" {
				t.Errorf("payin %s is %s, want received", uuid, status)
			}
		}
		var n int
		if err := fx.srv.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM balance_records WHERE reference_id = $1`, a).Scan(&n); err != nil || n != 1 {
			t.Errorf("payin %s has %d balance records, want 1 (not applied again)", a, n)
		}
	})
}

// TestRoundingCurrencyCredits: a KRW credit with decimals is rounded half
// away from zero before it is matched, as simulate rounds one (CONTRACT
// §18, §25): 50000.4 receives a payin of 50000, 60000.5 is 60001 and not
// the total of a payin of 60000 (amount_mismatch, nothing received).
func TestRoundingCurrencyCredits(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		down, up := fx.payin(50000), fx.payin(60000)
		content := feedtest.Camt054(fx.file(feedtest.Entry{Key: "KR1", AmountMinor: 50000, Remittance: down}, feedtest.Entry{Key: "KR2", AmountMinor: 60000, Remittance: up}))
		content = bytes.Replace(content, []byte(">50000<"), []byte(">50000.4<"), 1)
		content = bytes.Replace(content, []byte(">60000<"), []byte(">60000.5<"), 1)
		got := fx.imported("krw.xml", content)
		if got.Status != feed.Applied || got.Applied != 1 || got.Exceptions != 1 {
			t.Errorf("the file: %+v, want applied with 1 applied and 1 exception", got)
		}
		if status, ref := fx.payinStatus(down); status != "received" || ref != "KR1" {
			t.Errorf("payin of 50000 after a credit of 50000.4: %s %q, want received by KR1", status, ref)
		}
		if status, _ := fx.payinStatus(up); status != "pending" {
			t.Errorf("payin of 60000 after a credit of 60000.5: %s, want pending", status)
		}
		var kind, amount string
		err := fx.srv.DB.Read().QueryRowContext(context.Background(), `SELECT kind, CAST(amount AS TEXT) FROM bank_exceptions WHERE entry_key = 'KR2'`).Scan(&kind, &amount)
		if err != nil || kind != "amount_mismatch" || amount != "60001" {
			t.Errorf("the exception of KR2: %s %s %v, want amount_mismatch of 60001", kind, amount, err)
		}
	})
}

// TestOneMerchantsFile: a file of many credits of one merchant's payins,
// whose receipts lock the few balance slots of its one account, is
// applied whole in chunks side by side (chunks of one slot's receipts go
// to one worker: without, two chunks wait for each other's slots and
// PostgreSQL aborts them as deadlocked), each payin received once; the
// file's repeated entries are applied once.
func TestOneMerchantsFile(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		const payins = 400
		var entries []feedtest.Entry
		uuids := map[string]bool{}
		for i := range payins {
			uuid := fx.payin(1000 + i)
			uuids[uuid] = true
			entries = append(entries, feedtest.Entry{Key: fmt.Sprintf("ONE%04d", i), AmountMinor: int64(1000 + i), Remittance: "order " + uuid})
		}
		entries = append(entries, entries[:20]...)
		got := fx.imported("one.xml", feedtest.Camt053(fx.file(entries...)))
		if got.Status != feed.Applied || got.Entries != payins+20 || got.Applied != payins || got.Exceptions != 0 {
			t.Errorf("the file: %+v, want applied, %d entries, %d applied, no exception", got, payins+20, payins)
		}
		var received, records int
		db := fx.srv.DB.Read()
		if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM payins WHERE status = 'received' AND bank_reference LIKE 'ONE%'`).Scan(&received); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM balance_records WHERE reference_id IN (SELECT uuid FROM payins WHERE bank_reference LIKE 'ONE%')`).Scan(&records); err != nil {
			t.Fatal(err)
		}
		if received != payins || records != payins {
			t.Errorf("%d payins received with %d balance records, want %d of each", received, records, payins)
		}
	})
}

// TestSetRefuses: payd feed set's refusals, each before anything is
// written: bad flags by name, an inbox another feed or a rail reads.
func TestSetRefuses(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn)
		ctx := context.Background()
		set := func(s feed.Settings) error {
			return fx.srv.DB.Exec(ctx, func(tx *store.Tx) error { _, err := fx.srv.Feeds.Set(ctx, tx, s); return err })
		}
		good := feed.Settings{Name: "aud-" + strings.ToLower(store.RandomID(4)), Currency: "AUD", Account: "12345678", Inbox: "dir:" + t.TempDir()}
		tests := []struct {
			name, field string
			change      func(s *feed.Settings)
		}{
			{"name", "--name", func(s *feed.Settings) { s.Name = "Bad Name" }},
			{"currency", "--currency", func(s *feed.Settings) { s.Currency = "XXX" }},
			{"account", "--account", func(s *feed.Settings) { s.Account = "abc" }},
			{"bsb", "--bsb", func(s *feed.Settings) { s.BSB = "062000" }},
			{"bic", "--bic", func(s *feed.Settings) { s.BIC = "cba" }},
			{"inbox", "--inbox", func(s *feed.Settings) { s.Inbox = "relative/path" }},
			{"sftp without keys", "--sftp-key", func(s *feed.Settings) { s.Inbox = "sftp://payd@bank.example:22/in" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := good
				tt.change(&s)
				e, ok := fault.As(set(s))
				if !ok || e.Fields[tt.field] == "" {
					t.Errorf("got %v, want a refusal naming %s", e, tt.field)
				}
			})
		}
		shared := good
		shared.Inbox = fx.feed.Inbox
		if err := set(shared); !errors.Is(err, feed.ErrInboxShared) {
			t.Errorf("an inbox another feed reads: %v", err)
		}
		if err := set(good); err != nil {
			t.Fatal(err)
		}
		list, err := feed.List(ctx, fx.srv.DB.Read())
		if err != nil || len(list) != 2 {
			t.Errorf("feeds %+v (%v), want 2", list, err)
		}
	})
}
