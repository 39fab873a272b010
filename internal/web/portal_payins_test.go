package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/payin"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// today is the merchant's date now and the days either side, in its zone.
func today(t *testing.T, e *servertest.Env, merchantID string) (yesterday, now, tomorrow string) {
	t.Helper()
	at, err := e.Merchants.Now(context.Background(), e.DB.Read(), merchantID)
	if err != nil {
		t.Fatal(err)
	}
	zone, err := merchant.Zone(context.Background(), e.DB.Read(), merchantID)
	if err != nil {
		t.Fatal(err)
	}
	day := at.In(zone)
	return day.AddDate(0, 0, -1).Format("2006-01-02"), day.Format("2006-01-02"), day.AddDate(0, 0, 1).Format("2006-01-02")
}

// TestPortalPayinsFilters: the payins page filters an account's payins by
// a status chosen from the payin statuses, a currency of the merchant's,
// a date range in its zone and a search by uuid, external_id or email,
// pages them keeping the filter, links each row to its page and the
// Export to the filter's dates; a status or currency the form cannot send,
// or a date that is none, is a 422 naming it that lists nothing.
func TestPortalPayinsFilters(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		accounts := funded(t, e, "250", "AUD", "IDR")
		idr := accounts["IDR"]
		var uuids []string
		for i := range portalPerPageForTest + 2 {
			pi, err := storetest.Write(context.Background(), e.DB, e.Payins.Create, idr, payin.Request{Currency: "IDR", Amount: "10000",
				PayinMethodName: "id_bank_qris_idr", ExternalID: fmt.Sprintf("order-%d", i), Email: fmt.Sprintf("payer%d@example.com", i)})
			if err != nil {
				t.Fatal(err)
			}
			uuids = append(uuids, pi.UUID)
		}
		first, last := uuids[0], uuids[1]
		viewer := signedIn(t, e, portalServer(t, e), idr.MerchantID, "viewer@shop.example", merchant.Viewer)
		yesterday, day, tomorrow := today(t, e, idr.MerchantID)
		tests := []struct {
			name, query string
			status      int
			want, not   []string
		}{
			{"the first page", "currency=IDR", 200, []string{"Page 1 of 2", "page=2"}, nil},
			{"the second page keeps the filter", "currency=IDR&status=pending&page=2", 200, []string{"Page 2 of 2", "status=pending"}, nil},
			{"a status", "currency=IDR&status=received", 200, []string{"No payins match these filters."}, []string{first, last}},
			{"another currency", "currency=AUD", 200, []string{"No payins."}, []string{first, last}},
			{"today", "currency=IDR&from_date=" + day + "&to_date=" + day, 200, []string{"Page 1 of 2",
				`/portal/exports/payins.csv?currency=IDR&amp;from_date=` + day + `&amp;to_date=` + day}, nil},
			{"from tomorrow", "currency=IDR&from_date=" + tomorrow, 200, []string{"No payins match"}, []string{first, last}},
			{"until yesterday", "currency=IDR&to_date=" + yesterday, 200, []string{"No payins match"}, []string{first, last}},
			{"by uuid", "currency=IDR&search=" + first, 200, []string{first, "Page 1 of 1"}, []string{last}},
			{"by external_id", "currency=IDR&search=order-0", 200, []string{first}, []string{last}},
			{"by email in another case", "currency=IDR&search=PAYER0@example.com", 200, []string{first}, []string{last}},
			{"an unknown status", "currency=IDR&status=recieved", 422, []string{`there is no status &#34;recieved&#34;`, "pending, received"}, []string{first, last}},
			{"an unknown currency", "currency=EUR", 422, []string{"currency: the merchant has no &#34;EUR&#34; account"}, []string{first, last}},
			{"a date that is none", "currency=IDR&from_date=yesterday", 422, []string{"from_date: must be a date"}, []string{first, last}},
			{"dates the wrong way round", "currency=IDR&from_date=" + tomorrow + "&to_date=" + yesterday, 422, []string{"to_date"}, []string{first, last}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := viewer.do("GET", "/portal/payins?"+tt.query, nil)
				if a.status != tt.status {
					t.Errorf("GET ?%s: %d, want %d\n%.1500s", tt.query, a.status, tt.status, a.body)
				}
				for _, w := range tt.want {
					if !strings.Contains(a.body, w) {
						t.Errorf("GET ?%s does not show %q\n%.3000s", tt.query, w, a.body)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(a.body, n) {
						t.Errorf("GET ?%s shows %q", tt.query, n)
					}
				}
			})
		}
		pages := viewer.do("GET", "/portal/payins?currency=IDR", nil).body + viewer.do("GET", "/portal/payins?currency=IDR&page=2", nil).body
		for _, uuid := range uuids {
			if n := strings.Count(pages, `<a href="/portal/payins/`+uuid+`">`); n != 1 {
				t.Errorf("payin %s is a row opening its page %d times on the two pages, want once", uuid, n)
			}
		}
		form := viewer.do("GET", "/portal/payins?"+url.Values{"status": {"expired"}}.Encode(), nil)
		for _, w := range []string{`<select name="status">`, `<option selected>expired</option>`, `<option>return_received</option>`, `type="date" name="from_date"`, `name="search"`} {
			if !strings.Contains(form.body, w) {
				t.Errorf("the filter form has no %s\n%.2000s", w, form.body)
			}
		}
	})
}

// portalPerPageForTest is the portal's page size (portalPerPage).
const portalPerPageForTest = 20

// TestPortalPayinPage: a payin's page shows its status, method, amounts
// and fee, payer, balance record and times in the merchant's zone, and the
// webhook events about it; another merchant's payin is not found.
func TestPortalPayinPage(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		idr := funded(t, e, "250", "IDR")["IDR"]
		pi, err := storetest.Write(context.Background(), e.DB, e.Payins.Create, idr, payin.Request{Currency: "IDR", Amount: "10000", Name: "Jane Payer",
			Email: "jane@example.com", ExternalID: "order-7", PayinMethodName: "id_bank_qris_idr"})
		if err != nil {
			t.Fatal(err)
		}
		srv := portalServer(t, e)
		viewer := signedIn(t, e, srv, idr.MerchantID, "viewer@shop.example", merchant.Viewer)
		a := viewer.do("GET", "/portal/payins/"+pi.UUID, nil)
		if a.status != http.StatusOK {
			t.Fatalf("GET the payin's page: %d\n%.1000s", a.status, a.body)
		}
		for _, w := range []string{`id="status">pending</dd><dd id="status-text">Waiting for the customer&#39;s payment`, "id_bank_qris_idr", `id="total">10000.00 IDR`, `id="fee">`,
			"Jane Payer", "jane@example.com", "order-7", `id="balance-id">none yet`, "AEDT", `id="deliveries"`} {
			if !strings.Contains(a.body, w) && !strings.Contains(a.body, strings.Replace(w, "AEDT", "AEST", 1)) {
				t.Errorf("the payin's page does not show %q\n%.3000s", w, a.body)
			}
		}
		other := funded(t, e, "1", "IDR")["IDR"]
		stranger := signedIn(t, e, srv, other.MerchantID, "stranger@shop.example", merchant.Admin)
		if a := stranger.do("GET", "/portal/payins/"+pi.UUID, nil); a.status != http.StatusNotFound {
			t.Errorf("another merchant's payin: %d, want 404", a.status)
		}
	})
}
