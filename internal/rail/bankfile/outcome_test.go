package bankfile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/rail"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// outcome applies one piece of evidence in its own transaction.
func (fx *fixture) outcome(ref string, v rail.Verdict, reason string) (Result, error) {
	ctx := context.Background()
	return store.Do(ctx, fx.db, func(tx *store.Tx) (Result, error) {
		return fx.files.Outcome(ctx, tx, Evidence{BankReference: ref, Verdict: v, Reason: reason,
			Source: Source{Document: "payd bankfile outcome (test)"}})
	})
}

// TestOutcomeOrder: evidence moves a transfer in the outcome order of
// CONTRACT §25 (pending to done or failed, done to returned), the same
// outcome again changes nothing, and a contrary one changes nothing and
// opens one state_mismatch exception for the operator (the same contrary
// evidence again is that exception), shaped as §25's feed exceptions with
// what describes a booked entry null.
func TestOutcomeOrder(t *testing.T) {
	t.Parallel()
	type step struct {
		verdict       rail.Verdict
		effect        rail.Effect
		status        string
		newExceptions int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"done, again, then returned, again", []step{
			{rail.Done, rail.Changed, "done", 0}, {rail.Done, rail.Same, "done", 0},
			{rail.Returned, rail.Changed, "returned", 0}, {rail.Returned, rail.Same, "returned", 0}}},
		{"failed, then done", []step{{rail.Failed, rail.Changed, "failed", 0}, {rail.Done, rail.Contrary, "failed", 1}}},
		{"done, then failed twice", []step{{rail.Done, rail.Changed, "done", 0}, {rail.Failed, rail.Contrary, "done", 1}, {rail.Failed, rail.Contrary, "done", 0}}},
		{"a return of a pending transfer", []step{{rail.Returned, rail.Contrary, "pending", 1}, {rail.Done, rail.Changed, "done", 0}}},
		{"a return of a failed one", []step{{rail.Failed, rail.Changed, "failed", 0}, {rail.Returned, rail.Contrary, "failed", 1}}},
		{"returned, then done", []step{{rail.Done, rail.Changed, "done", 0}, {rail.Returned, rail.Changed, "returned", 0}, {rail.Done, rail.Contrary, "returned", 1}}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		railName := uniqueName("au")
		fx.set(abaSettings(railName))
		m := fx.newMerchant("Shop")
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ref := fx.hand(m, fmt.Sprintf("PAYTX%03d", i), "au_bank_aud", 1250, bsbAccount("12345678", "Jane Doe"))
				for j, s := range tt.steps {
					before := countRows(t, db, `SELECT count(*) FROM bank_exceptions WHERE entry_key = $1`, ref)
					got, err := fx.outcome(ref, s.verdict, "AC04 Closed account")
					if err != nil {
						t.Fatalf("step %d: %v", j, err)
					}
					after := countRows(t, db, `SELECT count(*) FROM bank_exceptions WHERE entry_key = $1`, ref)
					if got.Effect != s.effect || got.Transfer.Status != s.status || after-before != s.newExceptions || (got.Exception != 0) != (s.effect == rail.Contrary) {
						t.Errorf("step %d (%s): %s, status %s, exception %d, %d new exceptions; want %s, %s, %d new", j, s.verdict, got.Effect,
							got.Transfer.Status, got.Exception, after-before, s.effect, s.status, s.newExceptions)
					}
				}
			})
		}
		ex, err := ListExceptions(context.Background(), db.Read(), false)
		if err != nil || len(ex) != 5 {
			t.Fatalf("open exceptions %+v (%v), want 5", ex, err)
		}
		e := ex[0]
		if e.Feed != railName || e.SourceKind != SourceRail || *e.Currency != "AUD" || e.Amount.String() != "12.50" || e.Kind != StateMismatch || e.Status != ExceptionOpen ||
			e.Direction != nil || e.BookingDate != nil || e.ValueDate != nil || e.Remittance != nil || e.CounterpartyName != nil ||
			e.CounterpartyAccount != nil || e.ResolvedBy != nil || e.ResolvedAt != nil ||
			!strings.HasPrefix(e.Reason, "payout_transaction PAYTX005 of merchant "+m+" is returned: payd bankfile outcome (test) says done") {
			t.Errorf("the newest exception %+v", e)
		}
	})
}

