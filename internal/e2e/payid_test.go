package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// payidRequest creates a one-time PayID payment request and returns it.
func (p *payd) payidRequest(as creds, body map[string]any) map[string]any {
	p.t.Helper()
	r := p.post("/v1/merchants/create_payment", as, body)
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// payInto simulates an NPP payment into a PayID.
func (p *payd) payInto(as creds, payid string, amount any, payer string) response {
	p.t.Helper()
	return p.post("/v1/payment_requests/simulate_payment", as, map[string]any{"payid": payid, "amount": amount, "payer_name": payer})
}

// requestStatus reads a request's status by id.
func (p *payd) requestStatus(as creds, id string) string {
	p.t.Helper()
	r := p.get("/v1/payment_requests/status?id="+id, as)
	want(p.t, r, 200)
	return str(r.JSON(p.t), "status")
}

func num(m map[string]any, key string) string {
	if n, ok := m[key].(json.Number); ok {
		return n.String()
	}
	return fmt.Sprint(m[key])
}

// TestPayIDRequestPaid: a request is created with metadata and a webhook
// target, paid its exact total over the sandbox NPP, credited (incoming,
// then available less the 0.5 % fee, one history record), its PayID
// deregistered, every change a webhook carrying the metadata; then the
// merchant sends the money back.
func TestPayIDRequestPaid(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		req := p.payidRequest(m, map[string]any{"amount": "100.00", "gst": true, "name": "Jane Payer", "description": "Order 7",
			"external_id": "order-7", "emails": []string{"jane@example.com"}, "metadata": map[string]any{"order": map[string]any{"id": 7}},
			"payment_request_notification": map[string]any{"endpoint_url": hooks.url, "authorization_header": "Bearer hook-secret"}})
		id, payid := num(req, "id"), str(req, "request_payid")
		if str(req, "status") != "pending" || str(req, "total") != "110.00" || str(req, "gst_amount") != "10.00" || !strings.Contains(payid, "@") {
			t.Fatalf("created %v, want pending, total 110.00 with GST, an email-style PayID", req)
		}
		st := p.get("/v1/payment_requests/status?payid="+payid, m).JSON(t)
		if num(st, "id") != id || str(st, "status") != "pending" || str(st, "amount") != "100.00" {
			t.Errorf("status by PayID = %v", st)
		}
		detail := p.get("/v1/payment_requests/detail?id="+id, m)
		want(t, detail, 200)
		if d := detail.JSON(t); num(d, "id") != id || str(d, "request_payid") != payid || str(d, "status") != "pending" {
			t.Errorf("detail by id = %v, want the pending request %s", d, payid)
		}

		got := p.payInto(m, payid, "110.00", "JANE PAYER")
		want(t, got, 200)
		if r := got.JSON(t); str(r, "outcome") != "received" {
			t.Errorf("payment outcome = %v, want received", r)
		}
		p.runDue(m)
		fee := int64(55) // 0.5 % of 110.00
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 11000-fee || minorUnits(t, b.Incoming, "AUD") != 0 {
			t.Errorf("after clearing: available %s incoming %s, want %d minor units available", b.Available, b.Incoming, 11000-fee)
		}
		if h := p.history(m, "currency=AUD"); len(h.Records) != 1 || h.Records[0].TransactionType != "payment" || h.Records[0].Status != "done" {
			t.Errorf("history = %+v, want one done payment", h.Records)
		}
		wantError(t, p.payInto(m, payid, "110.00", "AGAIN"), 422, "PAYID_DEREGISTERED", "")

		wantError(t, p.post("/v1/payment_requests/return", m, map[string]any{"id": json.Number(id), "reason": "customer cancelled"}),
			422, "INSUFFICIENT_FUNDS", "") // the fee is not refunded: the return needs the whole 110.00
		p.fund(m, "10")
		ret := p.post("/v1/payment_requests/return", m, map[string]any{"id": json.Number(id), "reason": "customer cancelled"})
		want(t, ret, 200)
		if str(ret.JSON(t), "status") != "return_pending" {
			t.Errorf("return = %s", ret.Body)
		}
		p.advance(m, 10)
		if s := p.requestStatus(m, id); s != "return_received" {
			t.Errorf("after the payer's bank accepted the return: %s", s)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 1000-fee || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("after the return: available %s outgoing %s", b.Available, b.Outgoing)
		}
		hooks.waitTypes(t, "payment_request.pending", "payment_request.received", "payment_request.return_pending", "payment_request.return_received")
		for _, e := range hooks.all() {
			meta, _ := e.Record["metadata"].(map[string]any)
			if e.Auth != "Bearer hook-secret" || meta["order"] == nil {
				t.Errorf("%s webhook: Authorization %q, metadata %v", e.Type, e.Auth, e.Record["metadata"])
			}
		}
		wantError(t, p.post("/v1/payment_requests/return", m, map[string]any{"id": json.Number(id), "reason": "twice over"}), 409, "INVALID_STATE", "")
		wantError(t, p.payInto(m, "nobody@nowhere.example", "10.00", ""), 404, "NOT_FOUND", "")

		// A return the payer's bank does not accept in time expires, and the
		// money comes back to available.
		late := p.payidRequest(m, map[string]any{"amount": "20.00"})
		want(t, p.payInto(m, str(late, "request_payid"), "20.00", "SLOW BANK"), 200)
		p.runDue(m)
		before := minorUnits(t, p.balanceOf(m, "AUD").Available, "AUD")
		want(t, p.post("/v1/payment_requests/return", m, map[string]any{"id": json.Number(num(late, "id")), "reason": "refund [sandbox:expire]"}), 200)
		p.advance(m, 10)
		if s := p.requestStatus(m, num(late, "id")); s != "return_expired" {
			t.Errorf("a return the payer's bank let time out: %s, want return_expired", s)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != before || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("after the expired return: available %s outgoing %s, want %d back in available", b.Available, b.Outgoing, before)
		}
		wantLedgerClean(t, p)
	})
}

