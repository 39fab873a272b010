package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payd/internal/merchant"
)

// The layout of the portal's main pages and the hosted checkout at a
// phone's width (375 px) and a desktop's (1280 px), measured in Chromium
// (issue 54 item 6): no word of a table cell or of the checkout's amounts
// and status is split across lines ("Stat us", "deliv ered", "0.00 A
// UD"), header, amount, status and time cells take one line each, and the
// page never scrolls sideways (a table scrolls in its own box). What is
// measured is kept as a golden of the layout (testdata/layout.json: per
// page and width, the line count of every header and the most lines of a
// cell of each kind), not of pixels; -update-layout rewrites it (its own
// flag: -update also records the OpenAPI examples of every exchange). Screenshots go
// to bench-results/screenshots/ under CI (kept as artifacts), to
// $PAYD_SCREENSHOTS when set, else to the test's temporary folder.

const layoutGolden = "testdata/layout.json"

var updateLayout = flag.Bool("update-layout", false, "rewrite testdata/layout.json from TestPortalLayout's measurements")

// layoutWidths are the viewport widths every page is measured at.
var layoutWidths = []int64{375, 1280}

// layoutJS measures the page: for each th, the lines its text takes; for
// each cell kind (td.amount, td.status, td.when, and the checkout's
// amounts and status), the most lines one takes; the words (letters,
// digits and . , : only, so ids and URLs that may wrap are left out) of
// any cell or checkout figure split across lines, but for ids (code, .id
// and links, which may wrap anywhere); and whether the page is
// wider than the viewport. Lines are clusters of the text's boxes that do
// not overlap vertically, so a <br> or a smaller font on one line counts
// once.
const layoutJS = `(() => {
  const lineCount = rects => {
    const rs = [...rects].filter(r => r.width > 0 && r.height > 0).sort((a, b) => a.top - b.top);
    let n = 0, bottom = -Infinity;
    for (const r of rs) { if (r.top >= bottom - 1) { n++; bottom = r.bottom; } else { bottom = Math.max(bottom, r.bottom); } }
    return n;
  };
  const linesOf = el => { const r = document.createRange(); r.selectNodeContents(el); return lineCount(r.getClientRects()); };
  const out = {overflow: document.documentElement.scrollWidth > window.innerWidth, headers: {}, cells: {}, split: []};
  for (const th of document.querySelectorAll('th')) {
    const text = th.textContent.trim();
    if (text) out.headers[text] = Math.max(out.headers[text] || 0, linesOf(th));
  }
  const kinds = {amount: 'td.amount, .checkout .amount, #total, .item-price', status: 'td.status, #status', when: 'td.when, #expires'};
  for (const [kind, sel] of Object.entries(kinds)) {
    for (const el of document.querySelectorAll(sel)) {
      if (el.textContent.trim()) out.cells[kind] = Math.max(out.cells[kind] || 0, linesOf(el));
    }
  }
  const word = /^[\p{L}\p{N}.,:]+$/u;
  for (const el of document.querySelectorAll('th, td, .checkout .amount, #total, .item-price, #status, #expires')) {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (node.parentElement.closest('code, .id, a')) continue;
      const re = /\S+/g;
      for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
        if (!word.test(m[0])) continue;
        const r = document.createRange();
        r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        if (lineCount(r.getClientRects()) > 1) out.split.push(m[0]);
      }
    }
  }
  return JSON.stringify(out);
})()`

// pageLayout is what layoutJS measures of one page at one width.
type pageLayout struct {
	Page     string         `json:"page"`
	Width    int64          `json:"width"`
	Overflow bool           `json:"overflow"`
	Headers  map[string]int `json:"headers"`
	Cells    map[string]int `json:"cells"`
	Split    []string       `json:"split"`
}

