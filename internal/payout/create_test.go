package payout_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

const tx0 = "payout_transaction_details[0]."

// payoutBy is a payout of one transaction of amount by method, in the
// method's currency, with params.
func payoutBy(method, currency string, amount money.Input, params map[string]any) payout.Request {
	return payout.Request{Currency: currency, PayoutMethodName: method, Description: "supplier run",
		PayoutTransactionDetails: []payout.TransactionRequest{{Amount: amount, PayoutMethodParams: params}}}
}

func edited(r payout.Request, edit func(*payout.Request)) payout.Request {
	edit(&r)
	return r
}

// problems is what a refusal answers: its code and its members, each with
// what it says ("" in want for any problem).
func problems(err error, want map[string]string) (string, map[string]string) {
	e, ok := fault.As(err)
	if !ok {
		return "not a fault: " + err.Error(), nil
	}
	got := maps.Clone(e.Fields)
	for k, v := range want {
		if v == "" && got[k] != "" {
			got[k] = ""
		}
	}
	if got == nil {
		got = map[string]string{}
	}
	return e.Code, got
}

// TestCreateRules: the rules of CONTRACT §5 that need no database, each
// refusal with its code and the members it names, what each says; a
// refused payout creates nothing and moves nothing.
func TestCreateRules(t *testing.T) {
	t.Parallel()
	bank := func(amount money.Input) payout.Request { return bankPayout("12345678", amount) }
	withTx := func(edit func(*payout.TransactionRequest)) payout.Request {
		return edited(bank("10"), func(r *payout.Request) { edit(&r.PayoutTransactionDetails[0]) })
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name     string
		req      payout.Request
		wantCode string
		want     map[string]string
	}{
		{"the app's currency is not the request's", edited(bank("10"), func(r *payout.Request) { r.Currency = "USD" }), fault.CodeCurrency, map[string]string{}},
		{"no currency nor method", edited(bank("10"), func(r *payout.Request) { r.Currency, r.PayoutMethodName = "", "" }), fault.CodeValidation,
			map[string]string{"currency": "is required", "payout_method_name": "is required"}},
		{"an unknown method", edited(bank("10"), func(r *payout.Request) { r.PayoutMethodName = "au_cheque_aud" }), fault.CodeValidation,
			map[string]string{"payout_method_name": "is not a payout method: GET /v2/payouts/payout_methods lists them"}},
		{"a method of another currency", edited(bank("10"), func(r *payout.Request) { r.PayoutMethodName = "jp_bank_jpy" }), fault.CodeMethodNotEnabled, map[string]string{}},
		{"a description over 255 characters", edited(bank("10"), func(r *payout.Request) { r.Description = long(256) }), fault.CodeValidation,
			map[string]string{"description": "must be 5 to 255 characters"}},
		{"an external_id over 100 characters", edited(bank("10"), func(r *payout.Request) { r.ExternalID = long(101) }), fault.CodeValidation,
			map[string]string{"external_id": "must be at most 100 characters"}},
		{"scheduled_at unreadable", edited(bank("10"), func(r *payout.Request) { r.ScheduledAt = "tomorrow" }), fault.CodeValidation,
			map[string]string{"scheduled_at": "must be a time such as 2025-01-31T09:00:00Z"}},
		{"scheduled_at in the past", edited(bank("10"), func(r *payout.Request) {
			r.ScheduledAt = servertest.Start.Add(-time.Minute).Format(time.RFC3339)
		}), fault.CodeValidation, map[string]string{"scheduled_at": "must be in the future"}},
		{"more than 1,000 transactions", edited(bank("10"), func(r *payout.Request) {
			r.PayoutTransactionDetails = make([]payout.TransactionRequest, payout.MaxTransactions+1)
		}), fault.CodeValidation, map[string]string{"payout_transaction_details": "lists 1001 transactions; at most 1000 are allowed in one payout"}},
		{"a first name over 100 characters", withTx(func(d *payout.TransactionRequest) { d.FirstName = long(101) }), fault.CodeValidation,
			map[string]string{tx0 + "first_name": "must be at most 100 characters"}},
		{"an email that is none", withTx(func(d *payout.TransactionRequest) { d.Email = "jane" }), fault.CodeValidation,
			map[string]string{tx0 + "email": "must be an email address"}},
		{"no amount", withTx(func(d *payout.TransactionRequest) { d.Amount = "" }), fault.CodeValidation, map[string]string{tx0 + "amount": "is required"}},
		{"no method parameters", withTx(func(d *payout.TransactionRequest) { d.PayoutMethodParams = nil }), fault.CodeValidation,
			map[string]string{tx0 + "payout_method_params": "is required", tx0 + "payout_method_params.bsb": "is required for au_bank_aud",
				tx0 + "payout_method_params.account_number": "is required for au_bank_aud", tx0 + "payout_method_params.account_name": "is required for au_bank_aud"}},
		{"an amount of three decimals", bank("10.001"), fault.CodeValidation, map[string]string{tx0 + "amount": ""}},
		{"a BSB of 5 digits", withTx(func(d *payout.TransactionRequest) { d.PayoutMethodParams["bsb"] = "06200" }), fault.CodeValidation,
			map[string]string{tx0 + "payout_method_params.bsb": "must be 6 digits"}},
		{"a pay_id_type in v1's spelling", payoutBy("au_payid_npp_aud", "AUD", "10", map[string]any{"pay_id": "jane@example.com", "pay_id_type": "email"}),
			fault.CodeValidation, map[string]string{tx0 + "payout_method_params.pay_id_type": `must be upper case in v2 (EMAIL, PHONE, ABN, ORGANISATION_ID); "email" is the v1 spelling`}},
		{"member problems before the method's limits", edited(bank("0.50"), func(r *payout.Request) { r.Description = "x" }), fault.CodeValidation,
			map[string]string{"description": "must be 5 to 255 characters", tx0 + "amount": "must be 1.00 to 1000000.00 AUD for au_bank_aud"}},
		{"an amount under the method's", bank("0.50"), fault.CodeAmountOutOfRange, map[string]string{tx0 + "amount": "must be 1.00 to 1000000.00 AUD for au_bank_aud"}},
		{"more than available", bank("99.60"), fault.CodeInsufficientFunds, map[string]string{}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "100")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, tt.req)
				gotCode, got := problems(err, tt.want)
				if gotCode != tt.wantCode || !maps.Equal(got, tt.want) {
					t.Errorf("Create() = %v; want %s naming %v", err, tt.wantCode, tt.want)
				}
			})
		}
		if _, total, err := e.Payouts.List(context.Background(), p, payout.ListQuery{}); err != nil || total != 0 {
			t.Errorf("after refusals: %d payouts (%v), want none", total, err)
		}
		if b := e.Balance(t, p); b.Available != 10000 || b.Outgoing != 0 {
			t.Errorf("balances moved: %+v", b)
		}
	})
}

