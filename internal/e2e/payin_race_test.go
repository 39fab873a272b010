package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// pinRace runs fn in n goroutines released at once and returns what each got.
func pinRace(n int, fn func(i int) (response, error)) ([]response, []error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	answers, errs := make([]response, n), make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return answers, errs
}

// pinClient is an HTTP client for racing requests. Its connections are
// closed when the test ends, before the server stops: a connection dialled
// for a request that another connection served would otherwise sit unused,
// and the server's shutdown waits 5 s for such a connection.
func pinClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// pinTally counts answers by "status code" ("200", "409 INVALID_STATE", …).
func pinTally(t *testing.T, answers []response, errs []error) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, r := range answers {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		key := fmt.Sprint(r.Status)
		if r.Status != 200 {
			key += " " + r.ErrorCode(t)
		}
		out[key]++
	}
	return out
}

// pinSampler polls the merchant's balances until stopped and records any
// bucket a user sees below zero.
type pinSampler struct {
	stop     chan struct{}
	done     chan struct{}
	samples  atomic.Int64
	mu       sync.Mutex
	negative []string
	errs     []error
}

func pinSample(p *payd, as creds, client *http.Client) *pinSampler {
	s := &pinSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			r, err := p.send(req{method: "GET", path: "/v2/balances/detail?currency=" + as.Currency, as: &as, client: client})
			var d struct {
				Record balanceView `json:"record"`
			}
			if err == nil {
				err = json.Unmarshal(r.Body, &d)
			}
			s.mu.Lock()
			if err != nil {
				s.errs = append(s.errs, err)
			}
			for name, v := range map[string]json.Number{"available": d.Record.Available, "outgoing": d.Record.Outgoing, "incoming": d.Record.Incoming} {
				if strings.HasPrefix(v.String(), "-") {
					s.negative = append(s.negative, name+" "+v.String())
				}
			}
			s.mu.Unlock()
			s.samples.Add(1)
		}
	}()
	return s
}

// finish stops the sampler and fails the test if it saw a negative bucket.
func (s *pinSampler) finish(t *testing.T) {
	t.Helper()
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		t.Errorf("balance sampler: %v", s.errs[0])
	}
	if len(s.negative) > 0 {
		t.Errorf("balances seen below zero: %v", s.negative)
	}
	t.Logf("%d balance samples during the race", s.samples.Load())
}

// TestPayinRaceRefunds: ten refunds of 30 % of one received payin at once,
// round after round. A refund in progress (return_pending) refuses every
// other (409), so each round has one winner; when less than 30 % is left
// all are refused (422). Refunds never add up to more than was paid,
// refund_amount is the sum of the 200s, no balance is ever seen below zero
// and the balances settle to paid − fee − refunds.
func TestPayinRaceRefunds(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		uuid := pinReceived(t, p, m, nil, "")
		const paid, fee, share = 10000000, 70000, 3000000 // 100000.00, 0.7 %, 30 %
		client := pinClient(t)
		sampler := pinSample(p, m, client)
		rounds := []struct {
			name string
			want map[string]int
		}{
			{"first 30 %", map[string]int{"200": 1, "409 INVALID_STATE": 9}},
			{"second 30 %", map[string]int{"200": 1, "409 INVALID_STATE": 9}},
			{"third 30 %", map[string]int{"200": 1, "409 INVALID_STATE": 9}},
			{"10 % left", map[string]int{"422 AMOUNT_OUT_OF_RANGE": 10}},
		}
		var refunded int64
		for _, round := range rounds {
			answers, errs := pinRace(10, func(i int) (response, error) {
				return p.send(req{method: "POST", path: "/v2/payins/refund", as: &m, client: client,
					body: map[string]any{"uuid": uuid, "amount": "30000", "description": fmt.Sprintf("race %s #%d", round.name, i)}})
			})
			got := pinTally(t, answers, errs)
			if fmt.Sprint(got) != fmt.Sprint(round.want) {
				t.Errorf("%s: answers %v, want %v", round.name, got, round.want)
			}
			refunded += int64(got["200"]) * share
			ri := pinMap(pinDetail(t, p, m, uuid), "refund_information")
			if minorUnits(t, ri["refund_amount"], "IDR") != refunded {
				t.Errorf("%s: refund_amount = %v, want the sum of the 200s (%d minor units)", round.name, ri["refund_amount"], refunded)
			}
			wantPinBalance(t, p, m, pinMoney{Available: paid - fee - refunded, Outgoing: int64(got["200"]) * share})
			p.advance(m, 6)
		}
		sampler.finish(t)
		if refunded > paid {
			t.Errorf("refunded %d of %d paid", refunded, paid)
		}
		if got := str(pinDetail(t, p, m, uuid), "status"); got != "return_received" {
			t.Errorf("status = %s, want return_received", got)
		}
		r := p.get("/v2/balances", m)
		want(t, r, 200)
		var list struct {
			Records []balanceView `json:"records"`
		}
		r.Decode(t, &list)
		if len(list.Records) != 1 {
			t.Fatalf("GET /v2/balances = %s, want the IDR account alone", r.Body)
		}
		b := list.Records[0]
		settled := pinMoney{Available: minorUnits(t, b.Available, "IDR"), Incoming: minorUnits(t, b.Incoming, "IDR"),
			Outgoing: minorUnits(t, b.Outgoing, "IDR"), Reserve: minorUnits(t, b.RollingReserve, "IDR")}
		if w := (pinMoney{Available: paid - fee - refunded}); settled != w {
			t.Errorf("settled balances = %+v, want %+v (paid − fee − refunds)", settled, w)
		}
		history := pinHistory(t, p, m)
		wantHistory := []pinRecord{pinRefund(uuid, share, "done"), pinRefund(uuid, share, "done"), pinRefund(uuid, share, "done"),
			pinPayment(uuid, paid, fee, "done")}
		if !slices.Equal(history, wantHistory) {
			t.Errorf("history = %+v, want %+v", history, wantHistory)
		}
		pinVerifyLedger(t, p)
	})
}

