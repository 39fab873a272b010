package e2e

import (
	"testing"
)

// TestDepositClearsToAvailable is the first money flow: a simulated deposit
// lands in incoming with a waiting balance record and, once its clearing job
// has run, sits in available with the record done.
func TestDepositClearsToAvailable(t *testing.T) {
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		r := p.post("/v1/simulate_deposit", m, map[string]any{"account_number": m.AccountNumber, "amount": "250"})
		want(t, r, 201)
		dep := r.JSON(t)
		if dep["amount"] != "250.00" || dep["status"] != "received" {
			t.Fatalf("deposit = %s", r.Body)
		}
		p.runDue(m)
		bal := p.get("/v2/balances/detail?currency=AUD", m).JSON(t)["record"].(map[string]any)
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
