package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/store"
)

// pinMoney is a currency's balances in minor units.
type pinMoney struct {
	Available, Incoming, Outgoing, Reserve int64
}

// pinBalance reads as's balances in its currency, in minor units.
func pinBalance(t *testing.T, p *payd, as creds) pinMoney {
	t.Helper()
	b := p.balanceOf(as, as.Currency)
	return pinMoney{
		Available: minorUnits(t, b.Available, as.Currency),
		Incoming:  minorUnits(t, b.Incoming, as.Currency),
		Outgoing:  minorUnits(t, b.Outgoing, as.Currency),
		Reserve:   minorUnits(t, b.RollingReserve, as.Currency),
	}
}

// wantPinBalance fails the test unless as's balances are w.
func wantPinBalance(t *testing.T, p *payd, as creds, w pinMoney) {
	t.Helper()
	if got := pinBalance(t, p, as); got != w {
		t.Errorf("%s balances (minor units) = %+v, want %+v", as.Currency, got, w)
	}
}

// pinRecord is a balance history record in minor units, for comparison.
type pinRecord struct {
	TransactionType, RequestType, Status, ReferenceID string
	Amount, Fees, Total, Outgoing                     int64
}

// pinHistory reads as's balance history (newest first).
func pinHistory(t *testing.T, p *payd, as creds) []pinRecord {
	t.Helper()
	r := p.get("/v2/balances/history?size=100", as)
	want(t, r, 200)
	var page struct {
		Records []struct {
			Amount          json.Number `json:"amount"`
			RequestType     string      `json:"request_type"`
			TransactionType string      `json:"transaction_type"`
			Status          string      `json:"status"`
			ReferenceID     string      `json:"reference_id"`
			BalanceDetail   struct {
				Outgoing json.Number `json:"outgoing"`
				Fees     json.Number `json:"fees"`
				Total    json.Number `json:"total"`
			} `json:"balance_detail"`
		} `json:"records"`
	}
	r.Decode(t, &page)
	out := []pinRecord{}
	for _, rec := range page.Records {
		out = append(out, pinRecord{TransactionType: rec.TransactionType, RequestType: rec.RequestType, Status: rec.Status,
			ReferenceID: rec.ReferenceID, Amount: minorUnits(t, rec.Amount, as.Currency), Fees: minorUnits(t, rec.BalanceDetail.Fees, as.Currency),
			Total: minorUnits(t, rec.BalanceDetail.Total, as.Currency), Outgoing: minorUnits(t, rec.BalanceDetail.Outgoing, as.Currency)})
	}
	return out
}

// wantPinHistory fails the test unless as's history is w (newest first).
func wantPinHistory(t *testing.T, p *payd, as creds, w ...pinRecord) {
	t.Helper()
	if got := pinHistory(t, p, as); !slices.Equal(got, w) {
		t.Errorf("balance history =\n%+v\nwant\n%+v", got, w)
	}
}

// pinPayment is the history record of a received payin.
func pinPayment(uuid string, paid, fee int64, status string) pinRecord {
	return pinRecord{TransactionType: "payment", RequestType: "money_in", Status: status, ReferenceID: uuid,
		Amount: paid - fee, Fees: fee, Total: paid}
}

// pinRefund is the history record of a refund.
func pinRefund(uuid string, amount int64, status string) pinRecord {
	return pinRecord{TransactionType: "refund", RequestType: "money_out", Status: status, ReferenceID: uuid,
		Amount: amount, Total: amount, Outgoing: amount}
}

// pinEvents copies the log's events under its lock.
func pinEvents(l *eventLog) []loggedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// pinEvent is the last event of type typ in the log.
func pinEvent(t *testing.T, l *eventLog, typ string) loggedEvent {
	t.Helper()
	events := pinEvents(l)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == typ {
			return events[i]
		}
	}
	t.Fatalf("no %s webhook among %v", typ, l.types())
	return loggedEvent{}
}

// wantPinAuth fails the test unless every delivery carried auth verbatim.
func wantPinAuth(t *testing.T, l *eventLog, auth string) {
	t.Helper()
	for _, e := range pinEvents(l) {
		if e.Auth != auth {
			t.Errorf("%s webhook Authorization = %q, want %q verbatim", e.Type, e.Auth, auth)
		}
	}
}

// pinHookTo is a webhook_notification to the log with auth.
func pinHookTo(l *eventLog, auth string) map[string]any {
	return map[string]any{"endpoint_url": l.url, "authorization_header": auth}
}

