package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/reconcile"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

var sydney = merchant.Location("Australia/Sydney")

// settled makes an AUD merchant whose external bank account 12345678
// received a completed settlement of each amount.
func settled(t *testing.T, e *servertest.Env, amounts ...string) (merchant.Principal, []settlement.Settlement) {
	t.Helper()
	ctx := context.Background()
	p := e.Merchant(t, "AUD")["AUD"]
	if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "10000"}); err != nil {
		t.Fatal(err)
	}
	e.RunDue(t, p.MerchantID)
	bank := settlement.BankAccount{BSB: "062000", AccountNumber: "12345678", AccountName: "Shop"}
	if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand, ExternalBankAccount: &bank}); err != nil {
		t.Fatal(err)
	}
	var out []settlement.Settlement
	for _, a := range amounts {
		st, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: money.Input(a)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	e.Advance(t, p.MerchantID, 30*time.Second)
	for i, st := range out {
		got, err := e.Settlements.Get(ctx, p, st.UUID)
		if err != nil || got.Status != settlement.Completed || got.BankReference == nil {
			t.Fatalf("settlement %s: %+v, %v; want completed with a bank reference", st.UUID, got, err)
		}
		out[i] = got
	}
	return p, out
}

// csvOf is a §19 CSV statement of lines "date,amount,reference,description".
func csvOf(lines ...string) []byte {
	return []byte("date,amount,reference,description\n" + strings.Join(lines, "\n") + "\n")
}

func upload(t *testing.T, e *servertest.Env, p merchant.Principal, u reconcile.Upload) (reconcile.Statement, bool, error) {
	t.Helper()
	type answer struct {
		st      reconcile.Statement
		created bool
	}
	a, err := store.Do(context.Background(), e.DB, func(tx *store.Tx) (answer, error) {
		st, created, err := e.Reconcile.Upload(context.Background(), tx, p, reconcile.Actor{Label: "test"}, u)
		return answer{st, created}, err
	})
	return a.st, a.created, err
}

func detailCounts(d reconcile.Detail) string {
	return counts(reconcile.Statement{Summary: d.Summary, Missing: len(d.Missing)})
}

func counts(st reconcile.Statement) string {
	return fmt.Sprintf("matched %d unmatched %d ignored %d missing %d", st.Matched, st.Unmatched, st.Ignored, st.Missing)
}

