package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"payd/internal/ledger"
)

// TestDepositClearsToAvailable is the first money flow: a simulated deposit
// lands in incoming with a waiting balance record and, once its clearing job
// has run, sits in available with the record done.
func TestDepositClearsToAvailable(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		r := p.post("/v1/simulate_deposit", m, map[string]any{"account_number": m.AccountNumber, "amount": "250"})
		want(t, r, 201)
		dep := r.JSON(t)
		if dep["amount"] != "250.00" || dep["status"] != "received" {
			t.Fatalf("deposit = %s", r.Body)
		}
		p.runDue(m)
		bal := p.get("/v2/balances/detail?currency=AUD", m).JSON(t)
		if got := bal["available_balance"].(interface{ String() string }).String(); got != "250.00" {
			t.Errorf("available_balance = %s, want 250.00", got)
		}
		hist := p.get("/v2/balances/history", m).JSON(t)
		recs := hist["records"].([]any)
		if len(recs) != 1 {
			t.Fatalf("history = %v", hist)
		}
		rec := recs[0].(map[string]any)
		if rec["id"] != dep["balance_id"] || rec["status"] != "done" || rec["transaction_type"] != "top_up" || rec["request_type"] != "money_in" {
			t.Errorf("history record = %v", rec)
		}
	})
}

var (
	uuidPattern      = regexp.MustCompile(`^[0-9A-Z]{8}$`)
	balanceIDPattern = regexp.MustCompile(`^[0-9A-Z]{10}$`)
	timePattern      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// TestDepositPerCurrency: a deposit in each kind of currency (AUD with 2
// decimals, JPY and VND with none), with the amount as a JSON number or a
// decimal string, is answered 201 with the amount in the currency's precision,
// shows incoming+available equal to the amount at every look, clears to
// available once due jobs have run, and is one done top_up record in history.
func TestDepositPerCurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		currency string
		body     map[string]any // account_number is added
		want     map[string]any // members of the answer
		// wantNumber is the history amount and available balance as the raw JSON number.
		wantNumber string
	}{
		{name: "AUD string", currency: "AUD", body: map[string]any{"amount": "250"},
			want: map[string]any{"amount": "250.00", "currency": "AUD", "remitter_name": ""}, wantNumber: "250.00"},
		{name: "AUD number", currency: "AUD", body: map[string]any{"amount": json.Number("250")},
			want: map[string]any{"amount": "250.00", "currency": "AUD"}, wantNumber: "250.00"},
		{name: "AUD whole number written with zero cents", currency: "AUD", body: map[string]any{"amount": "10.00"},
			want: map[string]any{"amount": "10.00"}, wantNumber: "10.00"},
		{name: "AUD number with exponent", currency: "AUD", body: map[string]any{"amount": json.Number("1e3")},
			want: map[string]any{"amount": "1000.00"}, wantNumber: "1000.00"},
		{name: "AUD remitter and remarks echoed", currency: "AUD",
			body:       map[string]any{"amount": "7", "remitter_name": "Jane Citizen", "remitter_bank_name": "Westpac", "remitter_branch_name": "Sydney CBD", "remarks": "invoice 42"},
			want:       map[string]any{"amount": "7.00", "remitter_name": "Jane Citizen", "remitter_bank_name": "Westpac", "remitter_branch_name": "Sydney CBD", "remarks": "invoice 42"},
			wantNumber: "7.00"},
		{name: "JPY string with half-width katakana remitter", currency: "JPY",
			body:       map[string]any{"amount": "1000", "remitter_name": "ﾔﾏﾀﾞ ﾀﾛｳ", "remitter_bank_name": "ﾐｽﾞﾎ", "remitter_branch_name": "ｼﾌﾞﾔ"},
			want:       map[string]any{"amount": "1000", "currency": "JPY", "remitter_name": "ﾔﾏﾀﾞ ﾀﾛｳ", "remitter_bank_name": "ﾐｽﾞﾎ", "remitter_branch_name": "ｼﾌﾞﾔ"},
			wantNumber: "1000"},
		{name: "JPY number without remitter", currency: "JPY", body: map[string]any{"amount": json.Number("1000")},
			want: map[string]any{"amount": "1000", "currency": "JPY"}, wantNumber: "1000"},
		{name: "JPY remitter with Zengin digits and upper-case letters", currency: "JPY",
			body: map[string]any{"amount": "5", "remitter_name": "ABC(ｶ) 123"},
			want: map[string]any{"amount": "5", "remitter_name": "ABC(ｶ) 123"}, wantNumber: "5"},
		{name: "VND string", currency: "VND", body: map[string]any{"amount": "5000000"},
			want: map[string]any{"amount": "5000000", "currency": "VND"}, wantNumber: "5000000"},
		{name: "VND number", currency: "VND", body: map[string]any{"amount": json.Number("5000000")},
			want: map[string]any{"amount": "5000000", "currency": "VND"}, wantNumber: "5000000"},
	}
	each(t, func(t *testing.T, p *payd) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				m := p.merchant(tt.currency)[tt.currency]
				body := map[string]any{"account_number": m.AccountNumber}
				for k, v := range tt.body {
					body[k] = v
				}
				r := p.post("/v1/simulate_deposit", m, body)
				want(t, r, 201)
				dep := r.JSON(t)
				wantMembers(t, dep, tt.want)
				wantMembers(t, dep, map[string]any{"status": "received", "account_number": m.AccountNumber})
				wantPattern(t, dep, "uuid", uuidPattern)
				wantPattern(t, dep, "balance_id", balanceIDPattern)
				wantPattern(t, dep, "created_at", timePattern)

				amount := minorUnits(t, tt.wantNumber, tt.currency)
				wantBalanceSplit(t, p.balanceOf(m, tt.currency), amount)
				p.runDue(m)
				got := p.balanceOf(m, tt.currency)
				wantBalanceSplit(t, got, amount)
				if got.Available.String() != tt.wantNumber || got.Incoming.String() != zeroIn(tt.wantNumber) {
					t.Errorf("after clearing: available %s, incoming %s; want %s and zero", got.Available, got.Incoming, tt.wantNumber)
				}

				h := p.history(m, "")
				if len(h.Records) != 1 {
					t.Fatalf("history has %d records, want 1", len(h.Records))
				}
				gotRec := h.Records[0]
				wantRec := historyRecord{ID: dep["balance_id"].(string), Amount: json.Number(tt.wantNumber), Currency: tt.currency,
					RequestType: "money_in", TransactionType: "top_up", Status: "done", ReferenceID: dep["uuid"].(string), CreatedAt: dep["created_at"].(string)}
				if gotRec != wantRec {
					t.Errorf("history record = %+v, want %+v", gotRec, wantRec)
				}
			})
		}
	})
}

