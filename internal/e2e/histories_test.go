package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"payd/internal/idempotency"
	"payd/internal/money"
	"payd/internal/payin"
	"payd/internal/payout"
)

// Histories (issue 55). The kill, failover, power-loss and wire-fault
// tests record every request their clients send through a payd with a
// history (payd.hist), and what came back: each is an operation with its
// invocation and return times and its result (ok, failed or unknown).
// Once a test's own checks have sent every key again, after which every
// write is definite, opHistory.check holds the whole history to three
// rules:
//
//   - The answers under each Idempotency-Key are linearizable as a
//     register written once (keyModel): the key's first effect, and only
//     it, is what every answer reports.
//   - Each payout's, payout transaction's and payin's status, as the
//     answers show it, only moves forward along payd's state machine
//     (statusModel).
//   - The bank invariant (checkBank): each currency's total over the
//     merchant's balances moved by exactly the money the history's writes
//     brought in and took out, and no answer ever showed a balance below
//     zero.

// Bounds of the history checks.
const (
	// linearizableWithin bounds each porcupine check: one that has not
	// decided by then is logged as unchecked, not failed.
	linearizableWithin = 10 * time.Second
	// readEvery is how often the loads' reader reads: light beside the
	// writers.
	readEvery = 100 * time.Millisecond
	// readTimeout bounds one read of the reader, whose payd may be dying
	// or without its database.
	readTimeout = 10 * time.Second
	// illegalShown bounds how many keys or records that are not
	// linearizable a failure names and draws.
	illegalShown = 5
	// illegalContext is how many operations a failure lists, up to the
	// first that is not linearizable.
	illegalContext = 8
)

// opHistory is one test's (or power-loss trial's) record of its clients'
// operations.
type opHistory struct {
	began time.Time
	mu    sync.Mutex
	ops   []*operation
	// opening holds the merchant's balances before the load, read as as
	// (open): the bank invariant's starting point.
	opening []balanceView
	as      creds
}

// operation is one request of a client and what came back.
type operation struct {
	r req
	// call and ret are when the request was sent and its answer read
	// (or the request given up), since the history began.
	call, ret time.Duration
	result    opResult
	res       response // Status 0 when no answer came
}

// opResult is what an answer says of its operation.
type opResult int

const (
	// opUnknown is no answer, a 5xx, or the 409 of an Idempotency-Key an
	// earlier try still holds: the write may have been made, or may be
	// made later (CONTRACT §3 stores no answer of 500 and above, so a
	// retry makes it then).
	opUnknown opResult = iota
	// opOK is an answer under 400.
	opOK
	// opFailed is a definite refusal: any other 4xx.
	opFailed
)

func newHistory() *opHistory { return &opHistory{began: time.Now()} }

// withHistory is p with its requests recorded in h.
func (p *payd) withHistory(h *opHistory) *payd {
	q := *p
	q.hist = h
	return &q
}

// invoke records that r is being sent; answer records what came back.
// Without a history (nil), both do nothing.
func (h *opHistory) invoke(r req) *operation {
	if h == nil {
		return nil
	}
	op := &operation{r: r, call: time.Since(h.began)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	return op
}

func (h *opHistory) answer(op *operation, res response, err error) {
	if h == nil {
		return
	}
	ret := time.Since(h.began)
	h.mu.Lock()
	defer h.mu.Unlock()
	op.ret, op.res, op.result = ret, res, resultOf(res, err)
}

// resultOf is what the answer res (or the failure err to get one) says of
// its request.
func resultOf(res response, err error) opResult {
	switch {
	case err != nil, res.Status >= 500:
		return opUnknown
	case res.Status == http.StatusConflict && codeOf(res) == idempotency.CodeInFlight:
		return opUnknown
	case res.Status >= 400:
		return opFailed
	}
	return opOK
}

// snapshot copies the operations recorded so far, in invocation order.
func (h *opHistory) snapshot() []operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]operation, len(h.ops))
	for i, op := range h.ops {
		out[i] = *op
	}
	return out
}

// open reads the merchant's balances as as, through p, before the load.
func (h *opHistory) open(t *testing.T, p *payd, as creds) {
	t.Helper()
	h.opening, h.as = readBalances(t, p.withHistory(h), as), as
}