// TestCreateMethodRules: the rules a method's catalogue entry holds beyond
// each parameter's own (param.Validate's rules, the bank directory), in the
// method's currency.
func TestCreateMethodRules(t *testing.T) {
	t.Parallel()
	ugx := map[string]any{"account_number": "12345678", "account_name": "Jane", "bank_code": "CENTUGKA", "payment_reason": "bills"}
	with := func(base map[string]any, kv ...string) map[string]any {
		out := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	thb := map[string]any{"account_number": "12345678", "account_name": "Jane", "description": "rent", "type": "individual", "swift_code": "KASITHBK"}
	jpy := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "1234567", "account_name": "ﾔﾏﾀﾞ", "account_type": "ordinary"}
	const params = tx0 + "payout_method_params."
	tests := []struct {
		name     string
		req      payout.Request
		wantCode string
		want     map[string]string
	}{
		{"ug_bank_ugx: an individual gives a phone", payoutBy("ug_bank_ugx", "UGX", "20000", with(ugx, "user_type", "individual")),
			fault.CodeValidation, map[string]string{params + "phone": "is required when user_type is individual"}},
		{"ug_bank_ugx: a business gives its name and number", payoutBy("ug_bank_ugx", "UGX", "20000", with(ugx, "user_type", "business")),
			fault.CodeValidation, map[string]string{params + "business_name": "is required when user_type is business",
				params + "registration_number": "is required when user_type is business"}},
		{"ug_bank_ugx: an unknown user type", payoutBy("ug_bank_ugx", "UGX", "20000", with(ugx, "user_type", "trust")),
			fault.CodeValidation, map[string]string{params + "user_type": "must be one of individual, business"}},
		{"th_bank_thb takes no bank_code", payoutBy("th_bank_thb", "THB", "500", with(thb, "bank_code", "004")),
			fault.CodeValidation, map[string]string{params + "bank_code": "is not taken by th_bank_thb: give the recipient bank's swift_code instead"}},
		{"jp_bank_jpy: a bank the directory does not list", payoutBy("jp_bank_jpy", "JPY", "1000", with(jpy, "bank_code", "9998")),
			fault.CodeValidation, map[string]string{params + "bank_code": `"9998" is not one of jp_bank_jpy's banks: GET /v2/payouts/payout_method/params lists them`}},
		{"jp_bank_jpy: a branch the bank does not have", payoutBy("jp_bank_jpy", "JPY", "1000", with(jpy, "branch_code", "998")),
			fault.CodeValidation, map[string]string{params + "branch_code": `"998" is not a branch of bank 0001 in the Zengin directory: GET /v2/banks/branches?bank_code=0001 lists them`}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		apps := e.Merchant(t, "UGX", "THB", "JPY")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, apps[tt.req.Currency], tt.req)
				gotCode, got := problems(err, tt.want)
				if gotCode != tt.wantCode || !maps.Equal(got, tt.want) {
					t.Errorf("Create() = %v; want %s naming %v", err, tt.wantCode, tt.want)
				}
			})
		}
	})
}

