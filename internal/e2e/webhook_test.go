package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/internal/clock"
	"payd/internal/server"
	"payd/internal/store/storetest"
)

// hookReceiver records deliveries by webhook-id.
type hookReceiver struct {
	*httptest.Server
	healthy atomic.Bool
	mu      sync.Mutex
	seen    map[string]int
	bodies  map[string][]byte
}

func newHookReceiver(t *testing.T, healthy bool) *hookReceiver {
	h := &hookReceiver{seen: map[string]int{}, bodies: map[string][]byte{}}
	h.healthy.Store(healthy)
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !h.healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		h.mu.Lock()
		h.seen[r.Header.Get("webhook-id")]++
		h.bodies[r.Header.Get("webhook-id")] = body
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) count(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[id]
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	waitUntilOr(t, what, within, cond, func() string { return "" })
}

// waitUntilOr is waitUntil that adds what explain says to a timeout.
func waitUntilOr(t testing.TB, what string, within time.Duration, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s%s", within, what, explain())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWebhookPingIsDeliveredAndLogged: POST /v2/webhooks/test sends a ping
// through the real path; the delivery log shows the attempt; resend sends
// the same event again.
func TestWebhookPingIsDeliveredAndLogged(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newHookReceiver(t, true)
		r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL, "authorization_header": "Basic abc"})
		want(t, r, 201)
		d := r.JSON(t)
		id, uuid := d["id"].(string), d["uuid"].(string)
		if d["event_type"] != "ping" || d["status"] != "pending" {
			t.Fatalf("ping = %s", r.Body)
		}
		waitUntil(t, "ping delivered", 10*time.Second, func() bool { return recv.count(id) == 1 })
		var ping map[string]any
		recv.mu.Lock()
		json.Unmarshal(recv.bodies[id], &ping)
		recv.mu.Unlock()
		if ping["type"] != "ping" || ping["uuid"] != uuid {
			t.Errorf("ping body = %v", ping)
		}
		waitUntil(t, "log shows delivered", 10*time.Second, func() bool {
			recs := p.get("/v2/webhooks/deliveries?uuid="+uuid, m).JSON(t)["records"].([]any)
			return len(recs) == 1 && recs[0].(map[string]any)["status"] == "delivered"
		})
		rec := p.get("/v2/webhooks/deliveries?uuid="+uuid, m).JSON(t)["records"].([]any)[0].(map[string]any)
		attempts := rec["attempts"].([]any)
		if len(attempts) != 1 || attempts[0].(map[string]any)["status_code"].(json.Number).String() != "200" {
			t.Errorf("attempts = %v", attempts)
		}

		want(t, p.post("/v2/webhooks/deliveries/resend", m, map[string]any{"id": id}), 200)
		waitUntil(t, "resent ping", 10*time.Second, func() bool { return recv.count(id) == 2 })

		other := p.merchant("AUD")["AUD"]
		want(t, p.post("/v2/webhooks/deliveries/resend", other, map[string]any{"id": id}), 404)
		if recs := p.get("/v2/webhooks/deliveries?uuid="+uuid, other).JSON(t)["records"].([]any); len(recs) != 0 {
			t.Errorf("another merchant sees %d deliveries", len(recs))
		}
		want(t, p.get("/v2/webhooks/deliveries", m), 422)
	})
}

// TestWebhookTargetsByEnvironment: production refuses plain http and
// loopback receivers with a clear error; the sandbox delivers to them.
func TestWebhookTargetsByEnvironment(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, url := range []string{"http://127.0.0.1:9/hook", "https://127.0.0.1:9/hook", "https://localhost/hook", "https://10.0.0.1/hook"} {
			r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": url})
			want(t, r, 422)
			if f := r.JSON(t)["errors"].(map[string]any)["fields"].(map[string]any); f["endpoint_url"] == nil {
				t.Errorf("%s: error does not name endpoint_url: %s", url, r.Body)
			}
		}
	}, production)
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newHookReceiver(t, true)
		r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL})
		want(t, r, 201)
		id := r.JSON(t)["id"].(string)
		waitUntil(t, "sandbox delivery to loopback", 10*time.Second, func() bool { return recv.count(id) == 1 })
	})
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// paydBinary builds cmd/payd once for the tests that run it as a process.
func paydBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "payd-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "payd")
		out, err := exec.Command("go", "build", "-o", binPath, "payd/cmd/payd").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build payd: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// process is payd running as a child process.
type process struct {
	cmd    *exec.Cmd
	base   string
	stdout strings.Builder
	// logged keeps payd's log lines (standard error) that name a request
	// id or are warnings or errors, up to maxLogged of them, so a test can
	// quote what payd said of a request it answered wrongly, or of a job
	// (logFor).
	logged []string
	mu     sync.Mutex
}

// maxLogged bounds process.logged.
const maxLogged = 10000

