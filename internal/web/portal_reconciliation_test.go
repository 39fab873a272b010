package web_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store/storetest"
)

// upload posts a statement file through the upload form of /portal/reconciliation.
func (b *browser) upload(file []byte, fields map[string]string) answer {
	b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("csrf_token", b.csrf("/portal/reconciliation"))
	for k, v := range fields {
		w.WriteField(k, v)
	}
	part, _ := w.CreateFormFile("file", "statement.csv")
	part.Write(file)
	w.Close()
	req, err := http.NewRequest("POST", b.base+"/portal/reconciliation", &body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	raw.ReadFrom(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: raw.String()}
}

var lineForm = regexp.MustCompile(`action="(/portal/reconciliation/[A-Z0-9]+/lines/([A-Z0-9]+)/(match|unmatch|ignore))"`)

// TestPortalReconciliation: a finance user uploads a CSV statement of the
// settlement account, sees what matched and what is missing, matches the
// altered line to the missing settlement and ignores the unexplained
// credit, each a form that answers 303 back to the statement and is in
// the audit log; a viewer may not; the list pages' Export links answer CSV.
func TestPortalReconciliation(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "500"}); err != nil {
			t.Fatal(err)
		}
		e.RunDue(t, p.MerchantID)
		bank := settlement.BankAccount{BSB: "062000", AccountNumber: "12345678", AccountName: "Shop"}
		if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand, ExternalBankAccount: &bank}); err != nil {
			t.Fatal(err)
		}
		st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: money.Input("100")})
		if err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 30*time.Second)
		date := servertest.Start.In(merchant.Location("Australia/Sydney")).Format(time.DateOnly)
		file := []byte("date,amount,reference,description\n" + date + ",99.00," + *st.BankReference + ",Settlement\n" + date + ",7.00,GIFT,<b>a gift</b>\n")

		srv := portalServer(t, e)
		viewer := signedIn(t, e, srv, p.MerchantID, "viewer@shop.example", merchant.Viewer)
		if a := viewer.do("GET", "/portal/reconciliation", nil); a.status != http.StatusForbidden {
			t.Errorf("a viewer's /portal/reconciliation: %d, want 403", a.status)
		}
		finance := signedIn(t, e, srv, p.MerchantID, "finance@shop.example", merchant.Finance)
		if a := finance.upload(file, nil); a.status != 422 || !strings.Contains(a.body, "account_number") {
			t.Errorf("a CSV without its account: %d, want 422 naming account_number\n%.300s", a.status, a.body)
		}
		a := finance.upload(file, map[string]string{"account_number": "12345678", "currency": "AUD"})
		if a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/portal/reconciliation/") {
			t.Fatalf("upload: %d %s\n%.300s", a.status, a.header.Get("Location"), a.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/reconciliation")
		page := a.header.Get("Location")
		a = finance.do("GET", page, nil)
		if !strings.Contains(a.body, "matched 0, unmatched 2, ignored 0, missing 1") || !strings.Contains(a.body, st.UUID) || strings.Contains(a.body, "<b>a gift") {
			t.Fatalf("the statement's page:\n%s", a.body)
		}
		forms := lineForm.FindAllStringSubmatch(a.body, -1)
		var matchAltered, ignoreGift string
		for _, f := range forms {
			switch {
			case f[3] == "match" && matchAltered == "":
				matchAltered = f[1]
			case f[3] == "ignore":
				ignoreGift = f[1]
			}
		}
		if a := finance.post(page, matchAltered, map[string]string{"type": "settlement", "uuid": st.UUID}); a.status != http.StatusSeeOther || a.header.Get("Location") != page {
			t.Fatalf("match: %d %s\n%.300s", a.status, a.header.Get("Location"), a.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/reconciliation/{id}/lines/{line}/match")
		if a := finance.post(page, ignoreGift, map[string]string{"reason": ""}); a.status != 422 {
			t.Errorf("ignore without a reason: %d, want 422", a.status)
		}
		if a := finance.post(page, ignoreGift, map[string]string{"reason": "a gift from the owner"}); a.status != http.StatusSeeOther {
			t.Fatalf("ignore: %d\n%.300s", a.status, a.body)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/reconciliation/{id}/lines/{line}/ignore")
		if a := finance.do("GET", page, nil); !strings.Contains(a.body, "matched 1, unmatched 0, ignored 1, missing 0") {
			t.Errorf("after the match and ignore:\n%s", a.body)
		}
		if a := finance.do("GET", "/portal/reconciliation", nil); !strings.Contains(a.body, page) {
			t.Errorf("the list does not link the statement:\n%.500s", a.body)
		}

		for _, list := range []string{"/portal/", "/portal/payins", "/portal/payouts"} {
			a := finance.do("GET", list, nil)
			links := regexp.MustCompile(`class="export" href="([^"]+)"`).FindAllStringSubmatch(a.body, -1)
			if len(links) == 0 {
				t.Errorf("%s has no Export link", list)
				continue
			}
			href := strings.ReplaceAll(links[0][1], "&amp;", "&")
			got := finance.do("GET", href, nil)
			if got.status != 200 || got.header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(got.header.Get("Content-Disposition"), "attachment") {
				t.Errorf("%s's Export %s: %d %q", list, href, got.status, got.header.Get("Content-Type"))
			}
		}
		if a := finance.do("GET", "/portal/exports/balance_history.csv?from_date=2025-01-01&to_date=2026-03-02", nil); a.status != 422 || !strings.Contains(a.body, "to_date") {
			t.Errorf("a 14-month export: %d, want 422 naming to_date", a.status)
		}
		if a := finance.do("GET", "/portal/exports/secrets.csv", nil); a.status != 404 {
			t.Errorf("an unknown export: %d, want 404", a.status)
		}
	})
}
