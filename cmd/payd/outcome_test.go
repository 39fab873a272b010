package main

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payd/internal/deposit"
	"payd/internal/httpapi"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
)

// railPayout opens payd's services on dsn (production), sets an aba rail
// through payd rail set, makes a funded merchant's payout of n transactions
// of 10 AUD, hands them to the rail and cuts its file; it returns the
// merchant's principal, the payout and the file.
func railPayout(t *testing.T, dsn string, n int) (merchant.Principal, payout.Payout, string) {
	t.Helper()
	ctx := context.Background()
	e := servertest.Open(t, dsn, httpapi.Production)
	p := e.Merchant(t, "AUD")["AUD"]
	if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "1000"}); err != nil {
		t.Fatal(err)
	}
	e.Advance(t, p.MerchantID, e.Deposits.ClearAfter)
	mustPayd(t, abaRail(dsn, t.TempDir(), "au")...)
	e.Files.Forget()
	req := payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "supplier run"}
	for range n {
		req.PayoutTransactionDetails = append(req.PayoutTransactionDetails, payout.TransactionRequest{Amount: "10",
			PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "Jane Doe"}})
	}
	po, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, req)
	if err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	var cut struct {
		File string `json:"file"`
	}
	if err := json.Unmarshal([]byte(mustPayd(t, "bankfile", "cut", "--db", dsn, "--rail", "au", "--json")), &cut); err != nil || cut.File == "" {
		t.Fatalf("bankfile cut: %+v, %v", cut, err)
	}
	if po, err = e.Payouts.Get(ctx, p, po.UUID); err != nil {
		t.Fatal(err)
	}
	return p, po, cut.File
}

var outcomeMembers = []string{"bank_reference", "type", "merchant_id", "uuid", "amount", "status", "was", "effect", "exception"}

// TestBankfileOutcome: payd bankfile outcome applies the operator's word
// in the outcome order (CONTRACT §25): done, the same again (nothing
// changes, exit 0), a contrary failure (nothing changes, exit 1, an
// exception open), a return; --file NAME --done makes the file's
// still-pending transfers done; an unknown reference exits 1. Each is in
// the audit log with its outcome, and the ledger verifies.
func TestBankfileOutcome(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p, po, file := railPayout(t, dsn, 3)
		ref := func(i int) string { return *po.PayoutTransactions[i].BankReference }
		outcome := func(args ...string) result {
			return payd(t, slices.Concat([]string{"bankfile", "outcome", "--db", dsn, "--actor", "ops@example.com", "--json"}, args)...)
		}
		decode := func(r result) map[string]any {
			t.Helper()
			var v map[string]any
			decodeExact(t, r.stdout, &v, outcomeMembers...)
			return v
		}
		tx0 := po.PayoutTransactions[0]
		steps := []struct {
			args             []string
			code             int
			was, status, eff string
		}{
			{[]string{"--reference", ref(0), "--done"}, 0, "pending", "done", "changed"},
			{[]string{"--reference", ref(0), "--done"}, 0, "done", "done", "same"},
			{[]string{"--reference", ref(0), "--failed", "AC04 Closed account"}, 1, "done", "done", "contrary"},
			{[]string{"--reference", ref(0), "--returned", "AC04 Account closed"}, 0, "done", "returned", "changed"},
		}
		for i, s := range steps {
			r := outcome(s.args...)
			v := decode(r)
			if r.code != s.code || v["was"] != s.was || v["status"] != s.status || v["effect"] != s.eff || v["uuid"] != tx0.UUID ||
				v["type"] != "payout_transaction" || v["amount"] != "10.00" || (v["exception"] != nil) != (s.eff == "contrary") {
				t.Errorf("step %d: exit %d, %v, stderr %q; want exit %d, %s → %s (%s)", i, r.code, v, r.stderr, s.code, s.was, s.status, s.eff)
			}
		}
		if r := outcome("--reference", ref(0), "--failed", "AC04 Closed account"); !strings.HasPrefix(r.stderr, "payd: state mismatch: payout_transaction "+tx0.UUID+" of merchant ") {
			t.Errorf("the contrary word said %q", r.stderr)
		}
		var confirmed map[string]any
		decodeExact(t, mustPayd(t, "bankfile", "outcome", "--db", dsn, "--file", file, "--done", "--json"), &confirmed, "file", "done", "already", "left")
		if want := map[string]any{"file": file, "done": 2.0, "already": 0.0, "left": 1.0}; !maps.Equal(confirmed, want) {
			t.Errorf("--file --done: %v, want %v", confirmed, want)
		}
		wantRefused(t, outcome("--reference", "NOSUCHREFERENCE1", "--done"), 1, "payd: no transfer of a bank-file rail has bank reference NOSUCHREFERENCE1")

		var audit struct {
			Records []map[string]any `json:"records"`
		}
		decodeExact(t, mustPayd(t, "audit", "list", "--db", dsn, "--json"), &audit, "records")
		var outcomes []string
		for _, a := range audit.Records {
			if a["command"] == "bankfile outcome" {
				outcomes = append(outcomes, strings.Replace(a["outcome"].(string), po.PayoutTransactions[0].UUID, "TX0", 1))
			}
		}
		head := ref(0) + " (payout_transaction TX0 of merchant " + p.MerchantID + ")"
		want := []string{
			"refused: no transfer of a bank-file rail has bank reference NOSUCHREFERENCE1",
			"file " + file + ": 2 still-pending transfers done, 0 done already, 1 failed or returned left as they were",
			head + ": state mismatch: it is returned and the word was failed; exception 2 opened",
			head + ": done → returned",
			head + ": state mismatch: it is done and the word was failed; exception 1 opened",
			head + ": done already, nothing changed",
			head + ": pending → done",
		}
		if !slices.Equal(outcomes, want) {
			t.Errorf("audit log, newest first:\n%s\nwant:\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
		}
		if r := payd(t, "ledger", "verify", "--db", dsn); r.code != 0 {
			t.Errorf("payd ledger verify: exit %d\n%s", r.code, r.stdout)
		}
	})
}

