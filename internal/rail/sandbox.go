package rail

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"payd/internal/job"
	"payd/internal/store"
)

// jobSandboxOutcome is the sandbox network answering a transfer.
var jobSandboxOutcome = job.NewKind[sandboxRef]("rail.sandbox.outcome")

// Sandbox is the simulated network of the sandbox (CONTRACT §5): every
// transfer completes Delay after its submission on the merchant's clock,
// except one to an account number of zeros only (000000000; 0000000 where
// accounts have 7 digits, as in Japan) or to a pay_id beginning with "fail",
// which fails with a reason. Submissions are kept in
// rail_submissions, one row per Key, counting repeats, so a test can see that
// each transfer reached the network exactly once.
type Sandbox struct {
	queue    *job.Queue
	handlers map[string]OutcomeHandler
	// Delay is how long the network takes to answer.
	Delay time.Duration
}

// NewSandbox returns the sandbox rail and registers its job with queue.
func NewSandbox(queue *job.Queue) *Sandbox {
	s := &Sandbox{queue: queue, Delay: 3 * time.Second, handlers: map[string]OutcomeHandler{}}
	job.Register(queue, jobSandboxOutcome, s.answer)
	return s
}

// Listen sets where the outcomes of keys beginning with prefix go.
func (s *Sandbox) Listen(prefix string, h OutcomeHandler) { s.handlers[prefix] = h }

// handler is the listener of key: the one with the longest matching prefix.
func (s *Sandbox) handler(key string) OutcomeHandler {
	var best OutcomeHandler
	bestLen := -1
	for prefix, h := range s.handlers {
		if strings.HasPrefix(key, prefix) && len(prefix) > bestLen {
			best, bestLen = h, len(prefix)
		}
	}
	return best
}

// Submit records t and schedules the network's answer.
func (s *Sandbox) Submit(ctx context.Context, tx *store.Tx, t Transfer) error {
	params, err := json.Marshal(t.Params)
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	err = tx.Send(ctx, `INSERT INTO rail_submissions (key, merchant_id, rail, method, currency, amount, params, attempts, created_at, bank_reference)
		VALUES ($1, $2, 'sandbox', $3, $4, $5, $6, 1, $7, $8)
		ON CONFLICT (merchant_id, key) DO UPDATE SET attempts = rail_submissions.attempts + 1`,
		t.Key, t.MerchantID, t.Method, t.Currency, t.AmountMinor, string(params), t.At.UnixMilli(), nullable(t.BankReference))
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	return job.Enqueue(ctx, tx, s.queue, jobSandboxOutcome, sandboxRef{Key: t.Key, MerchantID: t.MerchantID},
		job.Options{ClockOf: t.MerchantID, RunAt: t.At.Add(s.Delay), UniqueKey: jobSandboxOutcome.String() + ":" + t.Key})
}

// nullable is s, or NULL when it is empty (a column whose unique key
// leaves NULLs out).
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sandboxRef is the payload of jobSandboxOutcome.
type sandboxRef struct {
	Key        string `json:"key"`
	MerchantID string `json:"merchant_id"`
}

// answer decides a submitted transfer and hands the outcome to the handler.
func (s *Sandbox) answer(ctx context.Context, tx *store.Tx, _ job.Job, ref sandboxRef) error {
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT params FROM rail_submissions WHERE key = $1 AND merchant_id = $2`,
		ref.Key, ref.MerchantID).Scan(&raw); err != nil {
		return fmt.Errorf("sandbox outcome %s: %w", ref.Key, err)
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(raw), &params); err != nil {
		return fmt.Errorf("sandbox outcome %s: %w", ref.Key, err)
	}
	o := Outcome{Key: ref.Key, MerchantID: ref.MerchantID, Verdict: Done}
	if reason := SandboxFailure(params); reason != "" {
		o.Verdict, o.Reason = Failed, reason
	}
	h := s.handler(ref.Key)
	if h == nil {
		return fmt.Errorf("sandbox outcome %s: no outcome handler", ref.Key)
	}
	_, err := h(ctx, tx, o)
	return err
}

// SandboxFailure is why the sandbox network refuses a transfer to params, or
// "" when it pays it.
func SandboxFailure(params map[string]any) string {
	if n, _ := params["account_number"].(string); len(n) >= 7 && strings.Trim(n, "0") == "" {
		return "the recipient's bank refused the transfer: account " + n + " does not exist"
	}
	if id, _ := params["pay_id"].(string); strings.HasPrefix(strings.ToLower(id), "fail") {
		return "the PayID is not registered with any bank"
	}
	return ""
}
