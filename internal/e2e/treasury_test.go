package e2e

import (
	"context"
	"strings"
	"testing"
)

// business are review details of a USD treasury account.
func business(name string) map[string]any {
	return map[string]any{"business_name": name, "business_number": "51824753556", "address": "1 Market St, Sydney NSW 2000",
		"country": "AU", "contact_name": "Jane Doe", "contact_email": "jane@shop.example"}
}

// TestTreasuryAccounts: AUD opens active at once; USD goes through review,
// and every submission stays listed (spec rule 7); one account per currency.
func TestTreasuryAccounts(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "USD", "JPY")
		aud, usd := apps["AUD"], apps["USD"]

		r := p.post("/v2/treasury_accounts", aud, map[string]any{})
		want(t, r, 201)
		acc := r.JSON(t)
		if str(acc, "status") != "active" || str(acc, "currency") != "AUD" || str(acc, "account_number") == "" || str(acc, "id") == "" {
			t.Fatalf("AUD treasury account = %s", r.Body)
		}
		again := p.post("/v2/treasury_accounts", aud, map[string]any{"currency": "AUD"})
		wantError(t, again, 409, "ALREADY_EXISTS", "")
		if !strings.Contains(string(again.Body), str(acc, "id")) {
			t.Errorf("the 409 does not name the existing account: %s", again.Body)
		}
		wantError(t, p.post("/v2/treasury_accounts", apps["JPY"], map[string]any{}), 422, "VALIDATION_FAILED", "currency")
		wantError(t, p.post("/v2/treasury_accounts", usd, map[string]any{"business_name": "No Details Ltd"}), 422, "VALIDATION_FAILED", "contact_email")
		wantError(t, p.post("/v2/treasury_accounts", aud, business("Shop")), 422, "VALIDATION_FAILED", "business_name")

		r = p.post("/v2/treasury_accounts", usd, business("Shop One"))
		want(t, r, 201)
		review := r.JSON(t)
		id := str(review, "id")
		if str(review, "status") != "in_review" || review["account_number"] != nil || len(review["submissions"].([]any)) != 1 {
			t.Fatalf("USD treasury account = %s", r.Body)
		}
		// Money does not move through an account in review.
		wantError(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &usd, body: map[string]any{"frequency": "on_demand", "treasury_account_id": id}}),
			409, "INVALID_STATE", "")

		reject := map[string]any{"treasury_account_id": id, "outcome": "rejected", "reason": "business number does not match"}
		want(t, p.post("/v2/sandbox/treasury_accounts/review", usd, reject), 200)
		wantError(t, p.post("/v2/sandbox/treasury_accounts/review", usd, reject), 409, "INVALID_STATE", "")
		sub := with(business("Shop Two"), map[string]any{"treasury_account_id": id})
		want(t, p.post("/v2/treasury_accounts/submissions", usd, sub), 201)
		want(t, p.post("/v2/treasury_accounts/submissions", usd, with(sub, map[string]any{"business_name": "Shop Three"})), 201)
		r = p.post("/v2/sandbox/treasury_accounts/review", usd, map[string]any{"treasury_account_id": id, "outcome": "approved"})
		want(t, r, 200)
		final := r.JSON(t)
		if str(final, "status") != "active" || str(final, "account_number") == "" {
			t.Errorf("approved account = %s", r.Body)
		}
		var got []string
		for _, s := range final["submissions"].([]any) {
			s := s.(map[string]any)
			got = append(got, str(s, "business_name")+":"+str(s, "status"))
		}
		if want := "Shop One:rejected,Shop Two:superseded,Shop Three:approved"; join(got) != want {
			t.Errorf("submissions = %s, want %s", join(got), want)
		}
		wantError(t, p.post("/v2/treasury_accounts/submissions", usd, sub), 409, "INVALID_STATE", "")

		var list struct{ Records []map[string]any }
		p.get("/v2/treasury_accounts", aud).Decode(t, &list)
		if len(list.Records) != 2 || str(list.Records[0], "currency") != "AUD" || str(list.Records[1], "currency") != "USD" {
			t.Errorf("treasury accounts = %v", list.Records)
		}
		bal := p.get("/v2/balances/detail?account="+id, usd)
		want(t, bal, 200)
		if c := str(bal.JSON(t), "currency"); c != "USD" {
			t.Errorf("balances of the USD treasury account: currency %s", c)
		}
		wantError(t, p.get("/v2/balances/detail?currency=AUD&account="+id, usd), 422, "VALIDATION_FAILED", "currency")
		wantLedgerClean(t, p)
	})
}

// treasuryBalance reads a treasury account's balances through account=.
func (p *payd) treasuryBalance(t *testing.T, as creds, id string) balanceView {
	t.Helper()
	var b balanceView
	r := p.get("/v2/balances/detail?account="+id, as)
	want(t, r, 200)
	r.Decode(t, &b)
	return b
}

