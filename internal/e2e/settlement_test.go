package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/ledger"
	"payd/internal/server"
	"payd/internal/store/storetest"
)

var audBank = map[string]any{"bank_name": "Westpac", "bsb": "062000", "account_number": "12345678", "account_name": "Shop Pty Ltd"}

// settlements lists the merchant's settlements in its app's currency.
func (p *payd) settlements(as creds) []map[string]any {
	p.t.Helper()
	list := p.get("/v2/settlements?per_page=100", as).JSON(p.t)
	var out []map[string]any
	for _, r := range list["records"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func (p *payd) settlementStatus(as creds, uuid string) string {
	p.t.Helper()
	return str(p.get("/v2/settlements/detail?uuid="+uuid, as).JSON(p.t), "status")
}

// wantLedgerClean runs payd ledger verify on the test's database.
func wantLedgerClean(t *testing.T, p *payd) {
	t.Helper()
	if problems, err := ledger.Verify(context.Background(), p.srv.DB.Read()); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %+v", err, problems)
	}
}

// TestSettlementConfigRules: one beneficiary, validated per currency.
func TestSettlementConfigRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "JPY", "USD")
		aud := apps["AUD"]
		if c := p.get("/v2/settlements/config", aud).JSON(t); str(c, "frequency") != "on_demand" || c["external_bank_account"] != nil {
			t.Errorf("default config = %v", c)
		}
		treasury, err := p.srv.Merchants.OpenTreasury(context.Background(), aud.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			as    creds
			body  map[string]any
			field string
		}{
			{"both beneficiaries", aud, map[string]any{"frequency": "on_demand", "treasury_account_id": treasury.PublicID, "external_bank_account": audBank}, "treasury_account_id"},
			{"no beneficiary", aud, map[string]any{"frequency": "on_demand"}, "treasury_account_id"},
			{"bad frequency", aud, map[string]any{"frequency": "weekly", "external_bank_account": audBank}, "frequency"},
			{"BSB not 6 digits", aud, map[string]any{"frequency": "on_demand", "external_bank_account": with(audBank, map[string]any{"bsb": "06200"})}, "external_bank_account.bsb"},
			{"unknown Zengin branch", apps["JPY"], map[string]any{"frequency": "on_demand", "external_bank_account": map[string]any{"bank_code": "0001", "branch_code": "999",
				"account_number": "1234567", "account_name": "ｼｮｯﾌﾟ", "account_type": "ordinary"}}, "external_bank_account.branch_code"},
			{"USD without SWIFT", apps["USD"], map[string]any{"frequency": "on_demand", "external_bank_account": audBank}, "external_bank_account.swift_code"},
			{"another currency's treasury", apps["JPY"], map[string]any{"frequency": "on_demand", "treasury_account_id": treasury.PublicID}, "treasury_account_id"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &tt.as, body: tt.body}), 422, "VALIDATION_FAILED", tt.field)
			})
		}
		r := p.do(req{method: "PUT", path: "/v2/settlements/config", as: &aud, body: map[string]any{"frequency": "on_demand", "treasury_account_id": treasury.PublicID}})
		want(t, r, 200)
		if c := r.JSON(t); str(c, "treasury_account_id") != treasury.PublicID {
			t.Errorf("config = %s", r.Body)
		}
		wantError(t, p.post("/v2/settlements", apps["USD"], map[string]any{}), 422, "NO_BENEFICIARY", "")
	})
}

