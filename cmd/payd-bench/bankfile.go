package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"payd/internal/payfile/aba"
	"payd/internal/ratelimit"
)

// bankFileTransfers is how many payout transactions the bank-file row puts
// in one cut-off's file (issue 47: under 5 s and 150 MiB on the 2-core
// machine), in payouts of bankFilePayoutSize.
const (
	bankFileTransfers  = 10_000
	bankFilePayoutSize = 1_000
)

// measureBankFile measures one cut-off of a bank-file rail: an aba rail of
// AUD bank payouts is set on a fresh database before payd serve starts (so
// that the serving process knows it from its first request), the demo
// merchant's AUD account pays bankFileTransfers transactions into it, and
// once all wait for the cut-off, payd bankfile cut builds the file and
// payd serve delivers it to the rail's dir: outbox. The row's time is from
// the cut's start until the file is in the outbox (delivery included: the
// serving process's Poll of a second at most); its peak RSS the cut's
// process, which builds the file, and the serving one's besides. The file
// is read back to check it holds every transfer.
func measureBankFile(ctx context.Context, s settings, bin, db string) (result, error) {
	dsn, cleanup, err := freshDSN(s, db)
	if err != nil {
		return result{}, err
	}
	defer cleanup()
	dir, err := os.MkdirTemp("", "payd-bench-rail-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	outbox := filepath.Join(dir, "out")
	for _, d := range []string{outbox, filepath.Join(dir, "in")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return result{}, err
		}
	}
	const railName = "bench-aba"
	// Operator commands never create a database: payd migrate makes it.
	if out, err := exec.CommandContext(ctx, bin, "migrate", "--db", dsn).CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("payd migrate: %v: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "rail", "set", "--db", dsn, "--name", railName, "--format", "aba", "--currency", "AUD",
		"--methods", "au_bank_aud", "--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000",
		"--originator-id", "301500", "--bank-abbrev", "CBA", "--cutoffs", "23:59", "--timezone", "Pacific/Kiritimati",
		"--outbox", "dir:"+outbox, "--inbox", "dir:"+filepath.Join(dir, "in"), "--actor", "payd-bench").CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("payd rail set: %v: %s", err, out)
	}
	p, err := startPayd(ctx, bin, dsn, "")
	if err != nil {
		return result{}, err
	}
	defer p.stop()
	if err := setLimits(ctx, bin, dsn, p.merchant, ratelimit.MaxRate); err != nil {
		return result{}, err
	}
	c := &client{base: p.base, app: p.apps["AUD"], http: &http.Client{}}
	if status, body, err := c.do(ctx, "POST", "/v1/simulate_deposit", map[string]any{"account_number": c.app.account, "amount": "100000"}, nil); expectStatus(status, 201, body, err) != nil {
		return result{}, fmt.Errorf("fund the AUD account: %d %s %v", status, body, err)
	}
	if status, body, err := c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": 0}, nil); expectStatus(status, 200, body, err) != nil {
		return result{}, fmt.Errorf("clear the deposit: %d %s %v", status, body, err)
	}
	txs := make([]any, bankFilePayoutSize)
	for i := range txs {
		txs[i] = map[string]any{"first_name": "Jane", "last_name": "Doe", "amount": "1.00", "external_id": fmt.Sprintf("tx-%d", i),
			"payout_method_params": map[string]any{"bsb": "062000", "account_number": "12345678", "account_name": "JANE DOE"}}
	}
	for i := range bankFileTransfers / bankFilePayoutSize {
		status, body, err := c.do(ctx, "POST", "/v2/payouts", map[string]any{"currency": "AUD", "payout_method_name": "au_bank_aud",
			"description": "bench", "external_id": fmt.Sprintf("batch-%d", i), "payout_transaction_details": txs}, nil)
		if err := expectStatus(status, 201, body, err); err != nil {
			return result{}, fmt.Errorf("payout %d: %w", i, err)
		}
	}
	// The clock's run hands the payouts to the rail: each transaction
	// waits for the cut-off.
	if status, body, err := c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": 0}, nil); expectStatus(status, 200, body, err) != nil {
		return result{}, fmt.Errorf("submit the payouts: %d %s %v", status, body, err)
	}
	if err := awaitWaiting(ctx, bin, dsn, railName, bankFileTransfers); err != nil {
		return result{}, err
	}

	started := time.Now()
	cut := exec.CommandContext(ctx, bin, "bankfile", "cut", "--db", dsn, "--rail", railName, "--json", "--actor", "payd-bench")
	out, err := cut.Output()
	if err != nil {
		return result{}, fmt.Errorf("payd bankfile cut: %v: %s", err, out)
	}
	cutSeconds := time.Since(started).Seconds()
	var made struct {
		File *string `json:"file"`
	}
	if err := json.Unmarshal(out, &made); err != nil || made.File == nil {
		return result{}, fmt.Errorf("payd bankfile cut made no file: %s", out)
	}
	cutRSS := float64(cut.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
	delivered := filepath.Join(outbox, *made.File)
	for {
		if _, err := os.Stat(delivered); err == nil {
			break
		}
		if time.Since(started) > time.Minute {
			return result{}, fmt.Errorf("the file %s was not delivered within a minute", *made.File)
		}
		select {
		case <-ctx.Done():
			return result{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	seconds := time.Since(started).Seconds()
	content, err := os.ReadFile(delivered)
	if err != nil {
		return result{}, err
	}
	file, err := aba.Read(content)
	if err != nil {
		return result{}, fmt.Errorf("the delivered file does not read back: %w", err)
	}
	res := result{Name: "bank-file cut-off", Items: "transfers", Requests: int64(len(file.Credits)), PerSecond: float64(len(file.Credits)) / seconds,
		Seconds: seconds, PeakRSSMiB: max(cutRSS, peakRSS(p.cmd.Process.Pid)),
		Description: fmt.Sprintf("payd bankfile cut of %d waiting AUD payout transactions into one ABA file (%d bytes), delivered by payd serve to a dir: outbox: %.2f s in all, the cut %.2f s; peak RSS of the cut's process %.1f MiB, of payd serve %.1f MiB",
			bankFileTransfers, len(content), seconds, cutSeconds, cutRSS, peakRSS(p.cmd.Process.Pid))}
	if len(file.Credits) != bankFileTransfers || file.Total() != bankFileTransfers*100 {
		res.Errors = 1
		res.FirstError = fmt.Sprintf("the file holds %d credits totalling %d cents, want %d of 100", len(file.Credits), file.Total(), bankFileTransfers)
	}
	return res, nil
}

// awaitWaiting waits, at most a minute, until want transfers wait on the
// rail, as payd rail list counts them.
func awaitWaiting(ctx context.Context, bin, dsn, railName string, want int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := exec.CommandContext(ctx, bin, "rail", "list", "--db", dsn, "--json").Output()
		if err != nil {
			return fmt.Errorf("payd rail list: %v", err)
		}
		var list struct {
			Records []struct {
				Name    string `json:"name"`
				Waiting int    `json:"waiting"`
			} `json:"records"`
		}
		if err := json.Unmarshal(out, &list); err != nil {
			return fmt.Errorf("payd rail list: %v: %s", err, out)
		}
		waiting := 0
		for _, r := range list.Records {
			if r.Name == railName {
				waiting = r.Waiting
			}
		}
		if waiting == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d transfers wait on rail %s after a minute", waiting, want, railName)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