// TestOutcomeRefusalsAreStable: each refusal of payd bankfile outcome is
// the same exit code and message on every run, and one refused for its
// flags opens no database.
func TestOutcomeRefusalsAreStable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "payd.db")
	p, po, _ := railPayout(t, dsn, 1)
	ref := *po.PayoutTransactions[0].BankReference
	mustPayd(t, "bankfile", "outcome", "--db", dsn, "--reference", ref, "--failed", "AC04 Closed account")
	merchantID := p.MerchantID
	unopened := "sqlite:" + filepath.Join(dir, "never.db")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"neither a reference nor a file", []string{"bankfile", "outcome", "--db", unopened, "--done"}, 2,
			"payd: give one of --reference REF and --file NAME\n"},
		{"both", []string{"bankfile", "outcome", "--db", unopened, "--reference", ref, "--file", "f.aba", "--done"}, 2,
			"payd: give one of --reference REF and --file NAME\n"},
		{"no word", []string{"bankfile", "outcome", "--db", unopened, "--reference", ref}, 2,
			"payd: give one of --done, --failed REASON and --returned REASON\n"},
		{"two words", []string{"bankfile", "outcome", "--db", unopened, "--reference", ref, "--done", "--failed", "AC04"}, 2,
			"payd: give one of --done, --failed REASON and --returned REASON\n"},
		{"a file failed", []string{"bankfile", "outcome", "--db", unopened, "--file", "f.aba", "--failed", "AC04"}, 2,
			"payd: --file takes --done only: the bank fails or returns a file's transfers one by one (--reference)\n"},
		{"no reason", []string{"bankfile", "outcome", "--db", unopened, "--reference", ref, "--returned", " "}, 2,
			"payd: --returned: give the reason the bank gave, e.g. \"AC04 Closed account\"\n"},
		{"a reason too long", []string{"bankfile", "outcome", "--db", unopened, "--reference", ref, "--failed", strings.Repeat("x", 501)}, 2,
			"payd: --failed: must be at most 500 characters, without control characters\n"},
		{"an unknown reference", []string{"bankfile", "outcome", "--db", dsn, "--reference", "NOSUCHREFERENCE1", "--done"}, 1,
			"payd: no transfer of a bank-file rail has bank reference NOSUCHREFERENCE1\n"},
		{"a file that is not there", []string{"bankfile", "outcome", "--db", dsn, "--file", "payd-au-20260101-009.aba", "--done"}, 1,
			"payd: no bank file payd-au-20260101-009.aba\n"},
		{"a contrary word", []string{"bankfile", "outcome", "--db", dsn, "--reference", ref, "--done"}, 1,
			"payd: state mismatch: payout_transaction " + po.PayoutTransactions[0].UUID + " of merchant " + merchantID +
				" is failed, which the bank's word cannot change: nothing changed; exception 1 is open for the operator\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[result]bool{}
			for range 8 {
				r := payd(t, tt.args...)
				r.stdout = ""
				seen[r] = true
			}
			want := map[result]bool{{code: tt.wantCode, stderr: tt.wantStderr}: true}
			if !maps.Equal(seen, want) {
				t.Errorf("results over 8 runs = %+v, want only exit %d with stderr %q", slices.Collect(maps.Keys(seen)), tt.wantCode, tt.wantStderr)
			}
		})
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "never.db*")); len(matches) != 0 {
		t.Errorf("a refusal for its flags opened the database: %v", matches)
	}
}
