package httpapi_test

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/httpapi"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// funded makes an AUD merchant whose available balance is aud whole dollars.
func funded(t *testing.T, e *servertest.Env, aud string) merchant.Principal {
	t.Helper()
	p := e.Merchant(t, "AUD")["AUD"]
	if _, err := storetest.Write(context.Background(), e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: money.Input(aud)}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	return p
}

// byBSB is a v1 transaction of 10 AUD to Jane Doe's bank account.
func byBSB() httpapi.PayoutV1Transaction {
	return httpapi.PayoutV1Transaction{Payee: "Jane Doe", Amount: "10", BSB: "062000", AccountNumber: "12345678"}
}

// byPayID is a v1 transaction of 10 AUD to Jane Doe's email PayID.
func byPayID() httpapi.PayoutV1Transaction {
	return httpapi.PayoutV1Transaction{Payee: "Jane Doe", Amount: "10", PayID: "jane@example.com", PayIDType: "email"}
}

func v1Body(txs ...httpapi.PayoutV1Transaction) httpapi.PayoutV1Request {
	return httpapi.PayoutV1Request{Description: "weekly payroll", PayoutTransactionDetails: txs}
}

func described(description string) httpapi.PayoutV1Request {
	r := v1Body(byBSB())
	r.Description = description
	return r
}

func with(t httpapi.PayoutV1Transaction, edit func(*httpapi.PayoutV1Transaction)) httpapi.PayoutV1Transaction {
	edit(&t)
	return t
}

// TestCreatePayoutV1Refusals: the v1 rules (addressing, payid_type in lower
// case, v1's bounds) and the engine's, each problem named by the v1 body's
// members, all reported at once, the message saying its members; nothing
// is created. A v1 description too short and one too long are told the
// same bound, the contract's 5 to 140.
func TestCreatePayoutV1Refusals(t *testing.T) {
	t.Parallel()
	const tx0 = "payout_transaction_details[0]."
	tests := []struct {
		name     string
		body     httpapi.PayoutV1Request
		wantCode string
		want     map[string]string // members and what each says ("" for any problem)
	}{
		{"description under 5 characters", described("Pay"), fault.CodeValidation, map[string]string{"description": "must be 5 to 140 characters"}},
		{"description with spaces around under 5", described("  Pay   "), fault.CodeValidation, map[string]string{"description": "must be 5 to 140 characters"}},
		{"description over 140 characters", described(strings.Repeat("x", 141)), fault.CodeValidation, map[string]string{"description": "must be 5 to 140 characters"}},
		{"payee blank", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Payee = "  " })),
			fault.CodeValidation, map[string]string{tx0 + "payee": "must be 1 to 140 characters"}},
		{"payee over 140 characters", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Payee = strings.Repeat("é", 141) })),
			fault.CodeValidation, map[string]string{tx0 + "payee": "must be 1 to 140 characters"}},
		{"address over 255 characters", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Address = strings.Repeat("a", 256) })),
			fault.CodeValidation, map[string]string{tx0 + "address": "must be at most 255 characters"}},
		{"payid_type in upper case", v1Body(with(byPayID(), func(t *httpapi.PayoutV1Transaction) { t.PayIDType = "EMAIL" })),
			fault.CodeValidation, map[string]string{tx0 + "payid_type": `must be lower case in v1 (email, phone, abn, organisation_id); "EMAIL" is the v2 spelling`}},
		{"payid_type unknown", v1Body(with(byPayID(), func(t *httpapi.PayoutV1Transaction) { t.PayIDType = "iban" })),
			fault.CodeValidation, map[string]string{tx0 + "payid_type": "must be email, phone, abn or organisation_id"}},
		{"no address", v1Body(httpapi.PayoutV1Transaction{Payee: "Jane Doe", Amount: "10"}),
			fault.CodeValidation, map[string]string{tx0 + "payid": "give payid and payid_type, or bsb and account_number",
				tx0 + "bsb": "is required for au_bank_aud", tx0 + "account_number": "is required for au_bank_aud"}},
		{"v1 and engine problems at once", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Address = strings.Repeat("a", 256); t.BSB = "12" })),
			fault.CodeValidation, map[string]string{tx0 + "address": "must be at most 255 characters", tx0 + "bsb": "must be 6 digits"}},
		{"engine's method parameter named as v1's member", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.BSB = "12" })),
			fault.CodeValidation, map[string]string{tx0 + "bsb": "must be 6 digits"}},
		{"engine's pay_id named payid", v1Body(with(byPayID(), func(t *httpapi.PayoutV1Transaction) { t.PayID = strings.Repeat("j", 257) })),
			fault.CodeValidation, map[string]string{tx0 + "payid": "must be at most 256 characters"}},
		{"engine's amount rule", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Amount = "1.001" })),
			fault.CodeValidation, map[string]string{tx0 + "amount": ""}},
		{"both addressings on one transaction", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.PayID, t.PayIDType = "jane@example.com", "email" })),
			"MIXED_ADDRESSING", map[string]string{"payout_transaction_details[0]": "carries both payid and bsb/account_number; give one"}},
		{"a batch mixing them", v1Body(byBSB(), byPayID()),
			"MIXED_ADDRESSING", map[string]string{"payout_transaction_details[1]": "is addressed differently from payout_transaction_details[0]: one payout uses payid throughout or bsb and account_number throughout"}},
		{"an amount out of the method's range", v1Body(with(byBSB(), func(t *httpapi.PayoutV1Transaction) { t.Amount = "0.50" })),
			fault.CodeAmountOutOfRange, map[string]string{tx0 + "amount": "must be 1.00 to 1000000.00 AUD for au_bank_aud"}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "100")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.API.CreatePayoutV1, p, tt.body)
				got, _ := fault.As(err)
				if got == nil || got.Code != tt.wantCode {
					t.Fatalf("err = %v, want %s", err, tt.wantCode)
				}
				gotFields := maps.Clone(got.Fields)
				for k, v := range tt.want {
					if v == "" && gotFields[k] != "" {
						gotFields[k] = ""
					}
				}
				if !maps.Equal(gotFields, tt.want) {
					t.Errorf("fields %v, want %v", got.Fields, tt.want)
				}
				if said, _ := fault.As(fault.Fields(got.Fields).Err()); got.Message != said.Message {
					t.Errorf("message %q does not say its fields (%q)", got.Message, said.Message)
				}
			})
		}
		if _, total, err := e.Payouts.List(context.Background(), p, payout.ListQuery{}); err != nil || total != 0 {
			t.Errorf("%d payouts (%v), want none", total, err)
		}
	})
}

