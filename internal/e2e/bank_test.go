package e2e

import (
	"encoding/json"
	"testing"
)

// jpyPayout is a one-transaction JPY payout to a Zengin account.
func jpyPayout(bank, branch string) map[string]any {
	return payoutBody("JPY", "jp_bank_jpy", "5000", map[string]any{"bank_code": bank, "branch_code": branch,
		"account_number": "1234567", "account_name": "ﾔﾏﾀﾞ ﾀﾛｳ", "account_type": "ordinary"})
}

// TestBankBranches: the Zengin directory answers a branch, a bank's
// branches page by page, and 404 for codes it does not have.
func TestBankBranches(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		one := p.get("/v2/banks/branches?bank_code=0001&branch_code=001", m)
		want(t, one, 200)
		if b := one.JSON(t); str(b, "bank_name") != "みずほ" || str(b, "branch_name") != "東京営業部" || str(b, "bank_name_kana") != "ﾐｽﾞﾎ" || str(b, "branch_name_kana") != "ﾄｳｷﾖｳ" {
			t.Errorf("branch 0001/001 = %s", one.Body)
		}
		page := p.get("/v2/banks/branches?bank_code=0001&per_page=5&page=2", m).JSON(t)
		records, _ := page["records"].([]any)
		total, _ := page["total"].(json.Number).Int64()
		if len(records) != 5 || total < 100 {
			t.Errorf("Mizuho's branches, page 2: %d records of %d", len(records), total)
		}
		wantError(t, p.get("/v2/banks/branches?bank_code=0001&branch_code=999", m), 404, "NOT_FOUND", "")
		wantError(t, p.get("/v2/banks/branches?bank_code=9998", m), 404, "NOT_FOUND", "")
		wantError(t, p.get("/v2/banks/branches?bank_code=1", m), 422, "VALIDATION_FAILED", "bank_code")
	})
}

// TestBankJPYPayout: a JPY payout to a real Zengin bank and branch goes
// through end to end; an unknown bank or branch is refused, naming it.
func TestBankJPYPayout(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("JPY")["JPY"]
		p.fund(m, "100000")
		params := p.get("/v2/payouts/payout_method/params?payout_method_name=jp_bank_jpy", m).JSON(t)
		record, _ := params["record"].(map[string]any)
		if banks, _ := record["banks"].([]any); len(banks) < 1000 {
			t.Errorf("jp_bank_jpy lists %d banks, want the Zengin directory", len(banks))
		}
		po := p.createPayout(m, jpyPayout("0001", "001"))
		p.settlePayouts(m)
		if got := str(p.get("/v2/payouts/detail?uuid="+str(po, "uuid"), m).JSON(t), "status"); got != "completed" {
			t.Errorf("JPY payout to Mizuho Tokyo: %s, want completed", got)
		}
		wantError(t, p.post("/v2/payouts", m, jpyPayout("9998", "001")), 422, "VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.bank_code")
		wantError(t, p.post("/v2/payouts", m, jpyPayout("0001", "999")), 422, "VALIDATION_FAILED", "payout_transaction_details[0].payout_method_params.branch_code")
	})
}
