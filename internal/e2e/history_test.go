package e2e

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHistoryCursorPaging: 25 deposits read with size=10 come back newest
// first in pages of 10, 10 and 5 with has_more true, true, false and a null
// next_cursor on the last page, every record exactly once, even when a new
// deposit arrives between pages.
func TestHistoryCursorPaging(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		var made []string
		for i := range 25 {
			made = append(made, p.simulateDeposit(m, m.AccountNumber, strconv.Itoa(i+1))["balance_id"].(string))
		}
		p.runDue(m)

		page := func(cursor *string) (historyPage, string) {
			t.Helper()
			r := p.get("/v2/balances/history?size=10&cursor="+url.QueryEscape(deref(cursor)), m)
			want(t, r, 200)
			var h historyPage
			r.Decode(t, &h)
			return h, string(r.Body)
		}
		first, _ := page(nil)
		p.simulateDeposit(m, m.AccountNumber, "99") // newer than every page: must neither appear nor shift them
		second, _ := page(first.NextCursor)
		last, lastRaw := page(second.NextCursor)

		var gotSizes []int
		var gotMore, gotCursor []bool
		var gotTypes []string
		var seen []historyRecord
		for _, h := range []historyPage{first, second, last} {
			gotSizes, gotMore, gotCursor = append(gotSizes, len(h.Records)), append(gotMore, h.HasMore), append(gotCursor, h.NextCursor != nil)
			gotTypes = append(gotTypes, h.AccountType)
			seen = append(seen, h.Records...)
		}
		if want := []string{"aggregated", "aggregated", "aggregated"}; !slices.Equal(gotTypes, want) {
			t.Errorf("account_type = %v, want %v", gotTypes, want)
		}
		if want := []int{10, 10, 5}; !slices.Equal(gotSizes, want) {
			t.Errorf("page sizes = %v, want %v", gotSizes, want)
		}
		if want := []bool{true, true, false}; !slices.Equal(gotMore, want) || !slices.Equal(gotCursor, want) {
			t.Errorf("has_more = %v, next_cursor set = %v, want %v for both", gotMore, gotCursor, want)
		}
		if !strings.Contains(lastRaw, `"next_cursor":null`) {
			t.Errorf("last page does not say next_cursor null: %s", lastRaw)
		}
		var gotIDs []string
		for _, rec := range seen {
			gotIDs = append(gotIDs, rec.ID)
		}
		if want := slices.Sorted(slices.Values(made)); !slices.Equal(slices.Sorted(slices.Values(gotIDs)), want) {
			t.Errorf("records across pages = %v, want each of %v once", gotIDs, made)
		}
		if !slices.IsSortedFunc(seen, newestFirst) {
			t.Errorf("records are not newest first: %+v", seen)
		}
	})
}

