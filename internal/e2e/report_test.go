package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/server"
	"payd/internal/store/storetest"
)

var sydneyZone = merchant.Location("Australia/Sydney")

// reportEntry is one record of GET /v2/reports/settlements.
type reportEntry struct {
	ID              string `json:"id"`
	ReportFrequency string `json:"report_frequency"`
	Currency        string `json:"currency"`
	PeriodStart     string `json:"period_start"`
	PeriodEnd       string `json:"period_end"`
	FileName        string `json:"file_name"`
	FileSize        int64  `json:"file_size"`
	ContentType     string `json:"content_type"`
	SHA256          string `json:"sha256"`
	CreatedAt       string `json:"created_at"`
	Summary         struct {
		SettlementCount  json.Number `json:"settlement_count"`
		SettledAmount    json.Number `json:"settled_amount"`
		SettledFee       json.Number `json:"settled_fee"`
		ClosingBalance   json.Number `json:"closing_balance"`
		ClosingBalanceAt string      `json:"closing_balance_at"`
	} `json:"summary"`
	FileURL string `json:"file_url"`
}

type reportPage struct {
	Records    []reportEntry `json:"records"`
	NextCursor *string       `json:"next_cursor"`
	HasMore    bool          `json:"has_more"`
}

// reports lists every report of frequency ("" for both), latest period first.
func (p *payd) reports(as creds, frequency string) []reportEntry {
	p.t.Helper()
	var out []reportEntry
	cursor := ""
	for {
		q := url.Values{"size": {"10"}}
		if frequency != "" {
			q.Set("report_frequency", frequency)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := p.get("/v2/reports/settlements?"+q.Encode(), as)
		want(p.t, r, 200)
		var page reportPage
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.UseNumber()
		if err := dec.Decode(&page); err != nil {
			p.t.Fatal(err)
		}
		out = append(out, page.Records...)
		if !page.HasMore {
			return out
		}
		cursor = deref(page.NextCursor)
	}
}

// fetch GETs a file_url with no headers at all, as a browser or curl would.
func (p *payd) fetch(fileURL string) response {
	p.t.Helper()
	if !strings.HasPrefix(fileURL, p.base+"/") {
		p.t.Fatalf("file_url %s is not under %s", fileURL, p.base)
	}
	return p.do(req{method: "GET", path: strings.TrimPrefix(fileURL, p.base)})
}

// setClock moves the merchant's clock to at.
func (p *payd) setClock(as creds, at time.Time) {
	p.t.Helper()
	want(p.t, p.post("/v2/sandbox/clock", as, map[string]any{"now": at.Format(time.RFC3339Nano)}), 200)
}

// nextCutoff is the first 09:00 in Sydney after t.
func nextCutoff(t time.Time) time.Time {
	l := t.In(sydneyZone)
	c := time.Date(l.Year(), l.Month(), l.Day(), 9, 0, 0, 0, sydneyZone)
	if !c.After(t) {
		c = time.Date(l.Year(), l.Month(), l.Day()+1, 9, 0, 0, 0, sydneyZone)
	}
	return c
}

func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return at
}

