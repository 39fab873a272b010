package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

// The other merchant's load in the neighbour scenario runs in a child
// process of payd-bench at the lowest CPU priority (nice 19). On a real
// deployment that load comes from someone else's machine; here it shares
// two cores with payd, PostgreSQL and the neighbour's client, and at full
// priority the cost of generating 2,000 requests a second would show in the
// neighbour's latency as if payd had spent it.

// noisyChild is the hidden first argument that runs payd-bench as the child.
const noisyChild = "noisy-client"

// noisyOrder is what the child is told to send.
type noisyOrder struct {
	Base     string        `json:"base"`
	AppID    string        `json:"app_id"`
	Secret   string        `json:"secret"`
	Name     string        `json:"name"`
	Rate     float64       `json:"rate"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration"`
}

// noisyReport is what the child sent and how it was answered.
type noisyReport struct {
	Result  result `json:"result"`
	Refused int64  `json:"refused"`
}

// runNoisyChild reads a noisyOrder from stdin, sends payins at its rate
// until its duration passes or stdin is closed, and writes a noisyReport to
// stdout.
func runNoisyChild() int {
	var o noisyOrder
	dec := json.NewDecoder(os.Stdin)
	if err := dec.Decode(&o); err != nil {
		fmt.Fprintln(os.Stderr, "noisy client:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, dec.Buffered()); io.Copy(io.Discard, os.Stdin); cancel() }()
	posters := make([]*rawPoster, o.Clients)
	for i := range posters {
		posters[i] = newRawPoster(o.Base, "/api/v2/payins", map[string]string{"app-id": o.AppID, "secret-key": o.Secret})
		defer posters[i].close()
	}
	var refused atomic.Int64
	res := drivePaced(ctx, o.Name, o.Clients, o.Duration, 0, o.Rate, func(ctx context.Context, cl, i int) (bool, error) {
		status, err := posters[cl].post(fmt.Appendf(nil, `{"currency":"IDR","amount":100000,"payin_method_name":"id_bank_qris_idr","external_id":"%s-%d-%d"}`, o.Name, cl, i))
		if err == nil && status == http.StatusTooManyRequests {
			refused.Add(1)
			return false, nil
		}
		return false, expectStatus(status, 201, nil, err)
	})
	if err := json.NewEncoder(os.Stdout).Encode(noisyReport{Result: res, Refused: refused.Load()}); err != nil {
		return 1
	}
	return 0
}

// startNoisy runs the child with o; stop ends its load and returns its report.
func startNoisy(ctx context.Context, o noisyOrder) (stop func() (noisyReport, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "nice", "-n", "19", self, noisyChild)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the noisy client: %w", err)
	}
	if err := json.NewEncoder(in).Encode(o); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	return func() (noisyReport, error) {
		in.Close()
		var rep noisyReport
		decodeErr := json.NewDecoder(out).Decode(&rep)
		if err := cmd.Wait(); err != nil {
			return rep, fmt.Errorf("noisy client: %w", err)
		}
		return rep, decodeErr
	}, nil
}
