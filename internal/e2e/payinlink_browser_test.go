package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"

	"payd/internal/qr"
)

// Payment Gateway 3 pages in Chromium: the card form (checked in the page,
// declined, paid), the KHQR code, and the page framed by a merchant's site
// on another origin, which hears its svc_payment_event messages.

// embedSite is a merchant's site on an origin of its own: /embed?src=URL
// frames URL and records the messages the frame posts (window.msgs, kept in
// the tab's sessionStorage so that the site's next page still has them) and
// whether the frame has loaded (window.frameLoaded); its other paths, such
// as /paid and /failed, are return pages that show the same record.
func newEmbedSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/embed" {
			fmt.Fprintf(w, `<!DOCTYPE html><html><head><script>window.msgs = JSON.parse(sessionStorage.getItem("msgs") || "[]");</script></head>
<body><p id="page">%s</p></body></html>`, html.EscapeString(r.URL.Path))
			return
		}
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><script>
window.msgs = [];
sessionStorage.setItem("msgs", "[]");
window.frameLoaded = false;
addEventListener("message", function (e) {
  window.msgs.push({origin: e.origin, data: e.data});
  sessionStorage.setItem("msgs", JSON.stringify(window.msgs));
});
</script></head><body><p id="page">/embed</p>
<iframe id="pg" src="%s" width="480" height="1100" onload="window.frameLoaded = true"></iframe></body></html>`, html.EscapeString(r.URL.Query().Get("src")))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// embedMsg is one message the embedding page received.
type embedMsg struct {
	Origin string         `json:"origin"`
	Data   map[string]any `json:"data"`
}

// waitMessages waits until the embedding site's page (the embedding page,
// or the page the top window went to) holds n messages and returns them.
func waitMessages(t *testing.T, tab context.Context, n int) []embedMsg {
	t.Helper()
	var msgs []embedMsg
	waitUntil(t, fmt.Sprintf("%d messages", n), browserStepTimeout, func() bool {
		ctx, cancel := context.WithTimeout(tab, browserStepTimeout)
		defer cancel()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.msgs || [])`))
		if err != nil {
			return false // the top window is between pages: try again
		}
		msgs = nil
		return json.Unmarshal([]byte(raw), &msgs) == nil && len(msgs) >= n
	})
	return msgs
}

// wantMessage fails unless m came from origin and is exactly
// {type: svc_payment_event, page_state: state, uuid, redirect_url: redirect}
// (redirect "" meaning null).
func wantMessage(t *testing.T, m embedMsg, origin, state, uuid, redirect string) {
	t.Helper()
	keys := make([]string, 0, len(m.Data))
	for k := range m.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var wantRedirect any
	if redirect != "" {
		wantRedirect = redirect
	}
	if m.Origin != origin || !slices.Equal(keys, []string{"page_state", "redirect_url", "type", "uuid"}) || m.Data["type"] != "svc_payment_event" ||
		m.Data["page_state"] != state || m.Data["uuid"] != uuid || m.Data["redirect_url"] != wantRedirect {
		t.Errorf("message %+v, want from %s {type: svc_payment_event, page_state: %s, uuid: %s, redirect_url: %v}", m, origin, state, uuid, wantRedirect)
	}
}

// The frame of the embedding page is reached through the DevTools
// protocol: its frame in the page's frame tree, scripts in an isolated
// world of that frame (to read it, never to act), and real mouse and key
// events at its elements' places, as a customer's clicks and keys, which
// give the page the user activation a browser asks of a frame before it may
// send the top window elsewhere.

// childFrame is the embedding page's one iframe.
func childFrame(t *testing.T, tab context.Context) *cdp.Frame {
	t.Helper()
	tree := read(t, tab, chromedp.Action[page.GetFrameTreeResult](func(ctx context.Context, tg *chromedp.Target) (page.GetFrameTreeResult, error) {
		return cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
	}))
	if tree.FrameTree == nil || len(tree.FrameTree.ChildFrames) != 1 {
		t.Fatalf("the embedding page has no one frame: %+v", tree.FrameTree)
	}
	return tree.FrameTree.ChildFrames[0].Frame
}