// zeroIn is zero written with the digits of amount ("0.00" for "250.00").
func zeroIn(amount string) string {
	_, frac, ok := strings.Cut(amount, ".")
	if !ok {
		return "0"
	}
	return "0." + strings.Repeat("0", len(frac))
}

// wantMembers fails unless every member of want is in got with that value.
func wantMembers(t testing.TB, got, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

func wantPattern(t testing.TB, got map[string]any, member string, re *regexp.Regexp) {
	t.Helper()
	if s, _ := got[member].(string); !re.MatchString(s) {
		t.Errorf("%s = %#v, want a match of %s", member, got[member], re)
	}
}

// wantBalanceSplit fails unless incoming and available together hold amount
// and the other buckets are empty: a deposit moves from incoming to available
// in one step, so every observation sees it whole in one or the other.
func wantBalanceSplit(t testing.TB, b balanceView, amount int64) {
	t.Helper()
	in, avail := minorUnits(t, b.Incoming, b.Currency), minorUnits(t, b.Available, b.Currency)
	if in+avail != amount || minorUnits(t, b.Outgoing, b.Currency) != 0 || minorUnits(t, b.RollingReserve, b.Currency) != 0 {
		t.Errorf("balance %+v: incoming+available = %d minor units, want %d, other buckets zero", b, in+avail, amount)
	}
}

// TestDepositRefused: every malformed, invalid or foreign deposit is refused
// with the contract's status, code and named member, and none of them leaves
// a trace in the balance or its history.
func TestDepositRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "JPY", "VND")
		aud, jpy, vnd := accounts["AUD"].AccountNumber, accounts["JPY"].AccountNumber, accounts["VND"].AccountNumber
		m := accounts["AUD"]
		foreign := p.merchant("AUD")["AUD"]
		big := `{"account_number":"` + aud + `","amount":"10","remarks":"` + strings.Repeat("a", 1<<20) + `"}`
		tests := []struct {
			name        string
			body        string
			contentType string // application/json unless set
			status      int
			code        string
			field       string // named in errors.fields, when set
		}{
			{name: "AUD fraction as string", body: `{"account_number":"` + aud + `","amount":"10.50"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "AUD fraction as number", body: `{"account_number":"` + aud + `","amount":10.5}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "AUD one cent", body: `{"account_number":"` + aud + `","amount":"0.01"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "JPY fraction is not rounded here", body: `{"account_number":"` + jpy + `","amount":"1000.5"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "VND fraction", body: `{"account_number":"` + vnd + `","amount":100.4}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "zero", body: `{"account_number":"` + aud + `","amount":0}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "negative", body: `{"account_number":"` + aud + `","amount":"-10"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "not a number", body: `{"account_number":"` + aud + `","amount":"ten"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "out of range", body: `{"account_number":"` + aud + `","amount":"1000000000000000000"}`, status: 422, code: "AMOUNT_OUT_OF_RANGE", field: "amount"},
			{name: "missing amount", body: `{"account_number":"` + aud + `"}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "null amount", body: `{"account_number":"` + aud + `","amount":null}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "missing account_number", body: `{"amount":"10"}`, status: 422, code: "VALIDATION_FAILED", field: "account_number"},
			{name: "blank account_number", body: `{"account_number":"  ","amount":"10"}`, status: 422, code: "VALIDATION_FAILED", field: "account_number"},
			{name: "both missing names amount", body: `{}`, status: 422, code: "VALIDATION_FAILED", field: "amount"},
			{name: "both missing names account_number", body: `{}`, status: 422, code: "VALIDATION_FAILED", field: "account_number"},
			{name: "remarks over 140 characters", body: `{"account_number":"` + aud + `","amount":"10","remarks":"` + strings.Repeat("x", 141) + `"}`, status: 422, code: "VALIDATION_FAILED", field: "remarks"},
			{name: "JPY full-width katakana remitter_name", body: `{"account_number":"` + jpy + `","amount":"1000","remitter_name":"ヤマダ タロウ"}`, status: 422, code: "VALIDATION_FAILED", field: "remitter_name"},
			{name: "JPY hiragana remitter_bank_name", body: `{"account_number":"` + jpy + `","amount":"1000","remitter_bank_name":"みずほ"}`, status: 422, code: "VALIDATION_FAILED", field: "remitter_bank_name"},
			{name: "JPY lower-case latin remitter_branch_name", body: `{"account_number":"` + jpy + `","amount":"1000","remitter_branch_name":"shibuya"}`, status: 422, code: "VALIDATION_FAILED", field: "remitter_branch_name"},
			{name: "JPY kanji remitter_name", body: `{"account_number":"` + jpy + `","amount":"1000","remitter_name":"山田太郎"}`, status: 422, code: "VALIDATION_FAILED", field: "remitter_name"},
			{name: "unknown account number", body: `{"account_number":"000000000000","amount":"10"}`, status: 404, code: "NOT_FOUND"},
			{name: "another merchant's account number", body: `{"account_number":"` + foreign.AccountNumber + `","amount":"10"}`, status: 404, code: "NOT_FOUND"},
			{name: "amount is a boolean", body: `{"account_number":"` + aud + `","amount":true}`, status: 400, code: "WRONG_TYPE", field: "amount"},
			{name: "amount is an object", body: `{"account_number":"` + aud + `","amount":{"value":10}}`, status: 400, code: "WRONG_TYPE", field: "amount"},
			{name: "amount is an empty string", body: `{"account_number":"` + aud + `","amount":""}`, status: 400, code: "WRONG_TYPE", field: "amount"},
			{name: "account_number is a number", body: `{"account_number":5,"amount":"10"}`, status: 400, code: "WRONG_TYPE", field: "account_number"},
			{name: "remitter_name is an array", body: `{"account_number":"` + aud + `","amount":"10","remitter_name":["a"]}`, status: 400, code: "WRONG_TYPE", field: "remitter_name"},
			{name: "body is an array", body: `[]`, status: 400, code: "WRONG_TYPE"},
			{name: "truncated JSON", body: `{"account_number":"` + aud + `","amount":`, status: 400, code: "MALFORMED_JSON"},
			{name: "not JSON", body: `account_number=1&amount=10`, status: 400, code: "MALFORMED_JSON"},
			{name: "empty body", body: ``, status: 400, code: "MALFORMED_JSON"},
			{name: "two objects", body: `{"account_number":"` + aud + `","amount":"10"}{}`, status: 400, code: "MALFORMED_JSON"},
			{name: "text/plain", body: `{"account_number":"` + aud + `","amount":"10"}`, contentType: "text/plain", status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
			{name: "form encoded", body: `account_number=1&amount=10`, contentType: "application/x-www-form-urlencoded", status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
			{name: "body over 1 MiB", body: big, status: 413, code: "TOO_LARGE"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ct := "application/json"
				if tt.contentType != "" {
					ct = tt.contentType
				}
				r := p.do(req{method: "POST", path: "/v1/simulate_deposit", as: &m, body: tt.body, header: map[string]string{"Content-Type": ct}})
				wantError(t, r, tt.status, tt.code, tt.field)
			})
		}

		p.runDue(m)
		for _, cur := range []string{"AUD", "JPY", "VND"} {
			if h := p.history(accounts[cur], "currency="+cur); len(h.Records) != 0 {
				t.Errorf("%s history after refused deposits = %+v, want none", cur, h.Records)
			}
			wantBalanceSplit(t, p.balanceOf(m, cur), 0)
		}
		wantBalanceSplit(t, p.balanceOf(foreign, "AUD"), 0)
	})
}

