package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"payd/internal/ledger"
	"payd/internal/server"
	"payd/internal/store/storetest"
)

// loadRecord is what the load clients saw acknowledged.
type loadRecord struct {
	mu        sync.Mutex
	created   map[string]string // Idempotency-Key → uuid, for 201s
	attempted map[string]bool   // every Idempotency-Key sent
	received  map[string]bool   // uuids whose simulate answered 200
}

func newLoadRecord() *loadRecord {
	return &loadRecord{created: map[string]string{}, attempted: map[string]bool{}, received: map[string]bool{}}
}

// payinLoad creates and pays payins through the clients until stop is
// closed, and a reader (readLoad) reads the balances through the first.
func payinLoad(t *testing.T, clients []*payd, m creds, hookURL string, rec *loadRecord, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	var seq atomic.Int64
	wg.Go(readLoad(clients[0], func() []req { return []req{balancesRead(&m)} }, stop))
	for i := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				c := clients[(i+n)%len(clients)]
				key := fmt.Sprintf("load-%d", seq.Add(1))
				rec.mu.Lock()
				rec.attempted[key] = true
				rec.mu.Unlock()
				res, ok := tryDo(c, req{method: "POST", path: "/v2/payins", as: &m, header: map[string]string{"Idempotency-Key": key},
					body: map[string]any{"currency": "IDR", "amount": 50000, "payin_method_name": "id_bank_qris_idr", "external_id": key,
						"webhook_notification": map[string]any{"endpoint_url": hookURL}}})
				if !ok || res.Status != 201 {
					continue
				}
				var p map[string]any
				json.Unmarshal(res.Body, &p)
				uuid, _ := p["uuid"].(string)
				rec.mu.Lock()
				rec.created[key] = uuid
				rec.mu.Unlock()
				res, ok = tryDo(c, req{method: "POST", path: "/v2/payins/simulate", as: &m, body: map[string]any{"uuid": uuid, "status": "completed"}})
				if ok && res.Status == 200 {
					rec.mu.Lock()
					rec.received[uuid] = true
					rec.mu.Unlock()
				}
			}
		})
	}
	return &wg
}

// tryDo is do without failing the test on a connection error (the server may be dying).
func tryDo(p *payd, r req) (res response, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	tb := &softTB{TB: p.t}
	q := &payd{t: tb, base: p.base, hist: p.hist}
	res = q.do(r)
	return res, !tb.failed
}

// softTB turns Fatalf into a flag, so a request to a killed server is just "no answer".
type softTB struct {
	testing.TB
	failed bool
}

func (s *softTB) Fatalf(string, ...any) { s.failed = true; panic("request failed") }
func (s *softTB) Helper()               {}

// checkAfterCrash verifies what the issue asks after a crash: every
// acknowledged payin exists exactly once (retrying unacknowledged keys
// replays or creates them, never twice), every acknowledged receipt is
// received, the ledger is sound, the history of p (whose replays are its
// last writes) passes its checks, and every committed event reaches the
// receiver.
func checkAfterCrash(t *testing.T, p *payd, m creds, dsn string, rec *loadRecord, hooks *eventLog) {
	for key := range rec.attempted {
		r := p.do(req{method: "POST", path: "/v2/payins", as: &m, header: map[string]string{"Idempotency-Key": key},
			body: map[string]any{"currency": "IDR", "amount": 50000, "payin_method_name": "id_bank_qris_idr", "external_id": key,
				"webhook_notification": map[string]any{"endpoint_url": hooks.url}}})
		want(t, r, 201)
		if uuid, ok := rec.created[key]; ok && str(r.JSON(t), "uuid") != uuid {
			t.Errorf("key %s: retry gave payin %s, the acknowledged one was %s", key, str(r.JSON(t), "uuid"), uuid)
		}
	}
	list := p.get("/v2/payins/all?per_page=1", m).JSON(t)
	if total, _ := list["total"].(json.Number).Int64(); int(total) != len(rec.attempted) {
		t.Errorf("%d payins exist for %d distinct requests", total, len(rec.attempted))
	}
	for uuid := range rec.received {
		if s := str(p.get("/v2/payins/detail?uuid="+uuid, m).JSON(t), "status"); s != "received" {
			t.Errorf("acknowledged receipt %s is %s", uuid, s)
		}
	}
	p.runDue(m)
	db := storetest.Open(t, dsn)
	problems, err := ledger.Verify(context.Background(), db.Read())
	if err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", err, problems)
	}
	if out, err := exec.Command(paydBinary(t), "ledger", "verify", "--db", dsn).CombinedOutput(); err != nil {
		t.Errorf("payd ledger verify: %v\n%s", err, out)
	}
	// No job ran twice: each payment was received once and cleared once.
	var doubled int
	if err := db.Read().QueryRow(`SELECT count(*) FROM (SELECT balance_record_id, kind FROM journal_entries
		WHERE kind IN ('payin.receive', 'payin.clear') GROUP BY balance_record_id, kind HAVING count(*) > 1) d`).Scan(&doubled); err != nil || doubled != 0 {
		t.Errorf("%d payments were received or cleared more than once (%v)", doubled, err)
	}
	p.hist.check(t, p)
	var committed []string
	rows, err := db.Read().Query(`SELECT id FROM webhook_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		committed = append(committed, id)
	}
	rows.Close()
	waitUntil(t, "every committed event delivered", 60*time.Second, func() bool {
		var pending int
		db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE status <> 'delivered'`).Scan(&pending)
		return pending == 0
	})
	t.Logf("%d payins acknowledged, %d receipts acknowledged, %d events committed and delivered (%d received by the receiver, duplicates included)",
		len(rec.created), len(rec.received), len(committed), len(hooks.types()))
}

