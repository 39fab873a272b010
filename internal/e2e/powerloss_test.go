package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"payd/internal/store"
	"payd/internal/store/storetest"
)

// The README promises that an acknowledged write survives power loss. A
// SIGKILL cannot test that (the kernel keeps a killed process's writes), so
// these tests run the database on LazyFS and drop every unsynced byte after
// the kill: payd's SQLite files, or a PostgreSQL cluster's data directory.

// powerLossTrials is how many power cuts each test makes, each at a random
// moment of its load.
const powerLossTrials = 10

// powerLossSchedule makes webhook retries quick, so the check need not wait.
var powerLossSchedule = []string{"--webhook-retry-schedule", "100ms,200ms,500ms,1s,1s,1s,1s,1s"}

// TestPowerLossSQLite: payd on SQLite (WAL, its log flushed after each
// commit: store's sqlite_walsync.go) under load from eight clients loses
// power at a random moment, ten times; after each, every acknowledged write
// is there exactly once, the ledger verifies, the jobs resume, the clients'
// history passes its checks (histories_test.go) and no committed webhook
// event is lost.
func TestPowerLossSQLite(t *testing.T) {
	// Not parallel: it kills processes at chosen moments and waits for them
	// to restart, so it runs alone, before the parallel tests.
	if testing.Short() {
		t.Skip("ten power cuts")
	}
	needLazyFS(t)
	var trials []*powerLossTrial
	for n := 1; n <= powerLossTrials; n++ {
		fs := mountLazyFS(t, powerLossDir(t))
		dsn := "sqlite:" + filepath.Join(fs.dir, "payd.db")
		trials = append(trials, runPowerLossTrial(t, n, dsn, func(first *process) {
			first.cmd.Process.Signal(syscall.SIGKILL)
			first.cmd.Wait()
		}, func() {
			fs.powerCut()
			fs.remount()
		}))
	}
	for _, tr := range trials {
		tr.checkWebhooks(t)
	}
}

// TestPowerLossPostgres: the same with PostgreSQL (its defaults: fsync on,
// synchronous_commit on), a throwaway cluster whose data directory is on
// LazyFS; the postmaster, its backends and payd die together.
func TestPowerLossPostgres(t *testing.T) {
	// Not parallel: it kills processes at chosen moments and waits for them
	// to restart, so it runs alone, before the parallel tests.
	if testing.Short() {
		t.Skip("ten power cuts")
	}
	needLazyFS(t)
	template := initPGTemplate(t)
	var trials []*powerLossTrial
	for n := 1; n <= powerLossTrials; n++ {
		fs := mountLazyFS(t, powerLossDir(t))
		pg := startPGCluster(t, fs, template)
		tr := runPowerLossTrial(t, n, pg.dsn(), func(first *process) {
			first.cmd.Process.Signal(syscall.SIGKILL)
			pg.kill()
			first.cmd.Wait()
		}, func() {
			fs.powerCut()
			fs.remount()
			pg.start()
		})
		tr.checkNoDeadlocks(t, pg.log)
		trials = append(trials, tr)
	}
	for _, tr := range trials {
		tr.checkWebhooks(t)
	}
}

// powerLossTrial is one trial's restarted payd and what its clients saw.
// It runs until the test ends: the webhook deliveries of every trial are
// checked last, once the leases the crashed payd held on events (20 s) have
// run out, so that the trials need not wait for them one by one.
type powerLossTrial struct {
	n      int
	dsn    string
	p      *payd
	second *process  // the payd the checks ask (after a power cut, the restarted one), whose log a failed check quotes
	db     *store.DB // read by the checks
	acks   *ackLog
	hooks  *deliveryLog
	// aud is the demo merchant's AUD app, which makes the payouts.
	aud creds
	// funding is the uuid of the deposit that funds the refunds (newTrial).
	funding string
	// hist records the trial's client operations, through p, for the
	// history checks (histories_test.go).
	hist *opHistory
}

