package merchant_test

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a job
// run (RunDue runs merchants side by side), a database or a goroutine of a
// race that a test left running.
func TestMain(m *testing.M) { leaktest.Main(m) }