// newestFirst orders records as history lists them: created_at descending,
// then Balance ID descending.
func newestFirst(a, b historyRecord) int {
	if c := strings.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestHistoryDateFilters: with deposits at 08:00 Sydney time on three
// consecutive days (the sandbox clock moved a day between them), from_date
// and to_date select by the merchant's day for bare dates, YYYY-MM-DD and
// DD/MM/YY alike, include the whole to_date day, and take RFC 3339 instants,
// to_date inclusive of the instant named.
func TestHistoryDateFilters(t *testing.T) {
	t.Parallel()
	sydney, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		now := p.clockNow(m).In(sydney)
		day0 := time.Date(now.Year(), now.Month(), now.Day()+2, 8, 0, 0, 0, sydney)
		want(t, p.post("/v2/sandbox/clock", m, map[string]any{"now": day0.UTC().Format(time.RFC3339)}), 200)
		var deps []map[string]any
		for i := range 3 {
			deps = append(deps, p.simulateDeposit(m, m.AccountNumber, strconv.Itoa(i+1)))
			p.advance(m, 86400)
		}
		id := func(i int) string { return deps[i]["balance_id"].(string) }
		created := func(i int) time.Time {
			c, err := time.Parse(time.RFC3339Nano, deps[i]["created_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		iso := func(days int) string { return day0.AddDate(0, 0, days).Format("2006-01-02") }
		dmy := func(days int) string { return day0.AddDate(0, 0, days).Format("02/01/06") }
		tests := []struct {
			name     string
			from, to string
			want     []string // Balance IDs, newest first
		}{
			{name: "no filter", want: []string{id(2), id(1), id(0)}},
			{name: "one day, YYYY-MM-DD", from: iso(1), to: iso(1), want: []string{id(1)}},
			{name: "one day, DD/MM/YY", from: dmy(1), to: dmy(1), want: []string{id(1)}},
			{name: "from a day on", from: iso(1), want: []string{id(2), id(1)}},
			{name: "up to and including a day", to: dmy(1), want: []string{id(1), id(0)}},
			{name: "the three days", from: dmy(0), to: iso(2), want: []string{id(2), id(1), id(0)}},
			{name: "the day before the first", to: iso(-1), want: nil},
			{name: "the day after the last", from: iso(3), want: nil},
			{name: "RFC 3339 instant, to_date inclusive", from: created(1).Format(time.RFC3339Nano), to: created(1).Format(time.RFC3339Nano), want: []string{id(1)}},
			{name: "RFC 3339 with an offset", from: created(1).In(sydney).Format("2006-01-02T15:04:05.000-07:00"), want: []string{id(2), id(1)}},
			{name: "offset without a colon", to: created(1).Add(-time.Millisecond).Format("2006-01-02T15:04:05.000-0700"), want: []string{id(0)}},
			{name: "one millisecond after an instant", from: created(1).Add(time.Millisecond).Format(time.RFC3339Nano), to: created(2).Add(-time.Millisecond).Format(time.RFC3339Nano), want: nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q := url.Values{}
				q.Set("from_date", tt.from)
				q.Set("to_date", tt.to)
				var got []string
				for _, rec := range p.history(m, q.Encode()).Records {
					got = append(got, rec.ID)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("from_date=%s to_date=%s: got %v, want %v", tt.from, tt.to, got, tt.want)
				}
			})
		}
	})
}

// TestHistoryRefusesBadParameters: an out-of-range or unreadable size, date
// or cursor is a 422 naming the parameter; an unknown currency is a 422, a
// currency the merchant lacks a 404. Boundary sizes are accepted.
func TestHistoryRefusesBadParameters(t *testing.T) {
	t.Parallel()
	cursorOf := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name   string
		query  string
		status int
		code   string
		field  string
	}{
		{name: "size 0", query: "size=0", status: 422, code: "VALIDATION_FAILED", field: "size"},
		{name: "size 101", query: "size=101", status: 422, code: "VALIDATION_FAILED", field: "size"},
		{name: "size abc", query: "size=abc", status: 422, code: "VALIDATION_FAILED", field: "size"},
		{name: "size negative", query: "size=-1", status: 422, code: "VALIDATION_FAILED", field: "size"},
		{name: "size fractional", query: "size=1.5", status: 422, code: "VALIDATION_FAILED", field: "size"},
		{name: "from_date month 13", query: "from_date=2024-13-01", status: 422, code: "VALIDATION_FAILED", field: "from_date"},
		{name: "from_date 31 February", query: "from_date=31/02/24", status: 422, code: "VALIDATION_FAILED", field: "from_date"},
		{name: "from_date hour 25", query: "from_date=2024-07-29T25:00:00Z", status: 422, code: "VALIDATION_FAILED", field: "from_date"},
		{name: "to_date a word", query: "to_date=yesterday", status: 422, code: "VALIDATION_FAILED", field: "to_date"},
		{name: "to_date US order", query: "to_date=07/29/2024", status: 422, code: "VALIDATION_FAILED", field: "to_date"},
		{name: "both dates bad name both", query: "from_date=x&to_date=y", status: 422, code: "VALIDATION_FAILED", field: "to_date"},
		{name: "garbage cursor", query: "cursor=!!!not-a-cursor", status: 422, code: "VALIDATION_FAILED", field: "cursor"},
		{name: "base64 of garbage", query: "cursor=" + cursorOf("hello"), status: 422, code: "VALIDATION_FAILED", field: "cursor"},
		{name: "cursor with a short id", query: "cursor=" + cursorOf("1700000000000:ABC"), status: 422, code: "VALIDATION_FAILED", field: "cursor"},
		{name: "cursor with a negative time", query: "cursor=" + cursorOf("-1:ABCDEFGHIJ"), status: 422, code: "VALIDATION_FAILED", field: "cursor"},
		{name: "overlong cursor", query: "cursor=" + strings.Repeat("A", 300), status: 422, code: "VALIDATION_FAILED", field: "cursor"},
		{name: "unknown currency", query: "currency=XYZ", status: 422, code: "VALIDATION_FAILED", field: "currency"},
		{name: "currency the merchant lacks", query: "currency=EUR", status: 404, code: "NOT_FOUND"},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.get("/v2/balances/history?"+tt.query, m), tt.status, tt.code, tt.field)
			})
		}
		for _, q := range []string{"size=1", "size=100", "from_date=" + url.QueryEscape("2024-07-29T15:51:28"), "cursor="} {
			t.Run(q, func(t *testing.T) { want(t, p.get("/v2/balances/history?"+q, m), 200) })
		}
	})
}

// TestHistoryPerCurrency: history defaults to the calling app's currency and
// lists another currency of the merchant on request, each its own records
// with amounts in that currency's digits.
func TestHistoryPerCurrency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "JPY")
		p.simulateDeposit(accounts["AUD"], accounts["AUD"].AccountNumber, "5")
		p.simulateDeposit(accounts["AUD"], accounts["JPY"].AccountNumber, "700")
		tests := []struct {
			name  string
			as    creds
			query string
			want  []string // currency amount
		}{
			{name: "AUD app default", as: accounts["AUD"], want: []string{"AUD 5.00"}},
			{name: "JPY app default", as: accounts["JPY"], want: []string{"JPY 700"}},
			{name: "AUD app asks JPY", as: accounts["AUD"], query: "currency=JPY", want: []string{"JPY 700"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got []string
				for _, rec := range p.history(tt.as, tt.query).Records {
					got = append(got, rec.Currency+" "+rec.Amount.String())
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			})
		}
	})
}
