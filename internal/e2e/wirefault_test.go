package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/store/storetest"
	"payd/internal/store/wirefault"
)

// Faults at the wire (issue 55): payd's connections to PostgreSQL go
// through a proxy (store/wirefault) that resets them every few seconds,
// holds their traffic for a while, and cuts some right after their COMMIT
// reached the server, before the answer came back: payd cannot know
// whether those transactions committed. Under the power-loss tests' load,
// each client sending its write again under its Idempotency-Key until payd
// answers it, nothing acknowledged may be lost, nothing applied twice,
// every key must keep the one answer it first got, and payd must write
// again once the wire is whole, without a restart.

// Bounds of the wire-fault test.
const (
	// wireFaultsFor is how long the proxy breaks the wire under the load.
	wireFaultsFor = 15 * time.Second
	// wireRecoverWithin bounds how long payd takes to write again once the
	// wire is whole.
	wireRecoverWithin = 30 * time.Second
	// wireRetryWithin bounds how long a load client sends one write again.
	wireRetryWithin = 90 * time.Second
	// wireRetryPause is a load client's pause before it sends a write again.
	wireRetryPause = 50 * time.Millisecond
	// wireCutsPerRound is how many COMMITs the proxy cuts between two resets.
	wireCutsPerRound = 3
	// wireRequestTimeout bounds one request of a load client.
	wireRequestTimeout = 30 * time.Second
)

// TestWireFaults runs one payd on PostgreSQL, then on Citus, through the
// proxy, under the mixed load of payin creates and receipts, deposits,
// payouts and refunds, while the proxy breaks the wire for 15 s (breakWire).
// Then payd writes again within 30 s, every key sent again answers what it
// first answered (the same status and uuid), every acknowledged write is
// there exactly once (checkWrites, checkPayouts), the clients' history
// passes its checks (histories_test.go), every committed webhook event
// arrives, the ledger verifies, and no request was answered 500.
// SQLite has no wire.
func TestWireFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("breaks payd's database connections for 15 s a database")
	}
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) { runWireFaults(t, target.DSN(t)) })
	}
}

// runWireFaults is TestWireFaults on the database dsn.
func runWireFaults(t *testing.T, dsn string) {
	began := time.Now()
	proxy, via := wirefault.Around(t, dsn)
	node := startProcess(t, via, powerLossSchedule...)
	tr, m := newTrial(t, 1, dsn, node)
	w := newRetrier(tr.p)
	stop := make(chan struct{})
	started := time.Now()
	load := powerLoad(w.send, tr.p, m, tr.aud, tr.hooks.URL, tr.acks, stop)
	waitUntil(t, "a first acknowledged refund", 60*time.Second, func() bool { return tr.acks.refunds() > 0 })
	loaded := time.Now()
	breakWire(proxy, wireFaultsFor)
	whole := time.Now()
	before := tr.acks.String()

	// A write of the test's own, sent once at a time: answered once payd
	// has a connection again. Until then payd says the database is away
	// (503, checked by the load's writes).
	var probes int
	waitUntil(t, "payd to write again once the wire is whole", wireRecoverWithin, func() bool {
		probes++
		key := fmt.Sprintf("wire-probe-%d", probes)
		tr.acks.note(func() { tr.acks.sentDeposits[key] = true })
		res, err := tr.p.send(depositCreate(&m, key))
		if err != nil || res.Status != 201 {
			time.Sleep(wireRetryPause)
			return false
		}
		tr.acks.note(func() { tr.acks.deposits[key] = str(res.JSON(t), "uuid") })
		return true
	})
	recovered := time.Since(whole)
	// A refund takes a payin's create, receipt and refund, each a write.
	refunds := tr.acks.refunds()
	waitUntil(t, "a refund acknowledged once the wire is whole", wireRecoverWithin, func() bool { return tr.acks.refunds() > refunds })
	close(stop)
	load.Wait()
	stats := proxy.Stats()
	t.Logf("start %s, load before the faults %s; the proxy carried %d connections, reset %d and cut %d of %d COMMITs; %s; payd wrote again %s after (%d probes); in all %s; %s",
		started.Sub(began).Round(time.Millisecond), loaded.Sub(started).Round(time.Millisecond), stats.Links, stats.Reset, stats.Cut,
		stats.Commits+stats.Cut, before, recovered.Round(time.Millisecond), probes, tr.acks, w)
	if stats.Cut == 0 || stats.Reset == 0 {
		t.Errorf("the proxy cut %d COMMITs and reset %d connections: the test broke nothing", stats.Cut, stats.Reset)
	}
	checked := time.Now()
	w.check(t, tr.p, node)
	tr.checkWrites(t, m)
	tr.checkPayouts(t)
	tr.hist.check(t, tr.p)
	tr.checkWebhooks(t)
	t.Logf("checks %s", time.Since(checked).Round(time.Millisecond))
}