// TestUploadMatches: a statement's credits match the settlements sent to
// its account by amount, reference and date; a wrong amount leaves one
// line unmatched and one settlement missing, which a manual match
// resolves; an unexplained credit is ignored with a reason; the same file
// again is the same statement; every change is in the audit log.
func TestUploadMatches(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, sts := settled(t, e, "100.00", "250.50", "300")
		date := servertest.Start.In(sydney).Format(time.DateOnly)
		file := csvOf(
			date+",100.00,"+*sts[0].BankReference+",Settlement",
			date+",250.50,PAYD "+strings.ToLower(*sts[1].BankReference)+",Settlement",
			date+",299.99,"+*sts[2].BankReference+",Settlement (a wrong amount)",
			date+",-12.00,FEE,Account fee",
			date+",42.00,GIFT,Unexplained",
		)
		st, created, err := upload(t, e, p, reconcile.Upload{File: file, AccountNumber: "12345678"})
		if err != nil || !created {
			t.Fatalf("upload: %+v %v %v", st, created, err)
		}
		if got, want := counts(st), "matched 2 unmatched 2 ignored 0 missing 1"; got != want || st.Entries != 5 || st.From != date || st.To != date {
			t.Errorf("upload: %s, entries %d, %s..%s; want %s, 5 entries, %s", got, st.Entries, st.From, st.To, want, date)
		}
		d, err := e.Reconcile.Get(ctx, p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Lines) != 4 || len(d.Missing) != 1 || d.Missing[0].UUID != sts[2].UUID || d.Missing[0].Amount.String() != "300.00" {
			t.Fatalf("detail: %d lines, missing %+v; want 4 lines (credits only), missing %s", len(d.Lines), d.Missing, sts[2].UUID)
		}
		if m := d.Lines[0].MatchedTo; m == nil || m.UUID != sts[0].UUID || d.Lines[1].MatchedTo.UUID != sts[1].UUID {
			t.Errorf("lines 0 and 1 matched to %+v, %+v", d.Lines[0].MatchedTo, d.Lines[1].MatchedTo)
		}
		wrong, gift := d.Lines[2], d.Lines[3]
		write := func(call func(tx *store.Tx) (reconcile.Line, error)) (reconcile.Line, error) {
			return store.Do(ctx, e.DB, call)
		}
		by := reconcile.Actor{Label: "finance@example.com", Client: "192.0.2.1"}
		if _, err := write(func(tx *store.Tx) (reconcile.Line, error) {
			return e.Reconcile.Match(ctx, tx, p, by, reconcile.MatchRequest{LineID: wrong.ID, Type: reconcile.SettlementRecord, UUID: sts[2].UUID})
		}); err != nil {
			t.Fatal(err)
		}
		_, err = write(func(tx *store.Tx) (reconcile.Line, error) {
			return e.Reconcile.Match(ctx, tx, p, by, reconcile.MatchRequest{LineID: gift.ID, Type: reconcile.SettlementRecord, UUID: sts[2].UUID})
		})
		if fault.StatusOf(err) != 409 {
			t.Errorf("a second line matched to one settlement: %v, want 409", err)
		}
		if _, err := write(func(tx *store.Tx) (reconcile.Line, error) {
			return e.Reconcile.Ignore(ctx, tx, p, by, reconcile.IgnoreRequest{LineID: gift.ID, Reason: "a gift from the owner"})
		}); err != nil {
			t.Fatal(err)
		}
		again, created, err := upload(t, e, p, reconcile.Upload{File: file, AccountNumber: "12345678"})
		if err != nil || created || again.ID != st.ID {
			t.Errorf("the same file again: %s created %v %v; want %s, not created", again.ID, created, err, st.ID)
		}
		if got, want := counts(again), "matched 3 unmatched 0 ignored 1 missing 0"; got != want {
			t.Errorf("after the manual changes: %s, want %s", got, want)
		}
		if _, err := write(func(tx *store.Tx) (reconcile.Line, error) {
			return e.Reconcile.Unmatch(ctx, tx, p, by, reconcile.UnmatchRequest{LineID: wrong.ID})
		}); err != nil {
			t.Fatal(err)
		}
		if d, _ := e.Reconcile.Get(ctx, p, st.ID); detailCounts(d) != "matched 2 unmatched 1 ignored 1 missing 1" {
			t.Errorf("after unmatch: %s", detailCounts(d))
		}
		entries, _, err := e.Portal.AuditPage(ctx, p.MerchantID, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, a := range entries {
			actions = append(actions, string(a.Action)+" "+a.Actor)
		}
		want := []string{"statement_line_unmatched finance@example.com", "statement_line_ignored finance@example.com",
			"statement_line_matched finance@example.com", "statement_uploaded test"}
		if strings.Join(actions, ",") != strings.Join(want, ",") {
			t.Errorf("audit log: %v, want %v", actions, want)
		}
	})
}

