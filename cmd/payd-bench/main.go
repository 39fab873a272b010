// Command payd-bench measures payd: it builds and starts payd itself, drives
// it over HTTP with concurrent clients for a fixed time per scenario, and
// prints a table (and writes a JSON file) with throughput, latency, payd's
// CPU and peak memory, beside the reference limits of the same machine:
// pgbench against the same PostgreSQL server, and a bare SQLite insert loop
// with payd's durability settings.
//
//	go run ./cmd/payd-bench --quick
//	go run ./cmd/payd-bench --db both --clients 8 --duration 20s --pg postgres://postgres@127.0.0.1:5432/test
//	go run ./cmd/payd-bench --soak 30m --db sqlite
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// settings of one run.
type settings struct {
	dbs      []string
	clients  int
	duration time.Duration
	pgDSN    string
	citusDSN string // a Citus coordinator; empty leaves Citus out
	out      string
	quick    bool
	// profileDir, when set, receives a CPU profile of payd per scenario.
	profileDir string
	// only, when not empty, names the scenario groups to run (--only).
	only map[string]bool
	// soakRate, when set, is the rate the soak offers instead of half its
	// peak (--soak-rate), so that two builds' soaks offer the same load.
	soakRate float64
}

// scenarioGroups are the names --only takes, in the order they run.
var scenarioGroups = []string{"create", "receipt", "webhooks", "payouts", "noisy", "events", "reads", "spread", "references", "bankfile", "feed"}

// runs reports whether the scenario group name is to run on db. Without
// --only, Citus runs the spread group alone: its row is there to show what
// distributing by merchant costs beside PostgreSQL.
func (s settings) runs(db, name string) bool {
	if len(s.only) == 0 && db == "citus" {
		return name == "spread"
	}
	return len(s.only) == 0 || s.only[name]
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == noisyChild {
		os.Exit(runNoisyChild())
	}
	var s settings
	db := flag.String("db", "both", "comma-separated databases: sqlite, postgres, citus; both is sqlite,postgres (and citus when --citus is set)")
	flag.IntVar(&s.clients, "clients", 8, "concurrent clients")
	flag.DurationVar(&s.duration, "duration", 15*time.Second, "time per scenario")
	flag.StringVar(&s.pgDSN, "pg", envOr("PAYD_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server to use")
	flag.StringVar(&s.citusDSN, "citus", os.Getenv("PAYD_TEST_CITUS_DSN"), "Citus coordinator to use (.ci/citus-up starts one); empty leaves Citus out")
	flag.StringVar(&s.out, "out", "bench-results/bench.json", "JSON results file")
	flag.BoolVar(&s.quick, "quick", false, "short run (about a minute in all)")
	soak := flag.Duration("soak", 0, "instead of the scenarios, soak payd for this long (e.g. 30m, at most 24h) under a mixed load at half its peak, print a line each minute and a verdict, and exit 1 when it fails")
	flag.Float64Var(&s.soakRate, "soak-rate", 0, "with --soak, offer this many requests a second instead of half the peak (to compare two builds under the same load)")
	flag.StringVar(&s.profileDir, "profile", "", "write a CPU profile of payd for each scenario into this directory (go tool pprof)")
	only := flag.String("only", "", "comma-separated scenario groups to run, for comparing two builds ("+strings.Join(scenarioGroups, ", ")+
		"); receipt runs create first, for its payins; empty runs all")
	flag.Parse()
	if *only != "" {
		s.only = map[string]bool{}
		for _, name := range strings.Split(*only, ",") {
			if !slices.Contains(scenarioGroups, name) {
				fmt.Fprintf(os.Stderr, "payd-bench: --only: no scenario group %q (%s)\n", name, strings.Join(scenarioGroups, ", "))
				os.Exit(2)
			}
			s.only[name] = true
		}
		if s.only["receipt"] {
			s.only["create"] = true
		}
	}
	if s.quick {
		s.duration = 4 * time.Second
	}
	s.dbs = strings.Split(*db, ",")
	if *db == "both" {
		s.dbs = []string{"sqlite", "postgres"}
		if s.citusDSN != "" {
			s.dbs = append(s.dbs, "citus")
		}
	}
	if *soak != 0 && *db == "both" {
		s.dbs = []string{"sqlite", "postgres"}
	}
	if slices.Contains(s.dbs, "citus") && s.citusDSN == "" {
		fmt.Fprintln(os.Stderr, "payd-bench: --db citus needs --citus (or PAYD_TEST_CITUS_DSN)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *soak != 0 {
		os.Exit(soakMain(ctx, s, *soak))
	}
	report, err := run(ctx, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "payd-bench:", err)
		os.Exit(1)
	}
	report.print(os.Stdout)
	if err := os.MkdirAll(filepath.Dir(s.out), 0o755); err == nil {
		b, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(s.out, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "payd-bench:", err)
		} else {
			fmt.Printf("\nresults written to %s\n", s.out)
		}
	}
}

// soakMain runs the soak on s's databases (SQLite and PostgreSQL) and
// returns the exit code: 0 when every verdict passed, 1 when one failed or
// the soak could not run, 2 for a bad flag.
func soakMain(ctx context.Context, s settings, d time.Duration) int {
	if d <= 0 || d > maxSoak {
		fmt.Fprintf(os.Stderr, "payd-bench: --soak: a duration from 1s to %s\n", maxSoak)
		return 2
	}
	if slices.Contains(s.dbs, "citus") {
		fmt.Fprintln(os.Stderr, "payd-bench: --soak runs on sqlite and postgres")
		return 2
	}
	passed, err := runSoak(ctx, s, d, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "payd-bench:", err)
		return 1
	}
	if !passed {
		return 1
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run measures every scenario on every database.
func run(ctx context.Context, s settings) (*report, error) {
	bin, cleanup, err := buildPayd()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &report{Clients: s.clients, Duration: s.duration.String(), CPUs: numCPU(), StartedAt: time.Now().UTC()}
	for _, db := range s.dbs {
		dbRep, err := runDatabase(ctx, s, bin, db)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", db, err)
		}
		rep.Databases = append(rep.Databases, dbRep)
	}
	return rep, nil
}