// runPowerLossTrial starts payd on dsn, drives its load, waits a random
// time, lets kill stop payd (and its database) and, once the clients have
// stopped, restore cut the power and bring the disk (and database) back;
// then it restarts payd and checks every acknowledged write, and the
// clients' history.
func runPowerLossTrial(t *testing.T, n int, dsn string, kill func(first *process), restore func()) *powerLossTrial {
	t.Helper()
	began := time.Now()
	first := startProcess(t, dsn, powerLossSchedule...)
	tr, m := newTrial(t, n, dsn, first)
	client := tr.p
	stop := make(chan struct{})
	loaded := time.Now()
	load := powerLoad(client.sendFor, client, m, tr.aud, tr.hooks.URL, tr.acks, stop)
	// A refund needs its payin created and paid first, each a commit on
	// LazyFS; on a loaded machine (a whole e2e run) that once took longer
	// than 30 s. The bound is for liveness, not speed.
	waitUntil(t, "a first acknowledged refund", 90*time.Second, func() bool { return tr.acks.refunds() > 0 })
	killAfter := rand.N(1200 * time.Millisecond)
	time.Sleep(killAfter) // the kill point: a random moment of the load
	kill(first)
	killed := time.Now()
	close(stop)
	load.Wait()
	restore()
	second := startProcess(t, dsn, powerLossSchedule...)
	restarted := time.Now()
	tr.p, tr.second = &payd{t: t, base: second.base, hist: tr.hist}, second
	tr.checkWrites(t, m)
	tr.checkPayouts(t)
	tr.hist.check(t, tr.p)
	t.Logf("trial %d: power cut %s after the first refund, %s; start %s, load %s, restart %s, check %s",
		n, killAfter.Round(time.Millisecond), tr.acks, loaded.Sub(began).Round(time.Millisecond), killed.Sub(loaded).Round(time.Millisecond),
		restarted.Sub(killed).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	return tr
}

// newTrial readies trial n of dsn on node, a payd serving it, for
// powerLoad: the demo merchant's IDR app, returned, and its AUD app, which
// makes the payouts, each funded by a deposit. Refunds come out of
// available, where a receipt arrives only once its clearing job has run:
// the cleared deposit funds them all from the start. The trial's history
// opens with the balances then.
func newTrial(t *testing.T, n int, dsn string, node *process) (*powerLossTrial, creds) {
	t.Helper()
	tr := &powerLossTrial{n: n, dsn: dsn, acks: newAckLog(), hooks: newDeliveryLog(t), hist: newHistory()}
	m := demoApp(t, node, "IDR")
	tr.p, tr.second = &payd{t: t, base: node.base, hist: tr.hist}, node
	tr.funding = str(tr.p.simulateDeposit(m, m.AccountNumber, 10000000), "uuid")
	tr.aud = demoApp(t, node, "AUD")
	tr.p.simulateDeposit(tr.aud, tr.aud.AccountNumber, 100000)
	tr.p.runDue(m)
	tr.hist.open(t, tr.p, m)
	return tr, m
}

// ackLog is what the load clients sent and what payd acknowledged with a 2xx.
type ackLog struct {
	mu sync.Mutex
	// sentPayins and sentDeposits hold every Idempotency-Key sent.
	sentPayins, sentDeposits map[string]bool
	// payins and deposits map the key of each 201 to the uuid it answered.
	payins, deposits map[string]string
	// completed holds the payins whose completion was sent, received those
	// answered 200; sentRefunds the payins a refund was sent for, refunded
	// those answered 200.
	completed, received, sentRefunds, refunded map[string]bool
	// sentPayouts holds every payout key sent; payouts maps the key of each
	// 201 to its uuid.
	sentPayouts map[string]bool
	payouts     map[string]string
}

func newAckLog() *ackLog {
	return &ackLog{sentPayins: map[string]bool{}, sentDeposits: map[string]bool{}, payins: map[string]string{},
		deposits: map[string]string{}, completed: map[string]bool{}, received: map[string]bool{},
		sentRefunds: map[string]bool{}, refunded: map[string]bool{}, sentPayouts: map[string]bool{}, payouts: map[string]string{}}
}

// note runs fn under the log's lock.
func (a *ackLog) note(fn func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn()
}

// somePayout is the uuid of an acknowledged payout, any one, for the reader.
func (a *ackLog) somePayout() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, uuid := range a.payouts {
		return uuid, true
	}
	return "", false
}

// refunds is how many refunds were acknowledged so far.
func (a *ackLog) refunds() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.refunded)
}

// String sums up the acknowledgements for the trial's log.
func (a *ackLog) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprintf("acknowledged %d payins, %d receipts, %d deposits, %d refunds, %d payouts",
		len(a.payins), len(a.received), len(a.deposits), len(a.refunded), len(a.payouts))
}

