package e2e

import (
	"context"
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
	// The viewer parses the whole document (about 1.4 MB with its examples)
	// before it draws: on a machine busy with the rest of the suite that
	// can take longer than one ordinary browser step.
	drawn, cancel := context.WithTimeout(tab, 4*browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(drawn, chromedp.WaitVisible(chromedp.CSS(".opblock"))); err != nil {
		t.Fatalf("the reference was not drawn: %v", err)
	}
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
