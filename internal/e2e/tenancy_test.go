package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// tenancyCurrencies are the currencies of both merchants of the tenancy test.
var tenancyCurrencies = []string{"IDR", "PHP", "GHS", "AUD", "KRW", "NZD"}

// tenantRecords are one of each kind of record of merchant A.
type tenantRecords struct {
	apps map[string]creds
	// Payins: QR and redirect (pending), received (refundable), OTP (authorize_otp).
	qrPayin, redirectPayin, receivedPayin, otpPayin string
	payinExternalID                                 string
	// contactEmail has its KYC approved and a verification message.
	contactEmail, contactUUID                     string
	customerID, customerEmail, customerExternalID string
	depositUUID                                   string
	// payoutUUID is held (A's AUD account requires approval), so it stays put.
	payoutUUID, payoutExternalID string
	// v1PayoutID (an integer, too short to swap in bodies) and v1PayoutUUID are held too.
	v1PayoutID, v1PayoutUUID, v1ExternalID string
	pingID, pingUUID                       string
	// PayID: a pending request (its integer id too short to swap) and a
	// received one, and a static PayID with one payment.
	requestID, requestPayID, receivedRequestID string
	requestExternalID                          string
	staticPayID, staticCustomerID              string
	settlementUUID, treasuryNumber             string
	// transferUUID moves money into A's treasury account; it stays processing.
	transferUUID string
	// gatewayPaymentID is an integer, too short to swap; gatewayOrderID is swapped.
	gatewayPaymentID, gatewayOrderID string
	// payinLink is a Payment Gateway 3 link (NZD), paid once declined.
	payinLink string
	// balanceIDs are A's IDR balance records; historyCursor pages through them.
	balanceIDs    []string
	historyCursor string
	// reportID is A's AUD daily report; reportLink its file_url.
	reportID, reportLink string
	// statementID is a bank statement A uploaded; lineID its one line.
	statementID, lineID string
	// endpointID is A's webhook endpoint (for an event type that no record
	// of the test has: nothing is delivered there).
	endpointID string
	// disputeUUID disputes A's payin link, with one staged evidence file.
	disputeUUID, disputeFileID string
}

// identifiers are A's identifiers that no answer to B may contain.
func (a tenantRecords) identifiers() []string {
	ids := []string{a.qrPayin, a.redirectPayin, a.receivedPayin, a.otpPayin, a.payinExternalID, a.contactEmail, a.contactUUID,
		a.customerID, a.customerEmail, a.customerExternalID, a.depositUUID, a.pingID, a.pingUUID, a.payoutUUID, a.payoutExternalID, a.v1PayoutUUID, a.v1ExternalID,
		a.requestPayID, a.requestExternalID, a.staticPayID, a.staticCustomerID, a.settlementUUID, a.treasuryNumber, a.transferUUID, a.gatewayOrderID, a.payinLink, a.reportID,
		a.statementID, a.lineID, a.endpointID, a.disputeUUID, a.disputeFileID}
	ids = append(ids, a.balanceIDs...)
	for _, app := range a.apps {
		ids = append(ids, app.AccountNumber)
	}
	return append(ids, a.apps["AUD"].MerchantID)
}