// pinMap reads an object member.
func pinMap(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

// TestPayinFlowQR: vn_vietqr_vnd and th_qrpay_thb: create (qr_string;
// th_qrpay_thb also bank_information) → simulate → received with its
// webhook, balances less the fee and a done payment record → cancel refused.
func TestPayinFlowQR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, currency, method string
		amount                 any
		paid, fee              int64 // minor units
		payCode, bankInfo      []string
	}{
		{"vn_vietqr_vnd", "VND", "vn_vietqr_vnd", 500000, 500000, 3000, []string{"qr_string"}, nil},
		{"th_qrpay_thb", "THB", "th_qrpay_thb", "1000.00", 100000, 800, []string{"bank_information", "qr_string"},
			[]string{"account_name", "account_number", "bank_name", "branch_name", "swift_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			each(t, func(t *testing.T, p *payd) {
				m := p.merchant(tt.currency)[tt.currency]
				hooks := newEventLog(t)
				const auth = "Token qr-secret-42"
				pi := pinCreate(t, p, m, pinWith(pinBody(tt.currency, tt.method, tt.amount), map[string]any{"webhook_notification": pinHookTo(hooks, auth)}))
				uuid := str(pi, "uuid")
				pc := pinMap(pi, "pay_code")
				if got := pinKeys(pc); !slices.Equal(got, tt.payCode) {
					t.Errorf("pay_code members = %v, want %v", got, tt.payCode)
				}
				bank := pinMap(pc, "bank_information")
				if got := pinKeys(bank); !slices.Equal(got, slices.Sorted(slices.Values(tt.bankInfo))) {
					t.Errorf("bank_information members = %v, want %v", got, tt.bankInfo)
				}
				for k, v := range bank {
					if s, _ := v.(string); s == "" {
						t.Errorf("bank_information.%s = %#v, want a non-empty string", k, v)
					}
				}
				if pi["pay_by"] != "qr" || pi["status"] != "pending" {
					t.Errorf("pay_by %v status %v, want qr pending", pi["pay_by"], pi["status"])
				}

				pinSimulate(t, p, m, uuid)
				hooks.waitTypes(t, "payin.received")
				rec := pinEvent(t, hooks, "payin.received").Record
				if rec["uuid"] != uuid || rec["status"] != "received" || rec["paid_amount"] != pi["total"] {
					t.Errorf("payin.received body = %v", rec)
				}
				wantPinAuth(t, hooks, auth)
				detail := pinDetail(t, p, m, uuid)
				if !reflect.DeepEqual(detail, pinDetailViaJSON(t, rec)) {
					t.Errorf("webhook body differs from the detail:\n%v\n%v", rec, detail)
				}
				wantPinBalance(t, p, m, pinMoney{Available: tt.paid - tt.fee})
				wantPinHistory(t, p, m, pinPayment(uuid, tt.paid, tt.fee, "done"))

				wantError(t, p.post("/v2/payins/cancel", m, map[string]any{"uuid": uuid}), 409, "INVALID_STATE", "")
				wantError(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 409, "INVALID_STATE", "")
				if got := str(pinDetail(t, p, m, uuid), "status"); got != "received" {
					t.Errorf("status after refused cancel = %s, want received", got)
				}
				wantPinBalance(t, p, m, pinMoney{Available: tt.paid - tt.fee})
				pinVerifyLedger(t, p)
			})
		})
	}
}

// pinDetailViaJSON re-decodes a webhook body with numbers kept as
// json.Number, as the detail helper decodes.
func pinDetailViaJSON(t *testing.T, rec map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return response{Body: raw}.JSON(t)
}

// TestPayinFlowVirtualAccount: kr_bank_krw issues a virtual account at
// creation; the customer pays a different amount (paid_amount says so); a
// refund in full leaves the merchant the fee poorer.
func TestPayinFlowVirtualAccount(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("KRW")["KRW"]
		hooks := newEventLog(t)
		const auth = "Bearer va-secret"
		pi := pinCreate(t, p, m, pinWith(pinBody("KRW", "kr_bank_krw", 50000), map[string]any{"webhook_notification": pinHookTo(hooks, auth)}))
		uuid := str(pi, "uuid")
		pc := pinMap(pi, "pay_code")
		if got := pinKeys(pc); !slices.Equal(got, []string{"virtual_account_number", "virtual_bank_code", "virtual_bank_name"}) {
			t.Errorf("pay_code = %v, want the virtual account", pc)
		}
		for k, v := range pc {
			if s, _ := v.(string); s == "" {
				t.Errorf("pay_code.%s = %#v, want a non-empty string", k, v)
			}
		}
		if pi["pay_by"] != "virtual_account" {
			t.Errorf("pay_by = %v, want virtual_account", pi["pay_by"])
		}

		want(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed", "amount": 60000}), 200)
		p.runDue(m)
		hooks.waitTypes(t, "payin.received")
		rec := pinEvent(t, hooks, "payin.received").Record
		if rec["paid_amount"] != "60000" || rec["amount"] != "50000" {
			t.Errorf("payin.received: amount %v paid_amount %v, want 50000 and 60000", rec["amount"], rec["paid_amount"])
		}
		const paid, fee = 60000, 480 // 0.8 % of 60000
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee})

		// The fee was taken, so the payin alone cannot fund a full refund.
		wantError(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "description": "full refund"}), 422, "INSUFFICIENT_FUNDS", "")
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "received" {
			t.Errorf("status after the refused refund = %s, want received", got)
		}
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee})

		// Another payment covers the fee.
		other := pinCreate(t, p, m, pinBody("KRW", "kr_bank_krw", 1000))
		pinSimulate(t, p, m, str(other, "uuid"))
		const otherPaid, otherFee = 1000, 8
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee + otherPaid - otherFee})

		r := p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "description": "full refund"})
		want(t, r, 200)
		got := r.JSON(t)
		ri := pinMap(got, "refund_information")
		if got["status"] != "return_pending" || ri["total_amount"] != "60000" || ri["refund_amount"] != "60000" || ri["description"] != "full refund" {
			t.Errorf("refund answer: status %v refund_information %v", got["status"], ri)
		}
		wantPinBalance(t, p, m, pinMoney{Available: otherPaid - otherFee - fee, Outgoing: paid})
		p.advance(m, 6)
		hooks.waitTypes(t, "payin.received", "payin.return_pending", "payin.return_received")
		wantPinAuth(t, hooks, auth)
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "return_received" {
			t.Errorf("status = %s, want return_received", got)
		}
		wantPinBalance(t, p, m, pinMoney{Available: otherPaid - otherFee - fee})
		wantError(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": 1, "description": "one more"}), 422, "AMOUNT_OUT_OF_RANGE", "")
		wantPinHistory(t, p, m, pinRefund(uuid, paid, "done"), pinPayment(str(other, "uuid"), otherPaid, otherFee, "done"), pinPayment(uuid, paid, fee, "done"))
		pinVerifyLedger(t, p)
	})
}

