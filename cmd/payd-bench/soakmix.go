package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The soak's requests. Each request takes the next kind of soakPlan, so
// that the mix is exact however the clients interleave, and the next
// merchant in turn. A merchant that settles at the end of each day
// (the last settleMerchants) takes no refunds or payouts: its settlement
// sweeps what is withdrawable, and those would then be refused for funds.

// soakOp is one kind of the soak's requests.
type soakOp uint8

const (
	opCreate soakOp = iota
	opReceipt
	opRefund
	opPayout
	opBalance
	opReports
	opWebhook
	opSettlements
	opClock // the sandbox clock's moves, apart from the plan
	soakOps
)

var soakOpNames = [soakOps]string{"payin create", "payin receipt", "payin refund", "payout create", "balance read",
	"report list", "webhook test event", "settlement list", "clock move"}

func (o soakOp) String() string { return soakOpNames[o] }

// soakPlan is the mix, one entry per request in twenty.
var soakPlan = []soakOp{
	opCreate, opCreate, opCreate, opCreate, opCreate, opCreate,
	opReceipt, opReceipt, opReceipt, opReceipt, opReceipt,
	opRefund, opPayout,
	opBalance, opBalance, opBalance,
	opReports, opWebhook, opWebhook, opSettlements,
}

// Amounts of the soak's money movements, in IDR.
const (
	soakPayinIDR   = 100_000
	soakRefundIDR  = 10_000
	soakPayoutIDR  = 10_000           // and its fee of 4,000
	soakDepositIDR = "100000000"      // what each paying merchant starts with, for its refunds and payouts
	maxPendingAge  = 60 * time.Second // a pending payin older than this is left to expire (the clock runs 24 h in 2 min)
	maxPool        = 50_000           // payins waiting for a receipt or a refund, at most
)

// soakMerchant is one of the soak's merchants.
type soakMerchant struct {
	c       *client
	settles bool
	// clockAt is its clock once set up: the reports and settlements it
	// should have are those of the 09:00s and midnights since.
	clockAt time.Time
}

// pooled is a payin waiting for its next request.
type pooled struct {
	m    *soakMerchant
	uuid string
	at   time.Time
}

// stack is a bounded LIFO of payins: receipts take the newest pending
// payin, which has not expired. Past its limit it forgets its older half.
type stack struct {
	mu    sync.Mutex
	items []pooled
}

func (s *stack) push(p pooled) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.items) >= maxPool {
		s.items = append(s.items[:0], s.items[maxPool/2:]...)
	}
	s.items = append(s.items, p)
}

// pop takes the newest payin younger than maxAge (0: any age), dropping
// older ones it finds on the way.
func (s *stack) pop(maxAge time.Duration) (pooled, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.items) > 0 {
		p := s.items[len(s.items)-1]
		s.items = s.items[:len(s.items)-1]
		if maxAge == 0 || time.Since(p.at) < maxAge {
			return p, true
		}
		s.items = s.items[:0] // the rest are older still
	}
	return pooled{}, false
}

// soakMix runs the soak's requests on its merchants.
type soakMix struct {
	merchants []*soakMerchant
	payers    []*soakMerchant // those that take refunds and payouts
	hookURL   string
	seq, turn atomic.Int64
	ids       atomic.Int64 // external ids, unique in the soak
	pending   stack        // created, not yet received
	received  stack        // received by a payer, not yet refunded
	acked     *ackLog
}

// next is the merchant of ms whose turn it is.
func (x *soakMix) next(ms []*soakMerchant) *soakMerchant {
	return ms[int(x.turn.Add(1))%len(ms)]
}

// run sends the next request of the plan and returns the kind it sent: a
// receipt or refund with no payin to take is a create or a balance read.
func (x *soakMix) run(ctx context.Context) (soakOp, error) {
	op := soakPlan[int(x.seq.Add(1))%len(soakPlan)]
	switch op {
	case opCreate:
		return op, x.create(ctx)
	case opReceipt:
		if p, ok := x.pending.pop(maxPendingAge); ok {
			return op, x.receive(ctx, p)
		}
		return opCreate, x.create(ctx)
	case opRefund:
		if p, ok := x.received.pop(0); ok {
			return op, x.refund(ctx, p)
		}
		return opBalance, x.get(ctx, x.next(x.merchants), "/v2/balances")
	case opPayout:
		return op, x.payout(ctx, x.next(x.payers))
	case opBalance:
		return op, x.get(ctx, x.next(x.merchants), "/v2/balances")
	case opReports:
		return op, x.get(ctx, x.next(x.merchants), "/v2/reports/settlements?size=10")
	case opWebhook:
		return op, x.testEvent(ctx, x.next(x.merchants))
	default:
		return op, x.get(ctx, x.next(x.merchants), "/v2/settlements?per_page=10")
	}
}

func (x *soakMix) get(ctx context.Context, m *soakMerchant, path string) error {
	status, body, err := m.c.do(ctx, "GET", path, nil, nil)
	return expectStatus(status, 200, body, err)
}

// create makes a QR payin whose status changes go to the receiver.
func (x *soakMix) create(ctx context.Context) error {
	m := x.next(x.merchants)
	externalID := fmt.Sprintf("soak-%d", x.ids.Add(1))
	status, body, err := m.c.do(ctx, "POST", "/v2/payins", map[string]any{"currency": "IDR", "amount": soakPayinIDR,
		"payin_method_name": "id_bank_qris_idr", "external_id": externalID, "webhook_notification": map[string]any{"endpoint_url": x.hookURL}},
		map[string]string{"Idempotency-Key": randomHex(12)})
	if err := expectStatus(status, 201, body, err); err != nil {
		return err
	}
	var out struct{ UUID string }
	if err := json.Unmarshal(body, &out); err != nil || out.UUID == "" {
		return fmt.Errorf("read the created payin: %v: %.200s", err, body)
	}
	x.acked.addPayin(out.UUID, m, externalID)
	x.pending.push(pooled{m: m, uuid: out.UUID, at: time.Now()})
	return nil
}

