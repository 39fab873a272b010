package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payd/internal/merchant"
)

// TestDisputesInBrowser drives /portal/disputes in Chromium on a 375-pixel
// phone: a finance user opens a dispute from the list, writes evidence,
// attaches a PDF and submits it (the dispute is under review, the file
// listed); accepts another (lost, the fee shown); the pages fit the phone.
func TestDisputesInBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("NZD")["NZD"]
		first := p.openDispute(t, m, map[string]any{})
		second := p.openDispute(t, m, map[string]any{})
		path := filepath.Join(t.TempDir(), "receipt.pdf")
		if err := os.WriteFile(path, pdfFile.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "finance@shop.example", merchant.Finance, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		tab := newBrowser(t, alloc)
		browse(t, tab, chromedp.EmulateViewport(375, 800))
		signIn(t, tab, p, "finance@shop.example", "correct horse battery", "")
		if status := open(t, tab, p.root+"/portal/disputes"); status != 200 {
			t.Fatalf("GET /portal/disputes = %d", status)
		}
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#disputes"))); !strings.Contains(got, str(first, "uuid")) || !strings.Contains(got, "needs_response") {
			t.Errorf("the list shows %q", got)
		}
		if w := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the disputes page is %d px wide on a 375 px phone", w)
		}
		browse(t, tab, chromedp.Click(chromedp.CSS(`#disputes a[href="/portal/disputes/`+str(first, "uuid")+`"]`)))
		waitTrue(t, tab, `location.pathname === "/portal/disputes/`+str(first, "uuid")+`" && document.readyState === "complete" && document.querySelector("#submit") !== null`)
		browse(t, tab,
			chromedp.SendKeys(chromedp.CSS(`textarea[name="product_description"]`), "A blue teapot, shipped on the 1st"),
			chromedp.SetUploadFiles(chromedp.CSS(`#evidence-form input[name="files"]`), []string{path}),
			chromedp.Click(chromedp.CSS("#submit")))
		waitLocation(t, tab, p.root+"/portal/disputes/"+str(first, "uuid")+"?done=submitted")
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#status"))); got != "under_review" {
			t.Errorf("after submitting: %q, want under_review", got)
		}
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#files"))); !strings.Contains(got, "receipt.pdf") {
			t.Errorf("the files are %q", got)
		}
		if w := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 375 {
			t.Errorf("the dispute's page is %d px wide on a 375 px phone", w)
		}
		open(t, tab, p.root+"/portal/disputes/"+str(second, "uuid"))
		browse(t, tab, chromedp.Click(chromedp.CSS("#accept")))
		waitLocation(t, tab, p.root+"/portal/disputes/"+str(second, "uuid")+"?done=accepted")
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#status"))); got != "lost" {
			t.Errorf("after accepting: %q, want lost", got)
		}
		if got := read(t, tab, chromedp.Text(chromedp.CSS("#fee"))); got != "25.00 NZD" {
			t.Errorf("the fee shows %q", got)
		}
		if got := str(p.get("/v2/disputes/detail?uuid="+str(first, "uuid"), m).JSON(t)["evidence"].(map[string]any), "product_description"); got != "A blue teapot, shipped on the 1st" {
			t.Errorf("the API reads the evidence as %q", got)
		}
	})
}