// TestPayinFlowBankTransferPayCode: jp_bank_jpy has no pay_code at creation;
// about 2 s later the bank details arrive by webhook (payin.pay_code) and in
// the detail.
func TestPayinFlowBankTransferPayCode(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		hooks := newEventLog(t)
		const auth = "Basic anA6c2VjcmV0"
		created := time.Now()
		pi := pinCreate(t, p, m, pinWith(pinBody("JPY", "jp_bank_jpy", 5000), map[string]any{"webhook_notification": pinHookTo(hooks, auth)}))
		uuid := str(pi, "uuid")
		if pc := pinMap(pi, "pay_code"); pc == nil || len(pc) != 0 {
			t.Errorf("pay_code at creation = %v, want {}", pi["pay_code"])
		}
		if pi["pay_by"] != "bank_transfer" {
			t.Errorf("pay_by = %v, want bank_transfer", pi["pay_by"])
		}
		p.advance(m, 1)
		// The merchant's clock is real time plus its offset: the 2 s delay
		// has surely not passed only if less than a second of real time went
		// by since the creation was sent (a loaded machine can take longer).
		if pc := pinMap(pinDetail(t, p, m, uuid), "pay_code"); len(pc) != 0 && time.Since(created) < time.Second {
			t.Errorf("pay_code 1 s after creation = %v, want {} still", pc)
		}

		p.advance(m, 2)
		hooks.waitTypes(t, "payin.pay_code")
		ev := pinEvent(t, hooks, "payin.pay_code")
		pc := pinMap(ev.Record, "pay_code")
		wantKeys := []string{"account_name", "account_number", "account_type", "bank_name", "branch_code", "branch_name",
			"expired_timestamp", "transfer_id", "transfer_name"}
		if got := pinKeys(pc); !slices.Equal(got, wantKeys) {
			t.Errorf("pay_code members = %v, want %v", got, wantKeys)
		}
		for k, v := range pc {
			if s, _ := v.(string); s == "" {
				t.Errorf("pay_code.%s = %#v, want a non-empty string", k, v)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(pc["expired_timestamp"])); err != nil {
			t.Errorf("expired_timestamp = %v, want an RFC 3339 time", pc["expired_timestamp"])
		}
		if pc["expired_timestamp"] != ev.Record["expired_at"] {
			t.Errorf("expired_timestamp = %v, want the payin's expired_at %v", pc["expired_timestamp"], ev.Record["expired_at"])
		}
		if ev.Record["status"] != "pending" || ev.Record["uuid"] != uuid {
			t.Errorf("payin.pay_code body: status %v uuid %v", ev.Record["status"], ev.Record["uuid"])
		}
		detail := pinDetail(t, p, m, uuid)
		if !reflect.DeepEqual(pinMap(detail, "pay_code"), pc) {
			t.Errorf("detail pay_code = %v, want the webhook's %v", detail["pay_code"], pc)
		}

		pinSimulate(t, p, m, uuid)
		hooks.waitTypes(t, "payin.pay_code", "payin.received")
		wantPinAuth(t, hooks, auth)
		wantPinBalance(t, p, m, pinMoney{Available: 5000 - 50})
		wantPinHistory(t, p, m, pinPayment(uuid, 5000, 50, "done"))

		t.Run("no pay_code for a payin cancelled before it is issued", func(t *testing.T) {
			late := newEventLog(t)
			cancelled := str(pinCreate(t, p, m, pinWith(pinBody("JPY", "jp_bank_jpy", 5000), map[string]any{"webhook_notification": pinHookTo(late, auth)})), "uuid")
			want(t, p.post("/v2/payins/cancel", m, map[string]any{"uuid": cancelled}), 200)
			late.waitTypes(t, "payin.cancelled")
			p.advance(m, 3)
			if pc := pinMap(pinDetail(t, p, m, cancelled), "pay_code"); len(pc) != 0 {
				t.Errorf("a cancelled payin got pay_code %v", pc)
			}
			p.drained(t, m) // a stray delivery would have arrived by now
			if got := late.types(); !slices.Equal(got, []string{"payin.cancelled"}) {
				t.Errorf("webhooks = %v, want payin.cancelled alone", got)
			}
		})
		pinVerifyLedger(t, p)
	})
}

// TestPayinFlowRailFailure: the rail's "failed" answer fails a pending
// payin (payin.failed); no money moves and nothing more can happen to it.
func TestPayinFlowRailFailure(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		hooks := newEventLog(t)
		uuid := str(pinCreate(t, p, m, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"webhook_notification": pinHookTo(hooks, "Bearer f")})), "uuid")
		wantError(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "paid"}), 422, "VALIDATION_FAILED", "status")
		want(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "failed"}), 200)
		p.runDue(m)
		hooks.waitTypes(t, "payin.failed")
		if rec := pinEvent(t, hooks, "payin.failed").Record; rec["status"] != "failed" || rec["paid_amount"] != "0.00" {
			t.Errorf("payin.failed body: status %v paid_amount %v", rec["status"], rec["paid_amount"])
		}
		wantError(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/payins/cancel", m, map[string]any{"uuid": uuid}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "description": "nothing was paid"}), 409, "INVALID_STATE", "")
		wantPinBalance(t, p, m, pinMoney{})
		wantPinHistory(t, p, m)
		pinVerifyLedger(t, p)
	})
}

