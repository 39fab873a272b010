package payout_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// v1Payout pays each account number 10 AUD by BSB under externalID: the
// engine's request a v1 body of Jane Doe's transactions comes to.
func v1Payout(externalID string, accounts ...string) payout.Request {
	r := payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "weekly payroll", ExternalID: externalID}
	for _, a := range accounts {
		r.PayoutTransactionDetails = append(r.PayoutTransactionDetails, payout.TransactionRequest{FirstName: "Jane Doe", Amount: money.Input("10"),
			PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": a, "account_name": "Jane Doe"}})
	}
	return r
}

// createV1 is the service's CreateV1 as storetest.Write calls it.
func createV1(e *servertest.Env, isRetry bool) func(context.Context, *store.Tx, merchant.Principal, payout.Request) (payout.V1Payout, error) {
	return func(ctx context.Context, tx *store.Tx, p merchant.Principal, r payout.Request) (payout.V1Payout, error) {
		return e.Payouts.CreateV1(ctx, tx, p, r, isRetry)
	}
}

// problem is the one problem err names on member, or what err is.
func problem(err error, member string) string {
	if e, ok := fault.As(err); ok && e.Code == fault.CodeValidation {
		return e.Fields[member]
	}
	return fmt.Sprint(err)
}

// TestScheduledAtBound: scheduled_at may be at most 90 days ahead of the
// merchant's now, on v2 and v1 alike; further ahead is a 422 naming
// scheduled_at and creates nothing.
func TestScheduledAtBound(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		now := e.Clock.Now()
		at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
		v2 := func(p merchant.Principal, scheduledAt string) error {
			r := bankPayout("12345678", "10")
			r.ScheduledAt = scheduledAt
			_, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, r)
			return err
		}
		v1 := func(p merchant.Principal, scheduledAt string) error {
			r := v1Payout("", "12345678")
			r.ScheduledAt = scheduledAt
			_, err := storetest.Write(ctx, e.DB, createV1(e, false), p, r)
			return err
		}
		tests := []struct {
			name        string
			create      func(merchant.Principal, string) error
			scheduledAt string
			wantRefused bool
		}{
			{"v2 an hour ahead", v2, at(time.Hour), false},
			{"v2 90 days ahead", v2, at(payout.MaxScheduleAhead), false},
			{"v2 90 days and a second ahead", v2, at(payout.MaxScheduleAhead + time.Second), true},
			{"v2 9999-12-31", v2, "9999-12-31T00:00:00Z", true},
			{"v1 90 days ahead", v1, at(payout.MaxScheduleAhead), false},
			{"v1 91 days ahead", v1, at(payout.MaxScheduleAhead + 24*time.Hour), true},
			{"v1 9999-12-31", v1, "9999-12-31T00:00:00Z", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.create(p, tt.scheduledAt)
				got := problem(err, "scheduled_at")
				if refused := strings.HasPrefix(got, "must be at most 90 days ahead"); refused != tt.wantRefused || (!refused && err != nil) {
					t.Errorf("scheduled_at %s: %v, want refused %v", tt.scheduledAt, err, tt.wantRefused)
				}
			})
		}
		if _, total, err := e.Payouts.List(ctx, p, payout.ListQuery{}); err != nil || total != 3 {
			t.Errorf("%d payouts (%v), want the 3 accepted", total, err)
		}
	})
}

// TestScheduledAtBoundDocumented: the members' documents state the bound
// the code holds (httpapi's test holds the v1 body's to it).
func TestScheduledAtBoundDocumented(t *testing.T) {
	want := fmt.Sprintf("at most %d days ahead", payout.MaxScheduleAheadDays)
	for _, typ := range []reflect.Type{reflect.TypeFor[payout.Request]()} {
		f, _ := typ.FieldByName("ScheduledAt")
		if doc := f.Tag.Get("doc"); !strings.Contains(doc, want) {
			t.Errorf("%s.ScheduledAt doc %q does not say %q", typ.Name(), doc, want)
		}
	}
}

// TestV1RetryAfterAFailedTransaction: is_retry reuses the external_id of a
// payout one of whose transactions failed, though others were paid, and the
// retry pays only what it carries; a payout with no failed transaction
// (paid in full, or not yet answered) stays 409 ALREADY_EXISTS.
func TestV1RetryAfterAFailedTransaction(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := funded(t, e, "1000")
		create := func(r payout.Request) (payout.V1Payout, error) {
			return storetest.Write(ctx, e.DB, createV1(e, false), p, r)
		}
		for _, r := range []payout.Request{v1Payout("part-failed", "12345678", "000000000"), v1Payout("all-paid", "12345678", "87654321")} {
			if _, err := create(r); err != nil {
				t.Fatal(err)
			}
		}
		pending := v1Payout("unanswered", "000000000")
		if _, err := create(pending); err != nil {
			t.Fatal(err)
		}
		retry := func(externalID string) (payout.V1Payout, error) {
			return storetest.Write(ctx, e.DB, createV1(e, true), p, v1Payout(externalID, "11111111"))
		}
		if _, err := retry("unanswered"); !fault.Is(err, fault.CodeAlreadyExists) {
			t.Errorf("retry of a payout not yet answered: %v, want %s", err, fault.CodeAlreadyExists)
		}
		e.Advance(t, p.MerchantID, 10*time.Second) // submitted
		e.Advance(t, p.MerchantID, 10*time.Second) // answered
		before := e.Balance(t, p)
		tests := []struct {
			name       string
			externalID string
			wantCode   string // "" for created
		}{
			{"one of two transactions failed", "part-failed", ""},
			{"every transaction paid", "all-paid", fault.CodeAlreadyExists},
			{"the only transaction failed", "unanswered", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := retry(tt.externalID)
				gotCode := ""
				if e, ok := fault.As(err); ok {
					gotCode = e.Code
				} else if err != nil {
					t.Fatal(err)
				}
				if gotCode != tt.wantCode {
					t.Fatalf("retry of %s: %v, want %q", tt.externalID, err, tt.wantCode)
				}
				if err == nil && (!got.IsRetry || len(got.Transactions) != 1 || got.TotalAmount.String() != "10.00") {
					t.Errorf("retry of %s = %+v, want is_retry with its one transaction of 10.00", tt.externalID, got)
				}
			})
		}
		// Two retries of 10 AUD and their fees of 0.50, nothing more.
		if b := e.Balance(t, p); before.Available-b.Available != 2*(1000+feeMinor) {
			t.Errorf("available %d → %d, want the two retries' %d taken", before.Available, b.Available, 2*(1000+feeMinor))
		}
	})
}