// TestDepositForeignAccountLooksUnknown: another merchant's account number is
// answered exactly as a number that does not exist (CONTRACT §1), so a caller
// learns nothing about other merchants.
func TestDepositForeignAccountLooksUnknown(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		foreign := p.merchant("AUD")["AUD"]
		const unknown = "999999999999"
		ask := func(number string) response {
			r := p.post("/v1/simulate_deposit", m, map[string]any{"account_number": number, "amount": "10"})
			r.Body = []byte(strings.ReplaceAll(string(r.Body), number, "<number>"))
			r.Header = nil
			return r
		}
		gotForeign, gotUnknown := ask(foreign.AccountNumber), ask(unknown)
		if gotForeign.Status != 404 || gotForeign.Status != gotUnknown.Status || string(gotForeign.Body) != string(gotUnknown.Body) {
			t.Errorf("foreign account: %d %s; unknown account: %d %s; want the same 404", gotForeign.Status, gotForeign.Body, gotUnknown.Status, gotUnknown.Body)
		}
	})
}

// TestDepositIgnoresUnknownMembers: members the API does not know are ignored
// (CONTRACT §3), and application/json with parameters is still JSON.
func TestDepositIgnoresUnknownMembers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := `{"account_number":"` + m.AccountNumber + `","amount":"12","currency":"JPY","nested":{"a":[1,2,{"b":null}]},"amount_cents":1}`
		r := p.do(req{method: "POST", path: "/v1/simulate_deposit", as: &m, body: body, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
		want(t, r, 201)
		wantMembers(t, r.JSON(t), map[string]any{"amount": "12.00", "currency": "AUD"})
	})
}