// receive pays a pending payin by the sandbox.
func (x *soakMix) receive(ctx context.Context, p pooled) error {
	status, body, err := p.m.c.do(ctx, "POST", "/v2/payins/simulate", map[string]any{"uuid": p.uuid, "status": "completed"}, nil)
	if err := expectStatus(status, 200, body, err); err != nil {
		x.acked.unsure(p.uuid)
		return err
	}
	x.acked.setPayin(p.uuid, payinReceived)
	if !p.m.settles {
		x.received.push(p)
	}
	return nil
}

// refund refunds part of a received payin.
func (x *soakMix) refund(ctx context.Context, p pooled) error {
	status, body, err := p.m.c.do(ctx, "POST", "/v2/payins/refund", map[string]any{"uuid": p.uuid, "amount": soakRefundIDR, "description": "soak refund"}, nil)
	if err := expectStatus(status, 200, body, err); err != nil {
		x.acked.unsure(p.uuid)
		return err
	}
	x.acked.setPayin(p.uuid, payinRefunded)
	return nil
}

// payout pays one Indonesian bank transfer out of m's account.
func (x *soakMix) payout(ctx context.Context, m *soakMerchant) error {
	externalID := fmt.Sprintf("soak-po-%d", x.ids.Add(1))
	status, body, err := m.c.do(ctx, "POST", "/v2/payouts", map[string]any{"currency": "IDR", "payout_method_name": "id_bank_idr",
		"description": "soak payout", "external_id": externalID, "payout_transaction_details": []any{map[string]any{
			"first_name": "Budi", "last_name": "Santoso", "amount": fmt.Sprint(soakPayoutIDR), "payout_method_params": map[string]any{
				"bank_code": "BMRIIDJA", "account_number": "1234567890", "account_name": "Budi Santoso"}}}},
		map[string]string{"Idempotency-Key": randomHex(12)})
	if err := expectStatus(status, 201, body, err); err != nil {
		return err
	}
	var out struct{ UUID string }
	if err := json.Unmarshal(body, &out); err != nil || out.UUID == "" {
		return fmt.Errorf("read the created payout: %v: %.200s", err, body)
	}
	x.acked.addPayout(out.UUID, m, externalID)
	return nil
}

// testEvent asks for a ping to the receiver; its id must arrive there.
func (x *soakMix) testEvent(ctx context.Context, m *soakMerchant) error {
	id, err := sendTestEvent(ctx, m.c, x.hookURL)
	if err != nil {
		return err
	}
	x.acked.addHook(id)
	return nil
}

// moveClock moves m's test clock on by step, which runs what became due:
// expiries, payout outcomes, end-of-day settlements, reports.
func moveClock(ctx context.Context, m *soakMerchant, step time.Duration) (time.Time, error) {
	status, body, err := m.c.do(ctx, "POST", "/v2/sandbox/clock", map[string]any{"advance_seconds": int64(step.Seconds())}, nil)
	if err := expectStatus(status, 200, body, err); err != nil {
		return time.Time{}, err
	}
	var out struct{ Now time.Time }
	if err := json.Unmarshal(body, &out); err != nil {
		return time.Time{}, fmt.Errorf("read the clock: %w", err)
	}
	return out.Now, nil
}

// maxAcked bounds the acknowledged writes the soak keeps to read back (a
// few hundred bytes each); past it a write is counted, not kept, and the
// verdict fails, since it cannot say that write is there.
const maxAcked = 2_000_000

// payinAck is an acknowledged payin and what the client was last told.
type payinAck struct {
	m          *soakMerchant
	externalID string
	state      payinState
	unsure     bool
}

// payoutAck is an acknowledged payout.
type payoutAck struct {
	m                *soakMerchant
	uuid, externalID string
}

// ackLog is every write payd acknowledged during the soak.
type ackLog struct {
	mu        sync.Mutex
	payins    map[string]*payinAck
	payouts   []payoutAck
	hooks     map[string]time.Time
	untracked int
}

func newAckLog() *ackLog {
	return &ackLog{payins: map[string]*payinAck{}, hooks: map[string]time.Time{}}
}

// full reports, under the lock, whether the log is at its bound, and counts
// the write it then drops.
func (l *ackLog) full() bool {
	if len(l.payins)+len(l.payouts)+len(l.hooks) < maxAcked {
		return false
	}
	l.untracked++
	return true
}

func (l *ackLog) addPayin(uuid string, m *soakMerchant, externalID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full() {
		l.payins[uuid] = &payinAck{m: m, externalID: externalID}
	}
}

func (l *ackLog) setPayin(uuid string, s payinState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.payins[uuid]; a != nil {
		a.state = s
	}
}

// unsure marks a payin a request failed on: it may have been applied.
func (l *ackLog) unsure(uuid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.payins[uuid]; a != nil {
		a.unsure = true
	}
}

func (l *ackLog) addPayout(uuid string, m *soakMerchant, externalID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full() {
		l.payouts = append(l.payouts, payoutAck{m: m, uuid: uuid, externalID: externalID})
	}
}

func (l *ackLog) addHook(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full() {
		l.hooks[id] = time.Now()
	}
}

// hookIDs is a copy of the acknowledged test events' ids.
func (l *ackLog) hookIDs() map[string]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]time.Time, len(l.hooks))
	for id, at := range l.hooks {
		out[id] = at
	}
	return out
}