// breakWire breaks the proxy's connections for d, in rounds of one to
// three seconds: in each it cuts wireCutsPerRound COMMITs, and at its end
// resets every connection. In the third round every write through the
// proxy is delayed by 20 ms; the fifth ends in a partition, all traffic
// held for a second, before its reset. Then the wire is whole again.
func breakWire(p *wirefault.Proxy, d time.Duration) {
	end := time.Now().Add(d)
	for round := 1; time.Now().Before(end); round++ {
		p.CutCommits(wireCutsPerRound)
		if round == 3 {
			p.SetDelay(20 * time.Millisecond)
		}
		time.Sleep(time.Second + rand.N(2*time.Second)) // the round's length: the faults' schedule
		p.SetDelay(0)
		if round == 5 {
			p.Blackhole(true)
			time.Sleep(time.Second) // the partition
		}
		p.Reset()
		p.Blackhole(false)
	}
	p.CutCommits(0)
}

// retrier is the sender of a load under wire faults: it sends each write
// until payd answers it, under one Idempotency-Key (a key of its own for a
// write that has none, the receipt), as a client that heard nothing, or
// heard "try again", must. It keeps each key's write and answer for check.
type retrier struct {
	p      *payd
	client *http.Client
	seq    atomic.Int64

	mu     sync.Mutex
	writes map[string]*wireWrite // by Idempotency-Key
	// unavailable counts the answers 503, lost the requests that got no
	// answer (a reset of payd's own connection to the database does not
	// reach the client, so a timeout would), inUse the 409s of a key still
	// held by an earlier try.
	unavailable, lost, inUse int
	// internal holds the request ids of the answers 500: a lost connection
	// is no internal error.
	internal []string
	// unanswered holds the keys still without an answer after
	// wireRetryWithin.
	unanswered []string
}

// wireWrite is one write of the load and the answer it got.
type wireWrite struct {
	r req
	// tries is how many times it was sent; replayed is set when payd
	// answered it as a replay (Idempotent-Replayed), its effect committed
	// by an earlier try or by one whose COMMIT's answer was lost.
	tries    int
	replayed bool
	answer   wireAnswer
}

// wireAnswer is what an answer says of a write: its status code, the
// uuid and status of the record it answers with, and the error code of a
// refusal.
type wireAnswer struct {
	code                    int
	uuid, status, errorCode string
}

func answerOf(res response) wireAnswer {
	var body struct{ UUID, Status string }
	json.Unmarshal(res.Body, &body)
	return wireAnswer{code: res.Status, uuid: body.UUID, status: body.Status, errorCode: codeOf(res)}
}

func newRetrier(p *payd) *retrier {
	return &retrier{p: p, client: &http.Client{Timeout: wireRequestTimeout}, writes: map[string]*wireWrite{}}
}

// send is a sender (powerLoad).
func (w *retrier) send(r req, status int, member string) (string, bool) {
	key := r.header["Idempotency-Key"]
	if key == "" {
		key = fmt.Sprintf("wire-%d", w.seq.Add(1))
		r.header = map[string]string{"Idempotency-Key": key}
	}
	r.client = w.client
	deadline := time.Now().Add(wireRetryWithin)
	for tries := 1; ; tries++ {
		res, err := w.p.send(r)
		if err == nil && !w.unknown(res) {
			w.mu.Lock()
			w.writes[key] = &wireWrite{r: r, tries: tries, replayed: res.Header.Get("Idempotent-Replayed") == "true", answer: answerOf(res)}
			w.mu.Unlock()
			var body map[string]any
			json.Unmarshal(res.Body, &body)
			v, _ := body[member].(string)
			return v, res.Status == status
		}
		if err != nil {
			w.mu.Lock()
			w.lost++
			w.mu.Unlock()
		}
		if time.Now().After(deadline) {
			w.mu.Lock()
			w.unanswered = append(w.unanswered, key)
			w.mu.Unlock()
			return "", false
		}
		time.Sleep(wireRetryPause)
	}
}

