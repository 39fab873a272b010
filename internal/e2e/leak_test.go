package e2e

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a
// server whose job workers, webhook dispatcher or HTTP connections outlived
// its stop.
func TestMain(m *testing.M) { leaktest.Main(m) }
