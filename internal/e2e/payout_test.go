package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// payoutBody is a v2 payout of one transaction per params, each of amount.
func payoutBody(currency, method string, amount any, params ...map[string]any) map[string]any {
	var txs []any
	for i, p := range params {
		txs = append(txs, map[string]any{"first_name": "Jane", "last_name": fmt.Sprintf("Doe %d", i), "email": "jane@example.com",
			"amount": amount, "external_id": fmt.Sprintf("tx-%d", i), "payout_method_params": p})
	}
	return map[string]any{"currency": currency, "payout_method_name": method, "description": "Supplier payments",
		"external_id": "batch-1", "payout_transaction_details": txs}
}

func withHook(body map[string]any, l *eventLog, auth string) map[string]any {
	body["webhook_notification"] = map[string]any{"endpoint_url": l.url, "authorization_header": auth}
	return body
}

var (
	bsbOK      = map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}
	bsbFails   = map[string]any{"bsb": "062000", "account_number": "000000000", "account_name": "Nobody"}
	payIDOK    = map[string]any{"pay_id": "jane@example.com", "pay_id_type": "EMAIL"}
	payIDFails = map[string]any{"pay_id": "fail@example.com", "pay_id_type": "EMAIL"}
)

// fund deposits amount into the merchant's account and clears it to available.
func (p *payd) fund(as creds, amount any) {
	p.t.Helper()
	p.simulateDeposit(as, as.AccountNumber, amount)
	p.runDue(as)
}