// wantRowsMatchHistory fails unless the report's file holds, oldest first,
// exactly the balance records GET /v2/balances/history shows for its
// period, and is the same bytes the ledger rebuilds.
func wantRowsMatchHistory(t *testing.T, p *payd, as creds, r reportEntry) [][]string {
	t.Helper()
	got := p.fetch(r.FileURL)
	want(t, got, 200)
	sum := sha256.Sum256(got.Body)
	if got.Header.Get("Content-Type") != "text/csv" || !strings.Contains(got.Header.Get("Content-Disposition"), `filename=`+r.FileName) ||
		int64(len(got.Body)) != r.FileSize || hex.EncodeToString(sum[:]) != r.SHA256 {
		t.Errorf("file answer %v, %d bytes, sha256 %x; report %+v", got.Header, len(got.Body), sum, r)
	}
	lines, err := csv.NewReader(bytes.NewReader(got.Body)).ReadAll()
	if err != nil {
		t.Fatalf("the file is not CSV: %v\n%s", err, got.Body)
	}
	if !slices.Contains(lines[0], "Reference") || !slices.Contains(lines[0], "Balance ID") {
		t.Errorf("header %v lacks Reference or Balance ID", lines[0])
	}
	q := url.Values{"from_date": {r.PeriodStart}, "to_date": {r.PeriodEnd}, "size": {"100"}}
	history := p.history(as, q.Encode())
	if history.HasMore {
		t.Fatal("more history than one page")
	}
	var rows, wantRows []string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Join([]string{l[1], l[3], l[4], l[7]}, " "))
	}
	for i := len(history.Records) - 1; i >= 0; i-- { // history is newest first
		h := history.Records[i]
		wantRows = append(wantRows, strings.Join([]string{h.ID, h.TransactionType, h.RequestType, h.Amount.String()}, " "))
	}
	if !slices.Equal(rows, wantRows) {
		t.Errorf("%s rows (Balance ID, type, request type, amount):\n%v\nbalance history of its period:\n%v", r.FileName, rows, wantRows)
	}
	again, err := p.srv.Reports.Rebuild(context.Background(), as.MerchantID, r.ID)
	if err != nil || !bytes.Equal(again, got.Body) {
		t.Errorf("%s rebuilt from the ledger differs (%v):\n%s\nserved:\n%s", r.FileName, err, again, got.Body)
	}
	return lines
}

// TestReportsDailyAndMonthly: at 09:00 local the day's report and, on the
// 1st, the month's are made; each holds the balance records of its period
// as balance history shows them, its summary counts the settlements, and
// its bytes are the ones the ledger rebuilds. report.created goes to the
// settlement config's webhook.
func TestReportsDailyAndMonthly(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		opened := p.clockNow(m)
		p.fund(m, "500")
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand",
			"external_bank_account": audBank, "webhook_notification": map[string]any{"endpoint_url": hooks.url, "authorization_header": "Basic cmVwb3J0cw=="}}}), 200)
		settled := str(p.post("/v2/settlements", m, map[string]any{"amount": "120.50"}).JSON(t), "uuid")
		p.advance(m, 10) // the rail confirms
		hooks.waitTypes(t, "settlement.processing", "settlement.completed")
		first := nextCutoff(opened)
		p.setClock(m, first.Add(-time.Minute)) // the test clock runs on from where it is set
		if got := p.reports(m, ""); len(got) != 0 {
			t.Fatalf("a minute before 09:00: %d reports", len(got))
		}
		p.setClock(m, first)
		daily := p.reports(m, "daily")
		if len(daily) != 1 {
			t.Fatalf("at 09:00: %d daily reports, want 1", len(daily))
		}
		d := daily[0]
		if s := d.Summary; s.SettlementCount.String() != "1" || s.SettledAmount.String() != "120.50" || s.SettledFee.String() != "1.00" ||
			s.ClosingBalance.String() != "378.50" || s.ClosingBalanceAt != d.PeriodEnd {
			t.Errorf("summary %+v, want one settlement of 120.50 (fee 1.00) and 378.50 left at %s", s, d.PeriodEnd)
		}
		if end := parseTime(t, d.PeriodEnd); !end.Equal(first) || parseTime(t, d.PeriodStart).In(sydneyZone).Hour() != 9 || d.ContentType != "text/csv" {
			t.Errorf("daily report %+v, want a period ending %v", d, first)
		}
		lines := wantRowsMatchHistory(t, p, m, d)
		var settlementRow []string
		for _, l := range lines[1:] {
			if l[3] == "settlement" {
				settlementRow = l
			}
		}
		if settlementRow == nil || settlementRow[2] != settled || settlementRow[5] != "done" {
			t.Errorf("settlement row %v, want Reference %s and status done", settlementRow, settled)
		}
		hooks.waitTypes(t, "settlement.processing", "settlement.completed", "report.created")
		if e := hooks.events[2]; str(e.Record, "id") != d.ID || e.Auth != "Basic cmVwb3J0cw==" || e.Record["file_url"] != nil {
			t.Errorf("report.created = %+v, want report %s with a null file_url, sent with the configured Authorization", e, d.ID)
		}

		// The month: 09:00 on the next 1st.
		l := first.In(sydneyZone)
		monthEnd := time.Date(l.Year(), l.Month()+1, 1, 9, 0, 0, 0, sydneyZone)
		if l.Day() == 1 {
			monthEnd = first
		}
		p.fund(m, "25")
		p.setClock(m, monthEnd)
		monthly := p.reports(m, "monthly")
		if len(monthly) != 1 {
			t.Fatalf("at %v: %d monthly reports, want 1", monthEnd, len(monthly))
		}
		mo := monthly[0]
		if start := parseTime(t, mo.PeriodStart).In(sydneyZone); start.Day() != 1 || start.Hour() != 9 || !parseTime(t, mo.PeriodEnd).Equal(monthEnd) {
			t.Errorf("monthly period %s to %s, want 09:00 on the 1st to %v", mo.PeriodStart, mo.PeriodEnd, monthEnd)
		}
		if mo.Summary.SettlementCount.String() != "1" || mo.Summary.ClosingBalance.String() != "403.50" {
			t.Errorf("monthly summary %+v", mo.Summary)
		}
		wantRowsMatchHistory(t, p, m, mo)
		days := p.reports(m, "daily")
		wantDays := int(monthEnd.Sub(first).Hours()/24+0.5) + 1
		if len(days) != wantDays {
			t.Errorf("%d daily reports by %v, want %d", len(days), monthEnd, wantDays)
		}
		for _, d := range days {
			wantRowsMatchHistory(t, p, m, d)
		}
		if all := p.reports(m, ""); len(all) != wantDays+1 || all[0].PeriodEnd < all[len(all)-1].PeriodEnd {
			t.Errorf("all reports: %d, want %d, latest period first", len(all), wantDays+1)
		}
		wantLedgerClean(t, p)
	})
}