// TestSettlementToBank: everything withdrawable leaves available for
// outgoing as one record, then out when the rail confirms; a refused one
// comes back; a config change keeps an in-flight settlement's beneficiary.
func TestSettlementToBank(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		p.fund(m, "500")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand",
			"external_bank_account": audBank, "webhook_notification": map[string]any{"endpoint_url": hooks.url}}}), 200)
		wantError(t, p.post("/v2/settlements", m, map[string]any{"amount": "499.01"}), 422, "INSUFFICIENT_FUNDS", "")
		r := p.post("/v2/settlements", m, map[string]any{})
		want(t, r, 201)
		st := r.JSON(t)
		if str(st, "status") != "processing" || str(st, "amount") != "499.00" || str(st, "fee") != "1.00" {
			t.Fatalf("settlement = %s", r.Body)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 0 || minorUnits(t, b.Outgoing, "AUD") != 50000 {
			t.Errorf("submitted: available %s outgoing %s", b.Available, b.Outgoing)
		}
		// The beneficiary changes while the settlement is in flight.
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand",
			"external_bank_account": with(audBank, map[string]any{"account_number": "000000000"})}}), 200)
		p.advance(m, 10)
		done := p.get("/v2/settlements/detail?uuid="+str(st, "uuid"), m).JSON(t)
		bank, _ := done["beneficiary"].(map[string]any)["external_bank_account"].(map[string]any)
		if str(done, "status") != "completed" || str(bank, "account_number") != "12345678" {
			t.Errorf("settlement after the rail answered: %v", done)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Outgoing, "AUD") != 0 || minorUnits(t, b.Available, "AUD") != 0 {
			t.Errorf("after completion: %+v", b)
		}
		hooks.waitTypes(t, "settlement.processing", "settlement.completed")

		p.fund(m, "100")
		failing := p.post("/v2/settlements", m, map[string]any{"amount": "50"}).JSON(t)
		p.advance(m, 10)
		if s := p.settlementStatus(m, str(failing, "uuid")); s != "failed" {
			t.Errorf("a settlement to account 000000000: %s, want failed", s)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 10000 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("after the failure: %+v, want 100.00 back in available", b)
		}
		wantLedgerClean(t, p)
	})
}

// TestSettlementToTreasury: into the merchant's treasury account the
// settlement completes at once, with a transfer_in record there.
func TestSettlementToTreasury(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		ctx := context.Background()
		treasury, err := p.srv.Merchants.OpenTreasury(ctx, m.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		p.fund(m, "200")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "treasury_account_id": treasury.PublicID}}), 200)
		st := p.post("/v2/settlements", m, map[string]any{"amount": "150"}).JSON(t)
		if str(st, "status") != "completed" {
			t.Errorf("a treasury settlement is %s, want completed at once", str(st, "status"))
		}
		tb, err := ledger.Balances(ctx, p.srv.DB.Read(), m.MerchantID, "treasury", "AUD")
		if err != nil || len(tb) != 1 || tb[0].Available != 15000 {
			t.Errorf("treasury balance = %+v, %v; want 150.00", tb, err)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 20000-15000-100 {
			t.Errorf("payments account after the settlement: available %s", b.Available)
		}
		var transferIn int
		p.srv.DB.Read().QueryRow(`SELECT count(*) FROM balance_records WHERE account_id = $1 AND transaction_type = 'transfer_in' AND reference_id = $2`,
			treasury.ID, str(st, "uuid")).Scan(&transferIn)
		if transferIn != 1 {
			t.Errorf("%d transfer_in records on the treasury account, want 1", transferIn)
		}
		wantLedgerClean(t, p)
	})
}

// TestSettlementFundingCheck: a JPY settlement stays processing during the
// funding check (an hour on the merchant's clock), then goes out; AUD is
// never held.
func TestSettlementFundingCheck(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		jpy := p.merchant("JPY")["JPY"]
		p.fund(jpy, "100000")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &jpy, body: map[string]any{"frequency": "on_demand",
			"external_bank_account": map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "1234567", "account_name": "ｼｮｯﾌﾟ", "account_type": "ordinary"}}}), 200)
		st := p.post("/v2/settlements", jpy, map[string]any{}).JSON(t)
		p.advance(jpy, 30*60)
		if s := p.settlementStatus(jpy, str(st, "uuid")); s != "processing" {
			t.Errorf("JPY half an hour into the funding check: %s", s)
		}
		p.advance(jpy, 30*60)
		p.advance(jpy, 10)
		if s := p.settlementStatus(jpy, str(st, "uuid")); s != "completed" {
			t.Errorf("JPY after the funding check: %s, want completed", s)
		}
	})
}