func (p *payd) createPayout(as creds, body map[string]any) map[string]any {
	p.t.Helper()
	r := p.post("/v2/payouts", as, body)
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// settlePayouts runs the submissions that are due, then moves the clock past
// the sandbox network's answer.
func (p *payd) settlePayouts(as creds) {
	p.t.Helper()
	p.runDue(as)
	p.advance(as, 10)
}

// waitTypeSet waits until the log holds exactly the events want, in any
// order (deliveries to one endpoint run concurrently).
func (l *eventLog) waitTypeSet(t *testing.T, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	waitUntil(t, "webhooks "+join(want), 10*time.Second, func() bool {
		return join(slices.Sorted(slices.Values(l.types()))) == join(want)
	})
}

func (p *payd) payoutDetail(as creds, uuid string) map[string]any {
	p.t.Helper()
	r := p.get("/v2/payouts/detail?uuid="+uuid, as)
	want(p.t, r, 200)
	return r.JSON(p.t)
}

func txStatuses(payout map[string]any) []string {
	var out []string
	for _, t := range payout["payout_transactions"].([]any) {
		out = append(out, t.(map[string]any)["status"].(string))
	}
	return out
}

// TestPayoutFlowPerMethod: a payout of a paid and a failing transaction, per
// method: accepted processing with amounts and fees moved to outgoing; once
// the sandbox network has answered, completed, the failed transaction's
// money back in available, the paid one gone, each step a webhook, and
// history showing one payout record per transaction, done or failed.
func TestPayoutFlowPerMethod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		currency, method string
		fund, amount     string
		ok, fails        map[string]any
		// wantLeft is available once the paid transaction and its fee have left.
		wantLeft string
	}{
		{"AUD", "au_bank_aud", "1000", "100.00", bsbOK, bsbFails, "899.50"},
		{"AUD", "au_payid_npp_aud", "1000", "100", payIDOK, payIDFails, "899.70"},
		{"THB", "th_bank_thb", "10000", "500", map[string]any{"account_number": "1234567890", "account_name": "Somchai", "description": "Invoice 7", "type": "individual", "swift_code": "BKKBTHBK"},
			map[string]any{"account_number": "000000000", "account_name": "Nobody", "description": "Invoice 8", "type": "corporate", "swift_code": "BKKBTHBK"}, "9490.00"},
		{"USD", "us_bank_usd", "1000", "100", map[string]any{"swift_code": "CHASUS33", "account_number": "123456789", "account_name": "Jane Doe", "address": "1 Main St, New York"},
			map[string]any{"swift_code": "CHASUS33", "account_number": "000000000", "account_name": "Nobody", "address": "2 Main St"}, "885.00"},
		{"JPY", "jp_bank_jpy", "100000", "10000", jpyOK, with(jpyOK, map[string]any{"account_number": "0000000"}), "89750"},
		{"VND", "vn_bank_vnd", "1000000", "100000", vndOK, with(vndOK, map[string]any{"account_number": "000000000"}), "899500"},
		// IDR, KRW and UGX have no bank directory: their bank codes are checked by shape.
		{"IDR", "id_bank_idr", "1000000", "100000", map[string]any{"bank_code": "BMRIIDJA", "account_number": "1234567890", "account_name": "Budi"},
			map[string]any{"bank_code": "BMRIIDJA", "account_number": "000000000", "account_name": "Nobody"}, "896000.00"},
		{"KRW", "kr_bank_krw", "1000000", "100000", map[string]any{"bank_code": "004", "account_number": "1234567890", "account_name": "Kim"},
			map[string]any{"bank_code": "004", "account_number": "000000000", "account_name": "Nobody"}, "899500"},
		{"UGX", "ug_bank_ugx", "1000000", "100000", ugxParams(nil), ugxParams(map[string]any{"account_number": "000000000"}), "898500"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			each(t, func(t *testing.T, p *payd) {
				m := p.merchant(tt.currency)[tt.currency]
				p.fund(m, tt.fund)
				hooks := newEventLog(t)
				created := p.createPayout(m, withHook(payoutBody(tt.currency, tt.method, tt.amount, tt.ok, tt.fails), hooks, "Basic b2s="))
				uuid := created["uuid"].(string)
				if created["status"] != "processing" || created["approval"] != nil || !slices.Equal(txStatuses(created), []string{"pending", "pending"}) {
					t.Fatalf("created = %v", created)
				}
				before := p.balanceOf(m, tt.currency)
				if before.Outgoing.String() == "0" {
					t.Fatalf("outgoing after accept = %s", before.Outgoing)
				}
				p.settlePayouts(m)
				got := p.payoutDetail(m, uuid)
				if got["status"] != "completed" || !slices.Equal(txStatuses(got), []string{"done", "failed"}) {
					t.Fatalf("after the network answered: %v", got)
				}
				failed := got["payout_transactions"].([]any)[1].(map[string]any)
				if failed["failure_reason"] == "" {
					t.Errorf("failed transaction without a reason: %v", failed)
				}
				after := p.balanceOf(m, tt.currency)
				if after.Available.String() != tt.wantLeft || after.Outgoing.String() != "0" && after.Outgoing.String() != "0.00" {
					t.Errorf("balances after = available %s outgoing %s, want %s and 0", after.Available, after.Outgoing, tt.wantLeft)
				}
				hooks.waitTypeSet(t, "payout.processing", "payout_transaction.done", "payout_transaction.failed", "payout.completed")
				for _, e := range pinEvents(hooks) {
					about := e.Record["uuid"]
					if strings.HasPrefix(e.Type, "payout_transaction.") {
						about = e.Record["payout_uuid"]
						tx := e.Record["payout_transaction"].(map[string]any)
						if e.Type != "payout_transaction."+tx["status"].(string) {
							t.Errorf("%s carries a %v transaction", e.Type, tx["status"])
						}
					}
					if e.Auth != "Basic b2s=" || about != uuid {
						t.Errorf("%s webhook: Authorization %q, about payout %v", e.Type, e.Auth, about)
					}
				}
				var statuses []string
				for _, rec := range p.history(m, "").Records {
					if rec.TransactionType == "payout" {
						statuses = append(statuses, rec.Status)
					}
				}
				if slices.Sort(statuses); !slices.Equal(statuses, []string{"done", "failed"}) {
					t.Errorf("payout history records = %v, want done and failed", statuses)
				}
			})
		})
	}
}

// TestPayoutInsufficientFunds: a payout beyond the available balance is 422
// INSUFFICIENT_FUNDS and creates and moves nothing.
func TestPayoutInsufficientFunds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "100")
		ctx := context.Background()
		before, _ := countRows(ctx, p.srv.DB)
		r := p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "99.60", bsbOK))
		wantError(t, r, 422, "INSUFFICIENT_FUNDS", "")
		after, _ := countRows(ctx, p.srv.DB)
		before["jobs"], after["jobs"] = 0, 0 // the deposit's jobs may finish meanwhile
		if d := before.changed(after); len(d) > 0 {
			t.Errorf("a refused payout wrote %v", d)
		}
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "100.00" {
			t.Errorf("available = %s", b.Available)
		}
		want(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "99.50", bsbOK)), 201)
	})
}

