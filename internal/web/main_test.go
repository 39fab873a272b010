package web_test

import (
	"testing"

	"payd/internal/leaktest"
	"payd/internal/merchant"
)

// TestMain hashes the portal tests' passwords with the least work argon2id
// allows (merchant.UseCheapPasswordsInTests): they sign users in by the
// dozen. The production cost is checked by merchant's TestPasswordHashes.
// It fails the run when a goroutine outlives the tests (leaktest).
func TestMain(m *testing.M) {
	merchant.UseCheapPasswordsInTests()
	leaktest.Main(m)
}