// makeTenantRecords makes one record of each kind as A and waits until the
// workers have nothing left to do about them.
func makeTenantRecords(t *testing.T, p *payd, apps map[string]creds) tenantRecords {
	t.Helper()
	idr, aud := apps["IDR"], apps["AUD"]
	a := tenantRecords{apps: apps, payinExternalID: "a-order-1", contactEmail: "alice.tenant@example.com",
		customerEmail: "alice.customer@example.com", customerExternalID: "a-cus-1"}
	// A's first reports, made before any record exists: nothing of A's expires.
	a.reportID, a.reportLink = firstReport(t, p, apps["AUD"])
	a.qrPayin = str(pinCreate(t, p, idr, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"external_id": a.payinExternalID})), "uuid")
	a.redirectPayin = str(pinCreate(t, p, apps["PHP"], pinBody("PHP", "ph_ewallet_gcash_php", 500)), "uuid")
	a.receivedPayin = pinReceived(t, p, idr, nil, "")
	a.otpPayin = str(pinCreate(t, p, apps["GHS"], pinBody("GHS", "gh_mobile_money_ghs", 50)), "uuid")

	a.contactUUID = str(p.newContact(aud, a.contactEmail, nil), "uuid")
	want(t, p.submitKYC(aud, kycFields(a.contactEmail, "N7654321"), kycFiles(t)), 200)
	want(t, p.post("/v2/contacts/resend_verification", aud, map[string]any{"email": a.contactEmail}), 200)
	cus := customerFields(a.customerExternalID)
	cus["email"] = a.customerEmail
	a.customerID = str(p.newCustomer(aud, cus), "uuid")

	a.depositUUID = str(p.simulateDeposit(idr, idr.AccountNumber, 250000), "uuid")
	p.runDue(idr)
	p.requireApprovals(aud)
	p.fund(aud, "1000")
	a.payoutExternalID = "a-payout-1"
	a.payoutUUID = str(p.createPayout(aud, with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"external_id": a.payoutExternalID})), "uuid")
	a.v1ExternalID = "a-v1-payout-1"
	v1 := p.post("/v1/payouts", aud, v1Body(a.v1ExternalID, v1Tx("Jane", "10", v1PayID)))
	want(t, v1, 201)
	a.v1PayoutID, a.v1PayoutUUID = v1.JSON(t)["id"].(json.Number).String(), str(v1.JSON(t), "uuid")
	a.requestExternalID = "a-payid-order-1"
	pending := p.payidRequest(aud, map[string]any{"amount": "20.00", "external_id": a.requestExternalID})
	a.requestID, a.requestPayID = num(pending, "id"), str(pending, "request_payid")
	paid := p.payidRequest(aud, map[string]any{"amount": "20.00"})
	a.receivedRequestID = num(paid, "id")
	want(t, p.payInto(aud, str(paid, "request_payid"), "20.00", "PAYER"), 200)
	a.staticCustomerID = "a-static-cus-1"
	static := p.post("/v1/customers/create_static_open_payid", aud, map[string]any{"name": "Alice", "email": a.customerEmail, "external_id": a.staticCustomerID})
	want(t, static, 201)
	a.staticPayID = str(static.JSON(t), "static_payid")
	want(t, p.payInto(aud, a.staticPayID, "21.00", "ALICE"), 200)
	p.runDue(aud)
	want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &aud, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
	a.settlementUUID = str(p.post("/v2/settlements", aud, map[string]any{"amount": "10"}).JSON(t), "uuid")
	p.advance(aud, 10) // the rail answers: nothing of A's moves while B looks
	treasury, err := p.srv.Merchants.OpenTreasury(context.Background(), aud.MerchantID, "AUD")
	if err != nil {
		t.Fatal(err)
	}
	a.treasuryNumber = treasury.PublicID
	up := p.uploadStatement(aud, []byte("date,amount,reference,description\n2026-03-02,5.00,A-REF,a credit of A's\n"), "12345678")
	want(t, up, 201)
	a.statementID = str(up.JSON(t), "id")
	a.lineID = str(p.get("/v2/reconciliation/statements/detail?id="+a.statementID, aud).JSON(t)["lines"].([]any)[0].(map[string]any), "id")
	a.endpointID = str(p.newEndpoint(aud, "http://127.0.0.1:9/a-hooks", "webhook_endpoint.disabled"), "id")
	tr := p.post("/v2/transfers", aud, map[string]any{"amount": "5", "description": "to treasury", "treasury_account_id": a.treasuryNumber})
	want(t, tr, 201)
	a.transferUUID = str(tr.JSON(t), "uuid")
	tok := p.get("/v1/payment_gateways/access_token", aud)
	want(t, tok, 200)
	a.gatewayOrderID = "a-gateway-order-1"
	gw := p.gatewayCreate(str(tok.JSON(t), "access_token"), gatewayOrder(a.gatewayOrderID, "20.00", "https://shop.example/thanks", "https://shop.example/hooks"))
	want(t, gw, 200)
	a.gatewayPaymentID = num(gw.JSON(t), "payment_id")
	// The link's events go to a receiver that answers at once: a failing
	// endpoint would retry while B looks, and write attempts of A's then.
	linkHooks := newHookReceiver(t, true)
	link := p.newLink(apps["NZD"], linkBody("nz_card_nzd", "NZD", "20.00", "https://shop.example/paid", "", linkHooks.URL))
	a.payinLink = str(link, "uuid")
	_, _, linkCSRF := linkPage(t, str(link, "payment_link_url"))
	for _, outcome := range []string{"decline", "pay"} {
		if s, _, body := linkForm(t, str(link, "payment_link_url"), linkCSRF, url.Values{"outcome": {outcome}}, true); s != 200 {
			t.Fatalf("%s A's payin link: %d %s", outcome, s, body)
		}
	}
	dispute := p.post("/v2/sandbox/disputes", apps["NZD"], map[string]any{"payment_type": "payin_link", "payment_id": a.payinLink})
	want(t, dispute, 201)
	a.disputeUUID = str(dispute.JSON(t), "uuid")
	staged := p.evidence(apps["NZD"], map[string]string{"uuid": a.disputeUUID, "uncategorized_text": "A's own"}, kycFile{"a.png", kycPNG(t)})
	want(t, staged, 200)
	a.disputeFileID = str(staged.JSON(t)["evidence"].(map[string]any)["files"].([]any)[0].(map[string]any), "id")
	recv := newHookReceiver(t, true)
	r := p.post("/v2/webhooks/test", idr, map[string]any{"endpoint_url": recv.URL})
	want(t, r, 201)
	a.pingID, a.pingUUID = str(r.JSON(t), "id"), str(r.JSON(t), "uuid")
	waitUntil(t, "ping delivered", 10*time.Second, func() bool { return recv.count(a.pingID) == 1 })
	a.historyCursor = deref(p.history(idr, "size=1").NextCursor)
	if a.historyCursor == "" {
		t.Fatal("A's IDR history has one page; the cursor case needs two")
	}
	for _, rec := range p.history(idr, "size=100").Records {
		a.balanceIDs = append(a.balanceIDs, rec.ID)
	}
	waitQuiet(t, p)
	return a
}

// firstReport moves the merchant's clock to the next 09:00 in Sydney and
// returns the id and file_url of the daily report then made.
func firstReport(t *testing.T, p *payd, as creds) (id, link string) {
	t.Helper()
	p.setClock(as, nextCutoff(p.clockNow(as)))
	r := p.reports(as, "daily")
	if len(r) != 1 {
		t.Fatalf("%d daily reports at the first 09:00, want 1", len(r))
	}
	return r[0].ID, r[0].FileURL
}

// linkWith is a report link's path under /api with query values replaced.
func linkWith(t *testing.T, p *payd, link string, set map[string]string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	return strings.TrimPrefix(u.Path, "/api") + "?" + q.Encode()
}