// frameEval evaluates expression in an isolated world of the embedding
// page's frame and returns its value as JSON.
func frameEval(t *testing.T, tab context.Context, expression string) string {
	t.Helper()
	frameID := childFrame(t, tab).ID
	return read(t, tab, chromedp.Action[string](func(ctx context.Context, tg *chromedp.Target) (string, error) {
		world, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: frameID, WorldName: "e2e"})
		if err != nil {
			return "", err
		}
		byValue := true
		res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: "JSON.stringify(" + expression + ")",
			ContextID: world.ExecutionContextID, ReturnByValue: &byValue})
		if err != nil {
			return "", err
		}
		if res.ExceptionDetails != nil {
			return "", fmt.Errorf("evaluate %s in the frame: %s", expression, res.ExceptionDetails.Text)
		}
		var out string
		if err := json.Unmarshal(res.Result.Value, &out); err != nil {
			return "", fmt.Errorf("evaluate %s in the frame: %s: %w", expression, res.Result.Value, err)
		}
		return out, nil
	}))
}

// waitFrame waits until condition (a script expression) is true in the frame.
func waitFrame(t *testing.T, tab context.Context, condition string) {
	t.Helper()
	waitUntil(t, condition+" in the frame", browserStepTimeout, func() bool { return frameEval(t, tab, "!!("+condition+")") == "true" })
}

// clickInFrame clicks the middle of the frame's element sel with the mouse.
func clickInFrame(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	waitFrame(t, tab, fmt.Sprintf("document.querySelector(%q) && document.querySelector(%q).getBoundingClientRect().width > 0", sel, sel))
	var box, frame struct{ X, Y, W, H float64 }
	json.Unmarshal([]byte(frameEval(t, tab, fmt.Sprintf(`(function (r) { return {X: r.left, Y: r.top, W: r.width, H: r.height}; })(document.querySelector(%q).getBoundingClientRect())`, sel))), &box)
	json.Unmarshal([]byte(read(t, tab, chromedp.Evaluate[string](`JSON.stringify((function (f) { var r = f.getBoundingClientRect(); return {X: r.left + f.clientLeft, Y: r.top + f.clientTop}; })(document.getElementById('pg')))`))), &frame)
	browse(t, tab, chromedp.MouseClickXY(frame.X+box.X+box.W/2, frame.Y+box.Y+box.H/2))
}

// typeInFrame clicks the frame's input sel and types text into it.
func typeInFrame(t *testing.T, tab context.Context, sel, text string) {
	t.Helper()
	clickInFrame(t, tab, sel)
	waitFrame(t, tab, fmt.Sprintf("document.activeElement === document.querySelector(%q)", sel))
	browse(t, tab, chromedp.KeyEvent(text))
}

// payCardInFrame fills the frame's card form and sends it.
func payCardInFrame(t *testing.T, tab context.Context, number string) {
	t.Helper()
	for sel, text := range map[string]string{`input[autocomplete=cc-number]`: number, `input[autocomplete=cc-exp]`: "12/39", `input[autocomplete=cc-csc]`: "123"} {
		typeInFrame(t, tab, sel, text)
	}
	clickInFrame(t, tab, `#card-form button[type=submit]`)
}

// payCard types a card into the card form of the page (or of frame) and sends it.
func payCard(t *testing.T, tab context.Context, number string, in ...chromedp.QueryOption) {
	t.Helper()
	browse(t, tab,
		chromedp.WaitVisible(chromedp.CSS(`#card-form`), in...),
		chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-name]`), "Ada Lovelace", in...),
		chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-number]`), number, in...),
		chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-exp]`), "12/39", in...),
		chromedp.SendKeys(chromedp.CSS(`input[autocomplete=cc-csc]`), "123", in...),
		chromedp.Click(chromedp.CSS(`#card-form button[type=submit]`), in...))
}