// TestCrashUnderLoad: payd under payin creation and receipt load is killed
// with SIGKILL and restarted; nothing acknowledged is lost or doubled, and
// the clients' history passes its checks (histories_test.go).
func TestCrashUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		hooks := newEventLog(t)
		first := startProcess(t, dsn, "--webhook-retry-schedule", "200ms,500ms,1s,1s,1s")
		m := demoApp(t, first, "IDR")
		hist := newHistory()
		client := &payd{t: t, base: first.base, hist: hist}
		hist.open(t, client, m)
		rec := newLoadRecord()
		stop := make(chan struct{})
		wg := payinLoad(t, []*payd{client}, m, hooks.url, rec, stop)
		waitUntil(t, "some load", 20*time.Second, func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			return len(rec.received) >= 20
		})
		first.cmd.Process.Signal(syscall.SIGKILL)
		first.cmd.Wait()
		close(stop)
		wg.Wait()
		second := startProcess(t, dsn, "--webhook-retry-schedule", "200ms,500ms,1s,1s,1s")
		checkAfterCrash(t, &payd{t: t, base: second.base, hist: hist}, m, dsn, rec, hooks)
	})
}

// TestThreeNodesOneKilled: three payd processes share one PostgreSQL
// database behind a round-robin client; one is killed mid-run. The checks
// are TestCrashUnderLoad's.
func TestThreeNodesOneKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			dsn := target.DSN(t)
			hooks := newEventLog(t)
			schedule := []string{"--webhook-retry-schedule", "200ms,500ms,1s,1s,1s"}
			nodes := []*process{startProcess(t, dsn, schedule...)}
			m := demoApp(t, nodes[0], "IDR")
			nodes = append(nodes, startProcess(t, dsn, schedule...), startProcess(t, dsn, schedule...))
			hist := newHistory()
			var clients []*payd
			for _, n := range nodes {
				clients = append(clients, &payd{t: t, base: n.base, hist: hist})
			}
			hist.open(t, clients[0], m)
			rec := newLoadRecord()
			stop := make(chan struct{})
			wg := payinLoad(t, clients, m, hooks.url, rec, stop)
			waitUntil(t, "some load", 20*time.Second, func() bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				return len(rec.received) >= 30
			})
			nodes[1].cmd.Process.Signal(syscall.SIGKILL)
			nodes[1].cmd.Wait()
			time.Sleep(300 * time.Millisecond) // keep the load on the survivors for a moment
			close(stop)
			wg.Wait()
			checkAfterCrash(t, clients[0], m, dsn, rec, hooks)
		})
	}
}

// TestReceiverOutage: the webhook receiver is down for a while, then
// returns; every event arrives.
func TestReceiverOutage(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		recv := newHookReceiver(t, false)
		var ids []string
		for range 20 {
			r := p.post("/v2/webhooks/test", m, map[string]any{"endpoint_url": recv.URL})
			want(t, r, 201)
			ids = append(ids, r.JSON(t)["id"].(string))
		}
		waitUntil(t, "first attempts to fail", 10*time.Second, func() bool {
			var failedOnce int
			p.srv.DB.Read().QueryRow(`SELECT count(DISTINCT event_id) FROM webhook_attempts`).Scan(&failedOnce)
			return failedOnce == len(ids)
		})
		recv.healthy.Store(true)
		waitUntil(t, "every event after the outage", 30*time.Second, func() bool {
			for _, id := range ids {
				if recv.count(id) == 0 {
					return false
				}
			}
			return true
		})
	}, func(c *server.Config) {
		// Twenty retries a second apart: however slow a busy machine is to make
		// the first attempts, no event runs out of retries during the outage.
		c.WebhookSchedule = slices.Repeat([]time.Duration{time.Second}, 20)
	})
}

// demoApp reads the demo merchant's app of a currency from a process's
// banner, waiting for its line (the banner is printed a line at a time).
func demoApp(t *testing.T, p *process, currency string) creds {
	t.Helper()
	var app creds
	waitUntil(t, currency+" app in the banner", 10*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range strings.Split(p.stdout.String(), "\n") {
			if m := bannerApp.FindStringSubmatch(l); m != nil && m[1] == currency {
				app = creds{Currency: currency, AccountNumber: m[2], AppID: m[3], SecretKey: m[4]}
				return true
			}
		}
		return false
	})
	return app
}
