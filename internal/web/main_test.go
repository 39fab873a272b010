package web_test

import (
	"os"
	"testing"

	"payd/internal/merchant"
)

// TestMain hashes the portal tests' passwords with the least work argon2id
// allows (merchant.UseCheapPasswordsInTests): they sign users in by the
// dozen. The production cost is checked by merchant's TestPasswordHashes.
func TestMain(m *testing.M) {
	merchant.UseCheapPasswordsInTests()
	os.Exit(m.Run())
}
