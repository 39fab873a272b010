package e2e

import (
	"strings"
	"testing"
)

// TestTreasuryUSDWithoutDetails: POST /v2/treasury_accounts
// {"currency":"USD"} alone opens an account in review with no submission
// yet (CONTRACT §24): no account number, "submissions":[] in its answer, the
// list and the review's refusal; the business details come later through
// POST /v2/treasury_accounts/submissions, and the sandbox review then opens
// the account.
func TestTreasuryUSDWithoutDetails(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("AUD", "USD")
		aud, usd := apps["AUD"], apps["USD"]

		r := p.post("/v2/treasury_accounts", aud, map[string]any{"currency": "USD"})
		want(t, r, 201)
		acc := r.JSON(t)
		id := str(acc, "id")
		if str(acc, "currency") != "USD" || str(acc, "status") != "in_review" || acc["account_number"] != nil || !strings.Contains(string(r.Body), `"submissions":[]`) {
			t.Fatalf("USD treasury account of currency alone = %s, want in_review, account_number null, submissions []", r.Body)
		}
		wantError(t, p.post("/v2/treasury_accounts", usd, map[string]any{}), 409, "ALREADY_EXISTS", "")

		list := p.get("/v2/treasury_accounts", usd)
		want(t, list, 200)
		if !strings.Contains(string(list.Body), `"submissions":[]`) || !strings.Contains(string(list.Body), id) {
			t.Errorf("treasury accounts = %s, want %s with submissions []", list.Body, id)
		}

		review := map[string]any{"treasury_account_id": id, "outcome": "approved"}
		wantError(t, p.post("/v2/sandbox/treasury_accounts/review", usd, review), 409, "INVALID_STATE", "")
		wantError(t, p.post("/v2/treasury_accounts/submissions", usd, map[string]any{"treasury_account_id": id}), 422, "VALIDATION_FAILED", "business_name")

		r = p.post("/v2/treasury_accounts/submissions", usd, with(business("Later Ltd"), map[string]any{"treasury_account_id": id}))
		want(t, r, 201)
		var submitted struct {
			Status      string
			Submissions []struct{ Status string }
		}
		r.Decode(t, &submitted)
		if submitted.Status != "in_review" || len(submitted.Submissions) != 1 || submitted.Submissions[0].Status != "in_review" {
			t.Fatalf("after the first submission = %s", r.Body)
		}

		r = p.post("/v2/sandbox/treasury_accounts/review", usd, review)
		want(t, r, 200)
		final := r.JSON(t)
		if str(final, "status") != "active" || str(final, "account_number") == "" {
			t.Errorf("approved account = %s", r.Body)
		}
		wantLedgerClean(t, p)
	})
}