// TestReportLinks: file_url is fetched with no headers for three minutes
// on the merchant's clock; an altered link, a late one, and one that names
// another report are all 403 alike; a list refuses a bad report_frequency,
// size or cursor.
func TestReportLinks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "10")
		p.setClock(m, nextCutoff(p.clockNow(m)).Add(24*time.Hour))
		list := p.reports(m, "daily")
		if len(list) != 2 {
			t.Fatalf("%d daily reports, want 2", len(list))
		}
		u, err := url.Parse(list[0].FileURL)
		if err != nil {
			t.Fatal(err)
		}
		altered := func(name, value string) string {
			q := u.Query()
			q.Set(name, value)
			return p.base + "/v2/reports/files?" + q.Encode()
		}
		other, _ := url.Parse(list[1].FileURL)
		for _, tt := range []struct{ name, link string }{
			{"another report's id", altered("id", list[1].ID)},
			{"another report's signature", altered("signature", other.Query().Get("signature"))},
			{"expiry moved", altered("expires", "99999999999999")},
			{"signature changed", altered("signature", strings.Repeat("A", 43))},
			{"unknown key", altered("key", "ZZZZZZZZ")},
			{"unknown merchant", altered("merchant", "ZZZZZZZZ")},
			{"no signature", p.base + "/v2/reports/files?id=" + list[0].ID},
		} {
			t.Run(tt.name, func(t *testing.T) { wantError(t, p.fetch(tt.link), 403, "LINK_INVALID", "") })
		}
		// The merchant's clock also moves with real time: 10 s before the
		// expiry leave a slow machine room between listing and fetching.
		p.advance(m, 170)
		want(t, p.fetch(list[0].FileURL), 200)
		p.advance(m, 11)
		wantError(t, p.fetch(list[0].FileURL), 403, "LINK_INVALID", "")
		if fresh := p.reports(m, "daily")[0]; fresh.FileURL == list[0].FileURL {
			t.Error("a second listing gave the same link; want one freshly signed")
		} else {
			want(t, p.fetch(fresh.FileURL), 200)
		}

		for _, tt := range []struct{ query, field string }{
			{"report_frequency=weekly", "report_frequency"},
			{"size=0", "size"},
			{"size=101", "size"},
			{"cursor=bm90LWEtY3Vyc29y", "cursor"},
		} {
			t.Run(tt.query, func(t *testing.T) {
				wantError(t, p.get("/v2/reports/settlements?"+tt.query, m), 422, "VALIDATION_FAILED", tt.field)
			})
		}
		page := p.get("/v2/reports/settlements?size=1", m).JSON(t)
		if page["has_more"] != true || page["next_cursor"] == nil {
			t.Errorf("size=1 of 2: %v", page)
		}
	})
}

