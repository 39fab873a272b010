package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/proxy"
	"payd/internal/ratelimit"
	"payd/internal/server"
	"payd/internal/store/storetest"
)

// trustLoopback makes payd trust 127.0.0.1 as its reverse proxy.
func trustLoopback(c *server.Config) {
	trust, err := proxy.ParseTrust("127.0.0.1")
	if err != nil {
		panic(err)
	}
	c.TrustedProxies = trust
}

// clientFrom is an HTTP client whose connections come from the loopback
// address local (127.0.0.2, say): another machine, as payd sees it.
func clientFrom(local string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 64}}
}

// reverseProxy is a reverse proxy on 127.0.0.1 in front of p; it adds the
// client's address to X-Forwarded-For, as load balancers do.
func reverseProxy(t *testing.T, p *payd) *payd {
	target, err := url.Parse(p.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(srv.Close)
	return &payd{t: t, srv: p.srv, base: srv.URL + "/api", root: srv.URL}
}

// TestThrottleBehindProxy: behind a trusted reverse proxy, a client that
// sends 50 bad secrets is refused, while another client behind the same
// proxy gets 200 on every request with valid keys; the refused client's
// own valid keys still work. A peer that is no trusted proxy cannot pick
// its address with X-Forwarded-For.
func TestThrottleBehindProxy(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		bad := m
		bad.SecretKey = "sk_wrong"
		lb := reverseProxy(t, p)
		attacker, neighbour := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")

		var wg sync.WaitGroup
		statuses := make([]int, 50)
		for i := range statuses {
			wg.Go(func() {
				r, err := lb.send(req{method: "GET", path: "/v2/balances", as: &bad, client: attacker})
				if err != nil {
					t.Errorf("bad secret %d: %v", i, err)
					return
				}
				statuses[i] = r.Status
			})
		}
		var neighbourStatuses []int
		for range 20 {
			r := lb.do(req{method: "GET", path: "/v2/balances", as: &m, client: neighbour})
			neighbourStatuses = append(neighbourStatuses, r.Status)
		}
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[401] != 20 || count[429] != 30 {
			t.Errorf("50 bad secrets from one client behind the proxy: %v, want 20 × 401 then 30 × 429", count)
		}
		for i, s := range neighbourStatuses {
			if s != 200 {
				t.Errorf("the neighbour's request %d with valid keys: %d, want 200", i, s)
			}
		}
		refused := lb.do(req{method: "GET", path: "/v2/balances", as: &bad, client: attacker})
		wantError(t, refused, 429, "RATE_LIMITED", "")
		if s, _ := strconv.Atoi(refused.Header.Get("Retry-After")); s < 1 || s > 60 {
			t.Errorf("Retry-After = %q, want 1 to 60 seconds", refused.Header.Get("Retry-After"))
		}
		want(t, lb.do(req{method: "GET", path: "/v2/balances", as: &m, client: attacker}), 200)

		// Straight to payd from 127.0.0.4, naming a new client each time:
		// the header is not believed, so the failures add up on 127.0.0.4.
		direct := clientFrom("127.0.0.4")
		got := map[int]int{}
		var mu sync.Mutex
		for i := range 25 {
			wg.Go(func() {
				r, err := p.send(req{method: "GET", path: "/v2/balances", as: &bad, client: direct,
					header: map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i)}})
				if err == nil {
					mu.Lock()
					got[r.Status]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if got[429] != 5 {
			t.Errorf("25 bad secrets from an untrusted peer naming 25 clients: %v, want 5 refused (the header ignored)", got)
		}
	}, trustLoopback)
}

// TestRateLimitPerMerchant: a merchant over its write rate is answered 429
// RATE_LIMITED with Retry-After and the RateLimit headers, its reads have
// their own bucket, another merchant is not affected, and the bucket
// refills at the merchant's rate. The server runs on a manual clock, which
// the test moves by the Retry-After instead of waiting it out.
func TestRateLimitPerMerchant(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		clk := clock.NewManual(time.Now())
		p := start(t, dsn, onClock(clk))
		noisy := p.merchant("AUD")["AUD"]
		quiet := p.merchant("AUD")["AUD"]
		setLimits(t, p, noisy.MerchantID, 1, 0)

		began := clk.Now()
		got := map[int]int{}
		var last response // the first refusal
		for range 30 {
			r := p.do(depositCreate(&noisy, ""))
			got[r.Status]++
			if r.Status == 429 && last.Status == 0 {
				last = r
			}
		}
		elapsed := clk.Now().Sub(began)
		// A full bucket holds two seconds of requests (2), and refills at 1/s.
		if most := 2 + int(elapsed.Seconds()) + 1; got[201] < 2 || got[201] > most || got[429] == 0 {
			t.Errorf("30 writes at 1/s in %s: %v, want 2 to %d accepted and the rest refused", elapsed, got, most)
		}
		wantError(t, last, 429, "RATE_LIMITED", "")
		for _, h := range []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
			if last.Header.Get(h) == "" {
				t.Errorf("the 429 lacks %s", h)
			}
		}
		if l := last.Header.Get("RateLimit-Limit"); l != "2" {
			t.Errorf("RateLimit-Limit = %s, want 2 (two seconds at 1/s)", l)
		}
		want(t, p.get("/v2/balances", noisy), 200) // reads have their own bucket
		for range 20 {
			want(t, p.do(depositCreate(&quiet, "")), 201)
		}
		wait, _ := strconv.Atoi(last.Header.Get("Retry-After"))
		clk.Advance(time.Duration(wait) * time.Second) // the bucket refills at the merchant's rate
		want(t, p.do(depositCreate(&noisy, "")), 201)
	})
}

// TestLimitsSharedAcrossProcesses: two payd processes on one PostgreSQL
// database share the throttle and the buckets: failures and requests sent
// to both add up, rather than each process allowing its own share.
func TestLimitsSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			dsn := target.DSN(t)
			nodes := []*payd{start(t, dsn), start(t, dsn)}
			m := nodes[0].merchant("AUD")["AUD"]
			bad := m
			bad.SecretKey = "sk_wrong"
			var wg sync.WaitGroup
			var mu sync.Mutex
			failures := map[int]int{}
			for i := range 30 {
				wg.Go(func() {
					r, err := nodes[i%2].send(req{method: "GET", path: "/v2/balances", as: &bad})
					if err == nil {
						mu.Lock()
						failures[r.Status]++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if failures[401] != 20 || failures[429] != 10 {
				t.Errorf("30 bad secrets spread over two processes: %v, want 20 × 401 and 10 × 429", failures)
			}

			setLimits(t, nodes[0], m.MerchantID, 1, 0)
			began := time.Now()
			writes := map[int]int{}
			for i := range 40 {
				writes[nodes[i%2].do(depositCreate(&m, "")).Status]++
			}
			elapsed := time.Since(began)
			if most := 2 + int(elapsed.Seconds()) + 2; writes[201] > most || writes[201] < 2 {
				t.Errorf("40 writes at 1/s over two processes in %s: %v, want 2 to %d accepted in all", elapsed, writes, most)
			}
		})
	}
}

// setLimits sets a merchant's rates as the operator command does.
func setLimits(t *testing.T, p *payd, merchantID string, write, read int64) {
	t.Helper()
	if _, err := ratelimit.SetLimits(context.Background(), p.srv.DB, merchantID, &write, &read); err != nil {
		t.Fatal(err)
	}
}
