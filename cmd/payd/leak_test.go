package main

import (
	"testing"

	"payd/internal/leaktest"
)

// TestMain fails the package's run when a goroutine outlives its tests: a payd
// serve whose context ended but whose job workers or webhook dispatcher did
// not stop.
func TestMain(m *testing.M) { leaktest.Main(m) }
