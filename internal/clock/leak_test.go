package clock

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a
// waiter of a manual clock that nothing ever wakes.
func TestMain(m *testing.M) { leaktest.Main(m) }