// TestPayinRaceSimulateVersusCancel: the rail's completion and the
// merchant's cancel race on one pending payin, 20 times. Exactly one wins
// each time (200, the other 409), the status is the winner's, and the
// balance holds exactly the completed payins.
func TestPayinRaceSimulateVersusCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) { pinRaceSimulateCancel(t, p, p) })
}

// TestPayinRaceSimulateVersusCancelAcrossProcesses: the same race with the
// completion sent to one payd process and the cancel to another on the same
// PostgreSQL database (CONTRACT §1).
func TestPayinRaceSimulateVersusCancelAcrossProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, pinRaceSimulateCancel)
}

// pinRaceSimulateCancel races simulate (sent to a) and cancel (sent to b)
// on 20 pending payins of one merchant.
func pinRaceSimulateCancel(t *testing.T, a, b *payd) {
	m := a.merchant("IDR")["IDR"]
	client := pinClient(t)
	var wantAvailable int64
	completed := 0
	for i := range 20 {
		amount := int64(1000 * (i + 1)) // whole IDR, so the 0.7 % fee is exact
		uuid := str(pinCreate(t, a, m, pinBody("IDR", "id_bank_qris_idr", amount)), "uuid")
		sends := []func() (response, error){
			func() (response, error) {
				return a.send(req{method: "POST", path: "/v2/payins/simulate", as: &m, body: map[string]any{"uuid": uuid, "status": "completed"}, client: client})
			},
			func() (response, error) {
				return b.send(req{method: "POST", path: "/v2/payins/cancel", as: &m, body: map[string]any{"uuid": uuid}, client: client})
			},
		}
		answers, errs := pinRace(2, func(j int) (response, error) { return sends[j]() })
		got := pinTally(t, answers, errs)
		if fmt.Sprint(got) != fmt.Sprint(map[string]int{"200": 1, "409 INVALID_STATE": 1}) {
			t.Fatalf("round %d: answers %v, want one 200 and one 409", i, got)
		}
		wantStatus := "cancelled"
		if answers[0].Status == 200 {
			wantStatus = "received"
			completed++
			minor := amount * 100
			wantAvailable += minor - minor*70/10000
		}
		for _, p := range []*payd{a, b} {
			if status := str(pinDetail(t, p, m, uuid), "status"); status != wantStatus {
				t.Errorf("round %d: status %s, want %s (the winner's)", i, status, wantStatus)
			}
		}
	}
	t.Logf("simulate won %d of 20 rounds, cancel %d", completed, 20-completed)
	a.runDue(m)
	wantPinBalance(t, a, m, pinMoney{Available: wantAvailable})
	for status, n := range map[string]int{"received": completed, "cancelled": 20 - completed} {
		var page pinPage
		r := b.get("/v2/payins/all?per_page=100&status="+status, m)
		want(t, r, 200)
		r.Decode(t, &page)
		if page.Total != n {
			t.Errorf("%d payins %s, want %d", page.Total, status, n)
		}
	}
	if got := len(pinHistory(t, a, m)); got != completed {
		t.Errorf("%d balance records, want one per completed payin (%d)", got, completed)
	}
	pinVerifyLedger(t, a)
}

// TestPayinRaceConfirmOTP: ten right codes at once issue the pay_code once
// (one 200, one payin.pay_code webhook); ten wrong codes at once on another
// payin lose no count: it fails once, with one payin.failed.
func TestPayinRaceConfirmOTP(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("GHS")["GHS"]
		tests := []struct {
			name       string
			code       string
			want       map[string]int
			wantStatus string
			wantHooks  []string
		}{
			{"right code", "123456", map[string]int{"200": 1, "400 OTP_INVALID": 9}, "pending", []string{"payin.pay_code"}},
			{"wrong code", "999999", map[string]int{"400 OTP_INVALID": 10}, "failed", []string{"payin.failed"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				client := pinClient(t)
				hooks := newEventLog(t)
				uuid := str(pinCreate(t, p, m, pinWith(pinBody("GHS", "gh_mobile_money_ghs", 50), map[string]any{"webhook_notification": pinHookTo(hooks, "Bearer otp")})), "uuid")
				answers, errs := pinRace(10, func(int) (response, error) {
					return p.send(req{method: "POST", path: "/v2/payins/bank/confirm_otp", as: &m, client: client,
						body: map[string]any{"uuid": uuid, "code": tt.code}})
				})
				if got := pinTally(t, answers, errs); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("answers %v, want %v", got, tt.want)
				}
				if got := str(pinDetail(t, p, m, uuid), "status"); got != tt.wantStatus {
					t.Errorf("status = %s, want %s", got, tt.wantStatus)
				}
				hooks.waitTypes(t, tt.wantHooks...)
				p.drained(t, m) // a duplicate would have arrived by now
				if got := hooks.types(); !slices.Equal(got, tt.wantHooks) {
					t.Errorf("webhooks = %v, want %v", got, tt.wantHooks)
				}
			})
		}
	})
}
