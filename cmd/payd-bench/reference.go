package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

// The names of the rows compare matches: payd's creates and receipts, and
// the reference rows they are measured against.
const (
	createRowName   = "payin create"
	halfPeakRowName = createRowName + atHalfPeak
	receiptRowName  = "payin receipt (hot account)"
	refSQLite       = "sqlite bare insert loop"
	refTPCB         = "pgbench tpcb-like"
	refSimple       = "pgbench -N"
	atHalfPeak      = " @ half peak"
)

// references measures the machine's own limits for the database. halfRate,
// when not 0, is the rate payd's creates were offered at half their peak:
// the reference that writes the most like a create is then offered the
// same rate, so that payd's latency there has the machine's own beside it
// (a durable commit waits for the disk, whose slow flushes set a floor
// under any p99).
func references(ctx context.Context, s settings, db, dsn string, halfRate float64) ([]result, error) {
	if db == "sqlite" {
		full, err := sqliteInsertLoop(ctx, s.duration, 0)
		if err != nil {
			return nil, err
		}
		out := []result{full}
		if halfRate > 0 {
			half, err := sqliteInsertLoop(ctx, s.duration, halfRate)
			if err != nil {
				return nil, err
			}
			half.Name += atHalfPeak
			half.Description = fmt.Sprintf("the bare insert loop offered %.0f/s, payd's half-peak create rate", halfRate)
			out = append(out, half)
		}
		return out, nil
	}
	type mode struct {
		name, flag, what string
		rate             float64
	}
	modes := []mode{
		{refTPCB, "", "pgbench default transaction (3 updates, 1 select, 1 insert)", 0},
		{refSimple, "-N", "pgbench simple-update (skips the hot branch and teller updates)", 0},
	}
	if halfRate > 0 {
		modes = append(modes, mode{refSimple + atHalfPeak, "-N",
			fmt.Sprintf("pgbench -N offered %.0f/s, payd's half-peak create rate; latency from each transaction's start", halfRate), halfRate})
	}
	var out []result
	for _, m := range modes {
		r, err := pgbench(ctx, s, m.flag, m.rate)
		if err != nil {
			return nil, err
		}
		r.Name, r.Description = m.name, m.what
		out = append(out, r)
	}
	return out, nil
}