// TestPayinFlowRedirectCancel: ph_ewallet_gcash_php answers a pay_url to a
// hosted /pay/ page with a token; a pending payin is cancelled, with its
// webhook, and nothing more can happen to it.
func TestPayinFlowRedirectCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("PHP")["PHP"]
		hooks := newEventLog(t)
		const auth = "shop-token-without-scheme"
		pi := pinCreate(t, p, m, pinWith(pinBody("PHP", "ph_ewallet_gcash_php", 500), map[string]any{"webhook_notification": pinHookTo(hooks, auth)}))
		uuid := str(pi, "uuid")
		payURL := str(pinMap(pi, "pay_code"), "pay_url")
		u, err := url.Parse(payURL)
		if err != nil || !strings.HasSuffix(u.Path, "/pay/"+uuid) || u.Query().Get("t") == "" {
			t.Errorf("pay_url = %q, want a /pay/%s URL with a t= token", payURL, uuid)
		}
		if u != nil && u.IsAbs() && (u.Host == "" || (u.Scheme != "http" && u.Scheme != "https")) {
			t.Errorf("pay_url = %q, an absolute URL without an http(s) host", payURL)
		}
		if pi["pay_by"] != "e_wallet" {
			t.Errorf("pay_by = %v, want e_wallet", pi["pay_by"])
		}
		if got := pinFetch(t, p, payURL); got != 200 {
			t.Errorf("GET pay_url = %d, want 200 (the hosted page)", got)
		}
		if got := pinFetch(t, p, strings.Replace(payURL, "t=", "t=x", 1)); got != 404 {
			t.Errorf("GET pay_url with a wrong token = %d, want 404", got)
		}

		r := p.post("/v2/payins/cancel", m, map[string]any{"uuid": uuid})
		want(t, r, 200)
		if got := r.JSON(t); got["status"] != "cancelled" || got["uuid"] != uuid || str(got, "status_text") == "" {
			t.Errorf("cancel answer = %s", r.Body)
		}
		hooks.waitTypes(t, "payin.cancelled")
		wantPinAuth(t, hooks, auth)
		if rec := pinEvent(t, hooks, "payin.cancelled").Record; rec["status"] != "cancelled" {
			t.Errorf("payin.cancelled body status = %v", rec["status"])
		}

		refusals := []struct {
			name, path string
			body       map[string]any
		}{
			{"cancel again", "/v2/payins/cancel", map[string]any{"uuid": uuid}},
			{"simulate", "/v2/payins/simulate", map[string]any{"uuid": uuid, "status": "completed"}},
			{"refund", "/v2/payins/refund", map[string]any{"uuid": uuid, "description": "refund a cancelled one"}},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.post(tt.path, m, tt.body), 409, "INVALID_STATE", "")
			})
		}
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "cancelled" {
			t.Errorf("status = %s, want cancelled", got)
		}
		wantPinBalance(t, p, m, pinMoney{})
		wantPinHistory(t, p, m)
		if got := hooks.types(); len(got) != 1 {
			t.Errorf("webhooks = %v, want payin.cancelled alone", got)
		}
		pinVerifyLedger(t, p)
	})
}