// The trial's writes, each with its Idempotency-Key, so that the check can
// send it again: a replay must answer what was acknowledged, and a write
// that was never acknowledged is then made, never twice.
func payinCreate(m *creds, key, hookURL string) req {
	return req{method: "POST", path: "/v2/payins", as: m, header: map[string]string{"Idempotency-Key": key},
		body: map[string]any{"currency": "IDR", "amount": 50000, "payin_method_name": "id_bank_qris_idr", "external_id": key,
			"webhook_notification": map[string]any{"endpoint_url": hookURL}}}
}

func payinComplete(m *creds, uuid string) req {
	return req{method: "POST", path: "/v2/payins/simulate", as: m, body: map[string]any{"uuid": uuid, "status": "completed"}}
}

func depositCreate(m *creds, key string) req {
	return req{method: "POST", path: "/v1/simulate_deposit", as: m, header: map[string]string{"Idempotency-Key": key},
		body: map[string]any{"account_number": m.AccountNumber, "amount": 1000}}
}

// payoutCreate is a one-transaction AUD payout of 1.00.
func payoutCreate(m *creds, key string) req {
	return req{method: "POST", path: "/v2/payouts", as: m, header: map[string]string{"Idempotency-Key": key},
		body: payoutBody("AUD", "au_bank_aud", "1.00", bsbOK)}
}

// refundMinor is each refund: 10,000.00 of a 50,000.00 IDR payin.
const refundMinor = 1000000

func payinRefund(m *creds, uuid string) req {
	return req{method: "POST", path: "/v2/payins/refund", as: m, header: map[string]string{"Idempotency-Key": "refund-" + uuid},
		body: map[string]any{"uuid": uuid, "amount": "10000", "description": "power loss " + uuid}}
}

