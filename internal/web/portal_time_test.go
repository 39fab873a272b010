package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/server/servertest"
)

// rfc3339UTC is a time written as RFC 3339 in UTC ("…T03:05:00Z").
var rfc3339UTC = regexp.MustCompile(`\d\d:\d\d(:\d\d(\.\d+)?)?Z`)

// TestPortalTimesInMerchantZone: every page with times writes them in the
// merchant's zone (Australia/Sydney) with the zone named, never as an
// RFC 3339 string in UTC: the payouts list, a payout's page and its
// approval record, the audit log, the developers page (apps, deliveries),
// the payins list and the webhook endpoints.
func TestPortalTimesInMerchantZone(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		needsApprovals(t, e, p)
		srv := portalServer(t, e)
		maker := signedIn(t, e, srv, p.MerchantID, "maker@shop.example", merchant.Finance)
		checker := signedIn(t, e, srv, p.MerchantID, "checker@shop.example", merchant.Finance)
		admin := signedIn(t, e, srv, p.MerchantID, "admin@shop.example", merchant.Admin)
		a := maker.post("/portal/payouts/new", "/portal/payouts", payoutForm("10"))
		page := a.header.Get("Location")
		if a := checker.post(page, page+"/approve", nil); a.status != http.StatusSeeOther {
			t.Fatalf("approve: %d\n%.300s", a.status, a.body)
		}
		admin.follow(admin.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD", "expires_at": "2099-01-31T00:00:00Z"}))
		admin.follow(admin.post("/portal/developers/endpoints", "/portal/developers/endpoints", map[string]string{"url": "http://127.0.0.1:9/hooks", "enabled_events": "*"}))
		po, err := e.Payouts.Get(context.Background(), merchant.Principal{MerchantID: p.MerchantID}, strings.TrimPrefix(page, "/portal/payouts/"))
		if err != nil || po.Approval == nil || len(po.Approval.Approvals) != 1 || po.Status == payout.Held {
			t.Fatalf("the approved payout: %+v, %v", po, err)
		}
		sydney := merchant.Location("Australia/Sydney")
		local := func(t time.Time) string { return t.In(sydney).Format("2006-01-02 15:04 MST") }
		tests := []struct {
			path string
			want []string
		}{
			{"/portal/payouts", []string{local(po.CreatedAt.T)}},
			{page, []string{"<dt>Created</dt><dd>" + local(po.CreatedAt.T) + "</dd>", "checker@shop.example (finance), " + local(po.Approval.Approvals[0].DecidedAt.T)}},
			{"/portal/audit", []string{local(po.CreatedAt.T)}},
			{"/portal/developers", []string{"2099-01-31 11:00 AEDT"}},
			{"/portal/payins", nil},
			{"/portal/developers/endpoints", nil},
		}
		for _, tt := range tests {
			t.Run(tt.path, func(t *testing.T) {
				a := admin.do("GET", tt.path, nil)
				if a.status != http.StatusOK {
					t.Fatalf("%d\n%.300s", a.status, a.body)
				}
				if m := rfc3339UTC.FindString(a.body); m != "" {
					t.Errorf("the page writes %q, a UTC RFC 3339 time", m)
				}
				for _, want := range tt.want {
					if !strings.Contains(a.body, want) {
						t.Errorf("the page lacks %q\n%.3000s", want, a.body)
					}
				}
			})
		}
	})
}