// TestOutcomeUnknownReference: evidence naming no transfer of a bank-file
// rail (none at all, a malformed one, one of the sandbox network) changes
// nothing and is ErrUnknownReference, naming the reference.
func TestOutcomeUnknownReference(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		m := fx.newMerchant("Shop")
		sandboxRef := "SANDBOX000000001"
		if err := db.Exec(ctx, func(tx *store.Tx) error {
			if _, err := store.ClaimKey(ctx, tx, rail.KeyBankReference, sandboxRef, m); err != nil {
				return err
			}
			return tx.Send(ctx, `INSERT INTO rail_submissions (key, merchant_id, rail, method, currency, amount, params, attempts, created_at, bank_reference)
				VALUES ('PAYTX9', $1, 'sandbox', 'au_bank_aud', 'AUD', 100, '{}', 1, 0, $2)`, m, sandboxRef)
		}); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"NOSUCHREFERENCE1", "not a reference", sandboxRef} {
			_, err := fx.outcome(ref, rail.Done, "")
			if !errors.Is(err, ErrUnknownReference) || !strings.Contains(err.Error(), "no transfer of a bank-file rail has bank reference") {
				t.Errorf("%q: %v, want ErrUnknownReference", ref, err)
			}
		}
		if heard := fx.heard.all(); len(heard) != 0 {
			t.Errorf("the listener heard %v", heard)
		}
	})
}

// TestOutcomeOfWaitingTransfer: a transfer done or failed before its
// cut-off (the operator's word) leaves the waiting set: no file ever holds
// it; a return of it is contrary and leaves it waiting.
func TestOutcomeOfWaitingTransfer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m := fx.newMerchant("Shop")
		failed := fx.hand(m, "PAYTX001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe"))
		kept := fx.hand(m, "PAYTX002", "au_bank_aud", 2000, bsbAccount("12345678", "Jane Doe"))
		if res, err := fx.outcome(failed, rail.Failed, "cancelled by the operator"); err != nil || res.Effect != rail.Changed {
			t.Fatalf("failed: %+v, %v", res, err)
		}
		if res, err := fx.outcome(kept, rail.Returned, "MS03"); err != nil || res.Effect != rail.Contrary {
			t.Fatalf("returned: %+v, %v", res, err)
		}
		file := fx.cut(name)
		content, err := FileContent(context.Background(), db.Read(), file)
		if err != nil {
			t.Fatal(err)
		}
		if _, credits := creditsOf(t, content); len(credits) != 1 || credits[kept] == "" {
			t.Errorf("the file holds %v, want only %s", credits, kept)
		}
	})
}

// TestConfirmFile: a booked debit of a file's reference makes each of its
// still-pending transfers done, leaves a done one done and a failed one
// failed, opens no exception, and is refused for a file that is not there.
func TestConfirmFile(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		fx := newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))
		name := uniqueName("au")
		fx.set(abaSettings(name))
		m, other := fx.newMerchant("Shop"), fx.newMerchant("Other shop")
		refs := []string{
			fx.hand(m, "PAYTX001", "au_bank_aud", 1000, bsbAccount("12345678", "Jane Doe")),
			fx.hand(other, "PAYTX002", "au_bank_aud", 2000, bsbAccount("12345678", "Jane Doe")),
			fx.hand(m, "stl_SETTLE01", "settlement", 3000, bsbAccount("12345678", "Shop Pty Ltd")),
			fx.hand(m, "PAYTX003", "au_bank_aud", 4000, bsbAccount("12345678", "Jane Doe")),
		}
		file := fx.cut(name)
		fx.outcome(refs[0], rail.Done, "")
		fx.outcome(refs[3], rail.Failed, "AC04 Closed account")
		ref, err := FileByReference(ctx, db.Read(), FileReference(strings.TrimSuffix(file, ".aba")))
		if err != nil || ref != file {
			t.Fatalf("FileByReference = %q, %v; want %s", ref, err, file)
		}
		got, err := store.Do(ctx, db, func(tx *store.Tx) (Confirmed, error) { return fx.files.ConfirmFile(ctx, tx, file) })
		if want := (Confirmed{File: file, Done: 2, Already: 1, Left: 1}); err != nil || got != want {
			t.Errorf("ConfirmFile = %+v, %v; want %+v", got, err, want)
		}
		if n := countRows(t, db, `SELECT count(*) FROM bank_exceptions WHERE entry_key = $1`, refs[3]); n != 0 {
			t.Errorf("%d exceptions, want none", n)
		}
		_, err = store.Do(ctx, db, func(tx *store.Tx) (Confirmed, error) {
			return fx.files.ConfirmFile(ctx, tx, "payd-"+name+"-20260101-009.aba")
		})
		if e, ok := fault.As(err); !ok || e.Message != "no bank file payd-"+name+"-20260101-009.aba" {
			t.Errorf("a file that is not there: %v", err)
		}
	})
}
