package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd/internal/deposit"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/payout"
	"payd/internal/report"
	"payd/internal/server/servertest"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// Columns of a report's CSV file.
const (
	colCreatedAt = iota
	colBalanceID
	colReference
	colTransactionType
	colRequestType
	colStatus
	colCurrency
	colAmount
	colFee
	colTotal
	colBalanceAfter
)

// TestMixedDayReport: a day of an empty AUD account through the services
// (a top-up, two PayID payments, a refund of one, a payout that is paid, a
// payout whose transaction fails, a settlement), each cleared or answered a
// little after it was made, as the rails do. Its report (golden file
// testdata/mixed_day.csv, go test -update rewrites it; Balance IDs and
// references numbered in order of appearance) shows each row's Balance After
// as the previous row's plus the row's signed amount, from the empty
// account's 0.00, and the last row's is the summary's closing balance.
func TestMixedDayReport(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"] // 2026-03-02 12:00 in Sydney
		sweep(t, e)
		if _, err := storetest.Write(ctx, e.DB, e.Settlements.PutConfig, p, settlement.ConfigRequest{Frequency: settlement.OnDemand,
			ExternalBankAccount: &settlement.BankAccount{BSB: "062000", AccountNumber: "12345678", AccountName: "Shop Pty Ltd"}}); err != nil {
			t.Fatal(err)
		}
		at := func(hour, minute int) { e.Clock.Set(time.Date(2026, 3, 2, hour, minute, 0, 0, sydney)) }
		at(13, 0)
		if _, err := storetest.Write(ctx, e.DB, e.Deposits.Simulate, p, deposit.Request{AccountNumber: p.AccountNumber, Amount: "100000"}); err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, time.Minute) // the top-up clears
		at(14, 0)
		paid := payIDPayment(t, e, p, "200.00")
		at(15, 0)
		payIDPayment(t, e, p, "50.00")
		at(16, 0)
		if _, err := storetest.Write(ctx, e.DB, e.PayIDs.Return, p, payid.ReturnRequest{ID: paid, Reason: "order cancelled"}); err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 10*time.Second)                  // the payer's bank takes the refund
		for i, account := range []string{"12345678", "000000000"} { // the rail pays the first and fails the second
			at(17+i, 0)
			if _, err := storetest.Write(ctx, e.DB, e.Payouts.Create, p, bankPayout(account, "300")); err != nil {
				t.Fatal(err)
			}
			e.Advance(t, p.MerchantID, 10*time.Second) // submitted
			e.Advance(t, p.MerchantID, 10*time.Second) // answered
		}
		at(19, 0)
		if _, err := storetest.Write(ctx, e.DB, e.Settlements.Submit, p, settlement.SubmitRequest{Amount: "1000"}); err != nil {
			t.Fatal(err)
		}
		e.Advance(t, p.MerchantID, 10*time.Second) // the rail confirms
		e.Clock.Set(time.Date(2026, 3, 3, 9, 0, 0, 0, sydney))
		e.RunDue(t, p.MerchantID)

		reports := list(t, e, p, "daily")
		if len(reports) != 1 {
			t.Fatalf("%d daily reports, want 1", len(reports))
		}
		r := reports[0]
		f, err := open(t, e, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Balance(t, p).Available; r.Summary.ClosingBalance.Minor != got {
			t.Errorf("closing balance %d, want the available balance %d", r.Summary.ClosingBalance.Minor, got)
		}
		wantBalancesAddUp(t, f.Content, 0, r.Summary.ClosingBalance.Minor)
		wantGolden(t, filepath.Join("testdata", "mixed_day.csv"), numbered(t, f.Content))
	})
}

// payIDPayment has a PayID payment request for amount paid, and cleared a
// minute later; it returns the request's id.
func payIDPayment(t *testing.T, e *servertest.Env, p merchant.Principal, amount money.Input) int64 {
	t.Helper()
	ctx := context.Background()
	req, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: amount})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payid.Receipt, error) {
		return e.PayIDs.Receive(ctx, tx, payid.Payment{PayID: req.RequestPayID, Amount: amount, PayerName: "PAYER"})
	}); err != nil {
		t.Fatal(err)
	}
	e.Advance(t, p.MerchantID, time.Minute)
	return req.ID
}

// bankPayout pays amount to an Australian bank account.
func bankPayout(account string, amount money.Input) payout.Request {
	return payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: "supplier run",
		PayoutTransactionDetails: []payout.TransactionRequest{{Amount: amount,
			PayoutMethodParams: map[string]any{"bsb": "062000", "account_number": account, "account_name": "Jane Doe"}}}}
}

// wantBalancesAddUp fails unless every row of a report file (AUD) has the
// previous row's Balance After (opening for the first) plus its signed
// amount, read from its own columns: money in adds its Amount once done,
// money out takes its Total unless it failed, anything else moves nothing;
// rows of one millisecond (Created At) each the balance after all of them;
// and the last row's is closing.
func wantBalancesAddUp(t *testing.T, content []byte, opening, closing int64) {
	t.Helper()
	lines, err := csv.NewReader(bytes.NewReader(content)).ReadAll()
	if err != nil {
		t.Fatalf("the file is not CSV: %v\n%s", err, content)
	}
	rows := lines[1:]
	balance := opening
	for i := 0; i < len(rows); {
		j := i
		for ; j < len(rows) && rows[j][colCreatedAt] == rows[i][colCreatedAt]; j++ {
			l := rows[j]
			switch {
			case l[colStatus] == "failed":
			case l[colRequestType] == "money_out":
				balance -= minor(t, l[colTotal])
			case l[colStatus] == "done":
				balance += minor(t, l[colAmount])
			}
		}
		for ; i < j; i++ {
			if got := minor(t, rows[i][colBalanceAfter]); got != balance {
				t.Errorf("row %v: Balance After %d, want %d (the previous row's plus its signed amount)", rows[i], got, balance)
			}
		}
	}
	if balance != closing {
		t.Errorf("the rows add up to %d, want the closing balance %d:\n%s", balance, closing, content)
	}
	if n := len(rows); n > 0 && minor(t, rows[n-1][colBalanceAfter]) != closing {
		t.Errorf("the last row's Balance After is %s, want the closing balance %d", rows[n-1][colBalanceAfter], closing)
	}
}

// minor reads an AUD amount of a report file in cents.
func minor(t *testing.T, amount string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.Replace(amount, ".", "", 1), 10, 64)
	if err != nil || !strings.Contains(amount, ".") {
		t.Fatalf("amount %q is not AUD", amount)
	}
	return n
}

// numbered is a report file with its Balance IDs and references, which are
// drawn at random, replaced by their numbers in order of appearance.
func numbered(t *testing.T, content []byte) []byte {
	t.Helper()
	lines, err := csv.NewReader(bytes.NewReader(content)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ids, refs := map[string]string{}, map[string]string{}
	number := func(seen map[string]string, prefix, v string) string {
		if _, ok := seen[v]; !ok {
			seen[v] = fmt.Sprintf("%s%d", prefix, len(seen)+1)
		}
		return seen[v]
	}
	for _, l := range lines[1:] {
		l[colBalanceID] = number(ids, "BALANCE", l[colBalanceID])
		l[colReference] = number(refs, "REF", l[colReference])
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(lines); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wantGolden compares got with the golden file (rewritten with -update).
func wantGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *report.UpdateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report differs from %s:\ngot\n%s\nwant\n%s", golden, got, want)
	}
}