// sqliteInsertLoop commits one-row insert transactions on one connection with
// payd's settings (WAL, synchronous=NORMAL and the log flushed with
// fdatasync after each commit) for d: as fast as it goes, or offered rate
// transactions a second when rate is not 0.
func sqliteInsertLoop(ctx context.Context, d time.Duration, rate float64) (result, error) {
	dir, err := os.MkdirTemp("", "payd-bench-ref-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+dir+"/ref.db?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL, at BIGINT NOT NULL)`); err != nil {
		return result{}, err
	}
	wal, err := os.Open(dir + "/ref.db-wal")
	if err != nil {
		return result{}, err
	}
	defer wal.Close()
	return drivePaced(ctx, refSQLite, 1, d, os.Getpid(), rate, func(ctx context.Context, _, i int) (bool, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		// The bare loop's own table t belongs to no merchant (it spans merchants).
		if _, err := tx.Exec(`INSERT INTO t (v, at) VALUES ($1, $2)`, "payin", time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return false, err
		}
		if err := tx.Commit(); err != nil {
			return false, err
		}
		return false, fdatasync(wal)
	}), nil
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)
var latencyLine = regexp.MustCompile(`latency average = ([0-9.]+) ms`)

// pgbench runs pgbench against the same server in a scratch database, made
// afresh unless rate is set: then pgbench is offered rate transactions a
// second right after the run before it, as payd's half-peak row follows its
// peak, and the latencies come from pgbench's log of every transaction.
func pgbench(ctx context.Context, s settings, flag string, rate float64) (result, error) {
	u, err := url.Parse(s.pgDSN)
	if err != nil {
		return result{}, err
	}
	admin, err := sql.Open("pgx", s.pgDSN)
	if err != nil {
		return result{}, err
	}
	defer admin.Close()
	admin.Exec("CREATE DATABASE payd_pgbench")
	u.Path = "/payd_pgbench"
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	conn := u.String()
	if rate <= 0 {
		if out, err := exec.CommandContext(ctx, "pgbench", "-i", "-q", "-s", "10", conn).CombinedOutput(); err != nil {
			return result{}, fmt.Errorf("pgbench -i: %v\n%s", err, out)
		}
	}
	args := []string{"-c", strconv.Itoa(s.clients), "-j", "2", "-T", strconv.Itoa(max(1, int(s.duration.Seconds())))}
	if flag != "" {
		args = append(args, flag)
	}
	logDir := ""
	if rate > 0 {
		if logDir, err = os.MkdirTemp("", "payd-bench-pgbench-"); err != nil {
			return result{}, err
		}
		defer os.RemoveAll(logDir)
		args = append(args, "-R", strconv.FormatFloat(rate, 'f', 0, 64), "-l", "--log-prefix", filepath.Join(logDir, "tx"))
	}
	machineBefore, started := machineCPU(), time.Now()
	out, err := exec.CommandContext(ctx, "pgbench", append(args, conn)...).CombinedOutput()
	machine, took := machineCPU().since(machineBefore), time.Since(started)
	if err != nil {
		return result{}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := tpsLine.FindStringSubmatch(string(out))
	if m == nil {
		return result{}, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(m[1], 64)
	r := result{PerSecond: tps}
	setMachineCPU(&r, machine, took, tps*took.Seconds())
	if logDir != "" {
		latencies, err := pgbenchLatencies(logDir)
		if err != nil {
			return result{}, err
		}
		r.Requests = int64(len(latencies))
		r.P50ms, r.P99ms = percentile(latencies, 0.50), percentile(latencies, 0.99)
		return r, nil
	}
	if l := latencyLine.FindStringSubmatch(string(out)); l != nil {
		r.P50ms, _ = strconv.ParseFloat(l[1], 64) // pgbench reports the mean, not the median
		r.Reference = "p50_ms is pgbench's mean latency"
	}
	return r, nil
}

// pgbenchLatencies reads the per-transaction logs pgbench -l -R wrote into
// dir. A line is "client transaction time script epoch µs lag": time runs
// from the transaction's scheduled start, so the lag behind its schedule is
// taken off, to measure from its actual start as payd's rows do.
func pgbenchLatencies(dir string) ([]time.Duration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "tx.*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log in %s", dir)
	}
	slices.Sort(files)
	var out []time.Duration
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 7 {
				continue
			}
			total, err1 := strconv.ParseInt(fields[2], 10, 64)
			lag, err2 := strconv.ParseInt(fields[6], 10, 64)
			if err1 != nil || err2 != nil { // "skipped", or not a transaction line
				continue
			}
			out = append(out, time.Duration(total-lag)*time.Microsecond)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pgbench's transaction log in %s has no transaction", dir)
	}
	return out, nil
}

// compare sets each payd result's ratio to the reference the issue names:
// throughput for the peak rows, p99 latency for the half-peak row.
func compare(rep *dbReport) {
	ref := func(name string) (result, bool) {
		for _, r := range rep.References {
			if r.Name == name {
				return r, true
			}
		}
		return result{}, false
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		var name string
		switch {
		case rep.Database == "sqlite" && (r.Name == createRowName || r.Name == receiptRowName):
			name = refSQLite
		case rep.Database == "sqlite" && r.Name == halfPeakRowName:
			name = refSQLite + atHalfPeak
		case r.Name == createRowName:
			name = refSimple
		case r.Name == halfPeakRowName:
			name = refSimple + atHalfPeak
		case r.Name == receiptRowName:
			name = refTPCB
		}
		v, ok := ref(name)
		switch {
		case !ok:
		case r.Name == halfPeakRowName && v.P99ms > 0:
			r.Reference, r.P99RatioToRef = name, r.P99ms/v.P99ms
		case r.Name != halfPeakRowName && v.PerSecond > 0:
			r.Reference, r.RatioToRef = name, r.PerSecond/v.PerSecond
		}
	}
}