// decide runs a portal user's decision through the one decision function.
func (p *payd) decide(as creds, uuid string, by payout.Decider, approve bool, reason string) (payout.Payout, error) {
	return store.Do(context.Background(), p.srv.DB, func(tx *store.Tx) (payout.Payout, error) {
		return p.srv.Payouts.Decide(context.Background(), tx, payout.Decision{MerchantID: as.MerchantID, PayoutUUID: uuid, By: by, Approve: approve, Reason: reason})
	})
}

func (p *payd) requireApprovals(as creds) {
	p.t.Helper()
	on := true
	if _, err := p.srv.Merchants.UpdateAccount(context.Background(), as.MerchantID, as.Currency, merchant.AccountUpdate{Approvals: &on}); err != nil {
		p.t.Fatal(err)
	}
}

// TestPayoutApproval: with approvals on, a payout is held and nothing reaches
// the rail; a finance user's approval processes it, a rejection returns the
// funds; the first decision wins and a second is 409 DECISION_CONFLICT; a
// viewer may not decide; an undecided payout expires at the end of the hold
// window with its funds back.
func TestPayoutApproval(t *testing.T) {
	t.Parallel()
	finance := payout.Decider{UserID: "U1", Email: "fin@example.com", Role: merchant.Finance}
	admin := payout.Decider{UserID: "U2", Email: "admin@example.com", Role: merchant.Admin}
	viewer := payout.Decider{UserID: "U3", Email: "view@example.com", Role: merchant.Viewer}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.requireApprovals(m)
		p.fund(m, "1000")
		hooks := newEventLog(t)

		approved := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "100", bsbOK), hooks, ""))
		if approved["status"] != "held" || approved["approval"].(map[string]any)["status"] != "pending" {
			t.Fatalf("created = %v", approved)
		}
		p.advance(m, 60)
		if got := p.payoutDetail(m, approved["uuid"].(string)); got["status"] != "held" || txStatuses(got)[0] != "pending" {
			t.Fatalf("a held payout moved: %v", got)
		}
		if _, err := p.decide(m, approved["uuid"].(string), viewer, true, ""); codeOfErr(err) != "FORBIDDEN" {
			t.Errorf("viewer's decision = %v, want FORBIDDEN", err)
		}
		if _, err := p.decide(m, approved["uuid"].(string), finance, true, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := p.decide(m, approved["uuid"].(string), admin, false, "too late for this"); codeOfErr(err) != payout.CodeDecisionConflict {
			t.Errorf("second decision = %v, want DECISION_CONFLICT", err)
		}
		p.settlePayouts(m)
		got := p.payoutDetail(m, approved["uuid"].(string))
		a := got["approval"].(map[string]any)
		if got["status"] != "completed" || a["status"] != "approved" || a["decided_by"] != "fin@example.com" || a["decided_at"] == nil {
			t.Errorf("approved payout = %v", got)
		}

		rejected := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "200", bsbOK), hooks, ""))
		if _, err := p.decide(m, rejected["uuid"].(string), admin, false, "no"); codeOfErr(err) != "VALIDATION_FAILED" {
			t.Errorf("rejection without a 5-character reason = %v", err)
		}
		if _, err := p.decide(m, rejected["uuid"].(string), admin, false, "wrong supplier"); err != nil {
			t.Fatal(err)
		}
		got = p.payoutDetail(m, rejected["uuid"].(string))
		if got["status"] != "rejected" || got["approval"].(map[string]any)["rejection_reason"] != "wrong supplier" || txStatuses(got)[0] != "failed" {
			t.Errorf("rejected payout = %v", got)
		}

		expiring := p.createPayout(m, payoutBody("AUD", "au_bank_aud", "300", bsbOK))
		p.advance(m, 7*24*3600)
		got = p.payoutDetail(m, expiring["uuid"].(string))
		if got["status"] != "expired" || got["approval"].(map[string]any)["status"] != "expired" {
			t.Errorf("undecided payout after 7 days = %v", got)
		}
		if _, err := p.decide(m, expiring["uuid"].(string), admin, true, ""); codeOfErr(err) != payout.CodeDecisionConflict {
			t.Errorf("decision on an expired payout = %v", err)
		}
		// 1000 - (100 + 0.50 fee): the rejected and expired payouts gave everything back.
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "899.50" || b.Outgoing.String() != "0.00" {
			t.Errorf("balances = available %s outgoing %s", b.Available, b.Outgoing)
		}
		// A rejected payout's transactions fail, each with its own event.
		hooks.waitTypeSet(t, "payout.held", "payout.processing", "payout_transaction.done", "payout.completed", "payout.held", "payout.rejected", "payout_transaction.failed")
		if problems, err := ledger.Verify(context.Background(), p.srv.DB.Read()); err != nil || len(problems) > 0 {
			t.Errorf("ledger verify: %v %v", problems, err)
		}
	})
}