// logFor returns payd's log lines about request id.
func (p *process) logFor(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.logged {
		if strings.Contains(l, id) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var bannerApp = regexp.MustCompile(`^\s+([A-Z]{3})\s+([0-9]{12})\s+(\S+)\s+(sk_\S+)$`)

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// startProcess runs `payd serve` on dsn and waits until it listens.
func startProcess(t *testing.T, dsn string, extra ...string) *process {
	t.Helper()
	cmd := exec.Command(paydBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, extra...)...)
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.stdout.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	found := make(chan string, 1)
	migrationWait := make(chan struct{}, 1) // payd waits for another process's migration
	ended := make(chan struct{})            // standard error closed: payd exited
	var early []string                      // what payd wrote before it listened (the last maxEarly lines)
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		listened, waitSaid := false, false
		for sc.Scan() {
			line := sc.Text()
			if !listened {
				p.mu.Lock()
				early = append(early, line)
				if len(early) > maxEarly {
					early = early[len(early)-maxEarly:]
				}
				p.mu.Unlock()
			}
			if !listened && !waitSaid && strings.Contains(line, server.MigrationWaitMessage) {
				waitSaid = true
				migrationWait <- struct{}{}
			}
			if m := listening.FindStringSubmatch(line); m != nil {
				listened = true
				found <- m[1]
			}
			if strings.Contains(line, `"request_id"`) || strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
				p.mu.Lock()
				if len(p.logged) < maxLogged {
					p.logged = append(p.logged, line)
				}
				p.mu.Unlock()
			}
		}
	}()
	said := func() string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return strings.Join(early, "\n")
	}
	// A start may wait for another process's migration first (on Citus
	// the parallel tests' schema changes take the lock one at a time).
	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case <-migrationWait: // said once
			deadline.Reset(5 * time.Minute)
		case base := <-found:
			p.base = base + "/api"
			return p
		case <-ended:
			t.Fatalf("payd exited before it listened (%v); it said:\n%s", cmd.Wait(), said())
		case <-deadline.C:
			// SIGQUIT has the Go runtime print every goroutine's stack: where it hangs.
			cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
			}
			t.Fatalf("payd did not start in time; it said:\n%s", said())
		}
	}
}

// maxEarly bounds the lines startProcess keeps of a payd that has not
// started, enough for a goroutine dump's end.
const maxEarly = 400

// demoAUD reads the demo merchant's AUD app from the banner on stdout.
func (p *process) demoAUD(t *testing.T) creds {
	t.Helper()
	var line []string
	waitFor := func(cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range strings.Split(p.stdout.String(), "\n") {
			if m := bannerApp.FindStringSubmatch(l); m != nil && m[1] == "AUD" {
				line = m[1:]
				return true
			}
		}
		return false
	})
	if line == nil {
		t.Fatalf("no AUD app in the banner:\n%s", p.stdout.String())
	}
	return creds{Currency: "AUD", AccountNumber: line[1], AppID: line[2], SecretKey: line[3]}
}

// TestWebhooksSurviveKill: events committed before payd is killed with
// SIGKILL are all delivered after it restarts.
func TestWebhooksSurviveKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		recv := newHookReceiver(t, false)
		// Retries a second apart: however long the 100 requests take on a
		// busy machine, no event waits minutes for its next attempt.
		schedule := []string{"--webhook-retry-schedule", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"}
		first := startProcess(t, dsn, schedule...)
		m := first.demoAUD(t)
		client := &payd{t: t, base: first.base}
		var committed []string
		for range 100 {
			r := client.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL})
			want(t, r, 201)
			committed = append(committed, r.JSON(t)["id"].(string))
		}
		// The receiver is down: events are attempted and queued for retry, or not attempted yet.
		if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		first.cmd.Wait()
		recv.healthy.Store(true)
		startProcess(t, dsn, schedule...)
		waitUntil(t, "every committed event delivered after restart", 90*time.Second, func() bool {
			for _, id := range committed {
				if recv.count(id) == 0 {
					return false
				}
			}
			return true
		})
		dups := 0
		for _, id := range committed {
			dups += recv.count(id) - 1
		}
		t.Logf("%d events delivered after SIGKILL and restart, %d duplicates", len(committed), dups)
	})
}

// fastRetries shortens the webhook retry schedule so retries happen within a test.
func fastRetries(c *server.Config) {
	c.WebhookSchedule = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond,
		20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}
}

// retryDue waits until event id has made attempts attempts and waits for
// its next one, then moves clk to that attempt's time and wakes the
// dispatcher until it has made it: the retry delay passes without the test
// waiting for it.
func (p *payd) retryDue(t testing.TB, clk *clock.Manual, as creds, id string, attempts int) {
	t.Helper()
	ctx := context.Background()
	made := func() (n int, next int64) {
		var at sql.NullInt64
		if err := p.srv.DB.Read().QueryRowContext(ctx, `SELECT attempts, next_attempt_at FROM webhook_events WHERE merchant_id = $1 AND id = $2`,
			as.MerchantID, id).Scan(&n, &at); err != nil {
			t.Fatalf("read event %s: %v", id, err)
		}
		return n, at.Int64
	}
	var next int64
	waitUntil(t, fmt.Sprintf("attempt %d of %s recorded", attempts, id), 10*time.Second, func() bool {
		var n int
		n, next = made()
		return n >= attempts
	})
	if due := clock.FromMillis(next); due.After(clk.Now()) {
		clk.Set(due)
	}
	waitUntil(t, fmt.Sprintf("attempt %d of %s", attempts+1, id), 10*time.Second, func() bool {
		p.srv.Webhooks.Wake()
		n, _ := made()
		return n > attempts
	})
}

