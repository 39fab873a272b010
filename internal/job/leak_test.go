package job_test

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a
// worker loop, a lane run or a sweep of held jobs that a stopped queue left
// running.
func TestMain(m *testing.M) { leaktest.Main(m) }