// screenshotDir is where the test's screenshots are written (see above).
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PAYD_SCREENSHOTS")
	switch {
	case dir != "":
	case os.Getenv("CI") == "true":
		dir = filepath.Join("..", "..", "bench-results", "screenshots")
	default:
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPortalLayout: see above. The pages show a merchant with a balance,
// an IDR payin (the filtered list and its page), held and processing
// payouts of two recipients, an app and a user, and a gateway checkout of
// two items; the first database only writes
// screenshots, every database's layout is compared with the golden.
func TestPortalLayout(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	shots := screenshotDir(t)
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "IDR")
		m := accounts["AUD"]
		p.fund(m, "900")
		r := p.post("/v2/payins", accounts["IDR"], map[string]any{"currency": "IDR", "amount": 100000, "payin_method_name": "id_bank_qris_idr",
			"external_id": "order-1", "email": "jane.payer@example.com", "name": "Jane Payer"})
		want(t, r, 201)
		payinUUID := str(r.JSON(t), "uuid")
		processing := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "120.50", bsbOK, bsbOK)), "uuid")
		p.requireApprovals(m)
		held := str(p.createPayout(m, payoutBody("AUD", "au_payid_npp_aud", "75", payIDOK, payIDOK)), "uuid")
		order := gatewayOrder("L-1", "49.95", "https://shop.example/thanks", "http://127.0.0.1:9/hooks")
		r = p.gatewayCreate(p.bearerFor(m).Token, order)
		want(t, r, 200)
		checkout := str(r.JSON(t), "redirect_url")
		if _, err := p.srv.Merchants.CreateUser(context.Background(), m.MerchantID, "admin@shop.example", merchant.Admin, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		dev := p.newPortalUser(t, m.MerchantID, "dev@shop.example", merchant.Developer)
		dev.follow(dev.post("/portal/developers", "/portal/developers/apps", map[string]string{"currency": "AUD"}))

		tab := newBrowser(t, alloc)
		signIn(t, tab, p, "admin@shop.example", "correct horse battery", "")
		pages := []struct{ name, url string }{
			{"balances", p.root + "/portal/"},
			{"payins", p.root + "/portal/payins?currency=IDR"},
			{"payin", p.root + "/portal/payins/" + payinUUID},
			{"payouts", p.root + "/portal/payouts"},
			{"payout-held", p.root + "/portal/payouts/" + held},
			{"payout-processing", p.root + "/portal/payouts/" + processing},
			{"settlements", p.root + "/portal/settlements"},
			{"reports", p.root + "/portal/reports"},
			{"developers", p.root + "/portal/developers"},
			{"users", p.root + "/portal/users"},
			{"audit", p.root + "/portal/audit"},
			{"checkout", checkout},
		}
		var got []pageLayout
		for _, width := range layoutWidths {
			browse(t, tab, chromedp.EmulateViewport(width, 800))
			for _, pg := range pages {
				if status := open(t, tab, pg.url); status != 200 {
					t.Fatalf("GET %s: %d", pg.url, status)
				}
				var l pageLayout
				if err := json.Unmarshal([]byte(read(t, tab, chromedp.Evaluate[string](layoutJS))), &l); err != nil {
					t.Fatal(err)
				}
				l.Page, l.Width = pg.name, width
				if pg.name == "checkout" {
					// The deadline is in the merchant's zone (Australia/Sydney), named.
					if got := read(t, tab, chromedp.Text(chromedp.CSS("#expires"))); !strings.HasSuffix(got, " AEDT") && !strings.HasSuffix(got, " AEST") {
						t.Errorf("the checkout's deadline is %q, want it in Australia/Sydney", got)
					}
				}
				got = append(got, l)
				if l.Overflow || len(l.Split) > 0 {
					t.Errorf("%s at %d px: wider than the page %v, words split across lines %q", pg.name, width, l.Overflow, l.Split)
				}
				for name, n := range l.Headers {
					if n != 1 {
						t.Errorf("%s at %d px: the header %q takes %d lines", pg.name, width, name, n)
					}
				}
				for kind, n := range l.Cells {
					if n != 1 {
						t.Errorf("%s at %d px: a %s cell takes %d lines", pg.name, width, kind, n)
					}
				}
				if strings.HasSuffix(t.Name(), "sqlite") {
					png := read(t, tab, chromedp.FullScreenshot(100))
					if err := os.WriteFile(filepath.Join(shots, pg.name+"-"+strconv.FormatInt(width, 10)+".png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		compareLayout(t, got)
	})
}

// compareLayout fails unless got is the golden layout (or rewrites the
// golden with -update).
func compareLayout(t *testing.T, got []pageLayout) {
	t.Helper()
	raw, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, '\n')
	if *updateLayout {
		if err := os.WriteFile(layoutGolden, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(layoutGolden)
	if err != nil {
		t.Fatalf("%v (run with -update-layout to write it)", err)
	}
	if !bytes.Equal(golden, raw) {
		t.Errorf("the layout differs from %s (run with -update-layout after checking the screenshots):\n%s", layoutGolden, raw)
	}
}
