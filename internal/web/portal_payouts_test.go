package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// needsApprovals makes the account hold every payout for a decision.
func needsApprovals(t *testing.T, e *servertest.Env, p merchant.Principal) {
	t.Helper()
	on := true
	if _, err := e.Merchants.UpdateAccount(context.Background(), p.MerchantID, p.Currency, merchant.AccountUpdate{Approvals: &on}); err != nil {
		t.Fatal(err)
	}
}

// payoutForm is the payouts/new form of one bank transfer of amount, the
// method's fields as its step two names them.
func payoutForm(amount string) map[string]string {
	return map[string]string{"currency": "AUD", "payout_method_name": "au_bank_aud", "description": "supplier run", "amount": amount,
		"param.bsb": "062000", "param.account_number": "12345678", "param.account_name": "Jane Doe"}
}

// TestPortalPayoutDecisions: a finance user creates a payout from the
// portal (audited) and, its maker, neither sees the decision forms nor may
// decide it; another finance user sees them; a viewer neither; two
// checkers at once get one 303 and one 409; a rejection needs its reason
// and returns the funds (each decision audited).
func TestPortalPayoutDecisions(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		needsApprovals(t, e, p)
		srv := portalServer(t, e)
		maker := signedIn(t, e, srv, p.MerchantID, "maker@shop.example", merchant.Finance)
		checker := signedIn(t, e, srv, p.MerchantID, "checker@shop.example", merchant.Finance)
		boss := signedIn(t, e, srv, p.MerchantID, "boss@shop.example", merchant.Admin)
		viewer := signedIn(t, e, srv, p.MerchantID, "viewer@shop.example", merchant.Viewer)
		create := func() string {
			t.Helper()
			a := maker.post("/portal/payouts/new", "/portal/payouts", payoutForm("100"))
			if a.status != http.StatusSeeOther {
				t.Fatalf("create a payout: %d\n%.500s", a.status, a.body)
			}
			wantAudited(t, e, p.MerchantID, "POST", "/portal/payouts")
			return strings.TrimPrefix(a.header.Get("Location"), "/portal/payouts/")
		}
		uuid := create()
		page := "/portal/payouts/" + uuid
		forms := []struct {
			name string
			user *browser
			want bool
		}{{"the maker", maker, false}, {"another finance user", checker, true}, {"an admin", boss, true}, {"a viewer", viewer, false}}
		for _, tt := range forms {
			if a := tt.user.do("GET", page, nil); a.status != http.StatusOK || strings.Contains(a.body, `id="approve"`) != tt.want {
				t.Errorf("%s: %d, decision forms shown = %v, want %v", tt.name, a.status, !tt.want, tt.want)
			}
		}
		if a := maker.do("GET", page, nil); !strings.Contains(a.body, `id="waiting">You made this payout: another approver must decide.`) {
			t.Errorf("the maker's page does not say another approver must decide:\n%.1500s", a.body)
		}
		if a := maker.post(page, page+"/approve", nil); a.status != http.StatusForbidden || !strings.Contains(a.body, "creator") {
			t.Errorf("the maker's approval: %d, want 403\n%.300s", a.status, a.body)
		}
		tokens := []string{checker.csrf(page), boss.csrf(page)}
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, b := range []*browser{checker, boss} {
			wg.Go(func() { statuses[i] = b.do("POST", page+"/approve", url.Values{"csrf_token": {tokens[i]}}).status })
		}
		wg.Wait()
		if !(statuses[0] == 303 && statuses[1] == 409) && !(statuses[0] == 409 && statuses[1] == 303) {
			t.Errorf("two approvals at once: %v, want one 303 and one 409", statuses)
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/payouts/{uuid}/approve")
		if a := checker.post(page, page+"/reject", map[string]string{"reason": "too late now"}); a.status != http.StatusConflict || !strings.Contains(a.body, "already approved") {
			t.Errorf("a decision on a decided payout: %d\n%.300s", a.status, a.body)
		}
		rejected := "/portal/payouts/" + create()
		if a := checker.post(rejected, rejected+"/reject", map[string]string{"reason": "no"}); a.status != http.StatusUnprocessableEntity {
			t.Errorf("a reason under 5 characters: %d, want 422", a.status)
		}
		if a := checker.post(rejected, rejected+"/reject", map[string]string{"reason": "not this supplier"}); a.status != http.StatusSeeOther ||
			a.header.Get("Location") != rejected+"?done=rejected" {
			t.Errorf("reject: %d to %q", a.status, a.header.Get("Location"))
		}
		wantAudited(t, e, p.MerchantID, "POST", "/portal/payouts/{uuid}/reject")
		if a := checker.do("GET", rejected+"?done=rejected", nil); !strings.Contains(a.body, "funds are back") || !strings.Contains(a.body, "not this supplier") {
			t.Errorf("the rejected payout's page:\n%.800s", a.body)
		}
		if b := e.Balance(t, p); b.Available != 50000-10050 {
			t.Errorf("available after one approval and one rejection = %d, want 39950", b.Available)
		}
	})
}