// pinFetch GETs a link payd handed out (absolute, or relative to its root)
// as a browser would, and returns the status.
func pinFetch(t *testing.T, p *payd, link string) int {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	target := url.URL{Scheme: "http", Host: strings.TrimPrefix(p.root, "http://")}
	res, err := http.Get(target.ResolveReference(u).String())
	if err != nil {
		t.Fatalf("GET %s: %v", link, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// pinConfirm posts an OTP to path.
func pinConfirm(t *testing.T, p *payd, as creds, path, uuid, code string) response {
	t.Helper()
	return p.post(path, as, map[string]any{"uuid": uuid, "code": code})
}

// wantPinOTPRefused fails the test unless r is 400 OTP_INVALID with a message.
func wantPinOTPRefused(t *testing.T, r response) {
	t.Helper()
	wantError(t, r, 400, "OTP_INVALID", "")
	if e := pinMap(r.JSON(t), "errors"); str(e, "message") == "" {
		t.Errorf("OTP refusal without errors.message: %s", r.Body)
	}
}

// TestPayinFlowMobileMoneyOTP: gh_mobile_money_ghs starts at stage
// authorize_otp; nothing can complete it before the OTP; a wrong code is a
// 400; 123456 answers pay_code, clears the stage and sends payin.pay_code;
// the alias path works; five wrong codes fail the payin.
func TestPayinFlowMobileMoneyOTP(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("GHS")["GHS"]
		hooks := newEventLog(t)
		const auth = "Bearer momo"
		pi := pinCreate(t, p, m, pinWith(pinBody("GHS", "gh_mobile_money_ghs", "100.00"), map[string]any{"webhook_notification": pinHookTo(hooks, auth)}))
		uuid := str(pi, "uuid")
		if pi["stage"] != "authorize_otp" || len(pinMap(pi, "pay_code")) != 0 || pi["pay_by"] != "mobile_money" {
			t.Errorf("created: stage %v pay_code %v pay_by %v, want authorize_otp, {}, mobile_money", pi["stage"], pi["pay_code"], pi["pay_by"])
		}
		wantError(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 409, "INVALID_STATE", "")
		wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", uuid, "000000"))
		wantError(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", uuid, ""), 400, "VALIDATION_FAILED", "code")
		wantError(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", "ZZZZZZZZ", "123456"), 404, "NOT_FOUND", "")

		r := pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", uuid, "123456")
		want(t, r, 200)
		answer := r.JSON(t)
		if got := pinKeys(answer); !slices.Equal(got, []string{"pay_code"}) || len(pinMap(answer, "pay_code")) == 0 {
			t.Errorf("confirm_otp answer = %s, want {\"pay_code\": {…}}", r.Body)
		}
		detail := pinDetail(t, p, m, uuid)
		if s, _ := detail["stage"].(string); s != "" {
			t.Errorf("stage after the OTP = %q, want it cleared", s)
		}
		if !reflect.DeepEqual(pinMap(detail, "pay_code"), pinMap(answer, "pay_code")) {
			t.Errorf("detail pay_code = %v, want the answer's %v", detail["pay_code"], answer["pay_code"])
		}
		hooks.waitTypes(t, "payin.pay_code")
		if got := pinMap(pinEvent(t, hooks, "payin.pay_code").Record, "pay_code"); !reflect.DeepEqual(got, pinMap(detail, "pay_code")) {
			t.Errorf("payin.pay_code body pay_code = %v, want %v", got, detail["pay_code"])
		}
		wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", uuid, "123456"))

		pinSimulate(t, p, m, uuid)
		hooks.waitTypes(t, "payin.pay_code", "payin.received")
		wantPinAuth(t, hooks, auth)
		wantPinBalance(t, p, m, pinMoney{Available: 10000 - 250})
		wantError(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "description": "not refundable"}), 422, "NOT_REFUNDABLE", "")

		t.Run("alias path, right code after four wrong ones", func(t *testing.T) {
			alias := str(pinCreate(t, p, m, pinBody("GHS", "gh_mobile_money_ghs", 50)), "uuid")
			for range 4 {
				wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/confirm_otp", alias, "654321"))
			}
			r := pinConfirm(t, p, m, "/v2/payins/confirm_otp", alias, "123456")
			want(t, r, 200)
			if len(pinMap(r.JSON(t), "pay_code")) == 0 {
				t.Errorf("alias answer = %s", r.Body)
			}
		})

		t.Run("five wrong codes fail the payin", func(t *testing.T) {
			failing := newEventLog(t)
			doomed := str(pinCreate(t, p, m, pinWith(pinBody("GHS", "gh_mobile_money_ghs", 50), map[string]any{"webhook_notification": pinHookTo(failing, auth)})), "uuid")
			for i := 1; i <= 4; i++ {
				wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", doomed, fmt.Sprintf("00000%d", i)))
				if d := pinDetail(t, p, m, doomed); d["status"] != "pending" || d["stage"] != "authorize_otp" {
					t.Fatalf("after %d wrong codes: status %v stage %v, want pending at authorize_otp", i, d["status"], d["stage"])
				}
			}
			wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", doomed, "000005"))
			failing.waitTypes(t, "payin.failed")
			if d := pinDetail(t, p, m, doomed); d["status"] != "failed" {
				t.Errorf("after 5 wrong codes: status %v, want failed", d["status"])
			}
			wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", doomed, "000006"))
			wantPinOTPRefused(t, pinConfirm(t, p, m, "/v2/payins/bank/confirm_otp", doomed, "123456"))
			if got := failing.types(); len(got) != 1 {
				t.Errorf("webhooks = %v, want payin.failed alone", got)
			}
		})
		wantPinBalance(t, p, m, pinMoney{Available: 10000 - 250})
		pinVerifyLedger(t, p)
	})
}

// TestPayinFlowExpiry: a pending payin expires at its expired_at on the
// merchant's clock (payin.expired), and by default 24 hours after creation;
// an expired payin cannot be paid or cancelled.
func TestPayinFlowExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		hooks := newEventLog(t)
		pi := pinCreate(t, p, m, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{
			"webhook_notification": pinHookTo(hooks, "Bearer exp"), "expired_at": pinFuture(t, p, m, 10*time.Minute)}))
		uuid := str(pi, "uuid")
		plain := str(pinCreate(t, p, m, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")

		p.advance(m, 9*60)
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "pending" {
			t.Fatalf("status 9 minutes in = %s, want pending", got)
		}
		p.advance(m, 2*60)
		hooks.waitTypes(t, "payin.expired")
		if rec := pinEvent(t, hooks, "payin.expired").Record; rec["status"] != "expired" || rec["uuid"] != uuid {
			t.Errorf("payin.expired body = %v", rec)
		}
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "expired" {
			t.Errorf("status = %s, want expired", got)
		}
		wantError(t, p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed"}), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/payins/cancel", m, map[string]any{"uuid": uuid}), 409, "INVALID_STATE", "")

		if got := str(pinDetail(t, p, m, plain), "status"); got != "pending" {
			t.Errorf("payin without expired_at, 11 minutes in: %s, want pending", got)
		}
		p.advance(m, 24*60*60)
		if got := str(pinDetail(t, p, m, plain), "status"); got != "expired" {
			t.Errorf("payin without expired_at, 24 h in: %s, want expired", got)
		}
		wantPinBalance(t, p, m, pinMoney{})
		if got := hooks.types(); len(got) != 1 {
			t.Errorf("webhooks = %v, want payin.expired alone", got)
		}
		pinVerifyLedger(t, p)
	})
}

// pinReceived creates and completes an IDR payin of 100000 with hooks and
// returns its uuid; the merchant then has 99300.00 available (0.7 % fee).
func pinReceived(t *testing.T, p *payd, as creds, hooks *eventLog, auth string) string {
	t.Helper()
	body := pinBody("IDR", "id_bank_qris_idr", 100000)
	if hooks != nil {
		body = pinWith(body, map[string]any{"webhook_notification": pinHookTo(hooks, auth)})
	}
	uuid := str(pinCreate(t, p, as, body), "uuid")
	pinSimulate(t, p, as, uuid)
	return uuid
}

