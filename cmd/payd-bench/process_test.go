package main

import (
	"testing"
	"time"
)

// The machine's busy time leaves out what the hypervisor stole: that CPU
// did no work of this machine's.
func TestParseCPULine(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got := parseCPULine("cpu  100 5 40 900 20 3 2 50 0 0")
	want := machineTime{busy: 1500 * time.Millisecond, steal: 500 * time.Millisecond}
	if got != want {
		t.Fatalf("parseCPULine = %+v, want %+v", got, want)
	}
	if got := parseCPULine("intr 1 2 3"); got != (machineTime{}) {
		t.Fatalf("a line that is not the cpu total: %+v, want zero", got)
	}
	if d := want.since(machineTime{busy: time.Second, steal: 100 * time.Millisecond}); d != (machineTime{busy: 500 * time.Millisecond, steal: 400 * time.Millisecond}) {
		t.Fatalf("since = %+v", d)
	}
}
