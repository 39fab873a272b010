package e2e

import (
	"testing"

	"payd/internal/leaktest"
	"payd/internal/merchant"
)

// TestMain hashes the portal users' passwords with the least work (the
// production cost is held by merchant's TestPasswordHashes), and fails the
// package's run when a goroutine outlives its tests: a server whose job
// workers, webhook dispatcher or HTTP connections outlived its stop.
func TestMain(m *testing.M) {
	merchant.UseCheapPasswordsInTests()
	leaktest.Main(m)
}