// TestPayinFlowRefundExpired: a refund the rail cannot deliver
// (description starting with EXPIRE in the sandbox) ends return_expired:
// outgoing is emptied, available restored and the refund's balance record
// failed; the payin can be refunded again.
func TestPayinFlowRefundExpired(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		hooks := newEventLog(t)
		const auth = "Bearer refunds"
		uuid := pinReceived(t, p, m, hooks, auth)
		hooks.waitTypes(t, "payin.received")
		const paid, fee = 10000000, 70000

		r := p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": "30000", "description": "please [sandbox:expire]"})
		want(t, r, 200)
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee - 3000000, Outgoing: 3000000})
		wantPinHistory(t, p, m, pinRefund(uuid, 3000000, "waiting"), pinPayment(uuid, paid, fee, "done"))

		p.advance(m, 6)
		hooks.waitTypes(t, "payin.received", "payin.return_pending", "payin.return_expired")
		wantPinAuth(t, hooks, auth)
		detail := pinDetail(t, p, m, uuid)
		if detail["status"] != "return_expired" || pinMap(detail, "refund_information")["refund_amount"] != "0.00" {
			t.Errorf("after the failed refund: status %v refund_information %v, want return_expired with 0.00 refunded", detail["status"], detail["refund_information"])
		}
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee})
		wantPinHistory(t, p, m, pinRefund(uuid, 3000000, "failed"), pinPayment(uuid, paid, fee, "done"))

		want(t, p.post("/v2/payins/refund", m, map[string]any{"uuid": uuid, "amount": "10000", "description": "second attempt"}), 200)
		p.advance(m, 6)
		hooks.waitTypes(t, "payin.received", "payin.return_pending", "payin.return_expired", "payin.return_pending", "payin.return_received")
		wantPinBalance(t, p, m, pinMoney{Available: paid - fee - 1000000})
		pinVerifyLedger(t, p)
	})
}