// TestPortalDecidesAPIPayouts: a payout the API made has no maker among the
// portal's users: every finance and admin user may decide it.
func TestPortalDecidesAPIPayouts(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		needsApprovals(t, e, p)
		po, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud",
			Description: "api run", PayoutTransactionDetails: []payout.TransactionRequest{{Amount: "10",
				PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}}}})
		if err != nil {
			t.Fatal(err)
		}
		finance := signedIn(t, e, portalServer(t, e), p.MerchantID, "finance@shop.example", merchant.Finance)
		page := "/portal/payouts/" + po.UUID
		if a := finance.do("GET", page, nil); !strings.Contains(a.body, `id="approve"`) || !strings.Contains(a.body, "created by app:"+p.AppID) {
			t.Errorf("the API payout's page:\n%.800s", a.body)
		}
		if a := finance.post(page, page+"/approve", nil); a.status != http.StatusSeeOther {
			t.Errorf("approve: %d\n%.300s", a.status, a.body)
		}
	})
}

// TestPortalPayoutList: the list shows the merchant's payouts, ?status=held
// only the held ones; the form is offered to who may create payouts.
func TestPortalPayoutList(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		srv := portalServer(t, e)
		finance := signedIn(t, e, srv, p.MerchantID, "finance@shop.example", merchant.Finance)
		viewer := signedIn(t, e, srv, p.MerchantID, "viewer@shop.example", merchant.Viewer)
		a := finance.post("/portal/payouts/new", "/portal/payouts", payoutForm("10"))
		uuid := strings.TrimPrefix(a.header.Get("Location"), "/portal/payouts/")
		if a.status != http.StatusSeeOther || uuid == "" {
			t.Fatalf("create: %d\n%.300s", a.status, a.body)
		}
		tests := []struct {
			name, path string
			user       *browser
			lists, new bool
		}{
			{"all, finance", "/portal/payouts", finance, true, true},
			{"held, finance", "/portal/payouts?status=held", finance, false, true},
			{"all, viewer", "/portal/payouts", viewer, true, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := tt.user.do("GET", tt.path, nil)
				if a.status != http.StatusOK || strings.Contains(a.body, uuid) != tt.lists || strings.Contains(a.body, `href="/portal/payouts/new"`) != tt.new {
					t.Errorf("GET %s: %d, lists %v (want %v), offers the form %v (want %v)", tt.path, a.status,
						strings.Contains(a.body, uuid), tt.lists, strings.Contains(a.body, `href="/portal/payouts/new"`), tt.new)
				}
			})
		}
	})
}

