package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	_ "modernc.org/sqlite"
)

// references measures the machine's own limits for the database.
func references(ctx context.Context, s settings, db, dsn string) ([]result, error) {
	if db == "sqlite" {
		r, err := sqliteInsertLoop(ctx, s.duration)
		if err != nil {
			return nil, err
		}
		return []result{r}, nil
	}
	var out []result
	for _, mode := range []struct{ name, flag, what string }{
		{"pgbench tpcb-like", "", "pgbench default transaction (3 updates, 1 select, 1 insert)"},
		{"pgbench -N", "-N", "pgbench simple-update (skips the hot branch and teller updates)"},
	} {
		r, err := pgbench(ctx, s, mode.flag)
		if err != nil {
			return nil, err
		}
		r.Name, r.Description = mode.name, mode.what
		out = append(out, r)
	}
	return out, nil
}

// sqliteInsertLoop commits one-row insert transactions on one connection with
// payd's settings (WAL, synchronous=FULL) for d.
func sqliteInsertLoop(ctx context.Context, d time.Duration) (result, error) {
	dir, err := os.MkdirTemp("", "payd-bench-ref-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+dir+"/ref.db?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL, at BIGINT NOT NULL)`); err != nil {
		return result{}, err
	}
	return drive(ctx, "sqlite bare insert loop", 1, d, os.Getpid(), func(ctx context.Context, _, i int) (bool, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		if _, err := tx.Exec(`INSERT INTO t (v, at) VALUES ($1, $2)`, "payin", time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return false, err
		}
		return false, tx.Commit()
	}), nil
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)
var latencyLine = regexp.MustCompile(`latency average = ([0-9.]+) ms`)

// pgbench runs pgbench against the same server in a scratch database.
func pgbench(ctx context.Context, s settings, flag string) (result, error) {
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
	if out, err := exec.CommandContext(ctx, "pgbench", "-i", "-q", "-s", "10", conn).CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("pgbench -i: %v\n%s", err, out)
	}
	args := []string{"-c", strconv.Itoa(s.clients), "-j", "2", "-T", strconv.Itoa(max(1, int(s.duration.Seconds())))}
	if flag != "" {
		args = append(args, flag)
	}
	out, err := exec.CommandContext(ctx, "pgbench", append(args, conn)...).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := tpsLine.FindStringSubmatch(string(out))
	if m == nil {
		return result{}, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(m[1], 64)
	r := result{PerSecond: tps}
	if l := latencyLine.FindStringSubmatch(string(out)); l != nil {
		r.P50ms, _ = strconv.ParseFloat(l[1], 64) // pgbench reports the mean, not the median
		r.Reference = "p50_ms is pgbench's mean latency"
	}
	return r, nil
}

// compare sets each payd result's ratio to the reference the issue names.
func compare(rep *dbReport) {
	ref := func(name string) float64 {
		for _, r := range rep.References {
			if r.Name == name {
				return r.PerSecond
			}
		}
		return 0
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		var name string
		switch {
		case rep.Database == "sqlite" && (r.Name == "payin create" || r.Name == "payin receipt (hot account)"):
			name = "sqlite bare insert loop"
		case r.Name == "payin create":
			name = "pgbench -N"
		case r.Name == "payin receipt (hot account)":
			name = "pgbench tpcb-like"
		}
		if v := ref(name); v > 0 {
			r.Reference, r.RatioToRef = name, r.PerSecond/v
		}
	}
}
