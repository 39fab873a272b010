package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func v1Tx(payee string, amount any, addr map[string]any) map[string]any {
	t := map[string]any{"payee": payee, "email": "payee@example.com", "amount": amount, "address": "1 George St, Sydney"}
	for k, v := range addr {
		t[k] = v
	}
	return t
}

var (
	v1PayID     = map[string]any{"payid": "jane@example.com", "payid_type": "email"}
	v1PayIDFail = map[string]any{"payid": "fail@example.com", "payid_type": "email"}
	v1Account   = map[string]any{"bsb": "062000", "account_number": "12345678"}
	v1Missing   = map[string]any{"bsb": "062000", "account_number": "000000000"}
)

func v1Body(externalID string, txs ...map[string]any) map[string]any {
	var list []any
	for _, t := range txs {
		list = append(list, t)
	}
	return map[string]any{"description": "Weekly payroll", "external_id": externalID, "payout_transaction_details": list}
}

// postFile sends a v1 batch file with the form's other fields.
func (p *payd) postFile(as creds, csv string, fields map[string]string) response {
	p.t.Helper()
	body, ct := kycForm(p.t, fields, map[string]kycFile{"file": {filename: "batch.csv", data: []byte(csv)}})
	return p.do(req{method: "POST", path: "/v1/payouts/file", as: &as, body: body, header: map[string]string{"Content-Type": ct}})
}

// TestPayoutV1Flows: a PayID batch, a BSB batch and a CSV batch each run
// through the payout engine: funds held, the network's answer, balances, and
// webhooks whose body is the v1 record (integer id).
func TestPayoutV1Flows(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		hooks := newEventLog(t)
		payid := v1Body("payid-batch", v1Tx("Jane", "10.00", v1PayID), v1Tx("Fail", "5", v1PayIDFail))
		payid["webhook_notification"] = map[string]any{"endpoint_url": hooks.url}
		r := p.post("/v1/payouts", m, payid)
		want(t, r, 201)
		var created struct {
			ID     json.Number `json:"id"`
			Status string
			Txs    []map[string]any `json:"payout_transactions"`
		}
		r.Decode(t, &created)
		if _, err := created.ID.Int64(); err != nil || created.Status != "processing" || created.Txs[0]["payid_type"] != "email" || created.Txs[0]["payee"] != "Jane" {
			t.Fatalf("created = %s", r.Body)
		}
		account := p.post("/v1/payouts", m, v1Body("bsb-batch", v1Tx("Bob", "20", v1Account), v1Tx("Nobody", "1", v1Missing)))
		want(t, account, 201)
		file := "\ufeffamount,payee,bsb,account_number,email\n30.00,Carol,062000,12345678,carol@example.com\n40,Dan,062000,87654321,\n"
		csv := p.postFile(m, file, map[string]string{"description": "Batch from a file", "external_id": "file-batch"})
		want(t, csv, 201)
		p.settlePayouts(m)
		byID := p.get("/v1/payouts/detail?id="+created.ID.String(), m)
		want(t, byID, 200)
		if got := byID.JSON(t); got["status"] != "completed" || strings.Join(txStatuses(got), ",") != "done,failed" {
			t.Errorf("PayID batch = %s", byID.Body)
		}
		byUUID := p.get("/v1/payouts/detail?uuid="+str(csv.JSON(t), "uuid"), m)
		if got := byUUID.JSON(t); got["status"] != "completed" || strings.Join(txStatuses(got), ",") != "done,done" {
			t.Errorf("CSV batch = %s", byUUID.Body)
		}
		// 1000 - (10 + 0.30) - (20 + 0.50) - (30 + 0.50) - (40 + 0.50): failed transactions gave theirs back.
		if b := p.balanceOf(m, "AUD"); b.Available.String() != "898.20" || b.Outgoing.String() != "0.00" {
			t.Errorf("balances = available %s outgoing %s", b.Available, b.Outgoing)
		}
		hooks.waitTypeSet(t, "payout.processing", "payout_transaction.done", "payout_transaction.failed", "payout.completed")
		for _, e := range pinEvents(hooks) {
			v1 := e.Record["id"] != nil && e.Record["payout_transactions"].([]any)[0].(map[string]any)["payee"] == "Jane"
			if strings.HasPrefix(e.Type, "payout_transaction.") {
				v1 = e.Record["payout_id"] != nil && e.Record["payout_transaction"].(map[string]any)["payee"] != nil
			}
			if !v1 {
				t.Errorf("%s webhook body is not v1's: %v", e.Type, e.Record)
			}
		}
		if r := p.get("/v1/payouts/detail?id=999999", m); r.Status != 404 {
			t.Errorf("unknown id: %d", r.Status)
		}
	})
}