// TestSettlementEndOfDay: in Australia/Sydney across the end of daylight
// saving (2027-04-04 lasts 25 hours) one settlement per local day, each at
// local midnight; days missed while the clock jumped ahead settle once.
func TestSettlementEndOfDay(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, zone string
		// days are three consecutive local dates, the middle one a DST change in Sydney.
		year  int
		month time.Month
		day   int
	}{
		{"Sydney, daylight saving starts", "Australia/Sydney", 2026, time.October, 3},
		{"Sydney, daylight saving ends", "Australia/Sydney", 2027, time.April, 3},
		{"Tokyo", "Asia/Tokyo", 2027, time.April, 3},
	} {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Fatal(err)
		}
		// The deployment's clock starts a day before the first date (a test
		// clock only moves forward, and these dates may be past).
		shift := func(c *server.Config) {
			c.Clock = clock.Offset(clock.Real{}, time.Until(time.Date(tt.year, tt.month, tt.day-1, 12, 0, 0, 0, loc)))
		}
		t.Run(tt.name, func(t *testing.T) {
			each(t, func(t *testing.T, p *payd) {
				m := p.merchantIn(tt.zone, "AUD")["AUD"]
				setClock := func(at time.Time) {
					want(t, p.post("/v2/sandbox/clock", m, map[string]any{"now": at.Format(time.RFC3339)}), 200)
				}
				first := time.Date(tt.year, tt.month, tt.day, 12, 0, 0, 0, loc)
				setClock(first)
				want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "end_of_day", "external_bank_account": audBank}}), 200)
				var wantRefs []string
				for i := range 3 {
					day := first.AddDate(0, 0, i)
					wantRefs = append(wantRefs, day.Format("2006-01-02"))
					p.fund(m, "100")
					setClock(time.Date(day.Year(), day.Month(), day.Day(), 23, 59, 0, 0, loc))
					if n := len(p.settlements(m)); n != i {
						t.Errorf("a minute before the end of %s: %d settlements, want %d", day.Format("2006-01-02"), n, i)
					}
					setClock(time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 1, 0, loc))
				}
				var refs []string
				for _, s := range p.settlements(m) {
					refs = append(refs, str(s, "reference"))
					created, err := time.Parse(time.RFC3339, str(s, "created_at"))
					if err != nil || created.In(loc).Hour() != 0 || created.In(loc).Minute() != 0 {
						t.Errorf("settlement of %s made at %v, want local midnight", str(s, "reference"), created.In(loc))
					}
				}
				slices.Sort(refs)
				if !slices.Equal(refs, wantRefs) {
					t.Errorf("end-of-day settlements %v, want one for each of %v", refs, wantRefs)
				}
				// Three days pass at once: the money settles once.
				p.fund(m, "100")
				later := first.AddDate(0, 0, 6)
				setClock(time.Date(later.Year(), later.Month(), later.Day(), 9, 0, 0, 0, loc))
				if n := len(p.settlements(m)); n != 4 {
					t.Errorf("after three missed days: %d settlements, want 4", n)
				}
				p.advance(m, 10)
				wantLedgerClean(t, p)
			}, shift)
		})
	}
}

// TestSettlementAfterDowntime: the ends of days that pass while no payd
// runs settle once, when the next process starts, however many start.
func TestSettlementAfterDowntime(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var m creds
		t.Run("before the downtime", func(t *testing.T) {
			a := start(t, dsn)
			m = a.merchant("AUD")["AUD"]
			want(t, a.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "end_of_day", "external_bank_account": audBank}}), 200)
			a.fund(m, "100")
		})
		later := func(c *server.Config) { c.Clock = clock.Offset(clock.Real{}, 50*time.Hour) }
		b := start(t, dsn, later)
		b.runDue(m)
		c := start(t, dsn, later)
		c.runDue(m)
		b.runDue(m)
		got := c.settlements(m)
		if len(got) != 1 {
			t.Fatalf("after two missed day ends and two starts: %d settlements, want 1 (the money of the first day; nothing came after)", len(got))
		}
		c.advance(m, 10)
		if b := c.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 0 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("after the settlement: %+v", b)
		}
		wantLedgerClean(t, c)
	})
}

// TestSettlementTenancy: another merchant's settlement is unknown.
func TestSettlementTenancy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD")["AUD"]
		b := p.merchant("AUD")["AUD"]
		p.fund(a, "50")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &a, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
		st := p.post("/v2/settlements", a, map[string]any{}).JSON(t)
		wantError(t, p.get("/v2/settlements/detail?uuid="+str(st, "uuid"), b), 404, "NOT_FOUND", "")
		if list := p.get("/v2/settlements", b).JSON(t); list["total"].(json.Number).String() != "0" {
			t.Errorf("B's settlements: %v", list)
		}
		if c := p.get("/v2/settlements/config", b).JSON(t); c["external_bank_account"] != nil {
			t.Errorf("B sees a config: %v", c)
		}
	})
}