// TestUploadRefusals: every bad upload is a clear refusal that stores nothing.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		good := csvOf("2026-03-02,10.00,REF,x")
		long := "2025-01-01,1.00,A,x\n2026-03-02,1.00,B,y"
		tests := []struct {
			name   string
			upload reconcile.Upload
			status int
			field  string
		}{
			{"empty", reconcile.Upload{AccountNumber: "1"}, 422, "file"},
			{"not a statement", reconcile.Upload{File: []byte("hello"), AccountNumber: "12345678"}, 415, ""},
			{"an MT940", reconcile.Upload{File: []byte(":20:X\n"), AccountNumber: "12345678"}, 415, ""},
			{"CSV without account", reconcile.Upload{File: good}, 422, "account_number"},
			{"CSV bad amount", reconcile.Upload{File: csvOf("2026-03-02,1.001,REF,x"), AccountNumber: "12345678"}, 422, "file"},
			{"CSV bad date", reconcile.Upload{File: csvOf("02/03/2026,1.00,REF,x"), AccountNumber: "12345678"}, 422, "file"},
			{"CSV unknown currency", reconcile.Upload{File: good, AccountNumber: "12345678", Currency: "XXX"}, 422, "currency"},
			{"account without digits", reconcile.Upload{File: good, AccountNumber: "SAVINGS"}, 422, "account_number"},
			{"account with a control character", reconcile.Upload{File: good, AccountNumber: "1234\x005678"}, 422, "account_number"},
			{"a period over a year", reconcile.Upload{File: csvOf(long), AccountNumber: "12345678"}, 422, "file"},
			{"too large", reconcile.Upload{File: make([]byte, reconcile.MaxFileBytes+1), AccountNumber: "12345678"}, 413, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := upload(t, e, p, tt.upload)
				e, _ := fault.As(err)
				if fault.StatusOf(err) != tt.status || (tt.field != "" && (e == nil || e.Fields[tt.field] == "")) {
					t.Errorf("got %v (%d), want %d naming %q", err, fault.StatusOf(err), tt.status, tt.field)
				}
			})
		}
		if list, total, err := e.Reconcile.List(context.Background(), p, 1, 20); err != nil || total != 0 || len(list) != 0 {
			t.Errorf("after the refusals: %d statements, %v", total, err)
		}
	})
}

// TestTenancy: another merchant's statements, lines and settlements are
// unknown (404), and nothing of theirs changes.
func TestTenancy(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p, sts := settled(t, e, "10")
		other, theirs := settled(t, e, "20")
		st, _, err := upload(t, e, p, reconcile.Upload{File: csvOf("2026-03-02,5.00,X,y"), AccountNumber: "12345678"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.Reconcile.Get(ctx, p, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		line := d.Lines[0].ID
		if _, err := e.Reconcile.Get(ctx, other, st.ID); fault.StatusOf(err) != 404 {
			t.Errorf("another merchant's statement: %v, want 404", err)
		}
		by := reconcile.Actor{Label: "x"}
		for name, call := range map[string]func(tx *store.Tx) (reconcile.Line, error){
			"match their line": func(tx *store.Tx) (reconcile.Line, error) {
				return e.Reconcile.Match(ctx, tx, other, by, reconcile.MatchRequest{LineID: line, Type: reconcile.SettlementRecord, UUID: theirs[0].UUID})
			},
			"match to their settlement": func(tx *store.Tx) (reconcile.Line, error) {
				return e.Reconcile.Match(ctx, tx, p, by, reconcile.MatchRequest{LineID: line, Type: reconcile.SettlementRecord, UUID: theirs[0].UUID})
			},
			"ignore their line": func(tx *store.Tx) (reconcile.Line, error) {
				return e.Reconcile.Ignore(ctx, tx, other, by, reconcile.IgnoreRequest{LineID: line, Reason: "mine"})
			},
			"unmatch their line": func(tx *store.Tx) (reconcile.Line, error) {
				return e.Reconcile.Unmatch(ctx, tx, other, by, reconcile.UnmatchRequest{LineID: line})
			},
		} {
			if _, err := store.Do(ctx, e.DB, call); fault.StatusOf(err) != 404 {
				t.Errorf("%s: %v, want 404", name, err)
			}
		}
		if list, total, _ := e.Reconcile.List(ctx, other, 1, 20); total != 0 || len(list) != 0 {
			t.Errorf("the other merchant lists %d statements", total)
		}
		if d, _ := e.Reconcile.Get(ctx, p, st.ID); d.Lines[0].Status != reconcile.Unmatched || len(d.Missing) != 1 || d.Missing[0].UUID != sts[0].UUID {
			t.Errorf("after the refusals: %+v missing %+v", d.Lines[0], d.Missing)
		}
	})
}