// TestReportsAcrossDST: in Australia/Sydney the day daylight saving starts
// (2026-10-04, 23 hours from 09:00 to 09:00) and the day it ends
// (2027-04-04, 25 hours) each get one report, made at 09:00 local.
func TestReportsAcrossDST(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		opened time.Time // where the deployment's clock starts
		hours  []float64 // lengths of the daily periods from the opening day's 09:00
	}{
		{"daylight saving starts", time.Date(2026, 10, 2, 12, 0, 0, 0, sydneyZone), []float64{24, 23, 24}},
		{"daylight saving ends", time.Date(2027, 4, 2, 12, 0, 0, 0, sydneyZone), []float64{24, 25, 24}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			shift := func(c *server.Config) { c.Clock = clock.Offset(clock.Real{}, time.Until(tt.opened)) }
			each(t, func(t *testing.T, p *payd) {
				m := p.merchant("AUD")["AUD"]
				cutoff := nextCutoff(p.clockNow(m))
				for day, hours := range tt.hours {
					p.fund(m, "10")
					p.setClock(m, cutoff.Add(-time.Minute))
					if n := len(p.reports(m, "daily")); n != day {
						t.Errorf("a minute before %v: %d reports, want %d", cutoff, n, day)
					}
					p.setClock(m, cutoff)
					got := p.reports(m, "daily")
					if len(got) != day+1 {
						t.Fatalf("at %v: %d reports, want %d", cutoff, len(got), day+1)
					}
					r := got[0]
					start, end := parseTime(t, r.PeriodStart), parseTime(t, r.PeriodEnd)
					created := parseTime(t, r.CreatedAt).In(sydneyZone)
					if !end.Equal(cutoff) || end.Sub(start).Hours() != hours || created.Hour() != 9 || created.Minute() != 0 {
						t.Errorf("report %s: %v to %v (%v hours), made %v; want %v hours ending %v, made at 09:00",
							r.FileName, start.In(sydneyZone), end.In(sydneyZone), end.Sub(start).Hours(), created, hours, cutoff)
					}
					cutoff = nextCutoff(cutoff)
				}
				wantLedgerClean(t, p)
			}, shift)
		})
	}
}

// TestReportsAfterDowntime: days that end while no payd runs are each
// made once by the next process to start, and once only however many
// start after it.
func TestReportsAfterDowntime(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var m creds
		var opened time.Time
		t.Run("before the downtime", func(t *testing.T) {
			a := start(t, dsn)
			m = a.merchant("AUD")["AUD"]
			a.fund(m, "10")
			opened = a.clockNow(m)
		})
		later := func(c *server.Config) { c.Clock = clock.Offset(clock.Real{}, 50*time.Hour) }
		b := start(t, dsn, later)
		b.runDue(m)
		missed := 0
		for c := nextCutoff(opened); !c.After(b.clockNow(m)); c = nextCutoff(c) {
			missed++
		}
		if got := b.reports(m, "daily"); len(got) != missed {
			t.Errorf("after %d missed days: %d daily reports", missed, len(got))
		}
		c := start(t, dsn, later)
		c.runDue(m)
		b.runDue(m)
		got := c.reports(m, "daily")
		periods := map[string]bool{}
		for _, r := range got {
			periods[r.PeriodStart] = true
		}
		if len(got) != missed || len(periods) != missed {
			t.Errorf("after another start: %d reports over %d periods, want %d", len(got), len(periods), missed)
		}
		wantLedgerClean(t, c)
	})
}

