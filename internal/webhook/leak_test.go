package webhook

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a
// dispatcher loop, an attempt or a hand-over that a stopped dispatcher left
// running.
func TestMain(m *testing.M) { leaktest.Main(m) }