// TestPayIDWrongAmountReturned: a payment that is not the request's exact
// total is sent back and never reaches available.
func TestPayIDWrongAmountReturned(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		req := p.payidRequest(m, map[string]any{"amount": "50.00"})
		id := num(req, "id")
		got := p.payInto(m, str(req, "request_payid"), "49.99", "SHORT PAYER")
		want(t, got, 200)
		if r := got.JSON(t); str(r, "outcome") != "returned" {
			t.Errorf("outcome = %s, want returned", got.Body)
		}
		if s := p.requestStatus(m, id); s != "return_pending" {
			t.Errorf("status = %s, want return_pending", s)
		}
		p.advance(m, 10)
		if s := p.requestStatus(m, id); s != "return_received" {
			t.Errorf("status = %s, want return_received", s)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 0 || minorUnits(t, b.Incoming, "AUD") != 0 {
			t.Errorf("balances after the wrong amount went back: %+v, want nothing", b)
		}
		wantError(t, p.payInto(m, str(req, "request_payid"), "50.00", "RIGHT PAYER"), 422, "PAYID_DEREGISTERED", "")

		rejected := p.payidRequest(m, map[string]any{"amount": "30.00"})
		want(t, p.payInto(m, str(rejected, "request_payid"), "31.00", "PAYER [sandbox:reject]"), 200)
		p.advance(m, 10)
		if s := p.requestStatus(m, num(rejected, "id")); s != "return_rejected" {
			t.Errorf("a return the payer's bank refuses: %s, want return_rejected", s)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 0 || minorUnits(t, b.Incoming, "AUD") != 3100 {
			t.Errorf("balances after a refused return: %+v, want 31.00 held in incoming and nothing available", b)
		}
		wantLedgerClean(t, p)
	})
}

// TestPayIDCancelAndExpiry: a cancelled request is expired with
// cancelled_at, its PayID refused; a request past expired_at on the
// merchant's clock expires the same way; neither can be cancelled again.
func TestPayIDCancelAndExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		req := p.payidRequest(m, map[string]any{"amount": "25.00"})
		c := p.post("/v1/payment_requests/cancel_payid", m, map[string]any{"payid": str(req, "request_payid")})
		want(t, c, 200)
		if r := c.JSON(t); str(r, "status") != "expired" || r["cancelled_at"] == nil {
			t.Errorf("cancelled = %s", c.Body)
		}
		wantError(t, p.post("/v1/payment_requests/cancel_payid", m, map[string]any{"id": req["id"]}), 409, "INVALID_STATE", "")
		wantError(t, p.payInto(m, str(req, "request_payid"), "25.00", ""), 422, "PAYID_DEREGISTERED", "")

		expiring := p.payidRequest(m, map[string]any{"amount": "25.00", "expired_at": p.clockNow(m).Add(16 * time.Minute).Format(time.RFC3339)})
		p.advance(m, 15*60)
		if s := p.requestStatus(m, num(expiring, "id")); s != "pending" {
			t.Errorf("a minute before expired_at: %s", s)
		}
		p.advance(m, 60)
		if s := p.requestStatus(m, num(expiring, "id")); s != "expired" {
			t.Errorf("at expired_at: %s, want expired", s)
		}
		wantError(t, p.payInto(m, str(expiring, "request_payid"), "25.00", ""), 422, "PAYID_DEREGISTERED", "")

		list := p.get("/v1/payment_requests?page=1", m).JSON(t)
		if num(list, "total") != "2" || num(list, "per_page") != "20" {
			t.Errorf("list = %v", list)
		}
		next := p.payidRequest(m, map[string]any{"amount": "25.00"})
		if str(next, "request_payid") == str(req, "request_payid") || str(next, "request_payid") == str(expiring, "request_payid") {
			t.Error("a PayID was handed out twice")
		}
	})
}