// TestWebhookFailsTwiceThenDelivered: through the real server, a receiver
// that fails twice and then answers 200 gets three attempts, each signed
// with the merchant's secret (checked with the Standard Webhooks library),
// and the delivery log shows all three and then delivered. The server runs
// on a manual clock, which the test moves to each retry instead of waiting
// for it; the retries are 5 s apart, so that the attempts' signed
// timestamps stay within the verifier's tolerance of the real time.
func TestWebhookFailsTwiceThenDelivered(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		clk := clock.NewManual(time.Now())
		p := start(t, dsn, onClock(clk), func(c *server.Config) {
			c.WebhookSchedule = []time.Duration{5 * time.Second, 5 * time.Second}
		})
		m := p.merchant("AUD")["AUD"]
		secret, err := p.srv.Merchants.WebhookSecret(context.Background(), m.MerchantID, false)
		if err != nil {
			t.Fatal(err)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int64
		var badSignatures atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if wh.Verify(body, r.Header) != nil {
				badSignatures.Add(1)
			}
			if calls.Add(1) <= 2 {
				w.WriteHeader(http.StatusBadGateway)
			}
		}))
		defer srv.Close()
		r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": srv.URL})
		want(t, r, 201)
		ping := r.JSON(t)
		uuid, id := ping["uuid"].(string), ping["id"].(string)
		p.retryDue(t, clk, m, id, 1)
		p.retryDue(t, clk, m, id, 2)
		var rec map[string]any
		waitUntil(t, "delivered after three attempts", 10*time.Second, func() bool {
			recs := p.get("/v2/webhooks/deliveries?uuid="+uuid, m).JSON(t)["records"].([]any)
			rec = recs[0].(map[string]any)
			return rec["status"] == "delivered"
		})
		attempts := rec["attempts"].([]any)
		var codes []string
		for _, a := range attempts {
			codes = append(codes, a.(map[string]any)["status_code"].(json.Number).String())
		}
		if got := strings.Join(codes, ","); got != "502,502,200" || calls.Load() != 3 {
			t.Errorf("attempts = %s (receiver saw %d), want 502,502,200", got, calls.Load())
		}
		if badSignatures.Load() != 0 {
			t.Errorf("%d attempts failed signature verification", badSignatures.Load())
		}
	})
}

// TestWebhookThousandEventsFlakyReceiver: through the real server, 1,000
// events to a receiver that answers 500 to a random 30 % of attempts (up to
// 3 an event) are all delivered; duplicates (the same webhook-id received twice) are counted.
func TestWebhookThousandEventsFlakyReceiver(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1,000 events")
	}
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		var mu sync.Mutex
		got, failed := map[string]int{}, map[string]int{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			id := r.Header.Get("webhook-id")
			mu.Lock()
			defer mu.Unlock()
			// At most 3 failures an event, fewer than its 8 retries: with
			// no bound, 0.3^9 of the events (one run in fifty) used up
			// every retry, and the test waited for them in vain.
			if failed[id] < 3 && rand.IntN(100) < 30 {
				failed[id]++
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			got[id]++
		}))
		defer srv.Close()
		const n = 1000
		ids := make([]string, n)
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				for i := c; i < n; i += 8 {
					r, err := p.send(req{method: "POST", path: "/v2/webhooks/test", as: &m, body: map[string]any{"endpoint_url": srv.URL}})
					if err == nil && r.Status == 201 {
						var d map[string]any
						json.Unmarshal(r.Body, &d)
						ids[i], _ = d["id"].(string)
					}
				}
			})
		}
		wg.Wait()
		undelivered := func() (n int) {
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if got[id] == 0 {
					n++
				}
			}
			return n
		}
		// What the outbox says of those not received tells a stalled
		// dispatcher from events that used up their retries.
		waitUntilOr(t, "every event delivered", 120*time.Second, func() bool { return undelivered() == 0 }, func() string {
			var states string
			p.srv.DB.Read().QueryRow(`SELECT string_agg(status || ' ' || attempts || ' attempts', ', ') FROM webhook_events WHERE status <> 'delivered'`).Scan(&states)
			return fmt.Sprintf(": %d events not received; not delivered in the outbox: %s", undelivered(), states)
		})
		mu.Lock()
		defer mu.Unlock()
		dups := 0
		for _, id := range ids {
			if id == "" {
				t.Fatalf("an event was not created")
			}
			dups += got[id] - 1
		}
		t.Logf("%d events delivered, %d duplicates", n, dups)
	}, fastRetries)
}
