package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The supported PostgreSQL topology is several payd processes on one
// primary with a synchronous standby, managed by pg_auto_failover, and payd
// given both hosts with target_session_attrs=read-write. This test builds
// such a formation on local ports (a monitor, a primary, a synchronous
// secondary), drives payd's load, kills the primary node outright
// (its pg_auto_failover keeper and its postgres, SIGKILL) and checks that
// payd writes again within 30 seconds, by itself, and that nothing
// acknowledged was lost or made twice.

// failoverWithin is how long payd may take to write again after the primary dies.
const failoverWithin = 30 * time.Second

// TestFailoverPostgres kills the primary of a pg_auto_failover formation
// under load: the standby is promoted, payd reconnects to it, every
// acknowledged write exists exactly once, the clients' history passes its
// checks (histories_test.go), every committed webhook event is delivered
// and the ledger verifies.
func TestFailoverPostgres(t *testing.T) {
	// Not parallel: it kills processes at chosen moments and waits for them
	// to restart, so it runs alone, before the parallel tests.
	if testing.Short() {
		t.Skip("builds a PostgreSQL formation")
	}
	f := startFormation(t)
	dsn := f.dsn()
	node := startProcess(t, dsn, powerLossSchedule...)
	tr, m := newTrial(t, 1, dsn, node)
	client := tr.p

	stop := make(chan struct{})
	load := powerLoad(client.sendFor, client, m, tr.aud, tr.hooks.URL, tr.acks, stop)
	waitUntil(t, "a first acknowledged refund", 30*time.Second, func() bool { return tr.acks.refunds() > 0 })
	time.Sleep(rand.N(1000 * time.Millisecond)) // the kill point: a random moment of the load
	before := tr.acks.String()
	f.killPrimary()
	killed := time.Now()

	// A write the load did not make: it is answered once payd reaches the promoted standby.
	var probes int
	waitUntil(t, "payd to write again after the primary died", failoverWithin, func() bool {
		probes++
		key := fmt.Sprintf("failover-probe-%d", probes)
		tr.acks.note(func() { tr.acks.sentDeposits[key] = true })
		res, err := client.send(depositCreate(&m, key))
		if err == nil && res.Status == 201 {
			tr.acks.note(func() { tr.acks.deposits[key] = str(res.JSON(t), "uuid") })
			return true
		}
		// Until then, payd says the database is away for a moment: 503 with
		// Retry-After, never a 500.
		if err == nil && (res.Status != 503 || res.Header.Get("Retry-After") == "") {
			t.Errorf("during the failover: %d %s, want 503 with Retry-After; payd logged:\n%s", res.Status, res.Body, node.logFor(res.Header.Get("X-Request-Id")))
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
	recovered := time.Since(killed)
	time.Sleep(time.Second) // the load runs on the new primary for a moment
	close(stop)
	load.Wait()
	t.Logf("before the kill: %s; payd wrote again %s after the primary died (%d probes); in all: %s",
		before, recovered.Round(time.Millisecond), probes, tr.acks)
	if state := f.states(); !strings.Contains(state, "node_2 primary") && !strings.Contains(state, "node_2 wait_primary") {
		t.Errorf("the standby was not promoted: %s", state)
	}
	tr.checkWrites(t, m)
	tr.checkPayouts(t)
	tr.hist.check(t, tr.p)
	tr.checkWebhooks(t)
}

// formation is a pg_auto_failover formation: a monitor and two data nodes.
type formation struct {
	t       *testing.T
	bin     string              // directory of pg_ctl and postgres
	autoctl string              // pg_autoctl
	as      *syscall.Credential // the postgres user when the test runs as root
	dir     string
	env     []string
	monitor *formationNode
	nodes   []*formationNode
}

// formationNode is one pg_autoctl process and the postgres it runs.
type formationNode struct {
	name   string
	pgdata string
	port   int
	cmd    *exec.Cmd
	log    string
}

// needAutoctl returns pg_autoctl (Debian's postgresql-15-auto-failover).
// Missing, the test is skipped, or fails on CI, which installs it.
func needAutoctl(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("pg_autoctl"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI runs the failover test, but pg_autoctl is not installed (Debian's postgresql-15-auto-failover)")
	}
	t.Skip("pg_autoctl is not installed (Debian's postgresql-15-auto-failover): no failover test")
	return ""
}

// startFormation starts the monitor, then the primary, then the secondary,
// and returns once the secondary has caught up and replicates synchronously.
func startFormation(t *testing.T) *formation {
	t.Helper()
	f := &formation{t: t, autoctl: needAutoctl(t), bin: needPostgresBinaries(t), dir: powerLossDir(t)}
	if os.Geteuid() == 0 {
		f.as = postgresUser(t)
		if err := os.Chown(f.dir, int(f.as.Uid), int(f.as.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	// pg_autoctl keeps its state under the XDG directories: one set per formation.
	f.env = []string{"PATH=" + f.bin + ":/usr/bin:/bin", "HOME=" + f.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(f.dir, "config"), "XDG_DATA_HOME=" + filepath.Join(f.dir, "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(f.dir, "run")}
	t.Cleanup(f.stop)

	f.monitor = f.start("monitor", "create", "monitor", "--auth", "trust")
	mon := f.open(f.monitor, "pg_auto_failover")
	// Detect a dead primary in seconds rather than the default 20 s.
	for _, set := range []string{
		"pgautofailover.health_check_period = 1000", "pgautofailover.health_check_timeout = 1000",
		"pgautofailover.health_check_max_retries = 1", "pgautofailover.health_check_retry_delay = 500",
		"pgautofailover.node_considered_unhealthy_timeout = 3000", "pgautofailover.primary_demote_timeout = 3000",
	} {
		if _, err := mon.Exec("ALTER SYSTEM SET " + set); err != nil {
			t.Fatalf("monitor: %s: %v", set, err)
		}
	}
	if _, err := mon.Exec("SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	monitorURI := fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.monitor.port)
	for i := 1; i <= 2; i++ {
		f.nodes = append(f.nodes, f.start(fmt.Sprintf("node_%d", i), "create", "postgres", "--monitor", monitorURI,
			"--auth", "trust", "--dbname", "test", "--name", fmt.Sprintf("node_%d", i)))
		if i == 1 {
			f.waitFor("node_1 to be the primary", 120*time.Second, func() bool {
				if f.reported(mon, "node_1", "single", "wait_primary", "primary") {
					return true
				}
				time.Sleep(200 * time.Millisecond)
				return false
			})
		}
	}
	primary := f.open(f.nodes[0], "test")
	// The standby's base backup waits for a checkpoint: ask for one rather
	// than wait for the next timed one.
	f.waitFor("node_2 to be a synchronous secondary", 180*time.Second, func() bool {
		primary.Exec("CHECKPOINT")
		if f.reported(mon, "node_2", "secondary") && f.reported(mon, "node_1", "primary") {
			return true
		}
		time.Sleep(500 * time.Millisecond)
		return false
	})
	return f
}

// waitFor waits until cond holds, and fails the test with the nodes' logs
// when it does not within the time.
func (f *formation) waitFor(what string, within time.Duration, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, n := range append([]*formationNode{f.monitor}, f.nodes...) {
				fmt.Fprintf(&logs, "--- %s\n%s\n", n.name, tail(n.log))
			}
			f.t.Fatalf("timed out after %s waiting for %s; %s\n%s", within, what, f.states(), logs.String())
		}
	}
}

// start runs one `pg_autoctl create … --run` on a free port, in a process
// group of its own (so that it and its postgres can be killed together).
func (f *formation) start(name string, args ...string) *formationNode {
	f.t.Helper()
	n := &formationNode{name: name, pgdata: filepath.Join(f.dir, name), port: freePort(f.t), log: filepath.Join(f.dir, name+".log")}
	args = append(args, "--pgdata", n.pgdata, "--pgport", strconv.Itoa(n.port), "--pgctl", filepath.Join(f.bin, "pg_ctl"),
		"--hostname", "127.0.0.1", "--no-ssl", "--run")
	logFile, err := os.Create(n.log)
	if err != nil {
		f.t.Fatal(err)
	}
	defer logFile.Close()
	n.cmd = exec.Command(f.autoctl, args...)
	n.cmd.Env, n.cmd.Dir = f.env, f.dir
	n.cmd.Stdout, n.cmd.Stderr = logFile, logFile
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: f.as, Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		f.t.Fatalf("start %s: %v", name, err)
	}
	go n.cmd.Wait()
	return n
}

// open connects to a node's database once it takes connections.
func (f *formation) open(n *formationNode, database string) *sql.DB {
	f.t.Helper()
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", n.port, database))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	waitUntil(f.t, n.name+" to take connections", 120*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if db.PingContext(ctx) == nil {
			return true
		}
		if n.cmd.ProcessState != nil {
			f.t.Fatalf("%s exited:\n%s", n.name, tail(n.log))
		}
		time.Sleep(200 * time.Millisecond)
		return false
	})
	return db
}

// reported tells whether the monitor last heard the node report one of the states.
func (f *formation) reported(mon *sql.DB, name string, states ...string) bool {
	var state string
	if err := mon.QueryRow(`SELECT reportedstate FROM pgautofailover.node WHERE nodename = $1`, name).Scan(&state); err != nil {
		return false
	}
	for _, s := range states {
		if state == s {
			return true
		}
	}
	return false
}

// states lists each node's reported state, for the test's messages.
func (f *formation) states() string {
	mon := f.open(f.monitor, "pg_auto_failover")
	rows, err := mon.Query(`SELECT nodename, reportedstate FROM pgautofailover.node ORDER BY nodename`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name, state string
		rows.Scan(&name, &state)
		out = append(out, name+" "+state)
	}
	return strings.Join(out, ", ")
}

// dsn names both data nodes; payd connects to whichever takes writes.
func (f *formation) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/test?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		f.nodes[0].port, f.nodes[1].port)
}

// killPrimary kills node_1 as a machine failure would: its keeper first (so
// nothing restarts its postgres), then the postmaster and every backend.
func (f *formation) killPrimary() {
	f.t.Helper()
	n := f.nodes[0]
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	raw, err := os.ReadFile(filepath.Join(n.pgdata, "postmaster.pid"))
	if err != nil {
		f.t.Fatalf("read node_1's postmaster.pid: %v", err)
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		f.t.Fatalf("node_1's postmaster.pid: %v", err)
	}
	syscall.Kill(pm, syscall.SIGSTOP)
	procs := append(childrenOf(pm), pm)
	for _, pid := range procs {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitUntil(f.t, "node_1's processes gone", 30*time.Second, func() bool {
		for _, pid := range procs {
			if running(pid) {
				return false
			}
		}
		return true
	})
}

// stop ends every node: the keepers stop their postgres on SIGTERM; what
// is left after that is killed.
func (f *formation) stop() {
	nodes := append([]*formationNode{f.monitor}, f.nodes...)
	for _, n := range nodes {
		if n != nil && n.cmd.Process != nil {
			syscall.Kill(-n.cmd.Process.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range nodes {
		if n == nil {
			continue
		}
		for running(n.cmd.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		if raw, err := os.ReadFile(filepath.Join(n.pgdata, "postmaster.pid")); err == nil {
			if pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])); err == nil {
				syscall.Kill(pm, syscall.SIGKILL)
			}
		}
	}
}

// tail is the end of a log file.
func tail(path string) string {
	raw, _ := os.ReadFile(path)
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
	}
	return string(raw)
}
