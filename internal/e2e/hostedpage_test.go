package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The hosted payment page (CONTRACT §4: a redirect method's pay_url "returns
// the customer to callback_url or failure_callback_url"), driven in a real
// headless Chromium, so the Content-Security-Policy, the form and the
// redirects are what a customer's browser does with them.

// chromiumPath is Debian's chromium; .ci/run installs it.
const chromiumPath = "/usr/bin/chromium"

// browserStepTimeout bounds one step in the browser (a navigation, a click,
// a wait for a page).
const browserStepTimeout = 15 * time.Second

// newAllocator prepares headless Chromium for the test, or skips the test
// where Chromium is not installed, and in the fast loop (-short): a browser
// costs seconds of CPU to start.
func newAllocator(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("drives Chromium")
	}
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("CI runs the browser tests: %v", err)
	} else if err != nil {
		t.Skipf("browser tests need Debian's chromium at %s (apt-get install chromium): %v", chromiumPath, err)
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		// Containers often have a small /dev/shm.
		chromedp.Flag("disable-dev-shm-usage", true),
		// No user-data-dir: each browser gets a fresh temporary profile,
		// removed when it stops.
	)
	t.Cleanup(cancel)
	return alloc
}

// newBrowser starts a Chromium from alloc and returns its tab; the browser
// stops when the test ends. Start payd first, so the browser stops before
// payd does: Chromium keeps a spare connection open that a graceful
// shutdown would wait 5 s for. (A second tab in one browser is no way
// around it: with chromedp v0.22.1 and Chromium 156 a new tab stops
// answering after its first navigation.)
func newBrowser(t *testing.T, alloc context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first run starts the browser; it must not carry a step's timeout,
	// which would stop the whole browser when it ends.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

// browse runs steps in the tab.
func browse(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// read runs one action in the tab and returns its value.
func read[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserStepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// open navigates the tab to url and returns the status of the page.
func open(t *testing.T, tab context.Context, url string) int64 {
	t.Helper()
	res := read(t, tab, chromedp.NavigateResponse(url))
	if res == nil {
		t.Fatalf("no response for %s", url)
	}
	return res.Status
}

// waitLocation waits until the tab shows url.
func waitLocation(t *testing.T, tab context.Context, url string) {
	t.Helper()
	var at string
	deadline := time.Now().Add(browserStepTimeout)
	for at != url {
		if time.Now().After(deadline) {
			t.Fatalf("browser is at %s, want %s", at, url)
		}
		time.Sleep(20 * time.Millisecond)
		ctx, cancel := context.WithTimeout(tab, browserStepTimeout)
		at, _ = chromedp.Run(ctx, chromedp.Location()) // fails while the page changes: try again
		cancel()
	}
}

// merchantSite stands in for the merchant's return pages and records what it served.
type merchantSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
}

func newMerchantSite(t *testing.T) *merchantSite {
	m := &merchantSite{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.hits = append(m.hits, r.Method+" "+r.URL.RequestURI()+" referer="+r.Header.Get("Referer"))
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>merchant thanks</body></html>")
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *merchantSite) served() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.hits...)
}

// TestHostedPageRedirect: the customer opens pay_url, presses Pay or Fail,
// and lands on the merchant's callback_url or failure_callback_url; the payin
// is received or failed, and the merchant hears so by webhook.
func TestHostedPageRedirect(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	site := newMerchantSite(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		m := p.merchant("PHP")["PHP"]
		tests := []struct {
			name       string
			button     string
			wantPath   string
			wantStatus string
			wantEvent  string
		}{
			{"pay", "#pay", "/thanks?order=", "received", "payin.received"},
			{"fail", "#fail", "/sorry?order=", "failed", "payin.failed"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				hooks := newEventLog(t)
				order := fmt.Sprint(i)
				r := p.post("/v2/payins", m, map[string]any{
					"currency": "PHP", "amount": "125.50", "payin_method_name": "ph_ewallet_gcash_php", "description": "Order <" + order + ">",
					"payin_method_params":  map[string]any{"callback_url": site.URL + "/thanks?order=" + order, "failure_callback_url": site.URL + "/sorry?order=" + order},
					"webhook_notification": map[string]any{"endpoint_url": hooks.url},
				})
				want(t, r, 201)
				pi := r.JSON(t)
				uuid := str(pi, "uuid")
				payURL := str(pi["pay_code"].(map[string]any), "pay_url")
				if !strings.HasPrefix(payURL, p.root+"/pay/"+uuid+"?t=") {
					t.Fatalf("pay_url = %q, want %s/pay/%s?t=…", payURL, p.root, uuid)
				}

				if status := open(t, tab, payURL); status != 200 {
					t.Fatalf("GET pay_url = %d, want 200", status)
				}
				browse(t, tab, chromedp.WaitVisible(chromedp.CSS(tt.button)))
				for sel, want := range map[string]string{
					"#description": "Order <" + order + ">", "#amount": "125.50", "#currency": "PHP",
					"#method": "GCash e-wallet", "#status": "Waiting for the customer's payment", "#payee": "Test Merchant",
				} {
					if got := read(t, tab, chromedp.TextContent(chromedp.CSS(sel))); got != want {
						t.Errorf("%s shows %q, want %q", sel, got, want)
					}
				}
				// The deadline is in the merchant's zone (Australia/Sydney), and the page says what to do.
				if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#expires"))); !strings.HasSuffix(got, "AEDT") && !strings.HasSuffix(got, "AEST") {
					t.Errorf("#expires shows %q, want Sydney time", got)
				}
				if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#instruction"))); !strings.HasPrefix(got, "Pay 125.50 PHP to Test Merchant by GCash e-wallet before") {
					t.Errorf("#instruction shows %q", got)
				}

				browse(t, tab, chromedp.Click(chromedp.CSS(tt.button)))
				wantURL := site.URL + tt.wantPath + order
				waitLocation(t, tab, wantURL)
				if got := read(t, tab, chromedp.Text(chromedp.CSS("body"))); got != "merchant thanks" {
					t.Errorf("merchant page shows %q", got)
				}
				// The secret link never leaves in a Referer.
				if got, want := site.served(), "GET "+tt.wantPath+order+" referer="; !slices.Contains(got, want) {
					t.Errorf("merchant site served %q, want %q", got, want)
				}

				detail := p.get("/v2/payins/detail?uuid="+uuid, m)
				want(t, detail, 200)
				if got := str(detail.JSON(t), "status"); got != tt.wantStatus {
					t.Errorf("status = %q, want %q", got, tt.wantStatus)
				}
				hooks.waitTypes(t, tt.wantEvent)
				hooks.mu.Lock()
				hooked := str(hooks.events[0].Record, "uuid")
				hooks.mu.Unlock()
				if hooked != uuid {
					t.Errorf("webhook names payin %q, want %q", hooked, uuid)
				}

				// Back on the link, the customer sees the outcome and no buttons.
				open(t, tab, payURL)
				if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('form').length`)); got != 0 {
					t.Errorf("settled page has %d forms, want none", got)
				}
			})
		}
	})
}

// TestHostedPageQR: a QR payin's page shows the QR image, which the browser
// loads under the page's Content-Security-Policy, the payload to copy, and
// its stylesheet.
func TestHostedPageQR(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		m := p.merchant("IDR")["IDR"]
		r := p.post("/v2/payins", m, map[string]any{"currency": "IDR", "amount": 100000, "payin_method_name": "id_bank_qris_idr"})
		want(t, r, 201)
		pi := r.JSON(t)
		qrString := str(pi["pay_code"].(map[string]any), "qr_string")
		if qrString == "" {
			t.Fatalf("pay_code.qr_string is empty (CONTRACT §4 wants a QRIS payload): %s", r.Body)
		}
		if status := open(t, tab, p.srv.Payins.PayURL(str(pi, "uuid"))); status != 200 {
			t.Fatalf("GET page = %d, want 200", status)
		}
		browse(t, tab, chromedp.WaitVisible(chromedp.CSS("#qr")))
		loaded := read(t, tab, chromedp.Poll[int](`(() => { const img = document.querySelector('#qr'); return img.complete && img.naturalWidth; })()`,
			chromedp.WithPollingTimeout(browserStepTimeout)))
		if loaded < 200 {
			t.Errorf("QR image natural width = %d, want a loaded image of at least 200 px", loaded)
		}
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#qr-string"))); got != qrString {
			t.Errorf("page shows payload %q, want %q", got, qrString)
		}
		if got := read(t, tab, chromedp.TextContent(chromedp.CSS("#amount"))); got != "100000.00" {
			t.Errorf("amount shows %q, want 100000.00", got)
		}
		// 28rem from pay.css: the stylesheet loaded under style-src 'self'.
		if got := read(t, tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('main')).maxWidth`)); got != "448px" {
			t.Errorf("main max-width = %q, want 448px from /assets/pay.css", got)
		}
	})
}

// TestHostedPageNotFound: a link with a wrong token, or to no payin, shows
// the not-found page.
func TestHostedPageNotFound(t *testing.T) {
	t.Parallel()
	alloc := newAllocator(t)
	each(t, func(t *testing.T, p *payd) {
		tab := newBrowser(t, alloc)
		m := p.merchant("PHP")["PHP"]
		r := p.post("/v2/payins", m, map[string]any{"currency": "PHP", "amount": 100, "payin_method_name": "ph_ewallet_gcash_php",
			"payin_method_params": map[string]any{"callback_url": "https://shop.example/thanks"}})
		want(t, r, 201)
		uuid := str(r.JSON(t), "uuid")
		for _, url := range []string{
			p.root + "/pay/" + uuid + "?t=" + strings.Repeat("A", 22),
			p.root + "/pay/" + uuid,
			p.srv.Payins.PayURL("00000000-0000-0000-0000-000000000000"),
		} {
			if status := open(t, tab, url); status != 404 {
				t.Errorf("GET %s = %d, want 404", url, status)
			}
			if got := read(t, tab, chromedp.TextContent(chromedp.CSS("h1"))); got != "Payment not found" {
				t.Errorf("GET %s shows %q, want Payment not found", url, got)
			}
		}
	})
}