// TestPortalPayoutRecipients: a held payout's page shows whom each
// transaction pays, as the approver approves it: the name and email, the
// method's fields in the method's order (BSB, account, account name; a
// PayID and its type), the amount and fee in the currency's minor units
// and the external_id, for every transaction.
func TestPortalPayoutRecipients(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		needsApprovals(t, e, p)
		ext := func(s string) *string { return &s }
		bank, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud",
			Description: "supplier run", PayoutTransactionDetails: []payout.TransactionRequest{
				{FirstName: "Jane", LastName: "Doe", Email: "jane@supplier.example", Amount: "10.5", ExternalID: ext("inv-1001"),
					PayoutMethodParams: map[string]any{"account_name": "Jane Doe Pty Ltd", "bsb": "062000", "account_number": "12345678"}},
				{FirstName: "Raj", Amount: "7", ExternalID: ext("inv-1002"),
					PayoutMethodParams: map[string]any{"bsb": "083004", "account_number": "987654", "account_name": "R Patel"}}}})
		if err != nil {
			t.Fatal(err)
		}
		payid, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, payout.Request{Currency: "AUD", PayoutMethodName: "au_payid_npp_aud",
			Description: "refund run", PayoutTransactionDetails: []payout.TransactionRequest{{FirstName: "Mia", Amount: "3",
				PayoutMethodParams: map[string]any{"pay_id": "mia@example.com", "pay_id_type": "EMAIL"}}}})
		if err != nil {
			t.Fatal(err)
		}
		finance := signedIn(t, e, portalServer(t, e), p.MerchantID, "finance@shop.example", merchant.Finance)
		tests := []struct {
			name, uuid string
			want       []string
		}{
			{"bank transfers", bank.UUID, []string{
				`<td class="recipient">Jane Doe<br>jane@supplier.example</td>`,
				`<dt>BSB</dt><dd>062000</dd><dt>Account</dt><dd>12345678</dd><dt>Account name</dt><dd>Jane Doe Pty Ltd</dd>`,
				`<td class="amount">10.50 AUD</td><td class="amount">0.50 AUD</td><td class="id">inv-1001</td>`,
				`<td class="recipient">Raj</td>`,
				`<dt>BSB</dt><dd>083004</dd><dt>Account</dt><dd>987654</dd><dt>Account name</dt><dd>R Patel</dd>`,
				`<td class="amount">7.00 AUD</td><td class="amount">0.50 AUD</td><td class="id">inv-1002</td>`,
				`id="approve"`}},
			{"a PayID", payid.UUID, []string{`<td class="recipient">Mia</td>`, `<dt>PayID</dt><dd>mia@example.com</dd><dt>PayID type</dt><dd>EMAIL</dd>`,
				`<td class="amount">3.00 AUD</td><td class="amount">0.30 AUD</td><td class="id"></td>`, `id="approve"`}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := finance.do("GET", "/portal/payouts/"+tt.uuid, nil)
				for _, want := range tt.want {
					if !strings.Contains(a.body, want) {
						t.Errorf("%d: the page lacks %s\n%.3000s", a.status, want, a.body)
					}
				}
			})
		}
	})
}