// TestPayoutV1Rules: the v1 rules, each its own answer, nothing created.
func TestPayoutV1Rules(t *testing.T) {
	t.Parallel()
	both := v1Tx("Jane", "10", map[string]any{"payid": "jane@example.com", "payid_type": "email", "bsb": "062000", "account_number": "12345678"})
	tests := []struct {
		name      string
		body      map[string]any
		wantCode  string
		wantField string
	}{
		{"payid and bsb on one transaction", v1Body("", both), "MIXED_ADDRESSING", "payout_transaction_details[0]"},
		{"a request mixing payid and bsb", v1Body("", v1Tx("Jane", "10", v1PayID), v1Tx("Bob", "10", v1Account)), "MIXED_ADDRESSING", "payout_transaction_details[1]"},
		{"upper-case payid_type", v1Body("", v1Tx("Jane", "10", map[string]any{"payid": "jane@example.com", "payid_type": "EMAIL"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].payid_type"},
		{"description over 140 characters", with(v1Body("", v1Tx("Jane", "10", v1PayID)), map[string]any{"description": strings.Repeat("x", 141)}),
			"VALIDATION_FAILED", "description"},
		{"description under 5 characters", with(v1Body("", v1Tx("Jane", "10", v1PayID)), map[string]any{"description": "Pay"}),
			"VALIDATION_FAILED", "description"},
		{"a BSB of 5 digits", v1Body("", v1Tx("Bob", "10", map[string]any{"bsb": "06200", "account_number": "12345678"})),
			"VALIDATION_FAILED", "payout_transaction_details[0].bsb"},
		{"three decimals", v1Body("", v1Tx("Jane", "10.001", v1PayID)), "VALIDATION_FAILED", "payout_transaction_details[0].amount"},
		{"no addressing", v1Body("", v1Tx("Jane", "10", nil)), "VALIDATION_FAILED", "payout_transaction_details[0].payid"},
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.post("/v1/payouts", m, tt.body), 422, tt.wantCode, tt.wantField)
			})
		}
		upper := p.post("/v1/payouts", m, v1Body("", v1Tx("Jane", "10", map[string]any{"payid": "jane@example.com", "payid_type": "EMAIL"})))
		if msg, _ := upper.Fields(t)["payout_transaction_details[0].payid_type"].(string); !strings.Contains(msg, "lower case in v1") || !strings.Contains(msg, "v2") {
			t.Errorf("the upper-case payid_type message %q does not name the v1/v2 difference", msg)
		}
		if list := p.get("/v2/payouts/all", m).JSON(t); list["total"].(json.Number).String() != "0" {
			t.Errorf("refused payouts created some: %v", list)
		}
	})
}

// TestPayoutV1ScheduledHeldAndNotified: v1 payouts go through the same
// engine as v2: scheduled ones wait for their time on the merchant's clock,
// an account with approvals holds them, and webhooks carry the
// authorization_header verbatim.
func TestPayoutV1ScheduledHeldAndNotified(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		hooks := newEventLog(t)
		now := p.clockNow(m)
		body := with(v1Body("scheduled-1", v1Tx("Jane", "10", v1Account)), map[string]any{
			"scheduled_at":         now.Add(2 * time.Hour).Format(time.RFC3339),
			"webhook_notification": map[string]any{"endpoint_url": hooks.url, "authorization_header": "Bearer v1-secret"}})
		r := p.post("/v1/payouts", m, body)
		want(t, r, 201)
		uuid := str(r.JSON(t), "uuid")
		if s := str(r.JSON(t), "status"); s != "scheduled" {
			t.Fatalf("a v1 payout scheduled two hours ahead is %s", s)
		}
		p.advance(m, 3600)
		if s := str(p.get("/v1/payouts/detail?uuid="+uuid, m).JSON(t), "status"); s != "scheduled" {
			t.Errorf("an hour before its time: %s", s)
		}
		p.advance(m, 3600+10)
		p.settlePayouts(m)
		if s := str(p.get("/v1/payouts/detail?uuid="+uuid, m).JSON(t), "status"); s != "completed" {
			t.Errorf("after its time: %s, want completed", s)
		}
		hooks.waitTypeSet(t, "payout.scheduled", "payout.processing", "payout_transaction.done", "payout.completed")
		for _, e := range pinEvents(hooks) {
			if e.Auth != "Bearer v1-secret" {
				t.Errorf("%s webhook: Authorization %q", e.Type, e.Auth)
			}
		}

		held := p.merchant("AUD")["AUD"]
		p.fund(held, "100")
		p.requireApprovals(held)
		r = p.post("/v1/payouts", held, v1Body("held-1", v1Tx("Jane", "10", v1PayID)))
		want(t, r, 201)
		if s := str(r.JSON(t), "status"); s != "held" {
			t.Errorf("a v1 payout on an account with approvals is %s, want held", s)
		}
		// A failed file batch may be retried by file with is_retry.
		fields := map[string]string{"description": "Batch from a file", "external_id": "file-run"}
		want(t, p.postFile(m, "payee,amount,bsb,account_number\nNobody,10,062000,000000000\n", fields), 201)
		wantError(t, p.postFile(m, "payee,amount,bsb,account_number\nJane,10,062000,12345678\n", fields), 409, "ALREADY_EXISTS", "")
		p.settlePayouts(m)
		retry := map[string]string{"description": "Batch from a file", "external_id": "file-run", "is_retry": "true"}
		want(t, p.postFile(m, "payee,amount,bsb,account_number\nJane,10,062000,12345678\n", retry), 201)
		wantLedgerClean(t, p)
	})
}