// TestCreateStarts: an accepted payout holds its amounts and fees in
// outgoing and starts processing, scheduled when scheduled_at is ahead,
// held when the account requires approval; a method the account's setting
// leaves out is refused before funds.
func TestCreateStarts(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "100")
		later := edited(bankPayout("12345678", "10"), func(r *payout.Request) {
			r.ScheduledAt = e.Clock.Now().Add(time.Hour).Format(time.RFC3339)
		})
		tests := []struct {
			name       string
			req        payout.Request
			wantStatus payout.Status
		}{
			{"now", bankPayout("12345678", "10", "5"), payout.Processing},
			{"an hour ahead", later, payout.Scheduled},
		}
		outgoing := int64(0)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, tt.req)
				if err != nil || got.Status != tt.wantStatus {
					t.Fatalf("Create() = %s, %v; want %s", got.Status, err, tt.wantStatus)
				}
				outgoing += int64(len(tt.req.PayoutTransactionDetails)) * feeMinor
				for _, d := range got.PayoutTransactions {
					minor, _, _ := money.Parse(d.Amount.String(), money.MustLookup("AUD"))
					outgoing += minor
				}
				if b := e.Balance(t, p); b.Outgoing != outgoing || b.Available != 10000-outgoing {
					t.Errorf("balance %+v, want %d outgoing", b, outgoing)
				}
			})
		}
		only := []string{"au_payid_npp_aud"}
		if _, err := e.Merchants.UpdateAccount(ctx, p.MerchantID, "AUD", merchant.AccountUpdate{Methods: &only}); err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout("12345678", "1000")); !fault.Is(err, fault.CodeMethodNotEnabled) {
			t.Errorf("a method the account leaves out, for more than is available: %v, want %s", err, fault.CodeMethodNotEnabled)
		}
	})
}

// TestCreateLocksTheAccountFirst: a payout is created in the merchant's
// lane, group-committed with the lane's other work, a worker's jobs among
// it, each of which locks the account before anything else
// (ledger.LockAccount); so does the payout, or the batch could hold the
// rows of its hold (available, outgoing) while a job after it waits for
// the account that a refund holds, waiting for those rows.
func TestCreateLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		if e.DB.Dialect() != store.Postgres {
			t.Skip("SQLite has one writer and no row locks")
		}
		p := funded(t, e, "100")
		create := func(ctx context.Context, tx *store.Tx) error {
			_, err := e.Payouts.Create(ctx, tx, p, bankPayout("12345678", "10"))
			return err
		}
		if !e.LocksAccount(t, p, store.MerchantLane(p.MerchantID), create) {
			t.Error("the payout did not lock the account")
		}
	})
}