// check runs the history's checks once the test's own checks have sent
// every key again and run the jobs that were due (every receipt cleared,
// every refund returned, every payout settled). It first reads, through p,
// what the history's writes left (settle), which are operations of the
// history too, the last.
func (h *opHistory) check(t *testing.T, p *payd) {
	t.Helper()
	began := time.Now()
	s := h.settle(t, p.withHistory(h))
	ops := h.snapshot()
	keyed, seen := keyedWrites(ops), observations(t, ops)
	if len(keyed) == 0 {
		t.Errorf("the history holds no keyed write: the load's requests were not recorded")
	}
	checkLinearizable(t, "the answers under each Idempotency-Key", keyModel, keyed)
	checkLinearizable(t, "the statuses of each payin, payout and payout transaction", statusModel, seen)
	h.checkBank(t, ops, s)
	t.Logf("history: %d operations, %d keyed writes under %d keys, %d statuses of %d records; checked in %s",
		len(ops), len(keyed), len(byPartition(keyed)), len(seen), len(byPartition(seen)), time.Since(began).Round(time.Millisecond))
}

// readLoad is the loads' reader: every readEvery until stop is closed it
// sends the reads next gives through p, whose history records them (a
// balance may never be seen below zero, a status never going back). The
// answers are the history's to check.
func readLoad(p *payd, next func() []req, stop <-chan struct{}) func() {
	return func() {
		client := &http.Client{Timeout: readTimeout}
		tick := time.NewTicker(readEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for _, r := range next() {
				r.client = client
				p.send(r)
			}
		}
	}
}

// balancesRead reads the balances of every payments account of as's merchant.
func balancesRead(as *creds) req { return req{method: "GET", path: "/v2/balances", as: as} }

// payoutRead reads one payout of as.
func payoutRead(as *creds, uuid string) req {
	return req{method: "GET", path: "/v2/payouts/detail?uuid=" + uuid, as: as}
}

// readBalances reads the balances of every payments account of as's merchant.
func readBalances(t *testing.T, p *payd, as creds) []balanceView {
	t.Helper()
	r := p.do(balancesRead(&as))
	want(t, r, 200)
	var list struct {
		Records []balanceView `json:"records"`
	}
	r.Decode(t, &list)
	return list.Records
}

// settledState is what the history's writes left, read at its end: the
// merchant's balances, and every payin and payout of the apps that made
// any, by uuid, as their lists answer them.
type settledState struct {
	balances        []balanceView
	payins, payouts map[string]map[string]any
}

func (h *opHistory) settle(t *testing.T, p *payd) settledState {
	t.Helper()
	s := settledState{balances: readBalances(t, p, h.as), payins: map[string]map[string]any{}, payouts: map[string]map[string]any{}}
	ops := h.snapshot()
	for _, as := range appsOf(ops, "POST /v2/payins") {
		readList(t, p, "/v2/payins/all", as, s.payins)
	}
	for _, as := range appsOf(ops, "POST /v2/payouts") {
		readList(t, p, "/v2/payouts/all", as, s.payouts)
	}
	return s
}

// appsOf is the apps that sent request ("POST /v2/payins"), each once.
func appsOf(ops []operation, request string) []creds {
	var out []creds
	for _, op := range ops {
		if requestOf(op.r) == request && op.r.as != nil && !slices.ContainsFunc(out, func(c creds) bool { return c.AppID == op.r.as.AppID }) {
			out = append(out, *op.r.as)
		}
	}
	return out
}

// readList reads every page of the list at path as as into records, by uuid.
func readList(t *testing.T, p *payd, path string, as creds, records map[string]map[string]any) {
	t.Helper()
	for page := 1; ; page++ {
		r := p.do(req{method: "GET", path: fmt.Sprintf("%s?per_page=100&page=%d", path, page), as: &as})
		want(t, r, 200)
		var list struct {
			Records   []map[string]any `json:"records"`
			TotalPage int              `json:"total_page"`
		}
		r.Decode(t, &list)
		for _, rec := range list.Records {
			records[str(rec, "uuid")] = rec
		}
		if page >= list.TotalPage {
			return
		}
	}
}

// requestOf names what r asks for: its method and path, without the query.
func requestOf(r req) string {
	path, _, _ := strings.Cut(r.path, "?")
	return r.method + " " + path
}

// keyOf is r's Idempotency-Key, or "" when r is not a keyed write.
func keyOf(r req) string {
	if r.method != http.MethodPost && r.method != http.MethodPut {
		return ""
	}
	for name, v := range r.header {
		if strings.EqualFold(name, "Idempotency-Key") {
			return v
		}
	}
	return ""
}

// bodyOf is the JSON object r sent (nil when it sent none), numbers kept exactly.
func bodyOf(t *testing.T, r req) map[string]any {
	t.Helper()
	var raw []byte
	switch b := r.body.(type) {
	case nil:
		return nil
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatalf("marshal %s body: %v", requestOf(r), err)
		}
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s body %s: %v", requestOf(r), raw, err)
	}
	return m
}