// TestPayIDRules: every refusal of §9, each named.
func TestPayIDRules(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "USD")
		m := apps["AUD"]
		soon := p.clockNow(m).Add(14 * time.Minute).Format(time.RFC3339)
		deep := map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": map[string]any{"f": 1}}}}}}
		late := p.clockNow(m).Add(31 * 24 * time.Hour).Format(time.RFC3339)
		var eleven []string
		for i := range 11 {
			eleven = append(eleven, fmt.Sprintf("payer%d@example.com", i))
		}
		params := merchantParams("AUD")
		params.Country, params.Timezone = "NZ", "Pacific/Auckland"
		created, err := p.srv.Merchants.Create(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		a := created.Accounts[0]
		nz := creds{MerchantID: created.MerchantID, Currency: "AUD", AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
		for _, tt := range []struct {
			name  string
			as    creds
			body  map[string]any
			code  string
			field string
		}{
			{"three decimals", m, map[string]any{"amount": "20.001"}, "VALIDATION_FAILED", "amount"},
			{"under 20 AUD", m, map[string]any{"amount": "19.99"}, "AMOUNT_OUT_OF_RANGE", ""},
			{"over 10,000 AUD", m, map[string]any{"amount": "10000.01"}, "AMOUNT_OUT_OF_RANGE", ""},
			{"no amount", m, map[string]any{"name": "x"}, "VALIDATION_FAILED", "amount"},
			{"expiry under 15 minutes", m, map[string]any{"amount": "20", "expired_at": soon}, "VALIDATION_FAILED", "expired_at"},
			{"bad email", m, map[string]any{"amount": "20", "emails": []string{"jane@example.com", "not-an-email"}}, "VALIDATION_FAILED", "emails[1]"},
			{"metadata too deep", m, map[string]any{"amount": "20", "metadata": deep}, "VALIDATION_FAILED", "metadata"},
			{"metadata too big", m, map[string]any{"amount": "20", "metadata": map[string]any{"x": strings.Repeat("y", 5000)}}, "VALIDATION_FAILED", "metadata"},
			{"not an AUD app", apps["USD"], map[string]any{"amount": "20"}, "CURRENCY_NOT_SUPPORTED", ""},
			{"bad notification URL", m, map[string]any{"amount": "20", "payment_request_notification": map[string]any{"endpoint_url": "ftp://x"}}, "VALIDATION_FAILED", "payment_request_notification.endpoint_url"},
			{"more than 10 emails", m, map[string]any{"amount": "20", "emails": eleven}, "VALIDATION_FAILED", "emails"},
			{"expiry over 30 days", m, map[string]any{"amount": "20", "expired_at": late}, "VALIDATION_FAILED", "expired_at"},
			{"gst for a merchant outside Australia", nz, map[string]any{"amount": "20", "gst": true}, "GST_NOT_ALLOWED", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.post("/v1/merchants/create_payment", tt.as, tt.body), 422, tt.code, tt.field)
			})
		}
		// A member of the wrong JSON type is the decoder's 400 (CONTRACT §3), naming it.
		wantError(t, p.post("/v1/merchants/create_payment", m, map[string]any{"amount": "20", "metadata": []any{1, 2}}), 400, "WRONG_TYPE", "metadata")
		wantError(t, p.get("/v1/payment_requests/status", m), 422, "VALIDATION_FAILED", "id")
		wantError(t, p.get("/v1/payment_requests/status?id=abc", m), 422, "VALIDATION_FAILED", "id")
		wantError(t, p.post("/v1/payment_requests/cancel_payid", m, map[string]any{}), 422, "VALIDATION_FAILED", "id")
		wantError(t, p.post("/v1/payment_requests/return", m, map[string]any{"id": 1, "reason": "no"}), 422, "VALIDATION_FAILED", "reason")
		wantError(t, p.payInto(m, "", "10", ""), 422, "VALIDATION_FAILED", "payid")
		if list := p.get("/v1/payment_requests", m).JSON(t); num(list, "total") != "0" {
			t.Errorf("refused requests were created: %v", list)
		}
	})
}