// codeOfErr is a domain error's code, or its text when it is no domain error.
func codeOfErr(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := fault.As(err); ok {
		return e.Code
	}
	return err.Error()
}

var thbOK = map[string]any{"account_number": "1234567890", "account_name": "Somchai", "description": "Invoice 7", "type": "individual", "swift_code": "BKKBTHBK"}

func ugxParams(over map[string]any) map[string]any {
	p := map[string]any{"account_number": "0123456789", "account_name": "Okello", "bank_code": "SBICUGKX", "payment_reason": "bills",
		"user_type": "individual", "phone": "+256712345678"}
	for k, v := range over {
		p[k] = v
	}
	return p
}

func with(base map[string]any, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// TestPayoutRules: every rule of CONTRACT §5 is its own 422, named, and a
// refused payout creates nothing and moves nothing.
func TestPayoutRules(t *testing.T) {
	t.Parallel()
	many := make([]map[string]any, payout.MaxTransactions+1)
	for i := range many {
		many[i] = bsbOK
	}
	tests := []struct {
		name      string
		currency  string
		body      map[string]any
		wantCode  string
		wantField string
	}{
		{"description under 5 characters", "AUD", with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"description": "Pay"}),
			"VALIDATION_FAILED", "description"},
		{"lower-case pay_id_type", "AUD", payoutBody("AUD", "au_payid_npp_aud", "10", with(payIDOK, map[string]any{"pay_id_type": "email"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.pay_id_type"},
		{"PayID under 1 AUD", "AUD", payoutBody("AUD", "au_payid_npp_aud", "0.99", payIDOK),
			"AMOUNT_OUT_OF_RANGE", "payout_transaction_details[0].amount"},
		{"BSB not 6 digits", "AUD", payoutBody("AUD", "au_bank_aud", "10", with(bsbOK, map[string]any{"bsb": "06200"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.bsb"},
		{"THB under 300", "THB", payoutBody("THB", "th_bank_thb", "299.99", thbOK), "AMOUNT_OUT_OF_RANGE", "payout_transaction_details[0].amount"},
		{"THB over 2,000,000", "THB", payoutBody("THB", "th_bank_thb", "2000000.01", thbOK), "AMOUNT_OUT_OF_RANGE", "payout_transaction_details[0].amount"},
		{"THB with a bank code instead of swift_code", "THB", payoutBody("THB", "th_bank_thb", "500", with(thbOK, map[string]any{"swift_code": nil, "bank_code": "002"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.bank_code"},
		{"UGX under 15,000", "UGX", payoutBody("UGX", "ug_bank_ugx", "14999", ugxParams(nil)), "AMOUNT_OUT_OF_RANGE", "payout_transaction_details[0].amount"},
		{"UGX over 36,000,000", "UGX", payoutBody("UGX", "ug_bank_ugx", "36000001", ugxParams(nil)), "AMOUNT_OUT_OF_RANGE", "payout_transaction_details[0].amount"},
		{"UGX bank_code of the wrong shape", "UGX", payoutBody("UGX", "ug_bank_ugx", "20000", ugxParams(map[string]any{"bank_code": "not a code!"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.bank_code"},
		{"payment_reason outside its set", "UGX", payoutBody("UGX", "ug_bank_ugx", "20000", ugxParams(map[string]any{"payment_reason": "gifts"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.payment_reason"},
		{"UGX individual without phone", "UGX", payoutBody("UGX", "ug_bank_ugx", "20000", ugxParams(map[string]any{"phone": nil})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.phone"},
		{"a currency the merchant has no account in", "AUD", payoutBody("EUR", "au_bank_aud", "10", bsbOK), "CURRENCY_NOT_SUPPORTED", ""},
		{"a method of another currency", "AUD", payoutBody("AUD", "th_bank_thb", "500", thbOK), "METHOD_NOT_ENABLED", ""},
		{"an unknown method", "AUD", payoutBody("AUD", "au_cheque_aud", "10", bsbOK), "VALIDATION_FAILED", "payout_method_name"},
		{"an empty batch", "AUD", payoutBody("AUD", "au_bank_aud", "10"), "VALIDATION_FAILED", "payout_transaction_details"},
		{"more than 1,000 transactions", "AUD", payoutBody("AUD", "au_bank_aud", "10", many...), "VALIDATION_FAILED", "payout_transaction_details"},
		{"too many decimals for AUD", "AUD", payoutBody("AUD", "au_bank_aud", "10.001", bsbOK), "VALIDATION_FAILED", "payout_transaction_details[0].amount"},
		{"scheduled_at in the past", "AUD", with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"scheduled_at": "2020-01-01T00:00:00Z"}),
			"VALIDATION_FAILED", "scheduled_at"},
		{"scheduled_at unreadable", "AUD", with(payoutBody("AUD", "au_bank_aud", "10", bsbOK), map[string]any{"scheduled_at": "next tuesday"}),
			"VALIDATION_FAILED", "scheduled_at"},
		{"a missing method field", "AUD", payoutBody("AUD", "au_bank_aud", "10", with(bsbOK, map[string]any{"account_name": nil})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.account_name"},
	}
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "THB", "UGX")
		for _, c := range apps {
			p.fund(c, "100000000")
		}
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				before, _ := countRows(ctx, p.srv.DB)
				r := p.post("/v2/payouts", apps[tt.currency], tt.body)
				wantError(t, r, 422, tt.wantCode, tt.wantField)
				after, _ := countRows(ctx, p.srv.DB)
				before["jobs"], after["jobs"] = 0, 0
				if d := before.changed(after); len(d) > 0 {
					t.Errorf("a refused payout wrote %v", d)
				}
			})
		}
	})
}

// TestPayoutRaceNeverOverdraws: twenty payouts racing for a balance that
// covers only some of them: each is accepted or refused with
// INSUFFICIENT_FUNDS, and the accepted ones add up to at most the balance.
// They are scheduled a day ahead, so that all the funds they hold are still
// outgoing when the balance is read: a payout submitted at once completes 3 s
// later on the real clock, and on a slow run one did before the last of the
// twenty answered.
func TestPayoutRaceNeverOverdraws(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		body := with(payoutBody("AUD", "au_bank_aud", "149.50", bsbOK),
			map[string]any{"scheduled_at": p.clockNow(m).Add(24 * time.Hour).UTC().Format(time.RFC3339)})
		var wg sync.WaitGroup
		var accepted, refused atomic.Int32
		for range 20 {
			wg.Go(func() {
				r := p.do(req{method: "POST", path: "/v2/payouts", as: &m, body: body})
				switch {
				case r.Status == 201:
					accepted.Add(1)
				case r.Status == 422 && codeOf(r) == "INSUFFICIENT_FUNDS":
					refused.Add(1)
				default:
					t.Errorf("racing payout: %d %s", r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		// Each payout holds 149.50 + 0.50 fee = 150: six fit in 1000.
		if accepted.Load() != 6 || refused.Load() != 14 {
			t.Errorf("accepted %d, refused %d; want 6 and 14", accepted.Load(), refused.Load())
		}
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "100.00" || b.Outgoing.String() != "900.00" {
			t.Errorf("balances = available %s outgoing %s, want 100.00 and 900.00", b.Available, b.Outgoing)
		}
	})
}

// TestPayoutScheduled: a payout scheduled ahead waits, funds held, and is
// submitted when the merchant's clock reaches scheduled_at.
func TestPayoutScheduled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		at := p.clockNow(m).Add(2 * time.Hour).UTC().Format(time.RFC3339)
		created := p.createPayout(m, with(payoutBody("AUD", "au_bank_aud", "100", bsbOK), map[string]any{"scheduled_at": at}))
		uuid := created["uuid"].(string)
		if created["status"] != "scheduled" || created["scheduled_at"] == nil {
			t.Fatalf("created = %v", created)
		}
		p.advance(m, 3600)
		if got := p.payoutDetail(m, uuid); got["status"] != "scheduled" {
			t.Fatalf("an hour early: %v", got["status"])
		}
		p.advance(m, 3600)
		if got := p.payoutDetail(m, uuid); got["status"] != "processing" {
			t.Fatalf("at scheduled_at: %v", got["status"])
		}
		p.settlePayouts(m)
		if got := p.payoutDetail(m, uuid); got["status"] != "completed" || txStatuses(got)[0] != "done" {
			t.Errorf("after the network answered: %v", got)
		}
	})
}

// TestPayoutApprovalRace: two finance users decide one held payout at once
// from two payd processes sharing PostgreSQL, fifty times: each time exactly
// one decision is recorded, the other is 409 DECISION_CONFLICT, and the
// funds move once.
func TestPayoutApprovalRace(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		m := a.merchant("AUD")["AUD"]
		a.requireApprovals(m)
		a.fund(m, "10000")
		// Two finance users, each signed in to the portal of a different payd
		// sharing the database, decide the same payout at once over HTTP.
		alice := a.newPortalUser(t, m.MerchantID, "alice@example.com", merchant.Finance)
		if _, err := a.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "bob@example.com", merchant.Admin, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		bob := b.portalClient(t, "bob@example.com")
		if r := bob.login("correct horse battery", ""); r.status != http.StatusSeeOther {
			t.Fatalf("bob's sign-in on the second payd: %d", r.status)
		}
		rejected := 0
		for run := range 50 {
			uuid := a.createPayout(m, payoutBody("AUD", "au_bank_aud", "10", bsbOK))["uuid"].(string)
			page := "/portal/payouts/" + uuid
			approve := url.Values{"csrf_token": {alice.csrf(page)}}
			reject := url.Values{"csrf_token": {bob.csrf(page)}, "reason": {"not this one"}}
			var answers [2]portalAnswer
			var wg sync.WaitGroup
			wg.Go(func() { answers[0] = alice.do("POST", page+"/approve", approve) })
			wg.Go(func() { answers[1] = bob.do("POST", page+"/reject", reject) })
			wg.Wait()
			wins := 0
			for _, a := range answers {
				switch a.status {
				case http.StatusSeeOther:
					wins++
				case http.StatusConflict:
				default:
					t.Fatalf("run %d: a decision answered %d %.300s", run, a.status, a.body)
				}
			}
			got := a.payoutDetail(m, uuid)
			approval := got["approval"].(map[string]any)
			if wins != 1 || (approval["status"] == "rejected") != (answers[1].status == http.StatusSeeOther) {
				t.Fatalf("run %d: %d decisions won (%d, %d), record %v", run, wins, answers[0].status, answers[1].status, approval)
			}
			if approval["status"] == "rejected" {
				rejected++
			}
		}
		a.settlePayouts(m)
		// Approved payouts paid 10.50 each; rejected ones gave theirs back.
		want := 10000*100 - (50-rejected)*1050
		if got := a.balanceOf(m, "AUD"); got.Available.String() != fmt.Sprintf("%d.%02d", want/100, want%100) {
			t.Errorf("available = %s after %d rejections", got.Available, rejected)
		}
		if problems, err := ledger.Verify(context.Background(), a.srv.DB.Read()); err != nil || len(problems) > 0 {
			t.Errorf("ledger verify: %v %v", problems, err)
		}
	})
}

// TestPayoutCrashDuringSubmission: payd is killed with SIGKILL while batches
// of payouts are being submitted to the rail; after a restart every
// acknowledged payout completes, every transaction reached the rail exactly
// once, and the ledger verifies.
func TestPayoutCrashDuringSubmission(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		first := startProcess(t, dsn)
		m := demoApp(t, first, "AUD")
		client := &payd{t: t, base: first.base}
		client.simulateDeposit(m, m.AccountNumber, "1000000")
		client.runDue(m)
		params := make([]map[string]any, 100)
		for i := range params {
			params[i] = bsbOK
		}
		var acknowledged []string
		for i := 0; i < 20; i++ {
			r, ok := tryDo(client, req{method: "POST", path: "/v2/payouts", as: &m, body: payoutBody("AUD", "au_bank_aud", "1", params...)})
			if !ok || r.Status != 201 {
				break
			}
			acknowledged = append(acknowledged, str(r.JSON(t), "uuid"))
			if i == 3+rand.IntN(5) {
				first.cmd.Process.Signal(syscall.SIGKILL)
				first.cmd.Wait()
			}
		}
		second := startProcess(t, dsn)
		p := &payd{t: t, base: second.base}
		waitUntil(t, "every acknowledged payout completed", 60*time.Second, func() bool {
			p.settlePayouts(m)
			for _, uuid := range acknowledged {
				if p.payoutDetail(m, uuid)["status"] != "completed" {
					return false
				}
			}
			return true
		})
		db := storetest.Open(t, dsn)
		var transactions, submitted, repeated int
		if err := db.Read().QueryRow(`SELECT (SELECT count(*) FROM payout_transactions),
			(SELECT count(*) FROM rail_submissions), (SELECT count(*) FROM rail_submissions WHERE attempts <> 1)`).Scan(&transactions, &submitted, &repeated); err != nil {
			t.Fatal(err)
		}
		if transactions < len(acknowledged)*100 || submitted != transactions || repeated != 0 {
			t.Errorf("%d transactions (%d acknowledged payouts), %d submitted, %d submitted more than once", transactions, len(acknowledged), submitted, repeated)
		}
		if out, err := exec.Command(paydBinary(t), "ledger", "verify", "--db", dsn).CombinedOutput(); err != nil {
			t.Errorf("payd ledger verify: %v\n%s", err, out)
		}
		t.Logf("%d payouts acknowledged, %d transactions submitted once each", len(acknowledged), submitted)
	})
}

// TestPayoutMethodNotEnabled: a method of the account's currency that the
// account does not enable is 422 METHOD_NOT_ENABLED, also for more than the
// balance holds (the method is refused before the funds), and nothing moves.
func TestPayoutMethodNotEnabled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "100")
		only := []string{"au_bank_aud"}
		if _, err := p.srv.Merchants.UpdateAccount(context.Background(), m.MerchantID, "AUD", merchant.AccountUpdate{Methods: &only}); err != nil {
			t.Fatal(err)
		}
		methods := p.get("/v2/payouts/payout_methods", m)
		want(t, methods, 200)
		var list struct {
			Records []struct {
				Name string `json:"payout_method_name"`
			} `json:"records"`
		}
		if err := json.Unmarshal(methods.Body, &list); err != nil || len(list.Records) != 1 || list.Records[0].Name != "au_bank_aud" {
			t.Errorf("payout methods = %s (%v), want only au_bank_aud", methods.Body, err)
		}
		wantError(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_payid_npp_aud", "10", payIDOK)), 422, "METHOD_NOT_ENABLED", "")
		wantError(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_payid_npp_aud", "1000", payIDOK)), 422, "METHOD_NOT_ENABLED", "")
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "100.00" || b.Outgoing.String() != "0.00" {
			t.Errorf("after the refusal: %+v", b)
		}
		want(t, p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), 201)
	})
}

// TestPayoutInAnotherCurrency: a key pays out in its own account's currency
// only. An AUD key asking for a JPY payout of a merchant that has a funded
// JPY account is refused (422 CURRENCY_NOT_SUPPORTED), and nothing moves:
// the payout engine holds the funds of the key's own account
// (payout.holdFunds).
func TestPayoutInAnotherCurrency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		ms := p.merchant("AUD", "JPY")
		aud, jpy := ms["AUD"], ms["JPY"]
		p.fund(jpy, "100000")
		wantError(t, p.post("/v2/payouts", aud, payoutBody("JPY", "jp_bank_jpy", "10000", jpyOK)), 422, "CURRENCY_NOT_SUPPORTED", "")
		if b := p.balanceOf(jpy, "JPY"); b.Available.String() != "100000" || b.Outgoing.String() != "0" {
			t.Errorf("JPY after the refusal: %+v, want untouched", b)
		}
		want(t, p.post("/v2/payouts", jpy, payoutBody("JPY", "jp_bank_jpy", "10000", jpyOK)), 201)
	})
}

// TestPayoutRounding: amounts in JPY and VND are rounded to whole units
// (CONTRACT §3, §16), never refused for their decimals.
func TestPayoutRounding(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		ms := p.merchant("JPY", "VND")
		for _, c := range []struct {
			currency, method, amount, want string
			params                         map[string]any
		}{
			{"JPY", "jp_bank_jpy", "1000.6", "1001", jpyOK},
			{"VND", "vn_bank_vnd", "50000.4", "50000", vndOK},
		} {
			m := ms[c.currency]
			p.fund(m, "1000000")
			got := p.createPayout(m, payoutBody(c.currency, c.method, c.amount, c.params))
			tx := got["payout_transactions"].([]any)[0].(map[string]any)
			if fmt.Sprint(tx["amount"]) != c.want {
				t.Errorf("%s %s: transaction amount %v, want %s", c.currency, c.amount, tx["amount"], c.want)
			}
		}
	})
}