// partitionKey is what an operation's input names: the key or record
// whose operations alone decide whether it is linearizable.
type partitionKey interface{ partition() string }

// byPartition is the porcupine models' Partition: the operations of each
// key or record, in the order of their first.
func byPartition(history []porcupine.Operation) [][]porcupine.Operation {
	index := map[string]int{}
	var out [][]porcupine.Operation
	for _, op := range history {
		k := op.Input.(partitionKey).partition()
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], op)
	}
	return out
}

// withLanes numbers each partition's operations so that no two that
// overlap in time share a ClientId: porcupine draws a row per client, and
// a load's goroutines share one sender, so a ClientId of the sender's
// would draw operations over one another.
func withLanes(history []porcupine.Operation) []porcupine.Operation {
	var out []porcupine.Operation
	for _, part := range byPartition(history) {
		slices.SortStableFunc(part, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		var busyUntil []int64
		for _, op := range part {
			lane := slices.IndexFunc(busyUntil, func(end int64) bool { return end < op.Call })
			if lane < 0 {
				lane = len(busyUntil)
				busyUntil = append(busyUntil, 0)
			}
			busyUntil[lane] = op.Return
			op.ClientId = lane
			out = append(out, op)
		}
	}
	return out
}

// checkLinearizable fails the test when history, checked against model
// within linearizableWithin, is not linearizable: it names the keys or
// records that are not (up to illegalShown), lists the operations of the
// first, and has porcupine draw theirs in the test's artifact directory.
// A check that does not decide in time is logged.
func checkLinearizable(t *testing.T, what string, model porcupine.Model, history []porcupine.Operation) {
	t.Helper()
	history = withLanes(history)
	switch porcupine.CheckOperationsTimeout(model, history, linearizableWithin) {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		t.Logf("%s: porcupine did not decide within %s over %d operations: not checked", what, linearizableWithin, len(history))
		return
	}
	var illegal [][]porcupine.Operation
	for _, part := range byPartition(history) {
		if porcupine.CheckOperationsTimeout(model, part, linearizableWithin) == porcupine.Illegal {
			illegal = append(illegal, part)
		}
	}
	if len(illegal) == 0 {
		t.Errorf("%s are not linearizable, but porcupine did not decide which within %s", what, linearizableWithin)
		return
	}
	var names []string
	var drawn []porcupine.Operation
	for _, part := range illegal[:min(len(illegal), illegalShown)] {
		names = append(names, part[0].Input.(partitionKey).partition())
		drawn = append(drawn, part...)
	}
	_, info := porcupine.CheckOperationsVerbose(model, drawn, linearizableWithin)
	file := filepath.Join(t.ArtifactDir(), "porcupine-"+strings.ReplaceAll(names[0], " ", "-")+".html")
	if err := porcupine.VisualizePath(model, info, file); err != nil {
		file = "not drawn: " + err.Error()
	}
	t.Errorf("%s are not linearizable for %d of them (%s); %s\nporcupine draws them in %s (go test -artifacts keeps it)",
		what, len(illegal), strings.Join(names, ", "), describeIllegal(model, illegal[0]), file)
}

// describeIllegal says where the operations of one key or record, ops,
// stop being linearizable: the last illegalContext operations of their
// shortest illegal prefix (in the order of their calls), whose last is one
// that no order of those before allows.
func describeIllegal(model porcupine.Model, ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	n := 1
	for n < len(ops) && porcupine.CheckOperationsTimeout(model, ops[:n], linearizableWithin) != porcupine.Illegal {
		n++
	}
	from := max(0, n-illegalContext)
	return fmt.Sprintf("of the %d operations of %s, the first %d are not linearizable; the last of them:\n%s",
		len(ops), ops[0].Input.(partitionKey).partition(), n, describeOperations(model, ops[from:n]))
}

// describeOperations lists ops, one a line, in the order of their calls,
// each with its interval since the history began.
func describeOperations(model porcupine.Model, ops []porcupine.Operation) string {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var lines []string
	for _, op := range ops {
		line := fmt.Sprintf("  [%s, %s] %s", time.Duration(op.Call).Round(time.Millisecond), time.Duration(op.Return).Round(time.Millisecond),
			model.DescribeOperation(op.Input, op.Output))
		if op.Metadata != nil {
			line += fmt.Sprintf(" (%v)", op.Metadata)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// endOf is a time after every operation of ops: the return of each whose
// result is unknown, which may take effect at any time after its call.
func endOf(ops []operation) int64 {
	var end time.Duration
	for _, op := range ops {
		end = max(end, op.call, op.ret)
	}
	return int64(end) + 1
}

// keyedWrite is a keyed write's input to keyModel: its Idempotency-Key and
// what it asked for.
type keyedWrite struct{ key, request string }

func (w keyedWrite) partition() string { return "key " + w.key }

// keyedAnswer is a keyed write's output: what its answer says of it, and
// the answer.
type keyedAnswer struct {
	result opResult
	answer wireAnswer
}

func (a keyedAnswer) String() string {
	switch {
	case a.result == opOK:
		return fmt.Sprintf("%d %s %s", a.answer.code, a.answer.uuid, a.answer.status)
	case a.result == opFailed:
		return fmt.Sprintf("refused %d %s", a.answer.code, a.answer.errorCode)
	case a.answer.code == 0:
		return "unknown (no answer)"
	}
	return fmt.Sprintf("unknown (%d %s)", a.answer.code, a.answer.errorCode)
}

// keyModel is what payd promises of the answers under one Idempotency-Key
// (CONTRACT §3): a register, empty until the key's request takes effect,
// which the first answer that reports the effect (a 2xx: its status, uuid
// and the record's status then) writes once; every later answer that
// reports one, a replay, reports the same. A refusal (a 4xx) made nothing,
// so it is legal only while the register is empty; payd stores it after
// answering, outside the effect's transaction (idempotency.Claim.Finish),
// so the model holds no later answer to it. An unknown write may have
// taken effect: if it did, the answer that reports the effect is the one
// that writes the register, so an unknown changes nothing.
var keyModel = porcupine.Model{
	Partition: byPartition,
	Init:      func() any { return wireAnswer{} },
	Step: func(state, _, output any) (bool, any) {
		held, out := state.(wireAnswer), output.(keyedAnswer)
		empty := held == wireAnswer{}
		switch out.result {
		case opUnknown:
			return true, held
		case opFailed:
			return empty, held
		}
		return empty || held == out.answer, out.answer
	},
	DescribeOperation: func(input, output any) string {
		w := input.(keyedWrite)
		return fmt.Sprintf("%s under %s → %s", w.request, w.key, output.(keyedAnswer))
	},
	DescribeState: func(state any) string {
		if a := state.(wireAnswer); a != (wireAnswer{}) {
			return fmt.Sprintf("%d %s %s", a.code, a.uuid, a.status)
		}
		return "nothing made"
	},
}

// keyedWrites is every keyed write of ops as an operation of keyModel: an
// unknown one returns at the history's end.
func keyedWrites(ops []operation) []porcupine.Operation {
	end := endOf(ops)
	var out []porcupine.Operation
	for _, op := range ops {
		key := keyOf(op.r)
		if key == "" {
			continue
		}
		ret := int64(op.ret)
		if op.result == opUnknown {
			ret = end
		}
		out = append(out, porcupine.Operation{Input: keyedWrite{key: key, request: requestOf(op.r)}, Call: int64(op.call),
			Output: keyedAnswer{result: op.result, answer: answerOf(op.res)}, Return: ret, Metadata: requestIDOf(op)})
	}
	return out
}

// requestIDOf names op's request in payd's log.
func requestIDOf(op operation) string {
	if id := op.res.Header.Get("X-Request-Id"); id != "" {
		return "request " + id
	}
	return "no answer"
}

// stateMachine is one kind of record's statuses and the moves payd makes
// between them.
type stateMachine struct {
	name string
	next map[string][]string
}

// machine is the state machine of statuses S with the moves given.
func machine[S ~string](name string, moves map[S][]S) *stateMachine {
	m := &stateMachine{name: name, next: map[string][]string{}}
	for from, tos := range moves {
		for _, to := range tos {
			m.next[string(from)] = append(m.next[string(from)], string(to))
		}
	}
	return m
}

// The state machines of payd's records, as internal/payout and
// internal/payin move them.
var (
	// payoutMachine: a payout starts held (awaiting approval), scheduled
	// or processing; held ends in approval (scheduled or processing),
	// rejection or expiry; processing completes once every transaction
	// settled.
	payoutMachine = machine("payout", map[payout.Status][]payout.Status{
		payout.Held:       {payout.Scheduled, payout.Processing, payout.Rejected, payout.Expired},
		payout.Scheduled:  {payout.Processing},
		payout.Processing: {payout.Completed},
	})
	// payoutTransactionMachine: the rail settles a pending transaction
	// done or failed; a done one may come back, returned.
	payoutTransactionMachine = machine("payout transaction", map[payout.TxStatus][]payout.TxStatus{
		payout.TxPending: {payout.TxDone, payout.TxFailed},
		payout.TxDone:    {payout.TxReturned},
	})
	// payinMachine: a pending payin is received, fails, expires or is
	// cancelled; a received one may be refunded (return_pending) until
	// the refund reaches the customer or expires, and refunded again.
	payinMachine = machine("payin", map[payin.Status][]payin.Status{
		payin.Pending:        {payin.Received, payin.Failed, payin.Expired, payin.Cancelled},
		payin.Received:       {payin.ReturnPending},
		payin.ReturnPending:  {payin.ReturnReceived, payin.ReturnExpired},
		payin.ReturnReceived: {payin.ReturnPending},
		payin.ReturnExpired:  {payin.ReturnPending},
	})
)

// reaches reports whether a record seen at from may be seen at to later:
// from itself, or a status the moves lead to. A record not made yet ("")
// may be made at any status.
func (m *stateMachine) reaches(from, to string) bool {
	seen := map[string]bool{}
	for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
		s := queue[0]
		if s == to || s == "" {
			return true
		}
		if !seen[s] {
			seen[s] = true
			queue = append(queue, m.next[s]...)
		}
	}
	return false
}

// observedRecord is statusModel's input: the record one answer showed.
// The output is the status it showed, "" when the record was not found.
type observedRecord struct {
	machine *stateMachine
	uuid    string
}

func (o observedRecord) partition() string { return o.machine.name + " " + o.uuid }

// statusModel is what payd promises of a record's status: an answer shows
// it as it is, and it only moves forward along the record's state
// machine; once made, the record is always found.
var statusModel = porcupine.Model{
	Partition: byPartition,
	Init:      func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		from, to := state.(string), output.(string)
		if to == "" {
			return from == "", from
		}
		return input.(observedRecord).machine.reaches(from, to), to
	},
	DescribeOperation: func(input, output any) string {
		if output == "" {
			return "not found"
		}
		return output.(string)
	},
	DescribeState: func(state any) string {
		if state == "" {
			return "not made"
		}
		return state.(string)
	},
}

// recordAnswers maps each request whose 2xx answer shows payins or
// payouts as they are (a detail or list read, or a write that answers with
// its record) to the machine of what it shows.
var recordAnswers = map[string]*stateMachine{
	"GET /v2/payins/detail":    payinMachine,
	"GET /v2/payins/all":       payinMachine,
	"POST /v2/payins":          payinMachine,
	"POST /v2/payins/simulate": payinMachine,
	"POST /v2/payins/refund":   payinMachine,
	"GET /v2/payouts/detail":   payoutMachine,
	"GET /v2/payouts/all":      payoutMachine,
	"POST /v2/payouts":         payoutMachine,
}

// observations is every status the answers of ops showed, as operations
// of statusModel.
func observations(t *testing.T, ops []operation) []porcupine.Operation {
	t.Helper()
	var out []porcupine.Operation
	for _, op := range ops {
		for record, status := range observedIn(t, op) {
			out = append(out, porcupine.Operation{Input: record, Call: int64(op.call), Output: status, Return: int64(op.ret), Metadata: requestIDOf(op)})
		}
	}
	return out
}

// recordView is what statusModel reads of a payin or payout.
type recordView struct {
	UUID         string `json:"uuid"`
	Status       string `json:"status"`
	Transactions []struct {
		UUID   string `json:"uuid"`
		Status string `json:"status"`
	} `json:"payout_transactions"`
}

// observedIn is the statuses op's answer showed, by record: none for a
// replay, whose body is the answer stored by the key's first effect, not
// the record as it is; the record not found ("") for a detail read's 404.
func observedIn(t *testing.T, op operation) map[observedRecord]string {
	t.Helper()
	m, ok := recordAnswers[requestOf(op.r)]
	switch {
	case !ok || op.res.Header.Get("Idempotent-Replayed") == "true":
		return nil
	case op.res.Status == http.StatusNotFound && op.r.method == http.MethodGet && strings.HasSuffix(requestOf(op.r), "/detail"):
		u, err := url.Parse(op.r.path)
		if err != nil {
			t.Fatalf("read %s: %v", op.r.path, err)
		}
		return map[observedRecord]string{{machine: m, uuid: u.Query().Get("uuid")}: ""}
	case op.result != opOK:
		return nil
	}
	var body struct {
		recordView
		Records []recordView `json:"records"`
	}
	op.res.Decode(t, &body)
	if body.Records == nil {
		body.Records = []recordView{body.recordView}
	}
	out := map[observedRecord]string{}
	for _, r := range body.Records {
		out[observedRecord{machine: m, uuid: r.UUID}] = r.Status
		for _, tx := range r.Transactions {
			out[observedRecord{machine: payoutTransactionMachine, uuid: tx.UUID}] = tx.Status
		}
	}
	return out
}

// flow is one currency's money that the history's writes moved, in minor
// units: deposits and receipts in; the receipts' fees, the refunds that
// reached the customer and the payouts paid, with their fees, out.
type flow struct {
	deposits, receipts, fees, refunds, payouts int64
}

func (f flow) net() int64 { return f.deposits + f.receipts - f.fees - f.refunds - f.payouts }

func (f flow) describe(t *testing.T, currency string) string {
	t.Helper()
	return fmt.Sprintf("deposits %s + receipts %s − their fees %s − refunds %s − payouts and their fees %s",
		formatMinor(t, f.deposits, currency), formatMinor(t, f.receipts, currency), formatMinor(t, f.fees, currency),
		formatMinor(t, f.refunds, currency), formatMinor(t, f.payouts, currency))
}

// formatMinor writes minor units of currency as the API does.
func formatMinor(t *testing.T, minor int64, currency string) string {
	t.Helper()
	c, err := money.Lookup(currency)
	if err != nil {
		t.Fatal(err)
	}
	return money.Format(minor, c) + " " + currency
}

// checkBank holds the history to the bank invariant: each currency's total
// over the merchant's balances (available, incoming, outgoing, rolling
// reserve) moved from the opening by exactly the money the history's
// writes moved (moneyMoved), and no answer showed any of them below zero
// (only a card dispute takes a balance below zero, and nothing here is
// disputed).
func (h *opHistory) checkBank(t *testing.T, ops []operation, s settledState) {
	t.Helper()
	moved := moneyMoved(t, ops, s)
	opening, final := totals(t, h.opening), totals(t, s.balances)
	var currencies []string
	for _, m := range []map[string]int64{opening, final} {
		for c := range m {
			currencies = append(currencies, c)
		}
	}
	for c := range moved {
		currencies = append(currencies, c)
	}
	slices.Sort(currencies)
	for _, c := range slices.Compact(currencies) {
		var f flow
		if moved[c] != nil {
			f = *moved[c]
		}
		got, want := final[c]-opening[c], f.net()
		if got != want {
			t.Errorf("bank invariant: the merchant's %s balances moved by %s in all, but the history's money in and out comes to %s: %s; the balances now %+v",
				c, formatMinor(t, got, c), formatMinor(t, want, c), f.describe(t, c), s.balances)
			continue
		}
		if f != (flow{}) {
			t.Logf("bank invariant: the merchant's %s balances moved by %s, the history's %s", c, formatMinor(t, got, c), f.describe(t, c))
		}
	}
	checkNotNegative(t, ops)
}

// totals is each currency's total over balances, but withdrawable (a view
// of available).
func totals(t *testing.T, balances []balanceView) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, b := range balances {
		for _, v := range []json.Number{b.Available, b.Incoming, b.Outgoing, b.RollingReserve} {
			out[b.Currency] += minorUnits(t, v, b.Currency)
		}
	}
	return out
}

// moneyMoved is, by currency, the money the history's writes moved, from
// what each client sent and what payd answered it, and what the history's
// end read (s): a deposit made by a key brings its amount in, and so does a
// payin made by a key and received (receiptMoved); a payout made by a key
// takes out the amount and fee of each of its transactions that is done.
// A record a key made that the lists do not hold fails the test.
func moneyMoved(t *testing.T, ops []operation, s settledState) map[string]*flow {
	t.Helper()
	moved := map[string]*flow{}
	at := func(currency string) *flow {
		if moved[currency] == nil {
			moved[currency] = &flow{}
		}
		return moved[currency]
	}
	made := madeByKeys(ops)
	completed, refunds := completionsSent(t, ops), refundsMade(t, made)
	for _, op := range made {
		sent, uuid := bodyOf(t, op.r), answerOf(op.res).uuid
		switch requestOf(op.r) {
		case "POST /v1/simulate_deposit":
			currency := str(op.res.JSON(t), "currency")
			at(currency).deposits += minorUnits(t, sent["amount"], currency)
		case "POST /v2/payins":
			rec, ok := s.payins[uuid]
			if !ok {
				t.Errorf("payin %s, made under key %s, is not in the list of payins", uuid, keyOf(op.r))
				continue
			}
			receiptMoved(t, at(str(sent, "currency")), sent, rec, completed[uuid], refunds[uuid])
		case "POST /v2/payouts":
			rec, ok := s.payouts[uuid]
			if !ok {
				t.Errorf("payout %s, made under key %s, is not in the list of payouts", uuid, keyOf(op.r))
				continue
			}
			payoutMoved(t, at(str(rec, "currency")), rec)
		}
	}
	return moved
}

// receiptMoved adds to f the money that a payin, made by the request body
// sent and now as rec, moved: when received, what it asked for (or what its
// completion said was paid), less the fee payd publishes for its method;
// and, once return_received, its refunds (the loads refund a payin once). A
// payin received though no client sent its completion fails the test.
func receiptMoved(t *testing.T, f *flow, sent, rec, completion map[string]any, refunds []operation) {
	t.Helper()
	status := payin.Status(str(rec, "status"))
	switch status {
	case payin.Pending, payin.Failed, payin.Expired, payin.Cancelled:
		return
	}
	if completion == nil {
		t.Errorf("payin %s is %s, though no client sent its completion", str(rec, "uuid"), status)
		return
	}
	currency, paid := str(sent, "currency"), sent["amount"]
	if amount, ok := completion["amount"]; ok {
		paid = amount
	}
	paidMinor := minorUnits(t, paid, currency)
	f.receipts += paidMinor
	f.fees += receiptFee(t, str(sent, "payin_method_name"), paidMinor)
	if status != payin.ReturnReceived {
		return
	}
	for _, refund := range refunds {
		f.refunds += minorUnits(t, bodyOf(t, refund.r)["amount"], currency)
	}
}

// payoutMoved adds to f what the payout rec paid out: the amount and fee
// of each of its transactions that is done.
func payoutMoved(t *testing.T, f *flow, rec map[string]any) {
	t.Helper()
	currency := str(rec, "currency")
	txs, _ := rec["payout_transactions"].([]any)
	for _, tx := range txs {
		if tx := tx.(map[string]any); payout.TxStatus(str(tx, "status")) == payout.TxDone {
			f.payouts += minorUnits(t, tx["amount"], currency) + minorUnits(t, tx["fee"], currency)
		}
	}
}

// refundsMade is the refunds among made, by payin.
func refundsMade(t *testing.T, made []operation) map[string][]operation {
	t.Helper()
	out := map[string][]operation{}
	for _, op := range made {
		if requestOf(op.r) == "POST /v2/payins/refund" {
			uuid := str(bodyOf(t, op.r), "uuid")
			out[uuid] = append(out[uuid], op)
		}
	}
	return out
}

// madeByKeys is, for each Idempotency-Key of ops, the first of its writes
// (in the order they were sent) whose answer reports an effect: keyModel
// holds every later one to it.
func madeByKeys(ops []operation) []operation {
	answered := map[string]bool{}
	var out []operation
	for _, op := range ops {
		key := keyOf(op.r)
		if key == "" || op.result != opOK || answered[key] {
			continue
		}
		answered[key] = true
		out = append(out, op)
	}
	return out
}

// completionsSent is the body of a completion that clients sent for each
// payin, whatever came back.
func completionsSent(t *testing.T, ops []operation) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, op := range ops {
		if requestOf(op.r) != "POST /v2/payins/simulate" {
			continue
		}
		if body := bodyOf(t, op.r); str(body, "status") == "completed" {
			out[str(body, "uuid")] = body
		}
	}
	return out
}