// TestDepositIntoTreasury: a treasury account of the caller can receive a
// deposit; the money lands in the treasury account, not in the payments
// account's balance or history.
func TestDepositIntoTreasury(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		ctx := context.Background()
		treasury, err := p.srv.Merchants.OpenTreasury(ctx, m.MerchantID, "AUD")
		if err != nil {
			t.Fatalf("open treasury: %v", err)
		}
		dep := p.simulateDeposit(m, treasury.AccountNumber, "300")
		wantMembers(t, dep, map[string]any{"account_number": treasury.AccountNumber, "currency": "AUD", "amount": "300.00", "status": "received"})
		p.runDue(m)

		wantBalanceSplit(t, p.balanceOf(m, "AUD"), 0)
		if h := p.history(m, ""); len(h.Records) != 0 {
			t.Errorf("payments history = %+v, want none", h.Records)
		}
		// No endpoint shows treasury balances yet (GET /v2/treasury_accounts
		// is not served), so the ledger is read directly.
		bs, err := ledger.Balances(ctx, p.srv.DB.Read(), m.MerchantID, "treasury", "AUD")
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 1 || bs[0].Available != 30000 || bs[0].Incoming != 0 {
			t.Errorf("treasury balances = %+v, want available 30000 minor units", bs)
		}
	})
}

// TestDepositBalancesNeverOverflow: deposits of the largest accepted amount
// (10^17 yen each) are answered 201 until the next one would take a balance
// past what the ledger can hold; that one is refused with a 422, never a 500,
// and the balance still reads back as exactly what was accepted.
func TestDepositBalancesNeverOverflow(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		const maxYen = "100000000000000000"
		statuses := map[int]int{}
		for range 95 {
			r := p.post("/v1/simulate_deposit", m, map[string]any{"account_number": m.AccountNumber, "amount": maxYen})
			statuses[r.Status]++
		}
		if statuses[201]+statuses[422] != 95 || statuses[422] == 0 {
			t.Errorf("answers by status = %v, want only 201 and, once the balance is full, 422", statuses)
		}
		p.runDue(m)
		got := p.balanceOf(m, "JPY")
		if want := strconv.FormatInt(int64(statuses[201])*100_000_000_000_000_000, 10); got.Available.String() != want || got.Incoming != "0" {
			t.Errorf("balance = %+v, want available %s (every accepted deposit)", got, want)
		}
	})
}
