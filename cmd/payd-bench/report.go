package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// report is one run's results.
type report struct {
	StartedAt time.Time  `json:"started_at"`
	Clients   int        `json:"clients"`
	Duration  string     `json:"duration_per_scenario"`
	CPUs      int        `json:"cpus"`
	Databases []dbReport `json:"databases"`
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "payd-bench: %d clients, %s per scenario, %d CPUs\n", r.Clients, r.Duration, r.CPUs)
	for _, db := range r.Databases {
		fmt.Fprintf(w, "\n== %s (payd peak RSS %.1f MiB)\n", db.Database, db.PeakRSSMiB)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scenario\tper s\tp50 ms\tp99 ms\terrors\tpayd CPU %\tbench CPU %\tmachine CPU %\tsteal %\tCPU ms/req\tvs reference\t")
		for _, res := range db.Results {
			if res.Seconds > 0 {
				continue // a one-shot row: its line follows the table
			}
			vs := ""
			switch {
			case res.Reference != "" && res.RatioToRef > 0:
				vs = fmt.Sprintf("%.2f× %s", res.RatioToRef, res.Reference)
			case res.Reference != "" && res.P99RatioToRef > 0:
				vs = fmt.Sprintf("p99 %.2f× %s", res.P99RatioToRef, res.Reference)
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.3f\t%s\t\n", res.Name, res.PerSecond, res.P50ms, res.P99ms, res.Errors,
				res.PaydCPU, res.BenchCPU, res.MachineCPU, res.StealCPU, res.CPUPerRequest, vs)
		}
		for _, res := range db.References {
			p99 := ""
			if res.P99ms > 0 {
				p99 = fmt.Sprintf("%.2f", res.P99ms)
			}
			fmt.Fprintf(tw, "[ref] %s\t%.0f\t%.2f\t%s\t\t\t\t%.0f\t%.0f\t%.3f\t\t\n", res.Name, res.PerSecond, res.P50ms, p99, res.MachineCPU, res.StealCPU, res.CPUPerRequest)
		}
		tw.Flush()
		for _, res := range db.Results {
			if res.Seconds > 0 {
				fmt.Fprintf(w, "  %s: %d %s in %.2f s, peak RSS %.1f MiB (%s)\n", res.Name, res.Requests, res.Items, res.Seconds, res.PeakRSSMiB, res.Description)
			}
		}
		for _, res := range db.Results {
			if res.FirstError != "" {
				fmt.Fprintf(w, "  first error in %s: %s\n", res.Name, res.FirstError)
			}
		}
	}
}
