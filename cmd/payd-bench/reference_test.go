package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPgbenchLatencies(t *testing.T) {
	dir := t.TempDir()
	// client transaction time script epoch µs lag; a transaction skipped
	// for --latency-limit says so in place of its time.
	logs := map[string]string{
		"tx.100":   "0 1 2500 0 1795857160 306543 500\n1 1 12000 0 1795857160 311611 2000\n",
		"tx.100.1": "2 1 skipped 0 1795857160 312857 9000\n3 1 900 0 1795857160 312900 0\n",
	}
	for name, text := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pgbenchLatencies(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[time.Duration]bool{2 * time.Millisecond: true, 10 * time.Millisecond: true, 900 * time.Microsecond: true}
	if len(got) != len(want) {
		t.Fatalf("latencies %v, want the 3 transactions' times less their lag", got)
	}
	for _, d := range got {
		if !want[d] {
			t.Errorf("latency %v is not a transaction's time less its lag (want one of %v)", d, want)
		}
	}
	if _, err := pgbenchLatencies(t.TempDir()); err == nil {
		t.Error("a directory without a log gave no error")
	}
}

func TestCompareHalfPeakByP99(t *testing.T) {
	for _, c := range []struct{ db, ref string }{{"postgres", refSimple + atHalfPeak}, {"sqlite", refSQLite + atHalfPeak}} {
		rep := dbReport{Database: c.db,
			Results: []result{{Name: createRowName, PerSecond: 1000, P99ms: 20}, {Name: halfPeakRowName, PerSecond: 500, P99ms: 15}},
			References: []result{
				{Name: refSimple, PerSecond: 2000}, {Name: refSQLite, PerSecond: 4000},
				{Name: c.ref, PerSecond: 500, P99ms: 10},
			}}
		compare(&rep)
		peak, half := rep.Results[0], rep.Results[1]
		if half.Reference != c.ref || half.P99RatioToRef != 1.5 || half.RatioToRef != 0 {
			t.Errorf("%s: half-peak row compared as %q, p99 ratio %v, throughput ratio %v; want %q, 1.5, none",
				c.db, half.Reference, half.P99RatioToRef, half.RatioToRef, c.ref)
		}
		if peak.P99RatioToRef != 0 || peak.RatioToRef == 0 {
			t.Errorf("%s: peak row compared by p99 (%v) or not by throughput (%v)", c.db, peak.P99RatioToRef, peak.RatioToRef)
		}
	}
	if got := halfPeakRate(dbReport{Results: []result{{Name: createRowName, PerSecond: 900}}}); got != 450 {
		t.Errorf("halfPeakRate = %v, want 450", got)
	}
}