// TestPortalPayoutsFilters: the payouts page filters every currency's
// payouts, or one's, by a status chosen from the payout statuses, dates in
// the merchant's zone and a search by the payout's uuid or external_id or
// a transaction's uuid, external_id or email; a held list keeps its
// filter; each currency's Export link carries the dates; a status the
// form cannot send is a 422 naming it that lists nothing.
func TestPortalPayoutsFilters(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		accounts := funded(t, e, "500", "AUD", "IDR")
		p := accounts["AUD"]
		needsApprovals(t, e, p)
		txRef := "invoice-77"
		held, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud",
			Description: "supplier run", ExternalID: "batch-1", PayoutTransactionDetails: []payout.TransactionRequest{{Amount: "10", Email: "jane@supplier.example",
				ExternalID: &txRef, PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}}}})
		if err != nil {
			t.Fatal(err)
		}
		other, err := storetest.Write(context.Background(), e.DB, e.Payouts.Create, p, payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud",
			Description: "other run", ExternalID: "batch-2", PayoutTransactionDetails: []payout.TransactionRequest{{Amount: "5", Email: "joe@other.example",
				PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "87654321", "account_name": "Joe Bloggs"}}}})
		if err != nil {
			t.Fatal(err)
		}
		finance := signedIn(t, e, portalServer(t, e), p.MerchantID, "finance@shop.example", merchant.Finance)
		yesterday, day, tomorrow := today(t, e, p.MerchantID)
		link := func(uuid string) string { return `href="/portal/payouts/` + uuid + `"` }
		tests := []struct {
			name, query string
			status      int
			want, not   []string
		}{
			{"every currency", "", 200, []string{link(held.UUID), link(other.UUID), "payouts.csv?currency=AUD", "payouts.csv?currency=IDR"}, nil},
			{"held", "status=held", 200, []string{link(held.UUID), link(other.UUID), `<option selected>held</option>`}, nil},
			{"completed", "status=completed", 200, []string{"No payouts match these filters."}, []string{link(held.UUID), link(other.UUID)}},
			{"AUD", "currency=AUD", 200, []string{link(held.UUID), "payouts.csv?currency=AUD"}, []string{"payouts.csv?currency=IDR"}},
			{"IDR", "currency=IDR", 200, []string{"No payouts match"}, []string{link(held.UUID)}},
			{"today", "from_date=" + day + "&to_date=" + day, 200, []string{link(held.UUID),
				"payouts.csv?currency=AUD&amp;from_date=" + day + "&amp;to_date=" + day}, nil},
			{"from tomorrow", "from_date=" + tomorrow, 200, []string{"No payouts match"}, []string{link(held.UUID)}},
			{"until yesterday", "to_date=" + yesterday, 200, []string{"No payouts match"}, []string{link(held.UUID)}},
			{"the payout's uuid", "search=" + held.UUID, 200, []string{link(held.UUID)}, []string{link(other.UUID)}},
			{"the payout's external_id", "search=batch-2", 200, []string{link(other.UUID)}, []string{link(held.UUID)}},
			{"a transaction's uuid", "search=" + held.PayoutTransactions[0].UUID, 200, []string{link(held.UUID)}, []string{link(other.UUID)}},
			{"a transaction's external_id", "search=" + txRef, 200, []string{link(held.UUID)}, []string{link(other.UUID)}},
			{"a transaction's email in another case", "search=Jane@Supplier.example", 200, []string{link(held.UUID)}, []string{link(other.UUID)}},
			{"waiting for me, searched", "waiting=me&search=batch-2", 200, []string{link(other.UUID), `name="waiting" value="me"`}, []string{link(held.UUID)}},
			{"an unknown status", "status=hold", 422, []string{`there is no status &#34;hold&#34;`, "held, scheduled, processing"}, []string{link(held.UUID), link(other.UUID)}},
			{"an unknown currency", "currency=XYZ", 422, []string{"currency:"}, []string{link(held.UUID)}},
			{"a date that is none", "to_date=31-31-2026", 422, []string{"to_date: must be a date"}, []string{link(held.UUID)}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := finance.do("GET", "/portal/payouts?"+tt.query, nil)
				if a.status != tt.status {
					t.Errorf("GET ?%s: %d, want %d\n%.1500s", tt.query, a.status, tt.status, a.body)
				}
				for _, w := range tt.want {
					if !strings.Contains(a.body, w) {
						t.Errorf("GET ?%s does not show %q\n%.3000s", tt.query, w, a.body)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(a.body, n) {
						t.Errorf("GET ?%s shows %q", tt.query, n)
					}
				}
			})
		}
	})
}