// TestPayIDStatic: a customer's static PayID takes two payments: two
// records, two webhooks, both credited; the customer id is unique.
func TestPayIDStatic(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		body := map[string]any{"name": "Jane Payer", "email": "jane@example.com", "prefix_static_payid": "jane", "external_id": "cus-7",
			"phone": "+61412345678", "customer_notification": map[string]any{"endpoint_url": hooks.url}}
		r := p.post("/v1/customers/create_static_open_payid", m, body)
		want(t, r, 201)
		st := r.JSON(t)
		payid := str(st, "static_payid")
		if str(st, "status") != "active" || !strings.HasPrefix(payid, "jane.") {
			t.Fatalf("static PayID = %s", r.Body)
		}
		dup := p.post("/v1/customers/create_static_open_payid", m, body)
		wantError(t, dup, 409, "ALREADY_EXISTS", "")
		if !strings.Contains(string(dup.Body), num(st, "id")) {
			t.Errorf("the 409 does not name the existing PayID: %s", dup.Body)
		}
		for _, amount := range []string{"12.00", "30.50"} {
			got := p.payInto(m, payid, amount, "JANE")
			want(t, got, 200)
			if str(got.JSON(t), "outcome") != "static_payment" {
				t.Errorf("payment = %s", got.Body)
			}
		}
		p.runDue(m)
		hooks.waitTypes(t, "static_payid.payment", "static_payid.payment")
		pays := p.get("/v1/customers/static_payid_payments?customer_id=cus-7", m).JSON(t)
		if num(pays, "total") != "2" {
			t.Errorf("payments = %v", pays)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 1200-6+3050-15 {
			t.Errorf("available = %s, want both payments less 0.5 %% fees", b.Available)
		}
		list := p.get("/v1/customers/get_static_open_payids?email=jane@example.com", m).JSON(t)
		if num(list, "total") != "1" {
			t.Errorf("static list = %v", list)
		}
		if list := p.get("/v1/customers/get_static_open_payids?customer_id=nobody", m).JSON(t); num(list, "total") != "0" {
			t.Errorf("filtered static list = %v", list)
		}
	})
}

// TestPayIDRaces: a payment and a cancel racing on one request leave
// exactly one outcome; two exact payments racing are credited once.
func TestPayIDRaces(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for round := range 5 {
			req := p.payidRequest(m, map[string]any{"amount": "40.00"})
			id, payid := num(req, "id"), str(req, "request_payid")
			var wg sync.WaitGroup
			var paid, cancelled int
			var mu sync.Mutex
			wg.Go(func() {
				r, err := p.send(req2(m, "/v1/payment_requests/simulate_payment", map[string]any{"payid": payid, "amount": "40.00"}))
				mu.Lock()
				defer mu.Unlock()
				if err == nil && r.Status == 200 {
					paid++
				}
			})
			wg.Go(func() {
				r, err := p.send(req2(m, "/v1/payment_requests/cancel_payid", map[string]any{"payid": payid}))
				mu.Lock()
				defer mu.Unlock()
				if err == nil && r.Status == 200 {
					cancelled++
				}
			})
			wg.Go(func() {
				r, err := p.send(req2(m, "/v1/payment_requests/simulate_payment", map[string]any{"payid": payid, "amount": "40.00"}))
				mu.Lock()
				defer mu.Unlock()
				if err == nil && r.Status == 200 {
					paid++
				}
			})
			wg.Wait()
			status := p.requestStatus(m, id)
			if paid+cancelled != 1 || (paid == 1) != (status == "received") || (cancelled == 1) != (status == "expired") {
				t.Errorf("round %d: %d payments and %d cancels accepted, status %s; want exactly one", round, paid, cancelled, status)
			}
		}
		p.runDue(m)
		var received int64
		for _, rec := range p.history(m, "currency=AUD&size=100").Records {
			if rec.TransactionType == "payment" {
				received += minorUnits(t, rec.Amount, "AUD")
			}
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != received {
			t.Errorf("available %s, but the history credits %d", b.Available, received)
		}
	})
}

