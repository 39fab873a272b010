package portal_test

import (
	"strings"
	"testing"

	"payd/internal/leaktest"
	"payd/internal/merchant"
)

// TestMain hashes the tests' passwords with the least work argon2id allows
// (merchant.UseCheapPasswordsInTests): they sign users in by the dozen.
// The production cost is checked by merchant's TestPasswordHashes.
// It fails the run when a goroutine outlives the tests (leaktest).
func TestMain(m *testing.M) {
	merchant.UseCheapPasswordsInTests()
	leaktest.Main(m)
}

// TestPasswordsHashCheaplyHere: this binary's hashes are the cheap ones,
// and they verify.
func TestPasswordsHashCheaplyHere(t *testing.T) {
	t.Parallel()
	h, err := merchant.HashPassword(password)
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=8,t=1,p=1$") || !merchant.CheckPassword(h, password) || merchant.NeedsRehash(h) {
		t.Errorf("HashPassword() = %s, %v; want a cheap argon2id hash that verifies", h, err)
	}
}
