package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// soakTarget is the database a soak runs on, and what the minute lines read
// of it beside payd.
type soakTarget struct {
	kind, dsn string
	// admin is a connection of the bench's own to the PostgreSQL server,
	// for pg_stat_activity and the schema's size; nil on SQLite.
	admin *sql.DB
	// appName is the application_name payd's connections carry, so that
	// pg_stat_activity counts them alone on a server that others share.
	appName string
	schema  string // PostgreSQL: payd's schema, whose tables are the size
	file    string // SQLite: the database file
}

// newSoakTarget makes a fresh database of kind db (freshDSN) whose
// PostgreSQL connections name themselves by application_name.
func newSoakTarget(s settings, db string) (*soakTarget, func(), error) {
	dsn, cleanup, err := freshDSN(s, db)
	if err != nil {
		return nil, nil, err
	}
	t := &soakTarget{kind: db, dsn: dsn}
	if file, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		t.file = file
		return t, cleanup, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	q := u.Query()
	t.schema, t.appName = q.Get("search_path"), "payd-soak-"+randomHex(4)
	q.Set("application_name", t.appName)
	u.RawQuery = q.Encode()
	t.dsn = u.String()
	if t.admin, err = sql.Open("pgx", s.pgDSN); err != nil {
		cleanup()
		return nil, nil, err
	}
	t.admin.SetMaxOpenConns(1)
	return t, func() { t.admin.Close(); cleanup() }, nil
}

// soakGauges are one minute line's readings besides latency.
type soakGauges struct {
	rssMiB                float64
	goroutines, poolConns int // from payd's /metrics; -1 when unread
	// heapMiB is Go's heap in use (go_memstats_heap_inuse_bytes): beside
	// the RSS it shows whether growth is Go objects held or memory outside
	// the Go heap (SQLite's page caches, in the driver's own allocator).
	heapMiB float64
	dbConns int     // pg_stat_activity's count of payd's; -1 on SQLite
	dbMiB   float64 // PostgreSQL: the schema's tables and indexes; SQLite: the database file
	walMiB  float64 // SQLite: the -wal and -shm files; -1 on PostgreSQL, whose WAL is the server's
	// load is the machine's one-minute load average: on a shared machine
	// it says how much of a minute's latency was others' work.
	load float64
}

// gauges reads the gauges of payd (pid, serving on base) and its database.
func (t *soakTarget) gauges(ctx context.Context, pid int, base string) soakGauges {
	g := soakGauges{rssMiB: currentRSS(pid), dbConns: -1, walMiB: -1, load: loadAverage()}
	g.goroutines, g.poolConns, g.heapMiB = paydMetrics(ctx, base)
	if t.admin == nil {
		g.dbMiB, g.walMiB = fileMiB(t.file), fileMiB(t.file+"-wal")+fileMiB(t.file+"-shm")
		return g
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// global lookup: pg_stat_activity is the server's, no merchant's.
	if t.admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, t.appName).Scan(&g.dbConns) != nil {
		g.dbConns = -1
	}
	var bytes int64
	t.admin.QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`, t.schema).Scan(&bytes)
	g.dbMiB = float64(bytes) / (1 << 20)
	return g
}

// fileMiB is a file's size in MiB, 0 when it is absent.
func fileMiB(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size()) / (1 << 20)
}

// loadAverage is the first figure of /proc/loadavg, 0 when unread.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

// maxMetricsBytes bounds what the bench reads of payd's /metrics.
const maxMetricsBytes = 4 << 20

// paydMetrics reads go_goroutines, payd_db_open_connections and
// go_memstats_heap_inuse_bytes (in MiB) from payd's Prometheus endpoint; -1
// for one it could not read.
func paydMetrics(ctx context.Context, base string) (goroutines, poolConns int, heapMiB float64) {
	goroutines, poolConns, heapMiB = -1, -1, -1
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(res.Body, maxMetricsBytes))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		switch {
		case err != nil:
		case name == "go_goroutines":
			goroutines = int(v)
		case name == "payd_db_open_connections":
			poolConns = int(v)
		case name == "go_memstats_heap_inuse_bytes":
			heapMiB = v / (1 << 20)
		}
	}
	return
}

// soakHeader names the columns of the minute lines.
const soakHeader = "minute   req/s  p50 ms  p99 ms  p99.9 ms  errors  clock moves  RSS MiB  heap MiB  goroutines  db conns  pool conns   db MiB  wal MiB  load"

// minuteLine is one line of the soak's output.
func minuteLine(label string, st windowStats, g soakGauges) string {
	dbConns, wal := "n/a", "n/a"
	if g.dbConns >= 0 {
		dbConns = strconv.Itoa(g.dbConns)
	}
	if g.walMiB >= 0 {
		wal = fmt.Sprintf("%.1f", g.walMiB)
	}
	return fmt.Sprintf("%-6s %7.0f %7.2f %7.2f %9.2f %7d %12d %8.1f %9.1f %11d %9s %11d %8.1f %8s %5.1f",
		label, st.perSecond, st.p50, st.p99, st.p999, st.errors, st.clockMoves, g.rssMiB, g.heapMiB, g.goroutines, dbConns, g.poolConns, g.dbMiB, wal, g.load)
}