// TestPayIDTenancy: another merchant sees none of A's requests or static
// PayIDs, and cannot pay into, cancel or return them.
func TestPayIDTenancy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD")["AUD"]
		b := p.merchant("AUD")["AUD"]
		req := p.payidRequest(a, map[string]any{"amount": "20.00", "external_id": "shared-ref"})
		st := p.post("/v1/customers/create_static_open_payid", a, map[string]any{"name": "A's customer", "email": "a@example.com", "external_id": "cus-1"})
		want(t, st, 201)
		id, payid, static := num(req, "id"), str(req, "request_payid"), str(st.JSON(t), "static_payid")
		wantError(t, p.get("/v1/payment_requests/status?id="+id, b), 404, "NOT_FOUND", "")
		wantError(t, p.get("/v1/payment_requests/status?payid="+payid, b), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v1/payment_requests/cancel_payid", b, map[string]any{"id": json.Number(id)}), 404, "NOT_FOUND", "")
		wantError(t, p.payInto(b, payid, "20.00", ""), 404, "NOT_FOUND", "")
		wantError(t, p.payInto(b, static, "20.00", ""), 404, "NOT_FOUND", "")
		for _, path := range []string{"/v1/payment_requests", "/v1/customers/get_static_open_payids", "/v1/customers/static_payid_payments"} {
			r := p.get(path, b)
			want(t, r, 200)
			if num(r.JSON(t), "total") != "0" || strings.Contains(string(r.Body), payid) || strings.Contains(string(r.Body), static) {
				t.Errorf("B's %s shows A's records: %s", path, r.Body)
			}
		}
		// B may use A's references for its own records.
		p.payidRequest(b, map[string]any{"amount": "20.00", "external_id": "shared-ref"})
		want(t, p.post("/v1/customers/create_static_open_payid", b, map[string]any{"name": "B's customer", "email": "a@example.com", "external_id": "cus-1"}), 201)
		if s := p.requestStatus(a, id); s != "pending" {
			t.Errorf("A's request is %s after B's calls", s)
		}
	})
}

// req2 is a POST as a merchant, for goroutines.
func req2(as creds, path string, body map[string]any) req {
	return req{method: "POST", path: path, as: &as, body: body}
}

// all is a copy of the events logged so far.
func (l *eventLog) all() []loggedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedEvent(nil), l.events...)
}

// TestPayIDLists: the request list filters on created_at by date and pages
// 20 at a time; the static list pages too.
func TestPayIDLists(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		first := p.payidRequest(m, map[string]any{"amount": "20.00"})
		day1 := p.clockNow(m).In(sydney(t)).Format("2006-01-02")
		p.advance(m, 2*24*3600)
		for range 21 {
			p.payidRequest(m, map[string]any{"amount": "20.00"})
		}
		r := p.get("/v1/payment_requests?to_date="+day1, m)
		want(t, r, 200)
		list := r.JSON(t)
		recs, _ := list["records"].([]any)
		if num(list, "total") != "1" || len(recs) != 1 || num(recs[0].(map[string]any), "id") != num(first, "id") {
			t.Errorf("requests created on %s: %v", day1, list)
		}
		list = p.get("/v1/payment_requests", m).JSON(t)
		if num(list, "total") != "22" || len(list["records"].([]any)) != 20 || num(list, "total_page") != "2" {
			t.Errorf("first page: total %v, %d records, %v pages", list["total"], len(list["records"].([]any)), list["total_page"])
		}
		if page2 := p.get("/v1/payment_requests?page=2", m).JSON(t); len(page2["records"].([]any)) != 2 {
			t.Errorf("second page: %d records", len(page2["records"].([]any)))
		}
		wantError(t, p.get("/v1/payment_requests?from_date=yesterday", m), 422, "VALIDATION_FAILED", "from_date")
		for i := range 3 {
			want(t, p.post("/v1/customers/create_static_open_payid", m, map[string]any{"name": "Payer", "email": fmt.Sprintf("p%d@example.com", i), "external_id": fmt.Sprintf("cus-%d", i)}), 201)
		}
		statics := p.get("/v1/customers/get_static_open_payids?per_page=2&page=2", m).JSON(t)
		if num(statics, "total") != "3" || len(statics["records"].([]any)) != 1 {
			t.Errorf("static PayIDs page 2 of 2: %v", statics)
		}
	})
}

func sydney(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