// TestPayinFlowRollingReserve: with a 10 % reserve for 7 days, a received
// payin puts 10 % of the paid amount less the fee in rolling_reserve, which
// returns to available when the 7 days have passed.
func TestPayinFlowRollingReserve(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		err := p.srv.DB.Exec(context.Background(), func(tx *store.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE accounts SET reserve_bps = 1000, reserve_days = 7
				WHERE merchant_id = $1 AND currency = $2 AND kind = $3`, m.MerchantID, "IDR", string(merchant.Payments))
			return err
		})
		if err != nil {
			t.Fatalf("set the reserve: %v", err)
		}
		uuid := pinReceived(t, p, m, nil, "")
		const net, reserve = 10000000 - 70000, 993000 // 10 % of 99300.00
		wantPinBalance(t, p, m, pinMoney{Available: net - reserve, Reserve: reserve})
		if b := p.balanceOf(m, "IDR"); minorUnits(t, b.Withdrawable, "IDR") != net-reserve {
			t.Errorf("withdrawable = %s, want available without the reserve (%d minor units)", b.Withdrawable, net-reserve)
		}
		wantPinHistory(t, p, m, pinPayment(uuid, 10000000, 70000, "done"))

		p.advance(m, 6*24*60*60)
		wantPinBalance(t, p, m, pinMoney{Available: net - reserve, Reserve: reserve})
		p.advance(m, 24*60*60+1)
		wantPinBalance(t, p, m, pinMoney{Available: net})
		wantPinHistory(t, p, m, pinPayment(uuid, 10000000, 70000, "done"))
		pinVerifyLedger(t, p)
	})
}

// pinPage is an answer of GET /v2/payins/all.
type pinPage struct {
	PerPage   int              `json:"per_page"`
	Page      int              `json:"page"`
	TotalPage int              `json:"total_page"`
	Total     int              `json:"total"`
	Records   []map[string]any `json:"records"`
}

// TestPayinListFilters: GET /v2/payins/all is a page list, newest first,
// filtered by status, external_id and dates; bad paging is refused.
func TestPayinListFilters(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		for _, ext := range []string{"ord-1", "ord-2", "ord-3"} {
			pi := pinCreate(t, p, m, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"external_id": ext}))
			if ext == "ord-2" {
				pinSimulate(t, p, m, str(pi, "uuid"))
			}
			p.advance(m, 1) // distinct created_at, so newest first is defined
		}
		now := p.clockNow(m)
		sydney, err := time.LoadLocation("Australia/Sydney")
		if err != nil {
			t.Fatal(err)
		}
		today := now.In(sydney).Format("2006-01-02")
		yesterday := now.In(sydney).AddDate(0, 0, -1).Format("2006-01-02")
		at := func(d time.Duration) string { return url.QueryEscape(now.Add(d).UTC().Format(time.RFC3339Nano)) }

		tests := []struct {
			name                            string
			query                           string
			perPage, page, totalPage, total int
			externalIDs                     []string
		}{
			{"defaults", "", 20, 1, 1, 3, []string{"ord-3", "ord-2", "ord-1"}},
			{"first page of 2", "?per_page=2", 2, 1, 2, 3, []string{"ord-3", "ord-2"}},
			{"second page of 2", "?per_page=2&page=2", 2, 2, 2, 3, []string{"ord-1"}},
			{"page past the end", "?per_page=2&page=3", 2, 3, 2, 3, []string{}},
			{"status received", "?status=received", 20, 1, 1, 1, []string{"ord-2"}},
			{"status pending", "?status=pending", 20, 1, 1, 2, []string{"ord-3", "ord-1"}},
			{"external_id", "?external_id=ord-1", 20, 1, 1, 1, []string{"ord-1"}},
			{"external_id and status that do not meet", "?external_id=ord-1&status=received", 20, 1, 0, 0, []string{}},
			{"from_date after all", "?from_date=" + at(time.Hour), 20, 1, 0, 0, []string{}},
			{"to_date before all", "?to_date=" + at(-time.Hour), 20, 1, 0, 0, []string{}},
			{"around now", "?from_date=" + at(-time.Hour) + "&to_date=" + at(time.Hour), 20, 1, 1, 3, []string{"ord-3", "ord-2", "ord-1"}},
			{"today as a date", "?from_date=" + today + "&to_date=" + today, 20, 1, 1, 3, []string{"ord-3", "ord-2", "ord-1"}},
			{"up to yesterday", "?to_date=" + yesterday, 20, 1, 0, 0, []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.get("/v2/payins/all"+tt.query, m)
				want(t, r, 200)
				var page pinPage
				r.Decode(t, &page)
				got := []string{}
				for _, rec := range page.Records {
					got = append(got, str(rec, "external_id"))
				}
				if page.PerPage != tt.perPage || page.Page != tt.page || page.TotalPage != tt.totalPage || page.Total != tt.total || !slices.Equal(got, tt.externalIDs) {
					t.Errorf("got per_page %d page %d total_page %d total %d %v\nwant per_page %d page %d total_page %d total %d %v",
						page.PerPage, page.Page, page.TotalPage, page.Total, got, tt.perPage, tt.page, tt.totalPage, tt.total, tt.externalIDs)
				}
			})
		}

		refusals := []struct{ name, query, field string }{
			{"per_page 101", "?per_page=101", "per_page"},
			{"per_page 0", "?per_page=0", "per_page"},
			{"page 0", "?page=0", "page"},
			{"page not a number", "?page=two", "page"},
			{"from_date not a date", "?from_date=yesterday", "from_date"},
			{"to_date not a date", "?to_date=2024-13-01", "to_date"},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.get("/v2/payins/all"+tt.query, m), 422, "VALIDATION_FAILED", tt.field)
			})
		}
	})
}

// TestPayinTenancy: another merchant's payin answers 404 exactly like an
// unknown uuid on every payin endpoint, and is left untouched.
func TestPayinTenancy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		other := p.merchant("IDR")["IDR"]
		pending := str(pinCreate(t, p, m, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")
		received := pinReceived(t, p, m, nil, "")
		otp := p.merchant("GHS")["GHS"]
		otherGHS := p.merchant("GHS")["GHS"]
		otpUUID := str(pinCreate(t, p, otp, pinBody("GHS", "gh_mobile_money_ghs", 50)), "uuid")

		tests := []struct {
			name, method, path string
			as                 creds
			body               map[string]any
		}{
			{"detail", "GET", "/v2/payins/detail?uuid=" + pending, other, nil},
			{"cancel", "POST", "/v2/payins/cancel", other, map[string]any{"uuid": pending}},
			{"simulate", "POST", "/v2/payins/simulate", other, map[string]any{"uuid": pending, "status": "completed"}},
			{"refund", "POST", "/v2/payins/refund", other, map[string]any{"uuid": received, "description": "not mine to refund"}},
			{"confirm_otp", "POST", "/v2/payins/bank/confirm_otp", otherGHS, map[string]any{"uuid": otpUUID, "code": "123456"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(req{method: tt.method, path: tt.path, as: &tt.as, body: tt.body})
				wantError(t, r, 404, "NOT_FOUND", "")
				unknown := strings.NewReplacer(pending, "ZZZZZZZZ", received, "ZZZZZZZZ", otpUUID, "ZZZZZZZZ")
				var body any
				if tt.body != nil {
					raw, _ := json.Marshal(tt.body)
					body = unknown.Replace(string(raw))
				}
				u := p.do(req{method: tt.method, path: unknown.Replace(tt.path), as: &tt.as, body: body})
				wantError(t, u, 404, "NOT_FOUND", "")
				if got, w := unknown.Replace(string(r.Body)), string(u.Body); got != w {
					t.Errorf("foreign uuid answers %s, unknown uuid %s", r.Body, u.Body)
				}
			})
		}
		if got := str(pinDetail(t, p, m, pending), "status"); got != "pending" {
			t.Errorf("pending payin is now %s", got)
		}
		if got := str(pinDetail(t, p, m, received), "status"); got != "received" {
			t.Errorf("received payin is now %s", got)
		}
		if got := pinDetail(t, p, otp, otpUUID); got["stage"] != "authorize_otp" {
			t.Errorf("OTP payin stage is now %v", got["stage"])
		}
		if r := p.get("/v2/payins/all", other); r.JSON(t)["total"] != json.Number("0") {
			t.Errorf("the other merchant lists %s", r.Body)
		}
		wantPinBalance(t, p, other, pinMoney{})
		wantPinBalance(t, p, m, pinMoney{Available: 10000000 - 70000})
		pinVerifyLedger(t, p)
	})
}

// pinKYCForm is a multipart POST /v2/contacts/submit_kyc body for a passport.
func pinKYCForm(t *testing.T, email string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fields := map[string]string{"email": email, "document_type": "passport", "document_number": "PA1234567",
		"issue_date": "2020-01-15", "expiry_date": "2035-01-14", "issue_country": "KR", "nationality": "KR"}
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 64)...)
	for _, part := range []string{"selfie", "id_doc_front_side"} {
		fw, err := w.CreateFormFile(part, part+".png")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(png)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// TestPayinFlowWithContact: the require_contact methods once a contact
// exists: au_payid_npp_aud with GST gets its pay_id by webhook shortly after
// creation; kr_bank_va_kyc_krw needs the contact's KYC approved, then an OTP
// issues the virtual account.
func TestPayinFlowWithContact(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "KRW")
		aud, krw := apps["AUD"], apps["KRW"]
		pinContact(t, p, aud, "payer@example.com")
		t.Run("au_payid_npp_aud", func(t *testing.T) {
			hooks := newEventLog(t)
			const auth = "Bearer payid"
			pi := pinCreate(t, p, aud, pinWith(pinBody("AUD", "au_payid_npp_aud", 100), map[string]any{
				"gst": true, "email": "payer@example.com", "webhook_notification": pinHookTo(hooks, auth)}))
			uuid := str(pi, "uuid")
			if pi["gst_amount"] != json.Number("10.00") || pi["total"] != "110.00" || len(pinMap(pi, "pay_code")) != 0 {
				t.Errorf("created: gst_amount %v total %v pay_code %v, want 10.00, 110.00, {}", pi["gst_amount"], pi["total"], pi["pay_code"])
			}
			p.advance(aud, 3)
			hooks.waitTypes(t, "payin.pay_code")
			pc := pinMap(pinEvent(t, hooks, "payin.pay_code").Record, "pay_code")
			if got := pinKeys(pc); !slices.Equal(got, []string{"pay_id"}) || str(pc, "pay_id") == "" {
				t.Errorf("pay_code = %v, want pay_id", pc)
			}
			if !reflect.DeepEqual(pinMap(pinDetail(t, p, aud, uuid), "pay_code"), pc) {
				t.Errorf("detail pay_code differs from the webhook's %v", pc)
			}
			pinSimulate(t, p, aud, uuid)
			hooks.waitTypes(t, "payin.pay_code", "payin.received")
			wantPinAuth(t, hooks, auth)
			if rec := pinEvent(t, hooks, "payin.received").Record; rec["paid_amount"] != "110.00" {
				t.Errorf("paid_amount = %v, want 110.00", rec["paid_amount"])
			}
			wantPinBalance(t, p, aud, pinMoney{Available: 11000 - 55})
			// The contact is found whatever the case of the email.
			pinCreate(t, p, aud, pinWith(pinBody("AUD", "au_payid_npp_aud", 20), map[string]any{"email": "Payer@Example.COM"}))
		})
		t.Run("kr_bank_va_kyc_krw", func(t *testing.T) {
			const email = "minjun@example.kr"
			body := pinWith(pinBody("KRW", "kr_bank_va_kyc_krw", 50000), map[string]any{"email": email})
			wantError(t, p.post("/v2/payins", krw, body), 422, "CONTACT_REQUIRED", "")
			pinContact(t, p, krw, email)
			wantError(t, p.post("/v2/payins", krw, body), 422, "KYC_REQUIRED", "")
			form, contentType := pinKYCForm(t, email)
			r := p.do(req{method: "POST", path: "/v2/contacts/submit_kyc", as: &krw, body: form, header: map[string]string{"Content-Type": contentType}})
			want(t, r, 200)
			hooks := newEventLog(t)
			pi := pinCreate(t, p, krw, pinWith(body, map[string]any{"webhook_notification": pinHookTo(hooks, "Bearer kyc")}))
			uuid := str(pi, "uuid")
			if pi["stage"] != "authorize_otp" || len(pinMap(pi, "pay_code")) != 0 {
				t.Errorf("created: stage %v pay_code %v, want authorize_otp and {}", pi["stage"], pi["pay_code"])
			}
			r = pinConfirm(t, p, krw, "/v2/payins/bank/confirm_otp", uuid, "123456")
			want(t, r, 200)
			pc := pinMap(r.JSON(t), "pay_code")
			if got := pinKeys(pc); !slices.Equal(got, []string{"virtual_account_number", "virtual_bank_code", "virtual_bank_name"}) {
				t.Errorf("confirm_otp pay_code = %v, want the virtual account", pc)
			}
			hooks.waitTypes(t, "payin.pay_code")
			if got := pinMap(pinEvent(t, hooks, "payin.pay_code").Record, "pay_code"); !reflect.DeepEqual(got, pc) {
				t.Errorf("payin.pay_code pay_code = %v, want %v", got, pc)
			}
		})
		pinVerifyLedger(t, p)
	})
}

// TestPayinSimulateNeverOverflows: the sandbox rail takes any amount up to
// money.MaxMinor; once the balances are full a payment is refused cleanly
// (422 AMOUNT_OUT_OF_RANGE, the payin still pending), never answered 500,
// and the balance holds exactly the payments that were accepted.
func TestPayinSimulateNeverOverflows(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		const maxYen = 100_000_000_000_000_000 // money.MaxMinor yen
		statuses := map[string]int{}
		var refused []string
		for range 95 {
			uuid := str(pinCreate(t, p, m, pinBody("JPY", "jp_bank_jpy", 5000)), "uuid")
			r := p.post("/v2/payins/simulate", m, map[string]any{"uuid": uuid, "status": "completed", "amount": fmt.Sprint(maxYen)})
			key := fmt.Sprint(r.Status)
			if r.Status != 200 {
				key += " " + r.ErrorCode(t)
				refused = append(refused, uuid)
			}
			statuses[key]++
		}
		if statuses["200"]+statuses["422 AMOUNT_OUT_OF_RANGE"] != 95 || statuses["422 AMOUNT_OUT_OF_RANGE"] == 0 {
			t.Errorf("simulate answers = %v, want only 200 and, once the balance is full, 422 AMOUNT_OUT_OF_RANGE", statuses)
		}
		p.runDue(m)
		accepted := int64(statuses["200"])
		// Balances this large are beyond what an amount may be, so they are compared as written.
		b := p.balanceOf(m, "JPY")
		if got, w := b.Available.String(), fmt.Sprint(accepted*(maxYen-maxYen/100)); got != w || b.Incoming != "0" || b.Outgoing != "0" {
			t.Errorf("balances = %+v, want available %s (every accepted payment less its 1 %% fee)", b, w)
		}
		for _, uuid := range refused[:min(3, len(refused))] {
			if got := str(pinDetail(t, p, m, uuid), "status"); got != "pending" {
				t.Errorf("refused payin %s is %s, want pending", uuid, got)
			}
		}
		pinVerifyLedger(t, p)
	})
}