// decodeQRImage reads the QR code in a PNG the way a phone's camera would.
func decodeQRImage(t *testing.T, raw []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("QR image: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	// The image is a generated code, not a photo: when the detector
	// misjudges its size (gozxing's "dimension = 47" on some payloads), it
	// is read again as a pure barcode.
	res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		res, err = zxingqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	}
	if err != nil {
		t.Fatalf("read QR: %v", err)
	}
	return res.GetText()
}

// TestPayinLinkBrowser: in Chromium, a card link's page checks the card in
// the page (a bad number is never sent), is declined by 4000 0000 0000 0002
// and stays (no failure URL) for a retry, and is paid by 4242 4242 4242 4242,
// which takes the customer to redirect_url.success; the balance is credited
// once and the merchant hears failed then paid. A KHQR link shows its code,
// which decodes to the link's amount, and an MWK link below 2,000 is refused.
func TestPayinLinkBrowser(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	site := newMerchantSite(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		apps := p.merchant(linkCurrencies...)
		m := apps["NZD"]
		hooks := newEventLog(t)
		link := p.newLink(m, linkBody("nz_card_nzd", "NZD", "30.00", site.URL+"/paid?o=7", "", hooks.url))
		browse(t, tab, chromedp.EmulateViewport(375, 800))
		if status := open(t, tab, str(link, "payment_link_url")); status != 200 {
			t.Fatalf("GET link page = %d", status)
		}
		for sel, want := range map[string]string{"#amount": "30.00", "#currency": "NZD", "#status": "Waiting for your payment"} {
			if got := read(t, tab, chromedp.TextContent(chromedp.CSS(sel))); got != want {
				t.Errorf("%s shows %q, want %q", sel, got, want)
			}
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); got > 375 {
			t.Errorf("page is %d px wide at 375 px", got)
		}
		for _, tok := range []string{"cc-name", "cc-number", "cc-exp", "cc-csc"} {
			if got := read(t, tab, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('input[autocomplete=%q]').length`, tok))); got != 1 {
				t.Errorf("%d inputs with autocomplete %s", got, tok)
			}
		}
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form input[name=csrf_token]').length`)); got != 2 {
			t.Errorf("%d forms carry the csrf_token, want 2", got)
		}

		// The page refuses a number that fails Luhn before anything is sent.
		payCard(t, tab, "4242 4242 4242 4241")
		if got := read(t, tab, chromedp.Evaluate[string](`document.querySelector('input[autocomplete=cc-number]').validationMessage`)); !strings.Contains(got, "not a valid card number") {
			t.Errorf("validation message %q", got)
		}
		if rec := p.get("/v3/payin_links/detail?uuid="+str(link, "uuid"), m).JSON(t); num(rec, "attempts") != "0" {
			t.Errorf("a refused number reached payd: %v", rec)
		}
		read(t, tab, chromedp.Evaluate[string](`document.querySelectorAll('#card-form input:not([type=hidden])').forEach(function (i) { i.value = ''; }); ''`))

		payCard(t, tab, "4000 0000 0000 0002")
		browse(t, tab, chromedp.Poll[chromedp.Void](`document.getElementById('status').textContent === 'Payment declined'`))
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#failure-reason"))); got != "The card was declined" {
			t.Errorf("failure reason %q", got)
		}
		payCard(t, tab, "4242 4242 4242 4242")
		waitLocation(t, tab, site.URL+"/paid?o=7")
		hooks.waitTypes(t, "payin_link.failed", "payin_link.paid")
		if got := balance(t, p, m, "available_balance"); got != "30.00" {
			t.Errorf("available = %s, want 30.00", got)
		}
		// The paid link shows the outcome and takes nothing more.
		open(t, tab, str(link, "payment_link_url"))
		if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form').length`)); got != 0 {
			t.Errorf("paid page has %d forms", got)
		}

		// KHQR: shown, and its image decodes to a KHQR of the link.
		khqr := p.newLink(apps["USD"], linkBody("kh_khqr_usd", "USD", "12.50", site.URL+"/paid", "", ""))
		open(t, tab, str(khqr, "payment_link_url"))
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#khqr-image")),
			chromedp.Poll[chromedp.Void](`document.getElementById('khqr-image').complete && document.getElementById('khqr-image').naturalWidth > 0`))
		src := read(t, tab, chromedp.Evaluate[string](`document.getElementById('khqr-image').src`))
		res, err := http.Get(src)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		text := decodeQRImage(t, raw)
		payload, err := qr.Decode(text)
		if err != nil {
			t.Fatalf("KHQR %q: %v", text, err)
		}
		if payload.Amount() != "12.50" || payload.Currency() != qr.CurrencyUSD || payload.CountryCode() != "KH" || payload.AdditionalData().BillNumber != str(khqr, "uuid") {
			t.Errorf("KHQR %q", text)
		}
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#qr-string"))); got != text {
			t.Errorf("page shows %q, image holds %q", got, text)
		}
		browse(t, tab, chromedp.Click(chromedp.CSS("#pay")))
		waitLocation(t, tab, site.URL+"/paid")
		if got := balance(t, p, apps["USD"], "available_balance"); got != "12.50" {
			t.Errorf("USD available = %s", got)
		}

		// MWK below 2,000 is refused; at 2,000 the page shows the transfer.
		wantError(t, p.post("/v3/payin_links", m, linkBody("mw_bank_mwk", "MWK", "1999", site.URL+"/paid", "", "")), 422, "AMOUNT_OUT_OF_RANGE", "")
		mwk := p.newLink(m, linkBody("mw_bank_mwk", "MWK", "2000", site.URL+"/paid", "", ""))
		open(t, tab, str(mwk, "payment_link_url"))
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#bank-account"))); got != apps["MWK"].AccountNumber {
			t.Errorf("bank account %q, want %s", got, apps["MWK"].AccountNumber)
		}
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#bank-reference"))); got != str(mwk, "uuid") {
			t.Errorf("reference %q", got)
		}
	})
}