// TestPortalPayoutForm: the new-payout form is two GET-able steps: the
// method, chosen from the methods enabled on the merchant's accounts, then
// that method's fields from its param definitions (each a labelled input,
// required when mandatory); a method that is not enabled is a 422 naming
// it; a refused form is shown again with its values and what is wrong;
// a good one makes the payout paying those fields.
func TestPortalPayoutForm(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		finance := signedIn(t, e, portalServer(t, e), p.MerchantID, "finance@shop.example", merchant.Finance)
		pages := []struct {
			name, path string
			status     int
			want, not  []string
		}{
			{"the methods", "/portal/payouts/new", 200, []string{`<optgroup label="AUD">`, `value="au_bank_aud"`, `value="au_payid_npp_aud"`, `id="choose-method"`},
				[]string{`id="payout-form"`, `name="params"`}},
			{"a bank transfer's fields", "/portal/payouts/new?payout_method_name=au_bank_aud", 200, []string{`id="payout-form"`,
				`BSB (6 digits) <input name="param.bsb" required`, `Account number <input name="param.account_number" required`,
				`<input type="hidden" name="payout_method_name" value="au_bank_aud">`, `value="au_bank_aud" selected`}, []string{`name="param.pay_id"`, `name="params"`}},
			{"a PayID's fields", "/portal/payouts/new?payout_method_name=au_payid_npp_aud", 200, []string{`name="param.pay_id" required`, `name="param.pay_id_type" required`},
				[]string{`name="param.bsb"`}},
			{"a method not enabled", "/portal/payouts/new?payout_method_name=jp_bank_jpy", 422, []string{"payout_method_name: &#34;jp_bank_jpy&#34; is not a payout method enabled"},
				[]string{`id="payout-form"`}},
		}
		for _, tt := range pages {
			t.Run(tt.name, func(t *testing.T) {
				a := finance.do("GET", tt.path, nil)
				if a.status != tt.status {
					t.Errorf("GET %s: %d, want %d\n%.2000s", tt.path, a.status, tt.status, a.body)
				}
				for _, w := range tt.want {
					if !strings.Contains(a.body, w) {
						t.Errorf("GET %s does not show %q\n%.4000s", tt.path, w, a.body)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(a.body, n) {
						t.Errorf("GET %s shows %q", tt.path, n)
					}
				}
			})
		}
		step := "/portal/payouts/new?payout_method_name=au_bank_aud"
		bad := payoutForm("12.50")
		bad["param.bsb"] = "62000"
		if a := finance.post(step, "/portal/payouts", bad); a.status != http.StatusUnprocessableEntity ||
			!strings.Contains(a.body, "payout_method_params.bsb: must be 6 digits") || !strings.Contains(a.body, `name="param.bsb" required maxlength="2048" value="62000"`) ||
			!strings.Contains(a.body, `name="amount" required inputmode="decimal" value="12.50"`) {
			t.Errorf("a wrong BSB: %d, want 422 with the form again\n%.4000s", a.status, a.body)
		}
		good := payoutForm("12.50")
		good["email"], good["external_id"], good["first_name"] = "jane@supplier.example", "invoice-9", "Jane"
		a := finance.post(step, "/portal/payouts", good)
		if a.status != http.StatusSeeOther {
			t.Fatalf("the form: %d\n%.2000s", a.status, a.body)
		}
		po, err := e.Payouts.Get(context.Background(), merchant.Principal{MerchantID: p.MerchantID}, strings.TrimPrefix(a.header.Get("Location"), "/portal/payouts/"))
		if err != nil {
			t.Fatal(err)
		}
		tx := po.PayoutTransactions[0]
		got := []any{po.PayoutMethodName, tx.Amount.String(), tx.PayoutMethodParams["bsb"], tx.PayoutMethodParams["account_number"], tx.PayoutMethodParams["account_name"], tx.Email, *tx.ExternalID}
		want := []any{"au_bank_aud", "12.50", "062000", "12345678", "Jane Doe", "jane@supplier.example", "invoice-9"}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("the payout made: %v, want %v", got, want)
				break
			}
		}
	})
}
