package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"payd/internal/feed/feedtest"
	"payd/internal/money"
)

// feedScale is the bank-feed row's statement (issue 48): entries booked
// credits, half of them naming a pending payin of one of merchants
// merchants, applied in one pass (target: 50,000 entries of 1,000
// merchants under 30 s and 200 MiB on PostgreSQL on the 2-core machine;
// --quick takes a tenth).
type feedScale struct{ entries, merchants int }

func (f feedScale) matching() int { return f.entries / 2 }

func feedScaleOf(s settings) feedScale {
	if s.quick {
		return feedScale{entries: 5_000, merchants: 100}
	}
	return feedScale{entries: 50_000, merchants: 1_000}
}

// feedAccount is the bench feed's account at the bank.
const feedAccount = "987654321"

// measureFeed measures payd feed import of one large statement: on a fresh
// database, the scale's merchants (payd merchant create) each create
// their share of its matching QR payins through payd serve, and a camt.053
// of its entries (every other one naming a payin's uuid in its
// remittance text, for its total; the rest naming nothing of payd's) is
// imported by hand into an IDR feed, with payd serve stopped. The row's
// time is the import process's, its peak RSS the import's; the answer must count every
// payin received and every other entry an exception.
func measureFeed(ctx context.Context, s settings, bin, db string) (result, error) {
	dsn, cleanup, err := freshDSN(s, db)
	if err != nil {
		return result{}, err
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "payd-bench-feed-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.CommandContext(ctx, bin, "migrate", "--db", dsn).CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("payd migrate: %v: %s", err, out)
	}
	const feedName = "bench-idr"
	if out, err := exec.CommandContext(ctx, bin, "feed", "set", "--db", dsn, "--name", feedName, "--currency", "IDR", "--account", feedAccount,
		"--inbox", "dir:"+filepath.Join(dir, "inbox"), "--actor", "payd-bench").CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("payd feed set: %v: %s", err, out)
	}
	p, err := startPayd(ctx, bin, dsn, "")
	if err != nil {
		return result{}, err
	}
	defer p.stop()
	scale := feedScaleOf(s)
	apps, err := createMerchants(ctx, bin, dsn, scale.merchants)
	if err != nil {
		return result{}, err
	}
	payins, err := feedPayins(ctx, s, p.base, apps, scale.matching())
	if err != nil {
		return result{}, err
	}
	// The import is measured alone: payd serve's workers would clear the
	// received payins meanwhile (a job each), beside it on the same cores.
	p.stop()
	file := filepath.Join(dir, "statement.xml")
	content := feedtest.Camt053(feedStatement(payins))
	if err := os.WriteFile(file, content, 0o644); err != nil {
		return result{}, err
	}

	started := time.Now()
	imp := exec.CommandContext(ctx, bin, "feed", "import", "--db", dsn, "--name", feedName, "--json", "--actor", "payd-bench", file)
	out, err := imp.Output()
	if err != nil {
		return result{}, fmt.Errorf("payd feed import: %v: %s", err, out)
	}
	seconds := time.Since(started).Seconds()
	rss := float64(imp.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	cpu := (imp.ProcessState.UserTime() + imp.ProcessState.SystemTime()).Seconds()
	var got struct {
		Status           string
		Entries, Applied int
		Exceptions       int
		Reason           string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return result{}, fmt.Errorf("payd feed import said: %v: %s", err, out)
	}
	res := result{Name: "bank-feed import", Items: "entries", Requests: int64(got.Entries), PerSecond: float64(got.Entries) / seconds, Seconds: seconds, PeakRSSMiB: rss,
		Description: fmt.Sprintf("payd feed import of one camt.053 (%d bytes) of %d booked IDR credits, %d of them naming a pending payin of %d merchants, the rest no record of payd's: %.2f s (the import's CPU %.2f s), peak RSS %.1f MiB",
			len(content), scale.entries, scale.matching(), scale.merchants, seconds, cpu, rss)}
	if want := scale.matching(); got.Status != "applied" || got.Entries != scale.entries || got.Applied != want || got.Exceptions != scale.entries-want {
		res.Errors = 1
		res.FirstError = fmt.Sprintf("the import answered %s with %d entries, %d applied, %d exceptions (%s); want applied, %d, %d, %d",
			got.Status, got.Entries, got.Applied, got.Exceptions, got.Reason, scale.entries, want, scale.entries-want)
	}
	return res, nil
}

// feedPayin is a pending payin a statement's credit names.
type feedPayin struct {
	uuid       string
	totalMinor int64
}

// feedPayins creates n QR payins, the apps' in turn, with s.clients
// clients, and returns them.
func feedPayins(ctx context.Context, s settings, base string, apps []app, n int) ([]feedPayin, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients * 2}}
	idr := money.MustLookup("IDR")
	out := make([]feedPayin, n)
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range s.clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				c := &client{base: base, app: apps[i%len(apps)], http: hc}
				status, body, err := c.do(ctx, "POST", "/v2/payins", map[string]any{"currency": "IDR", "amount": 100000 + i%1000,
					"payin_method_name": "id_bank_qris_idr", "external_id": fmt.Sprintf("feed-%d", i)}, nil)
				var made struct{ UUID, Total string }
				if err == nil {
					err = expectStatus(status, 201, body, err)
				}
				if err == nil {
					err = json.Unmarshal(body, &made)
				}
				var total int64
				if err == nil {
					total, _, err = money.Parse(made.Total, idr)
				}
				if err != nil {
					once.Do(func() { first = fmt.Errorf("payin %d: %w", i, err) })
					return
				}
				out[i] = feedPayin{uuid: made.UUID, totalMinor: total}
			}
		})
	}
	wg.Wait()
	return out, first
}

// feedStatement is the statement of the feed's account: a credit for each
// payin's total naming its uuid, each followed by a credit naming nothing
// of payd's.
func feedStatement(payins []feedPayin) feedtest.File {
	f := feedtest.File{MsgID: "BENCH-STMT", Account: feedAccount, Currency: "IDR", Date: "2026-03-02"}
	for i, p := range payins {
		f.Entries = append(f.Entries,
			feedtest.Entry{Key: fmt.Sprintf("BNCH%08dP", i), AmountMinor: p.totalMinor, Remittance: "ORDER " + p.uuid, Payer: "BUDI SANTOSO"},
			feedtest.Entry{Key: fmt.Sprintf("BNCH%08dX", i), AmountMinor: 123400, Remittance: fmt.Sprintf("INVOICE %d TOKO MAJU", i), Payer: "SITI RAHAYU"})
	}
	return f
}
