package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/report"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/storetest"
	"payd/internal/webhook"
)

var sydney = merchant.Location("Australia/Sydney")

// sweep starts the report chains, as payd serve does at start.
func sweep(t *testing.T, e *servertest.Env) {
	t.Helper()
	if err := e.Reports.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// list reads every report of p's account of frequency (all when empty), latest period first.
func list(t *testing.T, e *servertest.Env, p merchant.Principal, freq string) []report.Report {
	t.Helper()
	var out []report.Report
	cursor := ""
	for {
		page, err := e.Reports.List(context.Background(), p, report.ListQuery{Frequency: freq, Cursor: cursor, Size: 7})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Records...)
		if !page.HasMore {
			return out
		}
		cursor = *page.NextCursor
	}
}

// open fetches a report's file through its link.
func open(t *testing.T, e *servertest.Env, r report.Report) (report.File, error) {
	t.Helper()
	u, err := url.Parse(*r.FileURL)
	if err != nil {
		t.Fatal(err)
	}
	return e.Reports.Open(context.Background(), u.Query())
}

func deposit100(t *testing.T, e *servertest.Env, p merchant.Principal) {
	t.Helper()
	if _, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "100"}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
}

// TestDailyReportRowsAndSummary: at 09:00 local the day's report holds one
// row per balance record of the period, as balance history has them, its
// summary counts the settlement, the bytes rebuild identically, and
// report.created goes to the settlement config's webhook in the same
// transaction.
func TestDailyReportRowsAndSummary(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"] // 2026-03-02 12:00 in Sydney
		sweep(t, e)
		deposit100(t, e, p)
		if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand,
			ExternalBankAccount: &settlement.BankAccount{BSB: "062000", AccountNumber: "12345678", AccountName: "Shop Pty Ltd"},
			WebhookNotification: webhook.Target{EndpointURL: "http://127.0.0.1:1/hooks"}}); err != nil {
			t.Fatal(err)
		}
		st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: "40"})
		if err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 10*time.Second) // the rail confirms
		e.Clock.Set(time.Date(2026, 3, 3, 8, 59, 59, 0, sydney))
		e.RunDue(t, p.MerchantID)
		if got := list(t, e, p, ""); len(got) != 0 {
			t.Fatalf("a second before 09:00: %d reports", len(got))
		}
		e.Advance(t, p.MerchantID, time.Second)
		got := list(t, e, p, "daily")
		if len(got) != 1 {
			t.Fatalf("at 09:00: %d daily reports, want 1", len(got))
		}
		r := got[0]
		start, end := time.Date(2026, 3, 2, 9, 0, 0, 0, sydney), time.Date(2026, 3, 3, 9, 0, 0, 0, sydney)
		if !r.PeriodStart.T.Equal(start) || !r.PeriodEnd.T.Equal(end) || r.FileName != "settlement_report_daily_AUD_2026-03-02.csv" || r.ContentType != "text/csv" {
			t.Errorf("report = %+v", r)
		}
		if s := r.Summary; s.SettlementCount != 1 || s.SettledAmount.Minor != 4000 || s.SettledFee.Minor != 100 ||
			s.ClosingBalance.Minor != 5900 || !s.ClosingBalanceAt.T.Equal(end) {
			t.Errorf("summary = %+v, want 1 settlement of 40.00 + 1.00, closing 59.00 at %v", s, end)
		}
		f, err := open(t, e, r)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := csv.NewReader(bytes.NewReader(f.Content)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		records, err := ledger.Between(ctx, e.DB.Read(), p.MerchantID, p.AccountID, start, end)
		if err != nil {
			t.Fatal(err)
		}
		var ids, wantIDs []string
		for _, l := range lines[1:] {
			ids = append(ids, l[1])
		}
		// The deposit and the settlement were made in the same
		// millisecond: money in comes first.
		for _, rec := range records {
			if rec.RequestType == ledger.MoneyIn {
				wantIDs = append([]string{rec.ID}, wantIDs...)
			} else {
				wantIDs = append(wantIDs, rec.ID)
			}
		}
		if len(wantIDs) != 2 || !slices.Equal(ids, wantIDs) || int64(len(f.Content)) != r.FileSize {
			t.Errorf("rows %v, want the period's balance records %v (a deposit and a settlement)", ids, wantIDs)
		}
		settled := lines[2]
		if settled[3] != "settlement" || settled[2] != st.UUID || settled[5] != "done" || settled[10] != "59.00" {
			t.Errorf("settlement row = %v, want reference %s, done, 59.00 after", settled, st.UUID)
		}
		again, err := e.Reports.Rebuild(ctx, p.MerchantID, r.ID)
		if err != nil || !bytes.Equal(again, f.Content) {
			t.Errorf("rebuilt from the ledger:\n%s\nstored:\n%s (%v)", again, f.Content, err)
		}
		var events int
		e.DB.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND event_type = $2`, p.MerchantID, report.EventCreated).Scan(&events)
		if events != 1 {
			t.Errorf("%d report.created events, want 1", events)
		}
	})
}

// TestReportsOncePerPeriod: two processes on one database run the same
// chains at once (and each starts them again): every period has one
// report, each announced once.
func TestReportsOncePerPeriod(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		a, b := servertest.Open(t, dsn), servertest.Open(t, dsn)
		p := a.Merchant(t, "AUD", "JPY")["AUD"]
		sweep(t, a)
		sweep(t, b)
		later := time.Date(2026, 4, 5, 10, 0, 0, 0, sydney)
		a.Clock.Set(later)
		b.Clock.Set(later)
		var wg sync.WaitGroup
		for _, e := range []*servertest.Env{a, b, a, b} {
			wg.Go(func() {
				if err := e.Queue.RunDue(context.Background(), p.MerchantID); err != nil {
					t.Error(err)
				}
				if err := e.Reports.Sweep(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		a.RunDue(t, p.MerchantID)
		b.RunDue(t, p.MerchantID)
		// Opened 2026-03-02 12:00: daily periods from 2 March to 4 April, monthly March.
		for _, tt := range []struct {
			freq string
			want int
		}{{"daily", 34}, {"monthly", 1}} {
			got := list(t, a, p, tt.freq)
			starts := map[int64]bool{}
			for _, r := range got {
				starts[r.PeriodStart.T.UnixMilli()] = true
			}
			if len(got) != tt.want || len(starts) != tt.want {
				t.Errorf("%s: %d reports over %d periods, want %d of each", tt.freq, len(got), len(starts), tt.want)
			}
		}
	})
}

// TestMissedPeriodsMadeOnce: after downtime, the days that ended while no
// process ran are each made once when one starts; starting again (or
// sweeping) makes nothing more.
func TestMissedPeriodsMadeOnce(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		sweep(t, e)
		e.Clock.Set(time.Date(2026, 3, 6, 9, 30, 0, 0, sydney)) // down for the 3rd, 4th, 5th and 6th
		sweep(t, e)
		e.RunDue(t, p.MerchantID)
		sweep(t, e)
		e.RunDue(t, p.MerchantID)
		got := list(t, e, p, "daily")
		var labels []string
		for _, r := range got {
			labels = append(labels, r.FileName)
		}
		want := []string{"settlement_report_daily_AUD_2026-03-05.csv", "settlement_report_daily_AUD_2026-03-04.csv",
			"settlement_report_daily_AUD_2026-03-03.csv", "settlement_report_daily_AUD_2026-03-02.csv"}
		if !slices.Equal(labels, want) {
			t.Errorf("daily reports %v, want %v", labels, want)
		}
	})
}

// TestReportsAcrossDST: in Sydney, the day daylight saving starts
// (2026-10-04) and the day it ends (2027-04-04) each get one report at
// 09:00 local, 23 and 25 hours long.
func TestReportsAcrossDST(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, tt := range []struct {
			opened    time.Time
			label     string
			wantHours float64
		}{
			{time.Date(2026, 10, 3, 12, 0, 0, 0, sydney), "2026-10-03", 23},
			{time.Date(2027, 4, 3, 12, 0, 0, 0, sydney), "2027-04-03", 25},
		} {
			e.Clock.Set(tt.opened)
			p := e.Merchant(t, "AUD")["AUD"]
			sweep(t, e)
			e.Clock.Set(tt.opened.Add(20*time.Hour - time.Second)) // a second before local 09:00, either way
			e.RunDue(t, p.MerchantID)
			if n := len(list(t, e, p, "daily")); n != 0 {
				t.Errorf("%s: %d reports before 09:00", tt.label, n)
			}
			e.Clock.Set(tt.opened.Add(26 * time.Hour))
			e.RunDue(t, p.MerchantID)
			got := list(t, e, p, "daily")
			if len(got) != 1 {
				t.Fatalf("%s: %d reports, want 1", tt.label, len(got))
			}
			r := got[0]
			if h := r.PeriodEnd.T.Sub(r.PeriodStart.T).Hours(); h != tt.wantHours || r.PeriodEnd.T.In(sydney).Hour() != 9 || r.PeriodStart.T.In(sydney).Hour() != 9 {
				t.Errorf("%s: [%v, %v), %v hours, want %v from 09:00 to 09:00", tt.label, r.PeriodStart.T.In(sydney), r.PeriodEnd.T.In(sydney), h, tt.wantHours)
			}
		}
	})
}

// TestLinks: a listed link opens its file for three minutes on the
// merchant's clock; an altered one, a late one, and another merchant's
// report under a valid signature are all refused alike; a rotated key's
// links keep working until they expire.
func TestLinks(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		other := e.Merchant(t, "AUD")["AUD"]
		sweep(t, e)
		e.Advance(t, p.MerchantID, 24*time.Hour)
		e.RunDue(t, other.MerchantID)
		r := list(t, e, p, "daily")[0]
		u, _ := url.Parse(*r.FileURL)
		if u.Path != "/api/v2/reports/files" {
			t.Errorf("file_url path %s", u.Path)
		}
		alter := func(name, value string) url.Values {
			v := u.Query()
			v.Set(name, value)
			return v
		}
		otherReport := list(t, e, other, "daily")[0]
		ou, _ := url.Parse(*otherReport.FileURL)
		tests := []struct {
			name  string
			query url.Values
		}{
			{"another report id", alter("id", otherReport.ID)},
			{"another merchant", alter("merchant", other.MerchantID)},
			{"later expiry", alter("expires", "99999999999999")},
			{"signature of another link", alter("signature", ou.Query().Get("signature"))},
			{"unknown key", alter("key", "ZZZZZZZZ")},
			{"no signature", alter("signature", "")},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := e.Reports.Open(ctx, tt.query); err != report.ErrLink {
					t.Errorf("Open = %v, want ErrLink", err)
				}
			})
		}
		rotated, err := report.RotateKey(ctx, e.DB, e.Clock.Now())
		if err != nil || len(rotated.Retired) != 1 || u.Query().Get("key") != rotated.Retired[0] {
			t.Fatalf("rotate: %+v %v", rotated, err)
		}
		e.Clock.Advance(report.LinkTTL)
		if _, err := e.Reports.Open(ctx, u.Query()); err != nil {
			t.Errorf("after the rotation, at its expiry: %v", err)
		}
		fresh := list(t, e, p, "daily")[0]
		if fu, _ := url.Parse(*fresh.FileURL); fu.Query().Get("key") != rotated.KeyID {
			t.Errorf("a link listed after the rotation is signed by %s, want %s", fu.Query().Get("key"), rotated.KeyID)
		}
		e.Clock.Advance(time.Millisecond)
		if _, err := e.Reports.Open(ctx, u.Query()); !fault.Is(err, report.CodeLinkInvalid) {
			t.Errorf("a millisecond past its expiry: %v, want LINK_INVALID", err)
		}
	})
}

// TestReportsAreImmutable: the database refuses to change or delete a report.
func TestReportsAreImmutable(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		sweep(t, e)
		e.Advance(t, p.MerchantID, 24*time.Hour)
		for _, stmt := range []string{`UPDATE reports SET content = $1 WHERE merchant_id = $2`, `DELETE FROM reports WHERE merchant_id = $2 AND $1 = $1`} {
			err := e.DB.Exec(context.Background(), func(tx *store.Tx) error {
				_, err := tx.ExecContext(context.Background(), stmt, []byte("x"), p.MerchantID)
				return err
			})
			if err == nil {
				t.Errorf("%s: allowed", stmt)
			}
		}
	})
}
