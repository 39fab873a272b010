package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"payd/internal/store/storetest"
)

// TestAPIDocsRenderOffline: /api/docs renders the OpenAPI document in
// headless Chromium from payd's own files alone (no CDN: every resource the
// page loads comes from payd), and lists every operation and webhook of the
// document.
func TestAPIDocsRenderOffline(t *testing.T) {
	t.Parallel()
	p := start(t, storetest.SQLiteDSN(t))
	doc := p.openAPI()
	operations := 0
	for _, ops := range doc.Paths {
		operations += len(ops)
	}
	for _, ops := range doc.Webhooks {
		operations += len(ops)
	}
	tab := newBrowser(t, newAllocator(t))
	if status := open(t, tab, p.root+"/api/docs"); status != 200 {
		t.Fatalf("GET /api/docs: %d", status)
	}
	browse(t, tab, chromedp.WaitVisible(chromedp.CSS(".opblock")))
	if got := read(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('.opblock').length`)); got != operations {
		t.Errorf("the page shows %d operations, the document has %d", got, operations)
	}
	resources := read(t, tab, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').map(e => e.name)`))
	for _, url := range resources {
		if !strings.HasPrefix(url, p.root+"/") {
			t.Errorf("the page loaded %s, which is not payd's", url)
		}
	}
	if len(resources) < 3 {
		t.Errorf("the page loaded %v; want the viewer's script, its style and the document", resources)
	}
}