// powerLoad drives payd from eight clients, each write sent by send, and a
// reader (readLoad) reading through reader, until stop is closed: four
// create payins and complete them, two simulate deposits, one refunds part
// of each completed payin, one makes AUD payouts (as aud); the reader reads
// the balances and an acknowledged payout.
func powerLoad(send sender, reader *payd, m, aud creds, hookURL string, acks *ackLog, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(readLoad(reader, func() []req {
		reads := []req{balancesRead(&m)}
		if uuid, ok := acks.somePayout(); ok {
			reads = append(reads, payoutRead(&aud, uuid))
		}
		return reads
	}, stop))
	var seq atomic.Int64
	refundable := make(chan string, 100000)
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for range 4 {
		wg.Go(func() {
			for !stopped() {
				key := fmt.Sprintf("payin-%d", seq.Add(1))
				acks.note(func() { acks.sentPayins[key] = true })
				uuid, ok := send(payinCreate(&m, key, hookURL), 201, "uuid")
				if !ok {
					continue
				}
				acks.note(func() { acks.payins[key], acks.completed[uuid] = uuid, true })
				if _, ok := send(payinComplete(&m, uuid), 200, ""); ok {
					acks.note(func() { acks.received[uuid] = true })
					refundable <- uuid
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for !stopped() {
				key := fmt.Sprintf("deposit-%d", seq.Add(1))
				acks.note(func() { acks.sentDeposits[key] = true })
				if uuid, ok := send(depositCreate(&m, key), 201, "uuid"); ok {
					acks.note(func() { acks.deposits[key] = uuid })
				}
			}
		})
	}
	wg.Go(func() {
		for !stopped() {
			key := fmt.Sprintf("payout-%d", seq.Add(1))
			acks.note(func() { acks.sentPayouts[key] = true })
			if uuid, ok := send(payoutCreate(&aud, key), 201, "uuid"); ok {
				acks.note(func() { acks.payouts[key] = uuid })
			}
		}
	})
	for range 1 {
		wg.Go(func() {
			for {
				var uuid string
				select {
				case <-stop:
					return
				case uuid = <-refundable:
				}
				acks.note(func() { acks.sentRefunds[uuid] = true })
				if _, ok := send(payinRefund(&m, uuid), 200, ""); ok {
					acks.note(func() { acks.refunded[uuid] = true })
				}
			}
		})
	}
	return &wg
}

// sender sends one write of a load client, r, and reports whether it was
// answered with status; member is then read from the answer.
type sender func(r req, status int, member string) (string, bool)

// sendFor is the sender that sends r once: a write that is not answered
// (payd is being killed) is not made again.
func (p *payd) sendFor(r req, status int, member string) (string, bool) {
	res, err := p.send(r)
	if err != nil || res.Status != status {
		return "", false
	}
	var body map[string]any
	if json.Unmarshal(res.Body, &body) != nil {
		return "", false
	}
	v, _ := body[member].(string)
	return v, true
}

// checkWrites checks, after the power cut and restart, that every
// acknowledged write is there exactly once (a replay of its key answers it,
// and the balance history holds it once), that the jobs resume (refunds
// return, deposits clear) and that the ledger verifies.
func (tr *powerLossTrial) checkWrites(t *testing.T, m creds) {
	t.Helper()
	p, acks := tr.p, tr.acks
	tr.db = storetest.Open(t, tr.dsn)
	for key := range acks.sentPayins {
		r := p.do(payinCreate(&m, key, tr.hooks.URL))
		want(t, r, 201)
		if uuid, ok := acks.payins[key]; ok && str(r.JSON(t), "uuid") != uuid {
			t.Errorf("trial %d: acknowledged payin %s (key %s) is lost: its replay made %s", tr.n, uuid, key, str(r.JSON(t), "uuid"))
		}
	}
	list := p.get("/v2/payins/all?per_page=1", m).JSON(t)
	if total, _ := list["total"].(json.Number).Int64(); int(total) != len(acks.sentPayins) {
		t.Errorf("trial %d: %d payins exist for %d keys sent", tr.n, total, len(acks.sentPayins))
	}
	deposits := map[string]bool{}
	for key := range acks.sentDeposits {
		r := p.do(depositCreate(&m, key))
		want(t, r, 201)
		uuid := str(r.JSON(t), "uuid")
		deposits[uuid] = true
		if acked, ok := acks.deposits[key]; ok && uuid != acked {
			t.Errorf("trial %d: acknowledged deposit %s (key %s) is lost: its replay made %s", tr.n, acked, key, uuid)
		}
	}
	for uuid := range acks.sentRefunds {
		want(t, p.do(payinRefund(&m, uuid)), 200)
	}
	// Five seconds on, the refunds return; the deposits' clearing is due at once.
	p.advance(m, 10)
	for uuid := range acks.received {
		d := p.get("/v2/payins/detail?uuid="+uuid, m).JSON(t)
		wantStatus, refunded := "received", int64(0)
		if acks.sentRefunds[uuid] {
			wantStatus, refunded = "return_received", refundMinor
		}
		ri, _ := d["refund_information"].(map[string]any)
		if str(d, "status") != wantStatus || (refunded > 0 && minorUnits(t, ri["refund_amount"], "IDR") != refunded) {
			t.Errorf("trial %d: acknowledged receipt %s is %s with refund_information %v, want %s with %d minor units refunded\n%s",
				tr.n, uuid, str(d, "status"), ri, wantStatus, refunded, tr.explainRefunds(t, uuid))
		}
	}
	tr.checkHistory(t, m, deposits)
	b := p.balanceOf(m, "IDR")
	if minorUnits(t, b.Incoming, "IDR") != 0 || minorUnits(t, b.Outgoing, "IDR") != 0 {
		t.Errorf("trial %d: after the jobs ran, incoming %s and outgoing %s, want both zero", tr.n, b.Incoming, b.Outgoing)
	}
	if out, err := exec.Command(paydBinary(t), "ledger", "verify", "--db", tr.dsn).CombinedOutput(); err != nil {
		t.Errorf("trial %d: payd ledger verify: %v\n%s", tr.n, err, out)
	}
	var failed int
	if err := tr.db.Read().QueryRow(`SELECT count(*) FROM jobs WHERE state = 'failed'`).Scan(&failed); err != nil || failed != 0 {
		t.Errorf("trial %d: %d jobs failed (%v)", tr.n, failed, err)
	}
}

// checkNoDeadlocks checks that the trial's cluster, which serves it alone,
// detected no deadlock since its restart (crash recovery clears the
// statistics): its restarted payd ran the checks' writes beside its workers.
// Every change that posts locks its account first, in one order, so none can
// wait in a circle; a deadlock aborts one of them, and an aborted job waits
// for its retry, where a clock advance does not see it. The cluster's log
// says which statements were caught.
func (tr *powerLossTrial) checkNoDeadlocks(t *testing.T, log string) {
	t.Helper()
	var deadlocks int64
	if err := tr.db.Read().QueryRow(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&deadlocks); err != nil {
		t.Fatalf("trial %d: read the deadlock count: %v", tr.n, err)
	}
	if deadlocks == 0 {
		return
	}
	said, _ := os.ReadFile(log)
	lines := strings.Split(string(said), "\n")
	var caught []string
	for i, line := range lines {
		if strings.Contains(line, "deadlock detected") {
			caught = append(caught, lines[i:min(i+deadlockReportLines, len(lines))]...)
		}
	}
	t.Errorf("trial %d: PostgreSQL detected %d deadlocks; its log says:\n%s", tr.n, deadlocks, strings.Join(caught, "\n"))
}

// deadlockReportLines is how many lines of PostgreSQL's log a deadlock's
// report takes: the error, its detail (each process, what it waits for and
// its statement), its hint, context and statement.
const deadlockReportLines = 8

// explainRefunds says, for a check that found payinUUID's refund not
// returned, where its refunds and their jobs stand and what the restarted
// payd logged of jobs: the refund's return is a job on the merchant's clock.
func (tr *powerLossTrial) explainRefunds(t *testing.T, payinUUID string) string {
	t.Helper()
	var b strings.Builder
	var offset int64
	tr.db.Read().QueryRow(`SELECT m.clock_offset_ms FROM merchants m JOIN payins p ON p.merchant_id = m.id WHERE p.uuid = $1`, payinUUID).Scan(&offset)
	fmt.Fprintf(&b, "now %d ms, the merchant's clock offset %d ms\n", time.Now().UnixMilli(), offset)
	rows, err := tr.db.Read().Query(`SELECT r.uuid, r.status, r.created_at, COALESCE(j.id, 0), COALESCE(j.state, 'no job'), COALESCE(j.attempts, 0),
		COALESCE(j.run_at, 0), COALESCE(j.last_error, '') FROM payin_refunds r
		LEFT JOIN jobs j ON j.merchant_id = r.merchant_id AND j.payload LIKE '%' || r.uuid || '%'
		WHERE r.payin_uuid = $1 ORDER BY r.created_at`, payinUUID)
	if err != nil {
		return "read its refunds: " + err.Error()
	}
	defer rows.Close()
	for rows.Next() {
		var refund, status, state, lastError string
		var created, jobID, runAt int64
		var attempts int
		if err := rows.Scan(&refund, &status, &created, &jobID, &state, &attempts, &runAt, &lastError); err != nil {
			return "read its refunds: " + err.Error()
		}
		fmt.Fprintf(&b, "refund %s %s, made at %d: job %d %s, %d attempts, run_at %d, last error %q\n",
			refund, status, created, jobID, state, attempts, runAt, lastError)
	}
	b.WriteString("the restarted payd logged of jobs:\n" + tr.second.logFor(`"job`))
	return b.String()
}

// checkHistory reads the whole balance history: one payment for each
// completed payin (every acknowledged one among them), one done top_up for
// each deposit, one done refund for each refund.
func (tr *powerLossTrial) checkHistory(t *testing.T, m creds, deposits map[string]bool) {
	t.Helper()
	seen := map[string]int{} // "transaction_type reference_id"
	cursor := ""
	for {
		h := tr.p.history(m, "size=100&cursor="+url.QueryEscape(cursor))
		for _, r := range h.Records {
			seen[r.TransactionType+" "+r.ReferenceID]++
			if r.Status != "done" {
				t.Errorf("trial %d: %s %s is %s after the jobs ran, want done", tr.n, r.TransactionType, r.ReferenceID, r.Status)
			}
			if r.TransactionType == "refund" && minorUnits(t, r.Amount, "IDR") != refundMinor {
				t.Errorf("trial %d: refund of %s is %s, want %d minor units", tr.n, r.ReferenceID, r.Amount, refundMinor)
			}
			if r.TransactionType == "payment" && !tr.acks.completed[r.ReferenceID] {
				t.Errorf("trial %d: a payment of %s, whose completion was never sent", tr.n, r.ReferenceID)
			}
		}
		if !h.HasMore || h.NextCursor == nil {
			break
		}
		cursor = *h.NextCursor
	}
	want := map[string]bool{}
	for uuid := range tr.acks.received {
		want["payment "+uuid] = true
	}
	for uuid := range deposits {
		want["top_up "+uuid] = true
	}
	for uuid := range tr.acks.sentRefunds {
		want["refund "+uuid] = true
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("trial %d: the history holds %q %d times, want once", tr.n, k, seen[k])
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("trial %d: the history holds %q %d times", tr.n, k, n)
		}
		// A deposit made twice has a uuid of its own, which no key answers.
		if strings.HasPrefix(k, "top_up ") && !want[k] && k != "top_up "+tr.funding {
			t.Errorf("trial %d: the history holds %q, a deposit that no key sent made", tr.n, k)
		}
	}
}

// checkWebhooks checks that every webhook event in the outbox reaches the
// receiver, that every event the receiver got (before the power cut too) is
// still in the outbox, and that the outbox holds the event of each
// acknowledged receipt and of each refund's return.
func (tr *powerLossTrial) checkWebhooks(t *testing.T) {
	t.Helper()
	db := tr.db
	waitUntil(t, fmt.Sprintf("trial %d: every committed webhook event delivered", tr.n), 90*time.Second, func() bool {
		var pending int
		db.Read().QueryRow(`SELECT count(*) FROM webhook_events WHERE status <> 'delivered'`).Scan(&pending)
		return pending == 0
	})
	committed := map[string]bool{}
	events := map[string]bool{} // "event_type record_uuid"
	rows, err := db.Read().Query(`SELECT id, event_type, record_uuid FROM webhook_events`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, typ, uuid string
		if err := rows.Scan(&id, &typ, &uuid); err != nil {
			t.Fatal(err)
		}
		committed[id] = true
		events[typ+" "+uuid] = true
	}
	rows.Close()
	delivered := tr.hooks.ids()
	for id := range committed {
		if delivered[id] == 0 {
			t.Errorf("trial %d: committed event %s was never delivered", tr.n, id)
		}
	}
	for id := range delivered {
		if !committed[id] {
			t.Errorf("trial %d: event %s was delivered, so committed, and is gone from the outbox", tr.n, id)
		}
	}
	for uuid := range tr.acks.received {
		if !events["payin.received "+uuid] {
			t.Errorf("trial %d: no payin.received event for the acknowledged receipt %s", tr.n, uuid)
		}
	}
	for uuid := range tr.acks.sentRefunds {
		if !events["payin.return_pending "+uuid] || !events["payin.return_received "+uuid] {
			t.Errorf("trial %d: the refund of %s lacks its payin.return_pending or payin.return_received event", tr.n, uuid)
		}
	}
	dups := 0
	for _, n := range delivered {
		dups += n - 1
	}
	t.Logf("trial %d: %d events committed and delivered (%d duplicates)", tr.n, len(committed), dups)
}

// deliveryLog is a webhook receiver that counts deliveries by webhook-id.
type deliveryLog struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int
}