// TestPayoutV1File: a file's problems are all reported at once by line and
// column; mixing addressing in a file is refused; the bounds hold.
func TestPayoutV1File(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "100000")
		fields := map[string]string{"description": "Batch from a file"}
		bad := "payee,amount,payid,payid_type\nJane,10,jane@example.com,email\nBob,abc,bob@example.com,email\nCarol,5,carol@example.com,EMAIL\n"
		r := p.postFile(m, bad, fields)
		wantError(t, r, 422, "VALIDATION_FAILED", "rows[3].amount")
		if _, ok := r.Fields(t)["rows[4].payid_type"]; !ok {
			t.Errorf("line 4's payid_type is not reported: %s", r.Body)
		}
		mixed := "payee,amount,payid,payid_type,bsb,account_number\nJane,10,jane@example.com,email,,\nBob,10,,,062000,12345678\n"
		wantError(t, p.postFile(m, mixed, fields), 422, "MIXED_ADDRESSING", "rows[3]")
		wantError(t, p.postFile(m, "payee,amount,iban\nJane,10,DE89\n", fields), 422, "VALIDATION_FAILED", "rows[1]")
		var many strings.Builder
		many.WriteString("payee,amount,bsb,account_number\n")
		for i := range 1001 {
			fmt.Fprintf(&many, "P%d,1,062000,12345678\n", i)
		}
		wantError(t, p.postFile(m, many.String(), fields), 422, "VALIDATION_FAILED", "file")
		huge := "payee,amount,bsb,account_number,address\n" + strings.Repeat("Jane,1,062000,12345678,"+strings.Repeat("x", 200)+"\n", 5000)
		wantError(t, p.postFile(m, huge, fields), 413, "TOO_LARGE", "")
		if list := p.get("/v2/payouts/all", m).JSON(t); list["total"].(json.Number).String() != "0" {
			t.Errorf("refused files created payouts: %v", list)
		}
	})
}

// TestPayoutV1Retry: a repeated external_id is 409 naming the existing
// payout; is_retry reuses it only once that payout has failed.
func TestPayoutV1Retry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		first := p.post("/v1/payouts", m, v1Body("run-7", v1Tx("Nobody", "10", v1Missing)))
		want(t, first, 201)
		id := first.JSON(t)["id"].(json.Number).String()
		again := p.post("/v1/payouts", m, v1Body("run-7", v1Tx("Nobody", "10", v1Account)))
		wantError(t, again, 409, "ALREADY_EXISTS", "")
		if !strings.Contains(string(again.Body), id) {
			t.Errorf("the 409 does not name payout %s: %s", id, again.Body)
		}
		retry := with(v1Body("run-7", v1Tx("Somebody", "10", v1Account)), map[string]any{"is_retry": true})
		wantError(t, p.post("/v1/payouts", m, retry), 409, "ALREADY_EXISTS", "")
		p.settlePayouts(m) // the first payout's only transaction fails
		want(t, p.post("/v1/payouts", m, retry), 201)
		wantError(t, p.post("/v1/payouts", m, with(v1Body("never-sent", v1Tx("Jane", "10", v1PayID)), map[string]any{"is_retry": true})),
			422, "VALIDATION_FAILED", "is_retry")
	})
}