// TestTransfers: into the treasury account and back, out to a bank account;
// the amount waits in outgoing while processing, a failure returns it, a
// finished transfer cannot be simulated again, and each change is a webhook.
func TestTransfers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		hooks := newEventLog(t)
		p.fund(m, "300")
		r := p.post("/v2/treasury_accounts", m, map[string]any{})
		want(t, r, 201)
		tid := str(r.JSON(t), "id")
		notify := map[string]any{"endpoint_url": hooks.url, "authorization_header": "Bearer t"}

		wantError(t, p.post("/v2/transfers", m, map[string]any{"amount": "300.01", "description": "too much", "treasury_account_id": tid}), 422, "INSUFFICIENT_FUNDS", "")
		wantError(t, p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "both", "treasury_account_id": tid, "external_bank_account": audBank}),
			422, "VALIDATION_FAILED", "treasury_account_id")
		wantError(t, p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "", "treasury_account_id": tid}), 422, "VALIDATION_FAILED", "description")
		wantError(t, p.post("/v2/transfers", m, map[string]any{"amount": "1", "description": "bad way", "treasury_account_id": tid, "direction": "up"}), 422, "VALIDATION_FAILED", "direction")

		r = p.post("/v2/transfers", m, map[string]any{"amount": "100", "description": "to treasury", "treasury_account_id": tid, "webhook_notification": notify})
		want(t, r, 201)
		in := r.JSON(t)
		if str(in, "status") != "processing" || str(in, "amount") != "100.00" {
			t.Fatalf("transfer = %s", r.Body)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 20000 || minorUnits(t, b.Outgoing, "AUD") != 10000 {
			t.Errorf("processing: payments available %s outgoing %s, want 200.00 and 100.00", b.Available, b.Outgoing)
		}
		sim := func(uuid, status string) response {
			return p.post("/v2/transfers/simulate", m, map[string]any{"uuid": uuid, "status": status})
		}
		want(t, sim(str(in, "uuid"), "completed"), 200)
		wantError(t, sim(str(in, "uuid"), "failed"), 409, "INVALID_STATE", "")
		if b := p.treasuryBalance(t, m, tid); minorUnits(t, b.Available, "AUD") != 10000 {
			t.Errorf("treasury after the transfer in: %+v", b)
		}
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 20000 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("payments after the transfer in: %+v", b)
		}
		hist := p.get("/v2/balances/history?account="+tid, m).JSON(t)
		recs := hist["records"].([]any)
		if len(recs) != 1 || str(recs[0].(map[string]any), "transaction_type") != "transfer_in" || str(recs[0].(map[string]any), "reference_id") != str(in, "uuid") {
			t.Errorf("treasury history = %v", recs)
		}
		hooks.waitTypes(t, "transfer.processing", "transfer.completed")
		if e := hooks.events[1]; e.Auth != "Bearer t" || str(e.Record, "uuid") != str(in, "uuid") {
			t.Errorf("transfer.completed webhook = %+v", e)
		}

		// Back out of the treasury account, failed: the money stays there.
		out := p.post("/v2/transfers", m, map[string]any{"amount": "40", "description": "back", "treasury_account_id": tid, "direction": "out"}).JSON(t)
		if b := p.treasuryBalance(t, m, tid); minorUnits(t, b.Available, "AUD") != 6000 || minorUnits(t, b.Outgoing, "AUD") != 4000 {
			t.Errorf("treasury with a transfer out processing: %+v", b)
		}
		want(t, sim(str(out, "uuid"), "failed"), 200)
		if b := p.treasuryBalance(t, m, tid); minorUnits(t, b.Available, "AUD") != 10000 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("treasury after the failed transfer out: %+v", b)
		}
		detail := p.get("/v2/transfers/detail?uuid="+str(out, "uuid"), m).JSON(t)
		if str(detail, "status") != "failed" || str(detail["from"].(map[string]any), "type") != "treasury_account" || str(detail["to"].(map[string]any), "type") != "payments_account" {
			t.Errorf("failed transfer out = %v", detail)
		}
		// Out to a bank account, from the treasury account.
		ext := p.post("/v2/transfers", m, map[string]any{"amount": "30", "description": "to my bank", "external_bank_account": audBank}).JSON(t)
		want(t, sim(str(ext, "uuid"), "completed"), 200)
		if b := p.treasuryBalance(t, m, tid); minorUnits(t, b.Available, "AUD") != 7000 {
			t.Errorf("treasury after the external transfer: %+v", b)
		}
		wantError(t, p.get("/v2/transfers/detail?uuid=NOPE000000", m), 404, "NOT_FOUND", "")
		wantLedgerClean(t, p)
	})
}

// TestTransferRace: ten simulations of one transfer race; exactly one wins
// and the money moves once.
func TestTransferRace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "100")
		treasury, err := p.srv.Merchants.OpenTreasury(context.Background(), m.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}
		tr := p.post("/v2/transfers", m, map[string]any{"amount": "60", "description": "race", "treasury_account_id": treasury.PublicID}).JSON(t)
		statuses := make(chan int, 10)
		for i := range 10 {
			go func() {
				status := "completed"
				if i%2 == 1 {
					status = "failed"
				}
				statuses <- p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(tr, "uuid"), "status": status}).Status
			}()
		}
		wins := 0
		for range 10 {
			switch s := <-statuses; s {
			case 200:
				wins++
			case 409:
			default:
				t.Errorf("a racing simulation answered %d", s)
			}
		}
		if wins != 1 {
			t.Errorf("%d simulations won, want 1", wins)
		}
		total := minorUnits(t, p.balanceOf(m, "AUD").Available, "AUD") + minorUnits(t, p.treasuryBalance(t, m, treasury.PublicID).Available, "AUD")
		if total != 10000 {
			t.Errorf("payments + treasury available = %d, want 10000", total)
		}
		wantLedgerClean(t, p)
	})
}