// waitQuiet waits until no job is due and no webhook event is waiting for
// an attempt, so that what follows sees records the workers leave alone.
func waitQuiet(t *testing.T, p *payd) {
	t.Helper()
	waitUntil(t, "workers idle", 10*time.Second, func() bool {
		var busy int
		now := time.Now().UnixMilli()
		err := p.srv.DB.Read().QueryRowContext(context.Background(), `SELECT
			(SELECT count(*) FROM jobs WHERE state = 'held' OR (state = 'available' AND run_at <= $1)) +
			(SELECT count(*) FROM webhook_events WHERE status = 'pending' AND next_attempt_at <= $1)`, now).Scan(&busy)
		if err != nil {
			t.Fatalf("count pending work: %v", err)
		}
		return busy == 0
	})
}

// tenantState is what A sees of its records: each read's status and body.
func tenantState(t *testing.T, p *payd, a tenantRecords) map[string]string {
	t.Helper()
	reads := []struct {
		currency, path string
	}{
		{"IDR", "/v2/payins/detail?uuid=" + a.qrPayin},
		{"PHP", "/v2/payins/detail?uuid=" + a.redirectPayin},
		{"IDR", "/v2/payins/detail?uuid=" + a.receivedPayin},
		{"GHS", "/v2/payins/detail?uuid=" + a.otpPayin},
		{"AUD", "/v2/contacts/detail?email=" + queryEscape(a.contactEmail)},
		{"AUD", "/v2/contacts"},
		{"AUD", "/v2/contacts/verification_messages"},
		{"AUD", "/v2/customers/detail?id=" + a.customerID},
		{"AUD", "/v2/customers"},
		{"IDR", "/v2/balances"},
		{"IDR", "/v2/webhooks/deliveries?uuid=" + a.pingUUID},
		{"AUD", "/v2/payouts/detail?uuid=" + a.payoutUUID},
		{"AUD", "/v2/payouts/all"},
		{"AUD", "/v1/payouts/detail?id=" + a.v1PayoutID},
		{"NZD", "/v3/payin_links/detail?uuid=" + a.payinLink},
		{"NZD", "/v2/disputes/detail?uuid=" + a.disputeUUID},
	}
	for _, c := range tenancyCurrencies {
		reads = append(reads, struct{ currency, path string }{c, "/v2/payins/all"},
			struct{ currency, path string }{c, "/v2/balances/history?size=100&currency=" + c})
	}
	out := map[string]string{}
	for _, rd := range reads {
		r := p.get(rd.path, a.apps[rd.currency])
		want(t, r, 200)
		out[rd.currency+" "+rd.path] = string(r.Body)
	}
	return out
}

// wantSameState fails for each read of A whose answer changed.
func wantSameState(t *testing.T, before, after map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if before[k] != after[k] {
			t.Errorf("A's GET %s changed:\nbefore %s\nafter  %s", k, before[k], after[k])
		}
	}
}

// tenancyCase is a request of B that names A's records.
type tenancyCase struct {
	name         string
	method, path string // path may carry a query
	as           string // currency of B's app
	body         map[string]any
	form         map[string]string  // multipart text parts (with kycFiles), instead of body
	files        map[string]kycFile // the form's files, instead of kycFiles
	// accessToken sends B's access token in the access-token header instead
	// of the keys (payment gateway link creation).
	accessToken bool
	// status and code are the answer wanted, both for A's identifiers and for
	// unknown ones: 404 NOT_FOUND for every lookup.
	status int
	code   string
}

// op is the case's operation as the OpenAPI document names it.
func (c tenancyCase) op() string {
	path, _, _ := strings.Cut(c.path, "?")
	return c.method + " " + path
}

// writes reports whether the case is allowed to write: B creating or
// changing its own records with values A also uses.
func (c tenancyCase) writes() bool { return c.method != http.MethodGet && c.status < 300 }

// send sends the case as b with each identifier swapped.
func (c tenancyCase) send(t *testing.T, p *payd, b map[string]creds, swap *strings.Replacer) response {
	t.Helper()
	as := b[c.as]
	r := req{method: c.method, path: swap.Replace(c.path), as: &as}
	if c.accessToken {
		tok := p.get("/v1/payment_gateways/access_token", as)
		want(t, tok, 200)
		r.as, r.header = nil, map[string]string{"access-token": str(tok.JSON(t), "access_token")}
	}
	switch {
	case c.form != nil:
		fields := map[string]string{}
		for k, v := range c.form {
			fields[k] = swap.Replace(v)
		}
		files := c.files
		if files == nil {
			files = kycFiles(t)
		}
		body, contentType := kycForm(t, fields, files)
		r.body, r.header = body, map[string]string{"Content-Type": contentType}
	case c.body != nil:
		raw, err := json.Marshal(c.body)
		if err != nil {
			t.Fatal(err)
		}
		r.body = swap.Replace(string(raw))
	}
	return p.do(r)
}