func newDeliveryLog(t *testing.T) *deliveryLog {
	l := &deliveryLog{seen: map[string]int{}}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		l.mu.Lock()
		l.seen[r.Header.Get("webhook-id")]++
		l.mu.Unlock()
	}))
	t.Cleanup(l.Close)
	return l
}

// ids is a copy of the deliveries by webhook-id.
func (l *deliveryLog) ids() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.seen))
	for id, n := range l.seen {
		out[id] = n
	}
	return out
}

// checkPayouts checks, after the power cut and restart, that every
// acknowledged payout exists once (its key's replay answers it) and
// completes, and that every payout transaction reached the rail exactly once.
func (tr *powerLossTrial) checkPayouts(t *testing.T) {
	t.Helper()
	p, acks, aud := tr.p, tr.acks, tr.aud
	for key := range acks.sentPayouts {
		r := p.do(payoutCreate(&aud, key))
		want(t, r, 201)
		if uuid, ok := acks.payouts[key]; ok && str(r.JSON(t), "uuid") != uuid {
			t.Errorf("trial %d: acknowledged payout %s (key %s) is lost: its replay made %s", tr.n, uuid, key, str(r.JSON(t), "uuid"))
		}
	}
	p.settlePayouts(aud)
	list := p.get("/v2/payouts/all?per_page=1&status=completed", aud).JSON(t)
	if total, _ := list["total"].(json.Number).Int64(); int(total) != len(acks.sentPayouts) {
		t.Errorf("trial %d: %d payouts completed for %d keys sent", tr.n, total, len(acks.sentPayouts))
	}
	var transactions, submitted, repeated int
	if err := tr.db.Read().QueryRow(`SELECT (SELECT count(*) FROM payout_transactions), (SELECT count(*) FROM rail_submissions),
		(SELECT count(*) FROM rail_submissions WHERE attempts <> 1)`).Scan(&transactions, &submitted, &repeated); err != nil {
		t.Fatal(err)
	}
	if transactions != len(acks.sentPayouts) || submitted != transactions || repeated != 0 {
		t.Errorf("trial %d: %d payout transactions for %d keys, %d submitted, %d submitted more than once",
			tr.n, transactions, len(acks.sentPayouts), submitted, repeated)
	}
}