// receiptFee is the fee payd publishes for a receipt of paidMinor by the
// method (its basis points and fixed part, at most what was paid), which
// the receipt's clearing takes.
func receiptFee(t *testing.T, method string, paidMinor int64) int64 {
	t.Helper()
	m, err := payin.Lookup(method)
	if err != nil {
		t.Fatal(err)
	}
	return min(paidMinor, money.Percent(paidMinor, m.FeeBPS)+m.FeeFixedMinor)
}

// checkNotNegative fails the test for the balances that answers showed
// below zero (naming up to illegalShown).
func checkNotNegative(t *testing.T, ops []operation) {
	t.Helper()
	var below []string
	for _, op := range ops {
		for _, b := range balancesIn(t, op) {
			for _, bucket := range []struct {
				name  string
				value json.Number
			}{{"available", b.Available}, {"incoming", b.Incoming}, {"outgoing", b.Outgoing}, {"rolling reserve", b.RollingReserve}} {
				if minorUnits(t, bucket.value, b.Currency) < 0 {
					below = append(below, fmt.Sprintf("%s %s %s at %s (%s)", b.Currency, bucket.name, bucket.value, op.call.Round(time.Millisecond), requestIDOf(op)))
				}
			}
		}
	}
	if len(below) > 0 {
		t.Errorf("%d balances were seen below zero, and nothing was disputed: %s", len(below), strings.Join(below[:min(len(below), illegalShown)], "; "))
	}
}