// tenancyCases are B's requests with A's identifiers: every endpoint that
// takes an id, uuid, email, account number or external id.
func tenancyCases(a tenantRecords, bCustomerID string, bReportLink func(set map[string]string) string) []tenancyCase {
	const nf = "NOT_FOUND"
	return []tenancyCase{
		{name: "payin detail (QR)", method: "GET", path: "/v2/payins/detail?uuid=" + a.qrPayin, as: "IDR", status: 404, code: nf},
		{name: "payin detail (redirect)", method: "GET", path: "/v2/payins/detail?uuid=" + a.redirectPayin, as: "PHP", status: 404, code: nf},
		{name: "payin detail (received)", method: "GET", path: "/v2/payins/detail?uuid=" + a.receivedPayin, as: "IDR", status: 404, code: nf},
		{name: "payin detail (OTP)", method: "GET", path: "/v2/payins/detail?uuid=" + a.otpPayin, as: "GHS", status: 404, code: nf},
		{name: "cancel (QR)", method: "POST", path: "/v2/payins/cancel", as: "IDR", body: map[string]any{"uuid": a.qrPayin}, status: 404, code: nf},
		{name: "cancel (redirect)", method: "POST", path: "/v2/payins/cancel", as: "PHP", body: map[string]any{"uuid": a.redirectPayin}, status: 404, code: nf},
		{name: "simulate completed (QR)", method: "POST", path: "/v2/payins/simulate", as: "IDR", body: map[string]any{"uuid": a.qrPayin, "status": "completed"}, status: 404, code: nf},
		{name: "simulate failed (redirect)", method: "POST", path: "/v2/payins/simulate", as: "PHP", body: map[string]any{"uuid": a.redirectPayin, "status": "failed"}, status: 404, code: nf},
		{name: "simulate (OTP)", method: "POST", path: "/v2/payins/simulate", as: "GHS", body: map[string]any{"uuid": a.otpPayin, "status": "completed"}, status: 404, code: nf},
		{name: "refund in full", method: "POST", path: "/v2/payins/refund", as: "IDR", body: map[string]any{"uuid": a.receivedPayin, "description": "not mine to refund"}, status: 404, code: nf},
		{name: "refund in part", method: "POST", path: "/v2/payins/refund", as: "IDR", body: map[string]any{"uuid": a.receivedPayin, "amount": "1000", "description": "not mine to refund"}, status: 404, code: nf},
		{name: "bank/confirm_otp right code", method: "POST", path: "/v2/payins/bank/confirm_otp", as: "GHS", body: map[string]any{"uuid": a.otpPayin, "code": "123456"}, status: 404, code: nf},
		{name: "bank/confirm_otp wrong code", method: "POST", path: "/v2/payins/bank/confirm_otp", as: "GHS", body: map[string]any{"uuid": a.otpPayin, "code": "000000"}, status: 404, code: nf},
		{name: "confirm_otp", method: "POST", path: "/v2/payins/confirm_otp", as: "GHS", body: map[string]any{"uuid": a.otpPayin, "code": "123456"}, status: 404, code: nf},
		{name: "simulate_deposit", method: "POST", path: "/v1/simulate_deposit", as: "IDR", body: map[string]any{"account_number": a.apps["IDR"].AccountNumber, "amount": 100}, status: 404, code: nf},
		{name: "simulate_deposit into another currency's account", method: "POST", path: "/v1/simulate_deposit", as: "IDR", body: map[string]any{"account_number": a.apps["AUD"].AccountNumber, "amount": 100}, status: 404, code: nf},
		{name: "contact detail", method: "GET", path: "/v2/contacts/detail?email=" + queryEscape(a.contactEmail), as: "AUD", status: 404, code: nf},
		{name: "contact detail in upper case", method: "GET", path: "/v2/contacts/detail?email=" + queryEscape(strings.ToUpper(a.contactEmail)), as: "AUD", status: 404, code: nf},
		{name: "contact update_info", method: "PUT", path: "/v2/contact/update_info", as: "AUD", body: map[string]any{"email": a.contactEmail, "city": "Perth"}, status: 404, code: nf},
		{name: "resend_verification by email", method: "POST", path: "/v2/contacts/resend_verification", as: "AUD", body: map[string]any{"email": a.contactEmail}, status: 404, code: nf},
		{name: "resend_verification by phone", method: "POST", path: "/v2/contacts/resend_verification", as: "AUD", body: map[string]any{"email": a.contactEmail, "resend_to": "phone"}, status: 404, code: nf},
		{name: "submit_kyc", method: "POST", path: "/v2/contacts/submit_kyc", as: "AUD", form: kycFields(a.contactEmail, "N1111111"), status: 404, code: nf},
		{name: "customer detail", method: "GET", path: "/v2/customers/detail?id=" + a.customerID, as: "AUD", status: 404, code: nf},
		{name: "customer update", method: "PUT", path: "/v2/customers/update", as: "AUD", body: map[string]any{"id": a.customerID, "city": "Perth"}, status: 404, code: nf},
		{name: "webhook resend", method: "POST", path: "/v2/webhooks/deliveries/resend", as: "IDR", body: map[string]any{"id": a.pingID}, status: 404, code: nf},
		{name: "payout detail", method: "GET", path: "/v2/payouts/detail?uuid=" + a.payoutUUID, as: "AUD", status: 404, code: nf},
		{name: "payouts by A's external_id", method: "GET", path: "/v2/payouts/all?external_id=" + a.payoutExternalID, as: "AUD", status: 200},
		{name: "v1 payout detail by A's id", method: "GET", path: "/v1/payouts/detail?id=" + a.v1PayoutID, as: "AUD", status: 404, code: nf},
		{name: "v1 payout detail by A's uuid", method: "GET", path: "/v1/payouts/detail?uuid=" + a.v1PayoutUUID, as: "AUD", status: 404, code: nf},
		{name: "v1 payout with A's external_id (B has no funds)", method: "POST", path: "/v1/payouts", as: "AUD",
			body: v1Body(a.v1ExternalID, v1Tx("Jane", "10", v1PayID)), status: 422, code: "INSUFFICIENT_FUNDS"},
		{name: "v1 payout file with A's external_id (B has no funds)", method: "POST", path: "/v1/payouts/file", as: "AUD",
			form:   map[string]string{"description": "Batch from a file", "external_id": a.v1ExternalID},
			files:  map[string]kycFile{"file": {filename: "b.csv", data: []byte("payee,amount,payid,payid_type\nJane,10,jane@example.com,email\n")}},
			status: 422, code: "INSUFFICIENT_FUNDS"},
		{name: "payout with A's external_id (B has no funds)", method: "POST", path: "/v2/payouts", as: "AUD",
			body: with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"external_id": a.payoutExternalID}), status: 422, code: "INSUFFICIENT_FUNDS"},

		{name: "payment request status by A's id", method: "GET", path: "/v1/payment_requests/status?id=" + a.requestID, as: "AUD", status: 404, code: nf},
		{name: "payment request status by A's PayID", method: "GET", path: "/v1/payment_requests/status?payid=" + queryEscape(a.requestPayID), as: "AUD", status: 404, code: nf},
		{name: "payment request detail by A's PayID", method: "GET", path: "/v1/payment_requests/detail?payid=" + queryEscape(a.requestPayID), as: "AUD", status: 404, code: nf},
		{name: "cancel A's request by id", method: "POST", path: "/v1/payment_requests/cancel_payid", as: "AUD", body: map[string]any{"id": json.Number(a.requestID)}, status: 404, code: nf},
		{name: "cancel A's request by PayID", method: "POST", path: "/v1/payment_requests/cancel_payid", as: "AUD", body: map[string]any{"payid": a.requestPayID}, status: 404, code: nf},
		{name: "return A's received request", method: "POST", path: "/v1/payment_requests/return", as: "AUD", body: map[string]any{"id": json.Number(a.receivedRequestID), "reason": "not mine to return"}, status: 404, code: nf},
		{name: "pay into A's request PayID", method: "POST", path: "/v1/payment_requests/simulate_payment", as: "AUD", body: map[string]any{"payid": a.requestPayID, "amount": "20.00"}, status: 404, code: nf},
		{name: "pay into A's static PayID", method: "POST", path: "/v1/payment_requests/simulate_payment", as: "AUD", body: map[string]any{"payid": a.staticPayID, "amount": "20.00"}, status: 404, code: nf},
		{name: "payment request with A's external_id", method: "POST", path: "/v1/merchants/create_payment", as: "AUD", body: map[string]any{"amount": "20.00", "external_id": a.requestExternalID}, status: 201},
		{name: "static PayID for A's customer id and email", method: "POST", path: "/v1/customers/create_static_open_payid", as: "AUD",
			body: map[string]any{"name": "Bob", "email": a.customerEmail, "external_id": a.staticCustomerID}, status: 201},
		{name: "static PayIDs by A's customer id", method: "GET", path: "/v1/customers/get_static_open_payids?customer_id=" + a.staticCustomerID, as: "AUD", status: 200},
		{name: "static PayIDs by A's PayID", method: "GET", path: "/v1/customers/get_static_open_payids?payid=" + queryEscape(a.staticPayID), as: "AUD", status: 200},
		{name: "static PayID payments by A's PayID", method: "GET", path: "/v1/customers/static_payid_payments?payid=" + queryEscape(a.staticPayID), as: "AUD", status: 200},

		{name: "gateway payment by A's payment_id", method: "GET", path: "/v1/payment_gateways/payment?payment_id=" + a.gatewayPaymentID, as: "AUD", status: 404, code: nf},
		{name: "gateway payment with A's order_id", method: "POST", path: "/v1/payment_gateways/create_payment", as: "AUD", accessToken: true,
			body: gatewayOrder(a.gatewayOrderID, "20.00", "https://shop.example/thanks", "https://shop.example/hooks"), status: 200},
		{name: "settle into A's treasury account", method: "PUT", path: "/v2/settlements/config", as: "AUD",
			body: map[string]any{"frequency": "on_demand", "treasury_account_id": a.treasuryNumber}, status: 422, code: "VALIDATION_FAILED"},
		{name: "settlement detail", method: "GET", path: "/v2/settlements/detail?uuid=" + a.settlementUUID, as: "AUD", status: 404, code: nf},
		{name: "transfer detail", method: "GET", path: "/v2/transfers/detail?uuid=" + a.transferUUID, as: "AUD", status: 404, code: nf},
		{name: "simulate A's transfer", method: "POST", path: "/v2/transfers/simulate", as: "AUD", body: map[string]any{"uuid": a.transferUUID, "status": "completed"}, status: 404, code: nf},
		{name: "transfer into A's treasury account", method: "POST", path: "/v2/transfers", as: "AUD",
			body: map[string]any{"amount": "1", "description": "steal", "treasury_account_id": a.treasuryNumber}, status: 422, code: "VALIDATION_FAILED"},
		{name: "submission for A's treasury account", method: "POST", path: "/v2/treasury_accounts/submissions", as: "AUD",
			body: map[string]any{"treasury_account_id": a.treasuryNumber, "business_name": "Bob Ltd", "business_number": "123", "address": "1 St", "country": "AU",
				"contact_name": "Bob", "contact_email": "bob@example.com"}, status: 404, code: nf},
		{name: "review A's treasury account", method: "POST", path: "/v2/sandbox/treasury_accounts/review", as: "AUD",
			body: map[string]any{"treasury_account_id": a.treasuryNumber, "outcome": "approved"}, status: 404, code: nf},
		{name: "balances of A's treasury account", method: "GET", path: "/v2/balances/detail?account=" + a.treasuryNumber, as: "AUD", status: 404, code: nf},
		{name: "history of A's treasury account", method: "GET", path: "/v2/balances/history?account=" + a.treasuryNumber, as: "AUD", status: 404, code: nf},
		{name: "statement detail", method: "GET", path: "/v2/reconciliation/statements/detail?id=" + a.statementID, as: "AUD", status: 404, code: nf},
		{name: "update A's webhook endpoint", method: "POST", path: "/v2/webhook_endpoints/update", as: "AUD", body: map[string]any{"id": a.endpointID, "url": "http://127.0.0.1:9/b"}, status: 404, code: nf},
		{name: "delete A's webhook endpoint", method: "POST", path: "/v2/webhook_endpoints/delete", as: "AUD", body: map[string]any{"id": a.endpointID}, status: 404, code: nf},
		{name: "rotate A's webhook endpoint's secret", method: "POST", path: "/v2/webhook_endpoints/rotate_secret", as: "AUD", body: map[string]any{"id": a.endpointID}, status: 404, code: nf},
		{name: "replay to A's webhook endpoint", method: "POST", path: "/v2/events/replay", as: "AUD",
			body: map[string]any{"endpoint_id": a.endpointID, "from_date": "2020-01-01", "to_date": "2030-01-01"}, status: 404, code: nf},
		{name: "match A's statement line", method: "POST", path: "/v2/reconciliation/lines/match", as: "AUD",
			body: map[string]any{"line_id": a.lineID, "type": "settlement", "uuid": a.settlementUUID}, status: 404, code: nf},
		{name: "unmatch A's statement line", method: "POST", path: "/v2/reconciliation/lines/unmatch", as: "AUD", body: map[string]any{"line_id": a.lineID}, status: 404, code: nf},
		{name: "ignore A's statement line", method: "POST", path: "/v2/reconciliation/lines/ignore", as: "AUD",
			body: map[string]any{"line_id": a.lineID, "reason": "not mine"}, status: 404, code: nf},
		{name: "statement of the bank account A settles to", method: "POST", path: "/v2/reconciliation/statements", as: "AUD",
			form:   map[string]string{"account_number": "12345678"},
			files:  map[string]kycFile{"file": {filename: "b.csv", data: []byte("date,amount,reference,description\n2026-03-02,10.00,X,B's\n")}},
			status: 201},
		{name: "payins export of A's treasury account", method: "GET", path: "/v2/exports/payins.csv?account=" + a.treasuryNumber, as: "AUD", status: 404, code: nf},
		{name: "payouts export of A's treasury account", method: "GET", path: "/v2/exports/payouts.csv?account=" + a.treasuryNumber, as: "AUD", status: 404, code: nf},
		{name: "balance history export of A's treasury account", method: "GET", path: "/v2/exports/balance_history.csv?account=" + a.treasuryNumber, as: "AUD", status: 404, code: nf},
		{name: "payin link detail", method: "GET", path: "/v3/payin_links/detail?uuid=" + a.payinLink, as: "NZD", status: 404, code: nf},
		{name: "refund A's payin link", method: "POST", path: "/v3/payin_links/refund", as: "NZD", body: map[string]any{"uuid": a.payinLink}, status: 404, code: nf},
		{name: "refund A's gateway payment", method: "POST", path: "/v1/payment_gateways/refund", as: "AUD", body: map[string]any{"payment_id": a.gatewayPaymentID}, status: 404, code: nf},
		{name: "dispute A's payin link", method: "POST", path: "/v2/sandbox/disputes", as: "NZD", body: map[string]any{"payment_type": "payin_link", "payment_id": a.payinLink}, status: 404, code: nf},
		{name: "A's dispute", method: "GET", path: "/v2/disputes/detail?uuid=" + a.disputeUUID, as: "NZD", status: 404, code: nf},
		{name: "A's evidence file", method: "GET", path: "/v2/disputes/evidence/file?uuid=" + a.disputeUUID + "&id=" + a.disputeFileID, as: "NZD", status: 404, code: nf},
		{name: "accept A's dispute", method: "POST", path: "/v2/disputes/accept", as: "NZD", body: map[string]any{"uuid": a.disputeUUID}, status: 404, code: nf},
		{name: "resolve A's dispute", method: "POST", path: "/v2/sandbox/disputes/resolve", as: "NZD", body: map[string]any{"uuid": a.disputeUUID, "outcome": "won"}, status: 404, code: nf},
		{name: "evidence for A's dispute", method: "POST", path: "/v2/disputes/evidence", as: "NZD", form: map[string]string{"uuid": a.disputeUUID, "submit": "true"},
			files: map[string]kycFile{"files": {"b.pdf", pdfFile.data}}, status: 404, code: nf},
		{name: "payin link detail with an app of another currency", method: "GET", path: "/v3/payin_links/detail?uuid=" + a.payinLink, as: "AUD", status: 404, code: nf},
		{name: "payin link deliveries", method: "GET", path: "/v2/webhooks/deliveries?uuid=" + a.payinLink, as: "NZD", status: 200},
		// A report link proves itself by its signature: B's own link naming A's
		// report, or carrying A's merchant, is refused as an unknown report is.
		{name: "report file: B's link with A's report id", method: "GET", path: bReportLink(map[string]string{"id": a.reportID}), as: "AUD", status: 403, code: "LINK_INVALID"},
		{name: "report file: B's link with A's merchant", method: "GET", path: bReportLink(map[string]string{"merchant": a.apps["AUD"].MerchantID}), as: "AUD", status: 403, code: "LINK_INVALID"},

		// Filters find nothing of A's.
		{name: "deliveries of A's ping", method: "GET", path: "/v2/webhooks/deliveries?uuid=" + a.pingUUID, as: "IDR", status: 200},
		{name: "deliveries of A's payin", method: "GET", path: "/v2/webhooks/deliveries?uuid=" + a.receivedPayin, as: "IDR", status: 200},
		{name: "verification messages of A's contact", method: "GET", path: "/v2/contacts/verification_messages?email=" + queryEscape(a.contactEmail), as: "AUD", status: 200},
		{name: "customers by A's email", method: "GET", path: "/v2/customers?email=" + queryEscape(a.customerEmail), as: "AUD", status: 200},
		{name: "customers by A's external_id", method: "GET", path: "/v2/customers?external_id=" + a.customerExternalID, as: "AUD", status: 200},
		{name: "payins by A's external_id", method: "GET", path: "/v2/payins/all?external_id=" + a.payinExternalID, as: "IDR", status: 200},

		// A's contact does not satisfy B's require_contact methods.
		{name: "payin for A's contact (PayID)", method: "POST", path: "/v2/payins", as: "AUD",
			body: pinWith(pinBody("AUD", "au_payid_npp_aud", 100), map[string]any{"email": a.contactEmail}), status: 422, code: "CONTACT_REQUIRED"},
		{name: "payin for A's KYC-approved contact", method: "POST", path: "/v2/payins", as: "KRW",
			body: pinWith(pinBody("KRW", "kr_bank_va_kyc_krw", 50000), map[string]any{"email": a.contactEmail}), status: 422, code: "CONTACT_REQUIRED"},

		// B's own records may use what A uses: emails and external ids are per merchant.
		{name: "contact with A's email", method: "POST", path: "/v2/contacts", as: "AUD", body: contactFields(a.contactEmail), status: 201},
		{name: "customer with A's external_id", method: "POST", path: "/v2/customers", as: "AUD",
			body: map[string]any{"first_name": "Bob", "last_name": "Other", "email": a.customerEmail, "external_id": a.customerExternalID}, status: 201},
		{name: "B's customer takes A's customer's email", method: "PUT", path: "/v2/customers/update", as: "AUD",
			body: map[string]any{"id": bCustomerID, "email": a.customerEmail}, status: 200},
		{name: "payin with A's external_id", method: "POST", path: "/v2/payins", as: "IDR",
			body: pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"external_id": a.payinExternalID}), status: 201},
	}
}