// unknown reports whether res leaves the write's outcome unknown, so that
// it must be sent again: a 5xx, or the 409 of a key an earlier try still
// holds. A 500 is noted for check.
func (w *retrier) unknown(res response) bool {
	var body struct {
		Errors struct {
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		} `json:"errors"`
	}
	json.Unmarshal(res.Body, &body)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case res.Status == http.StatusServiceUnavailable:
		w.unavailable++
	case res.Status >= 500:
		w.internal = append(w.internal, body.Errors.RequestID)
	case res.Status == http.StatusConflict && body.Errors.Code == "IDEMPOTENCY_KEY_IN_USE":
		w.inUse++
	default:
		return false
	}
	return true
}

// String sums up the retries for the test's log.
func (w *retrier) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var retried, replayed int
	for _, wr := range w.writes {
		if wr.tries > 1 {
			retried++
		}
		if wr.replayed {
			replayed++
		}
	}
	return fmt.Sprintf("%d writes, %d of them sent again (%d answers 503, %d 409 in use, %d none), %d answered as replays",
		len(w.writes), retried, w.unavailable, w.inUse, w.lost, replayed)
}

// check sends every write again under its key, through p, once the wire
// is whole: each must answer what it first answered (the same status code,
// uuid and status). It also fails the test for every answer 500, quoting
// what node logged of it, and for every write never answered.
func (w *retrier) check(t *testing.T, p *payd, node *process) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range w.internal {
		t.Errorf("a write was answered 500 (request %s); payd logged:\n%s", id, node.logFor(id))
	}
	if len(w.unanswered) > 0 {
		t.Errorf("%d writes were never answered in %s: %s", len(w.unanswered), wireRetryWithin, strings.Join(w.unanswered, ", "))
	}
	for key, wr := range w.writes {
		r := wr.r
		r.client = nil
		got := answerOf(p.do(r))
		if got != wr.answer {
			t.Errorf("%s %s under key %s answered %+v (after %d tries, replayed %v), and sent again %+v",
				r.method, r.path, key, wr.answer, wr.tries, wr.replayed, got)
		}
	}
}

// TestSilentPartition's bounds: silentDBTimeout is the --db-timeout it
// gives payd, and silentFor how long a write may take to answer in the
// partition: each of a request's steps on the database is bounded by the
// timeout, and a write takes several in turn (here three timed out before
// its 503: its transaction's begin last), so a few times that, and far
// short of TCP's minutes.
const (
	silentDBTimeout = 2 * time.Second
	silentFor       = 5 * silentDBTimeout
)

// TestSilentPartition: the wire to PostgreSQL stops carrying anything, with
// no reset (the proxy's blackhole: a partition that TCP would take many
// minutes to notice). A write under way then answers 503 once payd's write
// timeout has passed, not when TCP gives up; once the wire carries again,
// the same write sent again under its Idempotency-Key is made, once.
func TestSilentPartition(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("partitions payd from its database for seconds a database")
	}
	for _, target := range storetest.PostgresTargets() {
		t.Run(target.Name, func(t *testing.T) {
			dsn := target.DSN(t)
			proxy, via := wirefault.Around(t, dsn)
			node := startProcess(t, via, "--db-timeout", silentDBTimeout.String())
			m := demoApp(t, node, "IDR")
			p := &payd{t: t, base: node.base}
			want(t, p.do(depositCreate(&m, "before")), 201)

			proxy.Blackhole(true)
			r := depositCreate(&m, "during")
			r.client = &http.Client{Timeout: silentFor + 30*time.Second}
			sent := time.Now()
			res, err := p.send(r)
			took := time.Since(sent)
			proxy.Blackhole(false)
			if err != nil {
				t.Fatalf("a write during the partition got no answer in %s: %v", took.Round(time.Millisecond), err)
			}
			if res.Status != http.StatusServiceUnavailable || took > silentFor {
				var body struct {
					Errors struct {
						RequestID string `json:"request_id"`
					}
				}
				json.Unmarshal(res.Body, &body)
				t.Errorf("a write during the partition answered %d after %s, want 503 within %s (the write timeout is %s)\n%s\npayd logged:\n%s",
					res.Status, took.Round(time.Millisecond), silentFor, silentDBTimeout, res.Body, node.logFor(body.Errors.RequestID))
			}

			var made response
			waitUntil(t, "the write sent again once the wire carries again", wireRecoverWithin, func() bool {
				made = p.do(depositCreate(&m, "during"))
				return made.Status == 201
			})
			again := p.do(depositCreate(&m, "during"))
			if str(made.JSON(t), "uuid") != str(again.JSON(t), "uuid") {
				t.Errorf("the write sent again made %s, and once more %s: want one deposit", str(made.JSON(t), "uuid"), str(again.JSON(t), "uuid"))
			}
		})
	}
}