// balancesIn is the balances op's answer showed: none unless it is a 200
// of GET /v2/balances or /v2/balances/detail.
func balancesIn(t *testing.T, op operation) []balanceView {
	t.Helper()
	if op.res.Status != http.StatusOK {
		return nil
	}
	switch requestOf(op.r) {
	case "GET /v2/balances":
		var list struct {
			Records []balanceView `json:"records"`
		}
		op.res.Decode(t, &list)
		return list.Records
	case "GET /v2/balances/detail":
		var b balanceView
		op.res.Decode(t, &b)
		return []balanceView{b}
	}
	return nil
}

// TestHistoryModelsCatchViolations keeps the history checks honest: a
// hand-made history that breaks a model's rule is not linearizable, one
// that keeps it is.
func TestHistoryModelsCatchViolations(t *testing.T) {
	t.Parallel()
	const end = 100 // the history's end, where an unknown write returns
	write := func(call, ret int64, result opResult, answer wireAnswer) porcupine.Operation {
		return porcupine.Operation{Input: keyedWrite{key: "payout-1", request: "POST /v2/payouts"}, Call: call,
			Output: keyedAnswer{result: result, answer: answer}, Return: ret}
	}
	made := func(call, ret int64, uuid string) porcupine.Operation {
		return write(call, ret, opOK, wireAnswer{code: 201, uuid: uuid, status: "processing"})
	}
	refused := func(call, ret int64) porcupine.Operation {
		return write(call, ret, opFailed, wireAnswer{code: 422, errorCode: "INSUFFICIENT_FUNDS"})
	}
	unknown := func(call int64) porcupine.Operation {
		return write(call, end, opUnknown, wireAnswer{code: 503, errorCode: "UNAVAILABLE"})
	}
	seen := func(m *stateMachine, call, ret int64, status string) porcupine.Operation {
		return porcupine.Operation{Input: observedRecord{machine: m, uuid: "MB3Y26GO"}, Call: call, Output: status, Return: ret}
	}
	tests := []struct {
		name    string
		model   porcupine.Model
		history []porcupine.Operation
		want    bool
	}{
		{"a replay answers the first effect", keyModel, []porcupine.Operation{made(0, 1, "A"), made(2, 3, "A")}, true},
		{"a replay answers a fresh uuid", keyModel, []porcupine.Operation{made(0, 1, "A"), made(2, 3, "B")}, false},
		{"an unknown write's effect reported by its retry", keyModel, []porcupine.Operation{unknown(0), made(2, 3, "A"), made(4, 5, "A")}, true},
		{"an unknown write, then two effects", keyModel, []porcupine.Operation{unknown(0), made(2, 3, "A"), made(4, 5, "B")}, false},
		{"refusals before the effect", keyModel, []porcupine.Operation{refused(0, 1), made(2, 3, "A")}, true},
		{"a refusal after the effect", keyModel, []porcupine.Operation{made(0, 1, "A"), refused(2, 3)}, false},
		{"a refusal beside the effect", keyModel, []porcupine.Operation{made(0, 3, "A"), refused(1, 2)}, true},
		{"a payout read forward, skipping statuses", statusModel,
			[]porcupine.Operation{seen(payoutMachine, 0, 1, "held"), seen(payoutMachine, 2, 3, "completed")}, true},
		{"a payout read back", statusModel,
			[]porcupine.Operation{seen(payoutMachine, 0, 1, "completed"), seen(payoutMachine, 2, 3, "processing")}, false},
		{"two reads of a payout at once, in either order", statusModel,
			[]porcupine.Operation{seen(payoutMachine, 0, 5, "completed"), seen(payoutMachine, 1, 4, "processing")}, true},
		{"a payout not found once seen", statusModel,
			[]porcupine.Operation{seen(payoutMachine, 0, 1, "processing"), seen(payoutMachine, 2, 3, "")}, false},
		{"a payout not found before it is made", statusModel,
			[]porcupine.Operation{seen(payoutMachine, 0, 1, ""), seen(payoutMachine, 2, 3, "processing")}, true},
		{"a payout transaction returned after done", statusModel,
			[]porcupine.Operation{seen(payoutTransactionMachine, 0, 1, "done"), seen(payoutTransactionMachine, 2, 3, "returned")}, true},
		{"a failed payout transaction done", statusModel,
			[]porcupine.Operation{seen(payoutTransactionMachine, 0, 1, "failed"), seen(payoutTransactionMachine, 2, 3, "done")}, false},
		{"a payin refunded again", statusModel,
			[]porcupine.Operation{seen(payinMachine, 0, 1, "return_received"), seen(payinMachine, 2, 3, "return_pending")}, true},
		{"a received payin pending again", statusModel,
			[]porcupine.Operation{seen(payinMachine, 0, 1, "received"), seen(payinMachine, 2, 3, "pending")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(tt.model, withLanes(tt.history)); got != tt.want {
				t.Errorf("linearizable = %v, want %v:\n%s", got, tt.want, describeOperations(tt.model, tt.history))
			}
		})
	}
}
