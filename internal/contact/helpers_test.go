package contact

import (
	"sort"
	"strings"

	"payd/internal/fault"
)

// fieldOf is the member a validation error names ("" for nil; several are
// joined with commas).
func fieldOf(err error) string {
	if err == nil {
		return ""
	}
	e, ok := fault.As(err)
	if !ok {
		return "not a fault: " + err.Error()
	}
	var names []string
	for k := range e.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