// TestPayinLinkEmbedded: a merchant's page on another origin frames the
// link page and receives, from payd's origin, a svc_payment_event message
// of each page_state with exactly type, page_state, uuid and redirect_url:
// pending on load, processing, failed (with redirect_url.failure, and the
// top window goes there), failed without a failure URL (the customer stays
// and retries), paid (top window to redirect_url.success) and expired. An
// origin the merchant did not list cannot frame it, nor any v1 checkout.
func TestPayinLinkEmbedded(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	site := newEmbedSite(t)
	stranger := newEmbedSite(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		browse(t, tab, chromedp.EmulateViewport(1000, 1400))
		apps := p.merchant(linkCurrencies...)
		m := apps["NZD"]
		if _, err := p.srv.Merchants.SetEmbedOrigins(context.Background(), m.MerchantID, []string{site.URL}); err != nil {
			t.Fatal(err)
		}
		embed := func(srv *httptest.Server, link map[string]any) {
			t.Helper()
			open(t, tab, srv.URL+"/embed?src="+url.QueryEscape(str(link, "payment_link_url")))
			browse(t, tab, chromedp.Poll[chromedp.Void](`window.frameLoaded`))
		}
		hooks := newEventLog(t)

		// A listed origin frames a link whose success is elsewhere; declined,
		// the top window goes to redirect_url.failure.
		a := p.newLink(m, linkBody("nz_card_nzd", "NZD", "15.00", "https://shop.example/paid", site.URL+"/failed", hooks.url))
		embed(site, a)
		msgs := waitMessages(t, tab, 1)
		wantMessage(t, msgs[0], p.root, "pending", str(a, "uuid"), "")
		payCardInFrame(t, tab, "4000 0000 0000 0002")
		msgs = waitMessages(t, tab, 3)
		wantMessage(t, msgs[1], p.root, "processing", str(a, "uuid"), "")
		wantMessage(t, msgs[2], p.root, "failed", str(a, "uuid"), site.URL+"/failed")
		waitLocation(t, tab, site.URL+"/failed")

		// Another merchant lists no origin: the origin of redirect_url.success
		// may frame its link. Declined without a failure URL, the customer
		// stays, retries and pays; the top window goes to success.
		other := p.merchant("HKD")["HKD"]
		b := p.newLink(other, linkBody("hk_card_hkd", "HKD", "50.00", site.URL+"/paid?o=b", "", hooks.url))
		embed(site, b)
		wantMessage(t, waitMessages(t, tab, 1)[0], p.root, "pending", str(b, "uuid"), "")
		clickInFrame(t, tab, "#decline")
		msgs = waitMessages(t, tab, 3)
		wantMessage(t, msgs[1], p.root, "processing", str(b, "uuid"), "")
		wantMessage(t, msgs[2], p.root, "failed", str(b, "uuid"), "")
		waitFrame(t, tab, `document.getElementById('status').textContent === 'Payment declined'`)
		if at := read(t, tab, chromedp.Location()); !strings.HasPrefix(at, site.URL+"/embed?") {
			t.Fatalf("after a decline without a failure URL the top window is at %s", at)
		}
		payCardInFrame(t, tab, "4242 4242 4242 4242")
		msgs = waitMessages(t, tab, 5)
		wantMessage(t, msgs[3], p.root, "processing", str(b, "uuid"), "")
		wantMessage(t, msgs[4], p.root, "paid", str(b, "uuid"), site.URL+"/paid?o=b")
		waitLocation(t, tab, site.URL+"/paid?o=b")
		if got := balance(t, p, other, "available_balance"); got != "50.00" {
			t.Errorf("HKD available = %s", got)
		}

		// Expired: framed again after the link's 24 hours, the page says so.
		c := p.newLink(m, linkBody("tz_bank_tzs", "TZS", 5000, "https://shop.example/paid", site.URL+"/failed", hooks.url))
		p.advance(apps["TZS"], 24*3600)
		embed(site, c)
		wantMessage(t, waitMessages(t, tab, 1)[0], p.root, "expired", str(c, "uuid"), site.URL+"/failed")
		// Link a (failed) expired with c: the clock is the merchant's.
		hooks.waitTypeSet(t, "payin_link.failed", "payin_link.failed", "payin_link.paid", "payin_link.expired", "payin_link.expired")

		// An origin that is neither listed nor the success origin cannot
		// frame a link: Chrome shows its error page in the frame, and no
		// message arrives.
		d := p.newLink(m, linkBody("nz_card_nzd", "NZD", "15.00", "https://shop.example/paid", site.URL+"/failed", ""))
		embed(stranger, d)
		wantFrameBlocked(t, tab)
		// v1 checkout pages are never framed, not even by a listed origin.
		tok := p.bearerFor(p.merchant("AUD")["AUD"]).Token
		r := p.gatewayCreate(tok, gatewayOrder("EMB-1", "5.00", site.URL+"/paid", hooks.url))
		want(t, r, 200)
		embed(site, map[string]any{"payment_link_url": str(r.JSON(t), "redirect_url")})
		wantFrameBlocked(t, tab)
	})
}

// wantFrameBlocked fails unless the loaded frame of the embedding page
// shows Chrome's error page instead of payd's page, and no message came.
func wantFrameBlocked(t *testing.T, tab context.Context) {
	t.Helper()
	f := childFrame(t, tab)
	if f.UnreachableURL == "" && !strings.HasPrefix(f.URL, "chrome-error:") {
		t.Errorf("the frame shows %s; want Chrome's error page", f.URL)
	}
	if n := read(t, tab, chromedp.Evaluate[int](`window.msgs.length`)); n != 0 {
		t.Errorf("%d messages from a frame that should be blocked", n)
	}
}
