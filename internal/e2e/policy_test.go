package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/policy"
	"payd/internal/store"
	"payd/internal/transfer"
)

// activePolicy makes in the merchant's active policy: proposed by one
// admin, approved by another.
func (p *payd) activePolicy(as creds, in policy.Input) {
	p.t.Helper()
	ctx := context.Background()
	a := policy.Actor{UserID: "u-admin-a", Email: "a@shop.example", Role: merchant.Admin}
	b := policy.Actor{UserID: "u-admin-b", Email: "b@shop.example", Role: merchant.Admin}
	if _, err := store.Do(ctx, p.srv.DB, func(tx *store.Tx) (policy.Policy, error) {
		r, err := p.srv.Policies.Propose(ctx, tx, as.MerchantID, a, in, time.Now())
		if err != nil {
			return r, err
		}
		return p.srv.Policies.Decide(ctx, tx, as.MerchantID, r.ID, b, true, time.Now())
	}); err != nil {
		p.t.Fatal(err)
	}
}

// TestPolicyCatchesEveryEntryPoint: one policy catches a payout made by
// each entry point (v2, v1, a v1 CSV file) and an external transfer, each
// answering held with required_approvals 2 and the policy's name and
// version; the same user's second approval is 409 ALREADY_APPROVED and
// leaves it held (no way around the second approver); a second user's
// approval sends it on. GET /v2/approval_policies shows the policy.
func TestPolicyCatchesEveryEntryPoint(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "5000")
		p.activePolicy(m, policy.Input{Name: "Two to sign", Currency: "AUD", MinAmount: "100", Approvals: 2, Roles: []merchant.Role{merchant.Finance}})
		list := p.get("/v2/approval_policies", m)
		want(t, list, 200)
		records, _ := list.JSON(t)["records"].([]any)
		if len(records) != 1 || records[0].(map[string]any)["status"] != "active" || records[0].(map[string]any)["min_amount"] != "100.00" {
			t.Fatalf("GET /v2/approval_policies = %s", list.Body)
		}
		v2 := p.post("/v2/payouts", m, payoutBody("AUD", "au_bank_aud", "150", bsbOK))
		want(t, v2, 201)
		v1 := p.post("/v1/payouts", m, v1Body("v1-caught", v1Tx("Bob Smith", "150", v1Account)))
		want(t, v1, 201)
		file := p.postFile(m, "payee,amount,bsb,account_number\nBob Smith,150,062000,12345678\n", map[string]string{"description": "Batch from a file", "external_id": "file-caught"})
		want(t, file, 201)
		created := map[string]map[string]any{"v2": v2.JSON(t), "v1": v1.JSON(t), "CSV file": file.JSON(t)}
		first := payout.Decider{UserID: "u-f1", Email: "f1@shop.example", Role: merchant.Finance}
		second := payout.Decider{UserID: "u-f2", Email: "f2@shop.example", Role: merchant.Finance}
		for name, po := range created {
			a, _ := po["approval"].(map[string]any)
			pol, _ := a["policy"].(map[string]any)
			if po["status"] != "held" || fmt.Sprint(a["required_approvals"]) != "2" || pol["name"] != "Two to sign" || fmt.Sprint(pol["version"]) != "1" {
				t.Errorf("%s: %v, want held for 2 approvals by Two to sign v1", name, po)
				continue
			}
			uuid := po["uuid"].(string)
			if _, err := p.decide(m, uuid, first, true, ""); err != nil {
				t.Fatalf("%s: first approval: %v", name, err)
			}
			if _, err := p.decide(m, uuid, first, true, ""); codeOfErr(err) != policy.CodeAlreadyApproved {
				t.Errorf("%s: the same user again = %v, want ALREADY_APPROVED", name, err)
			}
			if got, err := p.decide(m, uuid, second, true, ""); err != nil || got.Status != payout.Processing {
				t.Errorf("%s: the second approval = %s, %v; want processing", name, got.Status, err)
			}
		}

		tr := p.post("/v2/treasury_accounts", m, map[string]any{})
		want(t, tr, 201)
		in := p.post("/v2/transfers", m, map[string]any{"amount": "1000", "description": "to treasury", "treasury_account_id": str(tr.JSON(t), "id")})
		want(t, in, 201)
		if got := str(in.JSON(t), "status"); got != "processing" {
			t.Errorf("an internal transfer over min_amount is %s, want processing (never held)", got)
		}
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in.JSON(t), "uuid"), "status": "completed"}), 200)
		out := p.post("/v2/transfers", m, map[string]any{"amount": "150", "description": "supplier",
			"external_bank_account": map[string]any{"bank_name": "Westpac", "bsb": "062000", "account_number": "12345678", "account_name": "Supplier Pty Ltd"}})
		want(t, out, 201)
		body := out.JSON(t)
		if a, _ := body["approval"].(map[string]any); body["status"] != "held" || fmt.Sprint(a["required_approvals"]) != "2" {
			t.Fatalf("an external transfer caught: %v, want 201 held", body)
		}
		decideTransfer := func(by payout.Decider) (transfer.Transfer, error) {
			return store.Do(context.Background(), p.srv.DB, func(tx *store.Tx) (transfer.Transfer, error) {
				return p.srv.Transfers.Decide(context.Background(), tx, transfer.Decision{MerchantID: m.MerchantID, TransferUUID: str(body, "uuid"),
					By: policy.Actor{UserID: by.UserID, Email: by.Email, Role: by.Role}, Approve: true})
			})
		}
		decideTransfer(first)
		if _, err := decideTransfer(first); codeOfErr(err) != policy.CodeAlreadyApproved {
			t.Errorf("the transfer: the same user again = %v, want ALREADY_APPROVED", err)
		}
		if got, err := decideTransfer(second); err != nil || got.Status != transfer.Processing {
			t.Errorf("the transfer's second approval = %s, %v; want processing", got.Status, err)
		}
		detail := p.get("/v2/transfers/detail?uuid="+str(body, "uuid"), m)
		want(t, detail, 200)
		if a, _ := detail.JSON(t)["approval"].(map[string]any); a["status"] != "approved" || len(a["approvals"].([]any)) != 2 {
			t.Errorf("the transfer's detail: %s", detail.Body)
		}
	})
}
