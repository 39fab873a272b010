package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
)

// spreadMerchants is how many merchants the spread scenarios divide their
// load among.
const spreadMerchants = 100

// measureSpread measures payin creation, then receipts of those payins,
// spread over spreadMerchants merchants (each its own IDR account), the
// load a database distributed by merchant is built for. It runs on
// PostgreSQL and on Citus alike: on one machine, with the same cores, the
// two rows show what Citus's routing costs, not what its scale-out gains.
func measureSpread(ctx context.Context, s settings, bin, dsn, base string, pid int) ([]result, error) {
	apps, err := createMerchants(ctx, bin, dsn, spreadMerchants)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients * 2}}
	clients := make([]*client, len(apps))
	for i, a := range apps {
		clients[i] = &client{base: base, app: a, http: hc}
	}
	type made struct {
		c    *client
		uuid string
	}
	var (
		turn atomic.Int64
		mu   sync.Mutex
		pool []made
	)
	create := drive(ctx, fmt.Sprintf("payin create (%d merchants)", len(clients)), s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		c := clients[int(turn.Add(1))%len(clients)]
		uuid, err := c.createPayin(ctx, fmt.Sprintf("spread-%d-%d", cl, i), true)
		if err != nil {
			return false, err
		}
		mu.Lock()
		pool = append(pool, made{c, uuid})
		mu.Unlock()
		return false, nil
	})
	create.Description = fmt.Sprintf("POST /v2/payins (id_bank_qris_idr, Idempotency-Key), each request by the next of %d merchants", len(clients))

	var next atomic.Int64
	receipt := drive(ctx, fmt.Sprintf("payin receipt (%d merchants)", len(clients)), s.clients, s.duration, pid, func(ctx context.Context, cl, i int) (bool, error) {
		n := next.Add(1) - 1
		if int(n) >= len(pool) {
			return true, nil
		}
		p := pool[n]
		status, body, err := p.c.do(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": p.uuid, "status": "completed"}, nil)
		return false, expectStatus(status, 200, body, err)
	})
	receipt.Description = "POST /v2/payins/simulate on the payins above, each merchant's into its one account"
	return []result{create, receipt}, nil
}

// createMerchants makes n merchants with an IDR account each (payd merchant
// create, a few at a time) and returns their apps.
func createMerchants(ctx context.Context, bin, dsn string, n int) ([]app, error) {
	apps := make([]app, n)
	errs := make([]error, n)
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range apps {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			_, apps[i], errs[i] = createMerchant(ctx, bin, dsn, fmt.Sprintf("Spread Merchant %d", i))
		})
	}
	wg.Wait()
	return apps, errors.Join(errs...)
}

// createMerchant makes a merchant with an IDR account (payd merchant
// create) and returns its id and its app.
func createMerchant(ctx context.Context, bin, dsn, name string) (string, app, error) {
	out, err := exec.CommandContext(ctx, bin, "merchant", "create", "--db", dsn, "--name", name,
		"--country", "AU", "--timezone", "Australia/Sydney", "--currencies", "IDR", "--json").Output()
	if err != nil {
		return "", app{}, fmt.Errorf("create %s: %w", name, err)
	}
	var created struct {
		MerchantID string `json:"merchant_id"`
		Accounts   []struct {
			AccountNumber string `json:"account_number"`
			AppID         string `json:"app_id"`
			SecretKey     string `json:"secret_key"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal(out, &created); err != nil || len(created.Accounts) == 0 {
		return "", app{}, fmt.Errorf("read %s: %v: %s", name, err, out)
	}
	a := created.Accounts[0]
	return created.MerchantID, app{account: a.AccountNumber, id: a.AppID, secret: a.SecretKey}, nil
}
