package e2e

import (
	"context"
	"maps"
	"strings"
	"testing"

	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/store"
	"payd/internal/store/dbcopy"
	"payd/internal/store/storetest"
)

// TestCopyMovesAnInstallation moves an installation that has been used
// (money in and out, a payin received, a payout sent, a portal user) from
// SQLite to every test database with store.Copy (payd copy), and from
// PostgreSQL and Citus on to a second database of theirs: on each, payd serves the same merchant with the same keys
// and the same answers, the ledger verifies, and new payins and payouts get
// ids of their own.
func TestCopyMovesAnInstallation(t *testing.T) {
	t.Parallel()
	src := storetest.SQLiteDSN(t)
	var (
		m, mi  creds // the merchant's AUD and IDR apps
		before copiedView
	)
	t.Run("source", func(t *testing.T) { // its server stops when it ends
		p := start(t, src)
		apps := p.merchant("AUD", "IDR")
		m, mi = apps["AUD"], apps["IDR"]
		if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "finance@example.com", merchant.Finance, "a long passphrase"); err != nil {
			t.Fatalf("create user: %v", err)
		}
		p.fund(m, "500.00")
		payin := p.post("/v2/payins", mi, map[string]any{"currency": "IDR", "amount": 50000, "payin_method_name": "id_bank_qris_idr", "external_id": "order-1"})
		want(t, payin, 201)
		want(t, p.post("/v2/payins/simulate", mi, map[string]any{"uuid": payin.JSON(t)["uuid"], "status": "completed"}), 200)
		p.createPayout(m, payoutBody("AUD", "au_bank_aud", "99.60", bsbOK))
		p.settlePayouts(m)
		before = viewOf(t, p, m, mi, payin.JSON(t)["uuid"].(string))
	})
	if t.Failed() {
		return
	}

	// check starts payd on a copy and compares what it serves with what was
	// copied, then writes to it, and returns what it serves then.
	check := func(t *testing.T, dsn string, was copiedView) copiedView {
		t.Helper()
		p := start(t, dsn)
		if got := viewOf(t, p, m, mi, was.payin["uuid"].(string)); !got.equal(was) {
			t.Errorf("after the copy payd answers\n%+v\nwant\n%+v", got, was)
		}
		verify(t, p)
		// Rows numbered on the target take ids of their own.
		payin := p.post("/v2/payins", mi, map[string]any{"currency": "IDR", "amount": 50000, "payin_method_name": "id_bank_qris_idr", "external_id": "order-2"})
		want(t, payin, 201)
		want(t, p.post("/v2/payins/simulate", mi, map[string]any{"uuid": payin.JSON(t)["uuid"], "status": "completed"}), 200)
		p.createPayout(m, payoutBody("AUD", "au_bank_aud", "5.00", bsbOK))
		p.settlePayouts(m)
		verify(t, p)
		now := viewOf(t, p, m, mi, was.payin["uuid"].(string))
		if now.balance == was.balance {
			t.Errorf("the balance did not move with the new payin and payout: %+v", now.balance)
		}
		return now
	}
	for _, target := range storetest.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			dst := target.DSN(t)
			copyDatabase(t, src, dst)
			// Copying again refuses: the target holds rows now.
			if err := copyOnce(src, dst); err == nil {
				t.Error("a second copy into the same database succeeded, want a refusal")
			}
			var now copiedView
			t.Run("serve", func(t *testing.T) { now = check(t, dst, before) })
			if target.Name == "sqlite" || t.Failed() {
				return
			}
			// Back to SQLite is refused: PostgreSQL's balances are spread
			// over rows SQLite does not have (ledger.FitCopy).
			back := storetest.SQLiteDSN(t)
			if err := copyOnce(dst, back); err == nil || !strings.Contains(err.Error(), "slot rows") {
				t.Errorf("copy from %s to SQLite: %v, want a refusal naming the slot rows", target.Name, err)
			}
			t.Run("to a second "+target.Name, func(t *testing.T) {
				again := target.DSN(t)
				copyDatabase(t, dst, again)
				check(t, again, now)
			})
		})
	}
}

func verify(t *testing.T, p *payd) {
	t.Helper()
	if problems, err := ledger.Verify(context.Background(), p.srv.DB.Read()); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v, %v", problems, err)
	}
}

// copiedView is what a merchant reads of its data.
type copiedView struct {
	balance balanceView
	history string
	payin   map[string]any
	user    bool // the portal user signs in
}

func (v copiedView) equal(w copiedView) bool {
	return v.balance == w.balance && v.history == w.history && maps.EqualFunc(v.payin, w.payin, func(a, b any) bool { return a == b }) && v.user == w.user
}

func viewOf(t *testing.T, p *payd, m, mi creds, payin string) copiedView {
	t.Helper()
	h := p.get("/v2/balances/history?size=50", m)
	want(t, h, 200)
	r := p.get("/v2/payins/detail?uuid="+payin, mi)
	want(t, r, 200)
	fields := map[string]any{}
	for k, v := range r.JSON(t) {
		switch v.(type) {
		case map[string]any, []any: // compared through the scalars
		default:
			fields[k] = v
		}
	}
	_, _, err := p.srv.Portal.Login(context.Background(), portal.Credentials{Email: "finance@example.com", Password: "a long passphrase", Client: "127.0.0.1"})
	return copiedView{balance: p.balanceOf(m, m.Currency), history: string(h.Body), payin: fields, user: err == nil}
}

// copyDatabase copies src into dst as payd copy does (both migrated, then
// store.Copy) and checks that dst holds as many rows of each table as src.
func copyDatabase(t *testing.T, src, dst string) {
	t.Helper()
	if err := copyOnce(src, dst); err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
	var counts []rowCounts
	for _, dsn := range []string{src, dst} {
		db := storetest.Open(t, dsn)
		c, err := countRows(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		// A bucket copied from SQLite gains its spread slots on PostgreSQL
		// (ledger.FitCopy): its principal rows are what was copied.
		var principal int64
		if err := db.Read().QueryRow(`SELECT count(*) FROM ledger_buckets WHERE slot = 0`).Scan(&principal); err != nil {
			t.Fatal(err)
		}
		c["ledger_buckets"] = principal
		db.Close()
		counts = append(counts, c)
	}
	if !maps.Equal(counts[0], counts[1]) {
		t.Errorf("row counts of the copy differ from the source's: %v", counts[0].changed(counts[1]))
	}
}

func copyOnce(src, dst string) error {
	ctx := context.Background()
	var dbs []*store.DB
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	for _, dsn := range []string{src, dst} {
		db, err := store.Open(ctx, dsn, store.Options{SQLiteSynchronous: "NORMAL"})
		if err != nil {
			return err
		}
		dbs = append(dbs, db)
		if _, err := db.Migrate(ctx); err != nil {
			return err
		}
	}
	return dbcopy.Copy(ctx, dbs[0], dbs[1], dbcopy.Options{Finish: ledger.FitCopy})
}