// TestCreatePayoutV1: a v1 body becomes the engine's payout of its
// addressing's method, its members the method's parameters (the payee the
// account's name, payid_type in the engine's spelling), recorded as v1 and
// shown as v1 spells it.
func TestCreatePayoutV1(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		tx         httpapi.PayoutV1Transaction
		wantMethod string
		wantParams map[string]any
	}{
		{"by BSB", byBSB(), "au_bank_aud",
			map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe", "address": "1 George St"}},
		{"by PayID", byPayID(), "au_payid_npp_aud",
			map[string]any{"pay_id": "jane@example.com", "pay_id_type": "EMAIL", "address": "1 George St"}},
		{"by ABN", with(byPayID(), func(t *httpapi.PayoutV1Transaction) { t.PayID, t.PayIDType = "51824753556", "abn" }), "au_payid_npp_aud",
			map[string]any{"pay_id": "51824753556", "pay_id_type": "ABN", "address": "1 George St"}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "100")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				tx := with(tt.tx, func(t *httpapi.PayoutV1Transaction) { t.Address = "1 George St" })
				got, err := storetest.Write(ctx, e.DB, e.API.CreatePayoutV1, p, v1Body(tx))
				if err != nil {
					t.Fatal(err)
				}
				engine, err := e.Payouts.Get(ctx, p, got.UUID)
				if err != nil {
					t.Fatal(err)
				}
				if engine.PayoutMethodName != tt.wantMethod || !maps.Equal(engine.PayoutTransactions[0].PayoutMethodParams, tt.wantParams) {
					t.Errorf("engine payout by %s with %v, want %s with %v", engine.PayoutMethodName, engine.PayoutTransactions[0].PayoutMethodParams, tt.wantMethod, tt.wantParams)
				}
				stored, err := e.Payouts.GetV1(ctx, p, got.ID, "")
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, stored) {
					t.Errorf("answered %+v, GetV1 reads %+v", got, stored)
				}
				rec := got.Transactions[0]
				shown := httpapi.PayoutV1Transaction{Payee: rec.Payee, Amount: money.Input(rec.Amount.String()), Address: rec.Address,
					PayID: deref(rec.PayID), PayIDType: deref(rec.PayIDType), BSB: deref(rec.BSB), AccountNumber: deref(rec.AccountNumber)}
				if want := with(tx, func(t *httpapi.PayoutV1Transaction) { t.Amount = "10.00" }); shown != want {
					t.Errorf("the record shows %+v, want %+v", shown, want)
				}
			})
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestCreatePayoutV1IsAUDOnly: an app of another currency's account is
// refused before anything else.
func TestCreatePayoutV1IsAUDOnly(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "USD")["USD"]
		_, err := storetest.Write(context.Background(), e.DB, e.API.CreatePayoutV1, p, httpapi.PayoutV1Request{})
		if got, _ := fault.As(err); got == nil || got.Code != fault.CodeCurrency || got.Message != "v1 payouts are in AUD; this app's account is USD" {
			t.Errorf("err = %v, want %s naming USD", err, fault.CodeCurrency)
		}
	})
}
