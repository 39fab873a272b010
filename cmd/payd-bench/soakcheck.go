package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // the merchants' time zone, wherever the bench runs
)

// The checks after the soak's load: every acknowledged write read back, the
// jobs its clock moves should have run, and the ledger's invariants.

// readBack reads every acknowledged payin and payout back by its uuid, from
// clients at a time, and checks its external id and that its status agrees
// with what the client was told.
func (x *soakMix) readBack(ctx context.Context, clients int) (checked, missing int, first string) {
	x.acked.mu.Lock()
	var checks []func(context.Context) error
	for uuid, a := range x.acked.payins {
		checks = append(checks, func(ctx context.Context) error { return checkPayin(ctx, uuid, *a) })
	}
	for _, p := range x.acked.payouts {
		checks = append(checks, func(ctx context.Context) error { return checkPayout(ctx, p) })
	}
	x.acked.mu.Unlock()
	var (
		next, bad atomic.Int64
		mu        sync.Mutex
	)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; int(i) < len(checks) && ctx.Err() == nil; i = next.Add(1) - 1 {
				if err := checks[i](ctx); err != nil {
					bad.Add(1)
					mu.Lock()
					if first == "" {
						first = err.Error()
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return len(checks), int(bad.Load()), first
}

func checkPayin(ctx context.Context, uuid string, a payinAck) error {
	status, body, err := a.m.c.do(ctx, "GET", "/v2/payins/detail?uuid="+url.QueryEscape(uuid), nil, nil)
	if err := expectStatus(status, 200, body, err); err != nil {
		return fmt.Errorf("payin %s: %w", uuid, err)
	}
	var p struct {
		ExternalID string `json:"external_id"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("payin %s: %w", uuid, err)
	}
	if p.ExternalID != a.externalID || !payinStatusFits(a.state, a.unsure, p.Status) {
		return fmt.Errorf("payin %s: external_id %q, status %q; acknowledged as %q in state %d", uuid, p.ExternalID, p.Status, a.externalID, a.state)
	}
	return nil
}

// checkPayout reads a payout back: its external id, and a status its
// sandbox transfer reaches (none of the soak's fails).
func checkPayout(ctx context.Context, a payoutAck) error {
	status, body, err := a.m.c.do(ctx, "GET", "/v2/payouts/detail?uuid="+url.QueryEscape(a.uuid), nil, nil)
	if err := expectStatus(status, 200, body, err); err != nil {
		return fmt.Errorf("payout %s: %w", a.uuid, err)
	}
	var p struct {
		ExternalID string `json:"external_id"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("payout %s: %w", a.uuid, err)
	}
	if p.ExternalID != a.externalID || (p.Status != "processing" && p.Status != "completed") {
		return fmt.Errorf("payout %s: external_id %q, status %q; acknowledged as %q", a.uuid, p.ExternalID, p.Status, a.externalID)
	}
	return nil
}

// soakTimezone is the time zone createMerchant gives every merchant.
const soakTimezone = "Australia/Sydney"

// jobCounts are what the clock's jobs made for the merchants, beside what
// their clocks passed.
type jobCounts struct {
	reports, wantReports         int
	settlements, wantSettlements int
	failedSettlements            int
	short                        int // merchants with fewer than their clock passed, or a failed settlement
}

// checkJobs counts each merchant's daily reports (one per 09:00 its clock
// passed since it was set up) and, of a settling one, its end-of-day
// settlements (one per midnight).
func (x *soakMix) checkJobs(ctx context.Context) (jobCounts, error) {
	loc, err := time.LoadLocation(soakTimezone)
	if err != nil {
		return jobCounts{}, err
	}
	var (
		mu   sync.Mutex
		sum  jobCounts
		errs []error
	)
	forEachMerchant(x.merchants, 4, func(m *soakMerchant) {
		c, err := merchantJobs(ctx, m, loc)
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
		sum.reports += c.reports
		sum.wantReports += c.wantReports
		sum.settlements += c.settlements
		sum.wantSettlements += c.wantSettlements
		sum.failedSettlements += c.failedSettlements
		sum.short += c.short
	})
	return sum, errors.Join(errs...)
}

func merchantJobs(ctx context.Context, m *soakMerchant, loc *time.Location) (jobCounts, error) {
	now, err := moveClock(ctx, m, 0)
	if err != nil {
		return jobCounts{}, fmt.Errorf("clock: %w", err)
	}
	c := jobCounts{wantReports: localTimesBetween(m.clockAt, now, loc, 9)}
	if c.reports, err = countReports(ctx, m); err != nil {
		return c, err
	}
	if m.settles {
		c.wantSettlements = localTimesBetween(m.clockAt, now, loc, 0)
		if c.settlements, c.failedSettlements, err = countSettlements(ctx, m); err != nil {
			return c, err
		}
	}
	if c.reports < c.wantReports || c.settlements < c.wantSettlements || c.failedSettlements > 0 {
		c.short = 1
	}
	return c, nil
}

// maxPages bounds the pages a count reads: a day's report a page of 100
// is more than 8,000 simulated days.
const maxPages = 100

// countReports counts m's daily reports by the listing's cursor.
func countReports(ctx context.Context, m *soakMerchant) (int, error) {
	n, cursor := 0, ""
	for range maxPages {
		path := "/v2/reports/settlements?report_frequency=daily&size=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, body, err := m.c.do(ctx, "GET", path, nil, nil)
		if err := expectStatus(status, 200, body, err); err != nil {
			return n, fmt.Errorf("reports: %w", err)
		}
		var page struct {
			Records    []json.RawMessage `json:"records"`
			NextCursor *string           `json:"next_cursor"`
			HasMore    bool              `json:"has_more"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return n, fmt.Errorf("reports: %w", err)
		}
		n += len(page.Records)
		if !page.HasMore || page.NextCursor == nil {
			return n, nil
		}
		cursor = *page.NextCursor
	}
	return n, fmt.Errorf("reports: more than %d pages", maxPages)
}

// countSettlements counts m's settlements, and those that failed, by page.
func countSettlements(ctx context.Context, m *soakMerchant) (total, failed int, err error) {
	for page := 1; page <= maxPages; page++ {
		status, body, err := m.c.do(ctx, "GET", fmt.Sprintf("/v2/settlements?per_page=100&page=%d", page), nil, nil)
		if err := expectStatus(status, 200, body, err); err != nil {
			return total, failed, fmt.Errorf("settlements: %w", err)
		}
		var list struct {
			TotalPage int `json:"total_page"`
			Records   []struct {
				Status string `json:"status"`
			} `json:"records"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return total, failed, fmt.Errorf("settlements: %w", err)
		}
		for _, r := range list.Records {
			total++
			if r.Status == "failed" || r.Status == "returned" {
				failed++
			}
		}
		if page >= list.TotalPage {
			return total, failed, nil
		}
	}
	return total, failed, fmt.Errorf("settlements: more than %d pages", maxPages)
}

// forEachMerchant runs fn for every merchant, n at a time.
func forEachMerchant(ms []*soakMerchant, n int, fn func(m *soakMerchant)) {
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			fn(m)
		})
	}
	wg.Wait()
}

// maxVerifySays bounds what the verdict quotes of payd ledger verify.
const maxVerifySays = 400

// verifyLedger runs payd ledger verify on dsn: clean when it exits 0.
func verifyLedger(ctx context.Context, bin, dsn string) (bool, string) {
	out, err := exec.CommandContext(ctx, bin, "ledger", "verify", "--db", dsn).CombinedOutput()
	says := strings.TrimSpace(string(out))
	if len(says) > maxVerifySays {
		says = says[:maxVerifySays] + "…"
	}
	if err != nil {
		return false, fmt.Sprintf("%v: %s", err, says)
	}
	return true, says
}