// identifierName reports whether a parameter or member names a record.
func identifierName(name string) bool {
	switch name {
	case "uuid", "id", "email", "account_number", "account", "payid", "pay_id":
		return true
	}
	return strings.HasSuffix(name, "_id")
}

// identifierOps reads the OpenAPI document's operations that take a record's
// identifier in a query parameter or anywhere in the request body.
func identifierOps(t *testing.T, p *payd) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters  []struct{ Name, In string } `json:"parameters"`
			RequestBody *struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	r := p.do(req{method: "GET", path: "/openapi.json"})
	want(t, r, 200)
	r.Decode(t, &doc)
	var names func(s map[string]any, seen map[string]bool) []string
	names = func(s map[string]any, seen map[string]bool) []string {
		var out []string
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if seen[name] {
				return nil
			}
			seen[name] = true
			return names(doc.Components.Schemas[name], seen)
		}
		for _, key := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := s[key].([]any)
			for _, sub := range list {
				m, _ := sub.(map[string]any)
				out = append(out, names(m, seen)...)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, sub := range props {
			out = append(out, name)
			m, _ := sub.(map[string]any)
			out = append(out, names(m, seen)...)
		}
		return out
	}
	var out []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			var all []string
			for _, prm := range op.Parameters {
				if prm.In == "query" {
					all = append(all, prm.Name)
				}
			}
			if op.RequestBody != nil {
				for _, c := range op.RequestBody.Content {
					all = append(all, names(c.Schema, map[string]bool{})...)
				}
			}
			if slices.ContainsFunc(all, identifierName) {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// shapeAlike returns a random identifier of the same shape as s: each digit,
// upper-case and lower-case letter replaced by another of its kind.
func shapeAlike(s string) string {
	for {
		b := []byte(s)
		for i, c := range b {
			switch {
			case c >= '0' && c <= '9':
				b[i] = '0' + byte(rand.IntN(10))
			case c >= 'A' && c <= 'Z':
				b[i] = 'A' + byte(rand.IntN(26))
			case c >= 'a' && c <= 'z':
				b[i] = 'a' + byte(rand.IntN(26))
			}
		}
		if string(b) != s {
			return string(b)
		}
	}
}

// unknownSwap maps each of A's identifiers (and its upper case) to an
// unknown one of the same shape.
func unknownSwap(a tenantRecords) *strings.Replacer {
	var pairs []string
	for _, id := range a.identifiers() {
		u := shapeAlike(id)
		// Escaped forms first: the replacer tries its pairs in order.
		pairs = append(pairs, queryEscape(id), queryEscape(u), queryEscape(strings.ToUpper(id)), queryEscape(strings.ToUpper(u)),
			id, u, strings.ToUpper(id), strings.ToUpper(u))
	}
	return strings.NewReplacer(pairs...)
}

// comparableAnswer is an answer as compared between A's and unknown
// identifiers: everything but the request id and the date.
func comparableAnswer(r response, swap *strings.Replacer) string {
	h := r.Header.Clone()
	h.Del("X-Request-Id")
	h.Del("Date")
	// The caller's rate-limit budget changes with every request it makes.
	h.Del("RateLimit-Remaining")
	h.Del("RateLimit-Reset")
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.Status)
	for _, k := range slices.Sorted(maps.Keys(h)) {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(h[k], ", "))
	}
	b.WriteString(swap.Replace(string(r.Body)))
	return b.String()
}

