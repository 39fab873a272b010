package bankchannel_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a connection's goroutine outlives the tests
// (a Close that leaves one behind, an aborted operation that hangs). It is
// goleak's own rather than leaktest.Main: the package has no database for
// that one's ignores to be about.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
