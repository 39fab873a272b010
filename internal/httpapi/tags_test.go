package httpapi

import (
	"slices"
	"testing"
)

// TestEveryOperationHasATag: the reference groups every operation under one
// of apiTags (issue 54 item 9), so a route whose path no tag holds fails
// here, naming it; the document lists each tag used once, in apiTags'
// order, and no tag nothing uses.
func TestEveryOperationHasATag(t *testing.T) {
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	doc := a.buildOpenAPI()
	used := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			tags := op.(map[string]any)["tags"].([]string)
			if len(tags) != 1 || tags[0] == "" {
				t.Errorf("%s %s has tags %q: give its path a tag in apiTags", method, path, tags)
				continue
			}
			used[tags[0]] = true
		}
	}
	var listed, want []string
	for _, tag := range doc.Tags {
		listed = append(listed, tag["name"].(string))
	}
	for _, tag := range apiTags {
		if used[tag.name] {
			want = append(want, tag.name)
		}
	}
	if !slices.Equal(listed, want) {
		t.Errorf("the document's tags are %q, want %q", listed, want)
	}
	if !used["Payouts (v1)"] || !used["Payouts (v2)"] || !used["Sandbox"] {
		t.Errorf("tags used %v: v1 and v2 payouts and the sandbox each want theirs", used)
	}
}