// TestReportsOnceWithTwoProcesses: two payd processes on one database both
// run the report jobs: each period is made and announced once.
func TestReportsOnceWithTwoProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		m := a.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		want(t, a.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand",
			"external_bank_account": audBank, "webhook_notification": map[string]any{"endpoint_url": hooks.url}}}), 200)
		target := nextCutoff(a.clockNow(m)).Add(5 * 24 * time.Hour)
		var wg sync.WaitGroup
		advance := func(p *payd, body map[string]any) {
			if r, err := p.send(req{method: "POST", path: "/v2/sandbox/clock", as: &m, body: body}); err != nil || r.Status != 200 {
				t.Errorf("advance: %v %d %s", err, r.Status, r.Body)
			}
		}
		wg.Go(func() { advance(a, map[string]any{"now": target.Format(time.RFC3339)}) })
		for _, p := range []*payd{b, a, b} {
			wg.Go(func() { advance(p, map[string]any{"advance_seconds": 0}) }) // runs what is due, racing the first
		}
		wg.Wait()
		a.runDue(m)
		b.runDue(m)
		got := b.reports(m, "")
		ids := map[string]bool{}
		for _, r := range got {
			ids[r.ReportFrequency+" "+r.PeriodStart] = true
		}
		if len(got) < 6 || len(ids) != len(got) {
			t.Fatalf("%d reports over %d periods, want at least 6, one per period", len(got), len(ids))
		}
		waitUntil(t, "report.created for each report", 20*time.Second, func() bool { return len(hooks.types()) >= len(got) })
		seen := map[string]int{}
		hooks.mu.Lock()
		for _, e := range hooks.events {
			seen[str(e.Record, "id")]++
		}
		hooks.mu.Unlock()
		for _, r := range got {
			if seen[r.ID] != 1 {
				t.Errorf("report %s announced %d times", r.FileName, seen[r.ID])
			}
		}
		var events int
		a.srv.DB.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE merchant_id = $1 AND event_type = 'report.created'`, m.MerchantID).Scan(&events)
		if events != len(got) {
			t.Errorf("%d report.created events for %d reports", events, len(got))
		}
		wantLedgerClean(t, a)
	})
}

var reportLink = regexp.MustCompile(`href="([^"]*/api/v2/reports/files\?[^"]*)"`)

// TestPortalReports: the portal's reports page lists the account's reports
// with links signed for the page, which open the file with no session.
func TestPortalReports(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD", "JPY")["AUD"]
		p.fund(m, "42")
		p.setClock(m, nextCutoff(p.clockNow(m)))
		r := p.reports(m, "daily")[0]
		viewer := p.newPortalUser(t, m.MerchantID, "viewer@shop.example", merchant.Viewer)
		page := viewer.do("GET", "/portal/reports?currency=AUD", nil)
		if page.status != 200 || !strings.Contains(page.body, r.FileName) {
			t.Fatalf("reports page: %d\n%.1500s", page.status, page.body)
		}
		links := reportLink.FindAllStringSubmatch(page.body, -1)
		if len(links) != 1 {
			t.Fatalf("%d report links on the page, want 1", len(links))
		}
		res, err := http.Get(html.UnescapeString(links[0][1]))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv" {
			t.Errorf("the page's link: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if jpy := viewer.do("GET", "/portal/reports?currency=JPY&frequency=monthly", nil); jpy.status != 200 || strings.Contains(jpy.body, r.FileName) {
			t.Errorf("the JPY page shows AUD's report or fails: %d", jpy.status)
		}
	})
}
