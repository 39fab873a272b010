package payout_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/payfile"
	"payd/internal/payout"
	"payd/internal/rail/bankfile"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// setRail sets a bank-file rail of format serving methods in currency, with
// a name no other test uses.
func setRail(t *testing.T, e *servertest.Env, format payfile.Format, currency string, methods ...string) {
	t.Helper()
	name := string(format) + "-" + strings.ToLower(store.RandomID(6))
	s := bankfile.Settings{Name: name, Format: format, Currency: currency, Methods: methods, DebtorName: "PAYD OPERATIONS",
		DebtorAccount: "123456789", DebtorBSB: "062-000", OriginatorID: "301500", BankAbbrev: "CBA",
		Cutoffs: []bankfile.Cutoff{{Hour: 9, Minute: 30}}, Timezone: "Australia/Sydney", Outbox: "dir:/srv/" + name + "/out", Inbox: "dir:/srv/" + name + "/in"}
	switch format {
	case payfile.Pain001:
		s.BankAbbrev = ""
	case payfile.Zengin:
		s.DebtorName, s.DebtorAccount, s.DebtorBSB, s.DebtorBankCode, s.DebtorBranchCode, s.OriginatorID, s.BankAbbrev, s.Timezone =
			"ﾍﾟｲﾄﾞ", "1234567", "", "0001", "001", "1234567890", "", "Asia/Tokyo"
	}
	if err := e.DB.Exec(context.Background(), func(tx *store.Tx) error { _, err := e.Files.Set(context.Background(), tx, s); return err }); err != nil {
		t.Fatal(err)
	}
}

// TestCreateFileRules: when a bank-file rail serves a payout's method, a
// name (or description) its file cannot hold is refused at creation, 422
// VALIDATION_FAILED naming the field (CONTRACT §17, §25): outside the BECS
// set on an aba rail, without a half-width katakana form on a zengin rail,
// over pain.001's 140 characters on a pain001 rail. The same names pass
// where no rail serves the method.
func TestCreateFileRules(t *testing.T) {
	t.Parallel()
	const params = tx0 + "payout_method_params."
	jpy := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "1234567", "account_name": "ヰセキ タロウ", "account_type": "ordinary"}
	payID := func(first, last string) payout.Request {
		r := payoutBy("au_payid_npp_aud", "AUD", "10", map[string]any{"pay_id": "jane@example.com", "pay_id_type": "EMAIL"})
		r.PayoutTransactionDetails[0].FirstName, r.PayoutTransactionDetails[0].LastName = first, last
		return r
	}
	tests := []struct {
		name string
		req  payout.Request
		want map[string]string // nil: created
	}{
		{"a name in the BECS set", bankPayout("12345678", "10"), nil},
		{"a name with a letter ABA lacks", edited(bankPayout("12345678", "10"), func(r *payout.Request) {
			r.PayoutTransactionDetails[0].PayoutMethodParams["account_name"] = "Zoë Café"
		}), map[string]string{params + "account_name": ""}},
		{"a kana Zengin lacks (ヰ)", payoutBy("jp_bank_jpy", "JPY", "1000", jpy), map[string]string{params + "account_name": ""}},
		{"a katakana name on a zengin rail", payoutBy("jp_bank_jpy", "JPY", "1000", map[string]any{"bank_code": "0001", "branch_code": "001",
			"account_number": "1234567", "account_name": "ヤマダ タロウ", "account_type": "ordinary"}), nil},
		{"a PayID's payee over 140 characters on a pain001 rail", payID(strings.Repeat("J", 90), strings.Repeat("D", 60)), map[string]string{tx0 + "first_name": ""}},
		{"a description over 140 characters on a pain001 rail", edited(payID("Jane", "Doe"), func(r *payout.Request) { r.Description = strings.Repeat("d", 141) }),
			map[string]string{"description": ""}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		apps := e.Merchant(t, "AUD", "JPY")
		for _, p := range apps {
			if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "100000"}); err != nil {
				t.Fatal(err)
			}
			e.RunDue(t, p.MerchantID)
		}
		// Without rails, every name is the sandbox network's to judge.
		for _, tt := range tests {
			if _, err := storetest.Write(ctx, e.DB, e.Payouts.Create, apps[tt.req.Currency], tt.req); err != nil {
				t.Fatalf("%s without a rail: %v", tt.name, err)
			}
		}
		setRail(t, e, payfile.ABA, "AUD", "au_bank_aud")
		setRail(t, e, payfile.Pain001, "AUD", "au_payid_npp_aud")
		setRail(t, e, payfile.Zengin, "JPY", "jp_bank_jpy")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.Payouts.Create, apps[tt.req.Currency], tt.req)
				if tt.want == nil {
					if err != nil {
						t.Errorf("Create() = %v, want it created", err)
					}
					return
				}
				gotCode, got := problems(err, tt.want)
				if gotCode != fault.CodeValidation || !maps.Equal(got, tt.want) {
					t.Errorf("Create() = %v; want VALIDATION_FAILED naming %v", err, tt.want)
				}
			})
		}
	})
}
