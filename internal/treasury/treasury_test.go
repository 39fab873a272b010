package treasury_test

import (
	"context"
	"testing"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/server/servertest"
	"payd/internal/store/storetest"
	"payd/internal/treasury"
)

func details(name string) treasury.BusinessDetails {
	return treasury.BusinessDetails{BusinessName: name, BusinessNumber: "51824753556", Address: "1 Market St, Sydney NSW 2000",
		Country: "AU", ContactName: "Jane Doe", ContactEmail: "jane@shop.example"}
}

// TestCreateRefusals: each refused request names its field and opens nothing.
func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		apps := e.Merchant(t, "AUD", "USD", "JPY")
		with := func(f func(*treasury.BusinessDetails)) treasury.BusinessDetails {
			d := details("Shop")
			f(&d)
			return d
		}
		tests := []struct {
			name      string
			as        merchant.Principal
			req       treasury.CreateRequest
			wantField string
		}{
			{"JPY is not offered", apps["JPY"], treasury.CreateRequest{}, "currency"},
			{"USD with some details", apps["USD"], treasury.CreateRequest{BusinessDetails: treasury.BusinessDetails{BusinessName: "Shop"}}, "contact_email"},
			{"bad country", apps["USD"], treasury.CreateRequest{BusinessDetails: with(func(d *treasury.BusinessDetails) { d.Country = "Australia" })}, "country"},
			{"bad email", apps["USD"], treasury.CreateRequest{BusinessDetails: with(func(d *treasury.BusinessDetails) { d.ContactEmail = "jane at shop" })}, "contact_email"},
			{"blank address", apps["USD"], treasury.CreateRequest{BusinessDetails: with(func(d *treasury.BusinessDetails) { d.Address = "  " })}, "address"},
			{"AUD with details", apps["AUD"], treasury.CreateRequest{BusinessDetails: details("Shop")}, "business_name"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.Treasury.Create, tt.as, tt.req)
				got, _ := fault.As(err)
				if got == nil || got.Fields[tt.wantField] == "" {
					t.Errorf("err = %v, want a refusal of %s", err, tt.wantField)
				}
			})
		}
		list, err := e.Treasury.List(context.Background(), apps["USD"])
		if err != nil || len(list.Records) != 0 {
			t.Errorf("after refusals: %d accounts (%v), want none", len(list.Records), err)
		}
	})
}

// TestReviewKeepsEverySubmission: a rejected USD account is submitted
// again, approved, and shows its number; every submission stays (rule 7).
func TestReviewKeepsEverySubmission(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		usd := e.Merchant(t, "USD")["USD"]
		acc, err := storetest.Write(ctx, e.DB, e.Treasury.Create, usd, treasury.CreateRequest{BusinessDetails: details("First")})
		if err != nil {
			t.Fatal(err)
		}
		if acc.Status != merchant.TreasuryInReview || acc.AccountNumber != nil {
			t.Fatalf("new USD account: %s with number %v", acc.Status, acc.AccountNumber)
		}
		if _, err := e.Treasury.ReviewByOperator(ctx, usd.MerchantID, treasury.ReviewRequest{TreasuryAccountID: acc.ID, Outcome: treasury.Reject, Reason: "unreadable"}); err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.Treasury.Submit, usd, treasury.SubmissionRequest{TreasuryAccountID: acc.ID, BusinessDetails: details("Second")}); err != nil {
			t.Fatal(err)
		}
		got, err := e.Treasury.ReviewByOperator(ctx, usd.MerchantID, treasury.ReviewRequest{TreasuryAccountID: acc.ID, Outcome: treasury.Approve})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != merchant.TreasuryActive || got.AccountNumber == nil {
			t.Errorf("approved account: %s with number %v", got.Status, got.AccountNumber)
		}
		if len(got.Submissions) != 2 || got.Submissions[0].Status != treasury.Rejected || *got.Submissions[0].Reason != "unreadable" ||
			got.Submissions[1].Status != treasury.Approved {
			t.Errorf("submissions = %+v", got.Submissions)
		}
		if _, err := e.Treasury.ReviewByOperator(ctx, usd.MerchantID, treasury.ReviewRequest{TreasuryAccountID: acc.ID, Outcome: treasury.Reject}); !fault.Is(err, fault.CodeInvalidState) {
			t.Errorf("review of an active account: %v, want INVALID_STATE", err)
		}
		other := e.Merchant(t, "USD")["USD"]
		if _, err := e.Treasury.ReviewByOperator(ctx, other.MerchantID, treasury.ReviewRequest{TreasuryAccountID: acc.ID, Outcome: treasury.Approve}); !fault.Is(err, fault.CodeNotFound) {
			t.Errorf("another merchant's review: %v, want NOT_FOUND", err)
		}
	})
}

// TestCreateUSDWithoutDetails: {"currency":"USD"} alone opens an account in
// review with no submission yet (CONTRACT §24), listed with an empty list of
// submissions; the sandbox's review has nothing to decide until the business
// details come through a submission, which it then approves as a first one.
func TestCreateUSDWithoutDetails(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		tests := []struct {
			name string
			app  string // the calling app's currency
			req  treasury.CreateRequest
		}{
			{"currency alone", "AUD", treasury.CreateRequest{Currency: "USD"}},
			{"the app's currency", "USD", treasury.CreateRequest{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := e.Merchant(t, "AUD", "USD")[tt.app]
				acc, err := storetest.Write(ctx, e.DB, e.Treasury.Create, p, tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if acc.Currency != "USD" || acc.Status != merchant.TreasuryInReview || acc.AccountNumber != nil || acc.Submissions == nil || len(acc.Submissions) != 0 {
					t.Fatalf("Create(%+v) = %s %s, number %v, submissions %#v; want USD in_review, no number, submissions empty",
						tt.req, acc.Currency, acc.Status, acc.AccountNumber, acc.Submissions)
				}
				list, err := e.Treasury.List(ctx, p)
				if err != nil || len(list.Records) != 1 || list.Records[0].Submissions == nil || len(list.Records[0].Submissions) != 0 {
					t.Fatalf("List() = %+v, %v; want the account with submissions empty", list, err)
				}
				review := treasury.ReviewRequest{TreasuryAccountID: acc.ID, Outcome: treasury.Approve}
				if _, err := storetest.Write(ctx, e.DB, e.Treasury.SandboxReview, p, review); !fault.Is(err, fault.CodeInvalidState) {
					t.Fatalf("sandbox review before any submission: %v, want INVALID_STATE", err)
				}
				got, err := storetest.Write(ctx, e.DB, e.Treasury.Submit, p, treasury.SubmissionRequest{TreasuryAccountID: acc.ID, BusinessDetails: details("Later Ltd")})
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != merchant.TreasuryInReview || len(got.Submissions) != 1 || got.Submissions[0].Status != treasury.InReview || got.Submissions[0].BusinessName != "Later Ltd" {
					t.Fatalf("after the first submission: %s, submissions %+v", got.Status, got.Submissions)
				}
				got, err = storetest.Write(ctx, e.DB, e.Treasury.SandboxReview, p, review)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != merchant.TreasuryActive || got.AccountNumber == nil || got.Submissions[0].Status != treasury.Approved {
					t.Errorf("approved: %s, number %v, submissions %+v", got.Status, got.AccountNumber, got.Submissions)
				}
			})
		}
	})
}
