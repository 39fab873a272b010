package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"payd/internal/merchant"
	"payd/internal/server/servertest"
)

// TestPortalPayoutBankReference: a payout's page shows each transaction's
// bank reference once it is handed to a rail, and says there is none yet
// before.
func TestPortalPayoutBankReference(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := funded(t, e, "500", "AUD")["AUD"]
		srv := portalServer(t, e)
		user := signedIn(t, e, srv, p.MerchantID, "finance@shop.example", merchant.Finance)
		a := user.post("/portal/payouts/new", "/portal/payouts", payoutForm("100"))
		if a.status != http.StatusSeeOther {
			t.Fatalf("create a payout: %d\n%.500s", a.status, a.body)
		}
		page := a.header.Get("Location")
		if a := user.do("GET", page, nil); !strings.Contains(a.body, `<td class="bank-reference">not yet handed to a rail</td>`) {
			t.Errorf("before its hand-over the page shows:\n%.1500s", a.body)
		}
		e.RunDue(t, p.MerchantID)
		po, err := e.Payouts.Get(context.Background(), p, strings.TrimPrefix(page, "/portal/payouts/"))
		if err != nil || po.PayoutTransactions[0].BankReference == nil {
			t.Fatalf("payout %+v, %v: want a bank reference once handed to the rail", po, err)
		}
		ref := *po.PayoutTransactions[0].BankReference
		if a := user.do("GET", page, nil); !strings.Contains(a.body, `<td class="bank-reference">`+ref+`</td>`) {
			t.Errorf("after its hand-over the page lacks %s:\n%.1500s", ref, a.body)
		}
	})
}