// wantAnswerLikeUnknown sends c as B with A's identifiers and with unknown
// ones of the same shape (swap), and fails unless the first answer is the
// case's and the two are the same but for the identifiers they echo.
func wantAnswerLikeUnknown(t *testing.T, p *payd, b map[string]creds, c tenancyCase, swap *strings.Replacer) {
	t.Helper()
	none := strings.NewReplacer()
	got := c.send(t, p, b, none)
	want(t, got, c.status)
	if c.status >= 400 {
		wantError(t, got, c.status, c.code, "")
	}
	unknown := c.send(t, p, b, swap)
	if g, u := comparableAnswer(got, swap), comparableAnswer(unknown, none); g != u {
		t.Errorf("A's identifiers answer\n%s\nunknown ones\n%s", g, u)
	}
}

// wantNothingOfA fails if an answer to B holds any of A's identifiers.
func wantNothingOfA(t *testing.T, what string, r response, a tenantRecords) {
	t.Helper()
	body := strings.ToLower(string(r.Body))
	for _, id := range a.identifiers() {
		if strings.Contains(body, strings.ToLower(id)) {
			t.Errorf("%s shows A's %s: %s", what, id, r.Body)
		}
	}
}

// TestTenancyEveryEndpoint: merchant B, with its own apps in the same
// currencies, names each of merchant A's records on every endpoint that
// takes an identifier. Each lookup answers 404 NOT_FOUND exactly as an
// unknown identifier of the same shape does, nothing is written, and A
// sees its records as before; B's lists show nothing of A's, and B may
// reuse A's emails and external ids for its own records.
func TestTenancyEveryEndpoint(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := makeTenantRecords(t, p, p.merchant(tenancyCurrencies...))
		b := p.merchant(tenancyCurrencies...)
		bCustomerID := str(p.newCustomer(b["AUD"], map[string]any{"first_name": "Bob", "last_name": "Own",
			"email": "bob.customer@example.com", "external_id": "b-cus-1"}), "uuid")
		_, bLink := firstReport(t, p, b["AUD"])
		cases := tenancyCases(a, bCustomerID, func(set map[string]string) string { return linkWith(t, p, bLink, set) })

		t.Run("every identifier-taking endpoint has a case", func(t *testing.T) {
			covered := map[string]bool{}
			for _, c := range cases {
				covered[c.op()] = true
			}
			documented := identifierOps(t, p)
			for _, op := range documented {
				if !covered[op] {
					t.Errorf("%s takes an identifier but has no tenancy case", op)
				}
			}
			for op := range covered {
				if !slices.Contains(documented, op) {
					t.Errorf("tenancy case for %s, which the document does not list as taking an identifier", op)
				}
			}
		})

		waitQuiet(t, p)
		state := tenantState(t, p, a)
		rows, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		swap := unknownSwap(a)
		for _, c := range cases {
			if !c.writes() {
				t.Run(c.name, func(t *testing.T) { wantAnswerLikeUnknown(t, p, b, c, swap) })
			}
		}
		after, err := countRows(context.Background(), p.srv.DB)
		if err != nil {
			t.Fatal(err)
		}
		if changed := rows.changed(after); len(changed) > 0 {
			t.Errorf("B's lookups of A's records wrote rows: %v", changed)
		}
		wantSameState(t, state, tenantState(t, p, a))

		t.Run("B's lists show nothing of A's", func(t *testing.T) {
			for _, cur := range tenancyCurrencies {
				for _, path := range []string{"/v2/payins/all", "/v2/balances/history?size=100&currency=" + cur,
					"/v2/balances/history?size=100&cursor=" + a.historyCursor, "/v2/contacts", "/v2/customers",
					"/v2/contacts/verification_messages", "/v2/balances", "/v2/payouts/all", "/v1/payment_requests",
					"/v1/customers/get_static_open_payids", "/v1/customers/static_payid_payments", "/v2/settlements", "/v2/reports/settlements", "/v2/reconciliation/statements",
					"/v2/events?size=100", "/v2/webhook_endpoints"} {
					r := p.get(path, b[cur])
					if r.Status != 200 {
						t.Errorf("B's GET %s: %d %s", path, r.Status, r.Body)
					}
					wantNothingOfA(t, cur+" GET "+path, r, a)
				}
				if h := p.history(b[cur], "currency="+cur); len(h.Records) != 0 {
					t.Errorf("B's %s history = %+v, want none", cur, h.Records)
				}
				wantPinBalance(t, p, b[cur], pinMoney{})
			}
		})

		for _, c := range cases {
			if c.writes() {
				t.Run(c.name, func(t *testing.T) { want(t, c.send(t, p, b, strings.NewReplacer()), c.status) })
			}
		}
		waitQuiet(t, p)
		wantSameState(t, state, tenantState(t, p, a))
	})
}
