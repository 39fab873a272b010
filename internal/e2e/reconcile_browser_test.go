package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"payd/internal/merchant"
)

// TestReconciliationInBrowser drives /portal/reconciliation in Chromium: a
// finance user uploads the sandbox bank's CSV statement of a day with one
// amount altered, sees one line unmatched and one settlement missing,
// matches the line to it with the form (the missing uuid offered) and
// sees nothing left; the pages fit a 375-pixel phone.
func TestReconciliationInBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		m, uuids := p.settledDay(t)
		file := bytes.Replace(p.bankStatement(t, m, "csv"), []byte(",100.00,"), []byte(",99.00,"), 1)
		path := filepath.Join(t.TempDir(), "statement.csv")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "finance@shop.example", merchant.Finance, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		tab := newBrowser(t, alloc)
		browse(t, tab, chromedp.EmulateViewport(375, 800))
		signIn(t, tab, p, "finance@shop.example", "correct horse battery", "")
		if status := open(t, tab, p.root+"/portal/reconciliation"); status != 200 {
			t.Fatalf("GET /portal/reconciliation = %d", status)
		}
		browse(t, tab,
			chromedp.SetUploadFiles(chromedp.CSS(`#upload input[name="file"]`), []string{path}),
			chromedp.SendKeys(chromedp.CSS(`#upload input[name="account_number"]`), "12345678"),
			chromedp.Submit(chromedp.CSS(`#upload input[name="account_number"]`)))
		// The statement's page, once the browser is on it.
		waitTrue(t, tab, `location.pathname.startsWith("/portal/reconciliation/") && document.readyState === "complete" && document.querySelector("#counts") !== null`)
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#counts"))); got != "matched 2, unmatched 1, ignored 0, missing 1" {
			t.Fatalf("after the upload: %q", got)
		}
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#missing"))); !strings.Contains(got, uuids[0]) {
			t.Errorf("missing shows %q, want settlement %s", got, uuids[0])
		}
		if w := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the statement's page is %d px wide on a 375 px phone", w)
		}
		browse(t, tab,
			chromedp.SendKeys(chromedp.CSS(`form.match input[name="uuid"]`), uuids[0]),
			chromedp.Submit(chromedp.CSS(`form.match input[name="uuid"]`)))
		// The page again, its counts changed (the form answers 303 back to it).
		waitTrue(t, tab, `document.readyState === "complete" && (document.querySelector("#counts") || {}).textContent !== "matched 2, unmatched 1, ignored 0, missing 1"`)
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#counts"))); got != "matched 3, unmatched 0, ignored 0, missing 0" {
			t.Errorf("after the manual match: %q", got)
		}
		open(t, tab, p.root+"/portal/reconciliation")
		if w := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the reconciliation page is %d px wide on a 375 px phone", w)
		}
	}, onReconcileDay)
}

// waitTrue waits until the page's expression is true, as waitLocation waits
// for an address: an evaluation fails while the page changes, and is tried
// again until browserStepTimeout.
func waitTrue(t *testing.T, tab context.Context, expression string) {
	t.Helper()
	deadline := time.Now().Add(browserStepTimeout)
	for {
		ctx, cancel := context.WithTimeout(tab, browserStepTimeout)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expression))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never had %s (%v)", expression, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
