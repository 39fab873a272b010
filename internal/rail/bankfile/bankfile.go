// Package bankfile is the bank-file rail (CONTRACT §17, §25): production
// money out through the operator's bank. Transfers handed to it wait, in
// their merchant's rail_submissions rows, for their rail's next cut-off;
// at each cut-off one file holds every transfer handed to the rail before
// it (none: no file), written in the rail's format, stored whole with its
// SHA-256 in the cut-off's transaction, then delivered to the rail's outbox
// and retried with backoff until it is (written, then delivered). A
// transfer is in exactly one file, ever: the cut-off takes it out of the
// waiting set in the transaction that stores the file.
//
// The rails (payd rail set|list|unset) are operator records in the
// database, so every process sees the same set: Files reads them at start
// and in each round of Run (every Poll), and a transaction that asks which
// rail serves a transfer is answered from what it read, never made to wait
// for a read (serving says why), so a set or unset is seen by every process
// within about a round.
//
// # Why a loop, not jobs
//
// Cut-offs and deliveries run in a loop that payd serve starts (Run, like
// server's keepStatistics), not as jobs: the job queue's lanes are per
// merchant and a job belongs to one, while a rail serves many merchants and
// its files belong to none. Every process runs the loop; a rail's cut-off
// is made by one process at a time (its key's lock, store.Tx.TryLockKey,
// in the cut-off's transaction), and so is its delivery (the same kind of
// lock in the delivery's transaction on PostgreSQL, whose holder is a live
// process: a killed one's lock goes with its connection). The loop follows
// the real clock: a rail serves many merchants, none of whose test clocks
// it could follow.
//
// # Crashes
//
// A cut-off re-run after a crash writes the same file: its rows are the
// transfers still waiting that were handed over before the cut-off's
// instant, in bank-reference order; its name comes from the cut-off's
// local date and the files of that day so far; its file reference from its
// name; its CreatedAt is the cut-off's instant. Nothing of it is kept
// until its transaction commits, and then everything is (the file's bytes
// too), so a crash before leaves nothing and one after leaves a written
// file that the next delivery puts, under the same name: an outbox's Put is
// atomic and idempotent. The steps can be killed on purpose for the tests
// that prove it (Deps.KillAt).
//
// # What comes back
//
// The bank's word on a transfer is applied by one function, Outcome, in
// the outcome order of CONTRACT §25 (rail.Judge: pending to done or
// failed, done to returned; the same word again changes nothing; a
// contrary one changes nothing and opens a state_mismatch exception for
// the operator). The inbox reader (inbox.go: each rail's inbox read every
// InboxPoll by Run, one process at a time, each file applied once by its
// SHA-256, decided whole before anything of it is applied, each of its
// entries applied in a short transaction of its own, a restart resuming
// where it stopped), payd bankfile outcome and, later, the bank feeds all
// call it; ConfirmFile is a booked debit of a file's reference.
package bankfile

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"payd/internal/bank"
	"payd/internal/clock"
	"payd/internal/payfile"
	"payd/internal/rail"
	"payd/internal/store"
)

// Writer writes a file in one format (aba.Write, zengin.Write,
// iso20022.WritePain001): the same File always makes the same bytes.
type Writer func(payfile.File) ([]byte, error)

// Outbox is where a rail's files are put: bankchannel's Endpoint, as the
// delivery uses it. Put is atomic (the file appears whole under its name or
// not at all) and idempotent (the same name and bytes again is no error).
type Outbox interface {
	Put(ctx context.Context, name string, content []byte) error
	Close() error
}

// Keys are a rail's SFTP credentials: its private key and the known_hosts
// file that pins the server's host key.
type Keys struct {
	SFTPKey, SFTPKnownHosts string
}

// Opener opens a rail's outbox (dir:PATH or sftp://…).
type Opener func(ctx context.Context, url string, keys Keys) (Outbox, error)

// Banks is the Zengin directory, for the kana names of a Zengin file.
type Banks interface {
	Branch(bankCode, branchCode string) (bank.Branch, error)
}

// Step is a point of a cut-off or a delivery at which Deps.KillAt kills the
// process, for the tests that prove a crash there loses nothing and
// repeats nothing.
type Step string

const (
	// StepBuilt: the file's bytes are made, its transaction not committed.
	StepBuilt Step = "built"
	// StepWritten: the cut-off committed, the file not yet delivered.
	StepWritten Step = "written"
	// StepUploading: the delivery is claimed, the upload not started.
	StepUploading Step = "uploading"
	// StepUploaded: the outbox holds the file, its delivery not recorded.
	StepUploaded Step = "uploaded"
	// StepApplying: an inbox file's first entry is applied and committed,
	// the others not yet, nor the file's done mark.
	StepApplying Step = "applying"
)

// Deps are what Files needs.
type Deps struct {
	DB *store.DB
	// Clock is the real clock in production: cut-offs and hand-over times
	// follow it, never a merchant's test clock.
	Clock clock.Clock
	Log   *slog.Logger
	Banks Banks
	// Writers are the formats' writers.
	Writers map[payfile.Format]Writer
	// Open opens an outbox (default OpenChannel).
	Open Opener
	// OpenInbox opens an inbox (default OpenInboxChannel).
	OpenInbox InboxOpener
	// InboxPoll is how often Run reads the rails' inboxes (default
	// DefaultInboxPoll).
	InboxPoll time.Duration
	// CacheTTL bounds how long a set or unset rail takes to be seen by
	// this process (default DefaultCacheTTL).
	CacheTTL time.Duration
	// RetryBase is the delay before a failed delivery's first retry,
	// doubled each time up to maxRetryDelay (default DefaultRetryBase).
	RetryBase time.Duration
	// KillAt, when set, has the process kill itself with SIGKILL at that
	// step (the end-to-end crash tests; PAYD_TEST_BANKFILE_KILL).
	KillAt Step
}

// Defaults of Deps.
const (
	DefaultCacheTTL  = time.Second
	DefaultRetryBase = 5 * time.Second
	DefaultInboxPoll = 30 * time.Second
	maxRetryDelay    = 10 * time.Minute
	// uploadTimeout bounds one delivery attempt.
	uploadTimeout = time.Minute
)

// Files is the bank-file rail: rail.Rail for the transfers a rail in the
// database serves, and their cut-offs and deliveries.
type Files struct {
	Deps
	mu sync.Mutex
	// served maps a (currency, method) key to the rail that serves it,
	// read at readAt on machine: the machine's own clock (clock.Real, with
	// its monotonic reading), never Deps.Clock, which tests hold still: the
	// bound CacheTTL promises is in real time, across processes.
	served  map[string]Rail
	readAt  time.Time
	machine clock.Clock
	// reading is set while a background read of the rails runs (readSoon).
	reading atomic.Bool
	// handlers hear outcomes, by key prefix (rail.Rail's Listen).
	handlers map[string]rail.OutcomeHandler
	// remitters caches merchants' names (they do not change).
	remitters sync.Map
	// polling makes one goroutine of the process at a time read the
	// inboxes (PollInboxes); across processes, each inbox's lock does.
	polling sync.Mutex
}

// New returns the bank-file rail.
func New(d Deps) *Files {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.CacheTTL <= 0 {
		d.CacheTTL = DefaultCacheTTL
	}
	if d.RetryBase <= 0 {
		d.RetryBase = DefaultRetryBase
	}
	if d.Open == nil {
		d.Open = OpenChannel
	}
	if d.OpenInbox == nil {
		d.OpenInbox = OpenInboxChannel
	}
	if d.InboxPoll <= 0 {
		d.InboxPoll = DefaultInboxPoll
	}
	return &Files{Deps: d, handlers: map[string]rail.OutcomeHandler{}, machine: clock.Real{}}
}

func servedKey(currency, method string) string { return currency + "\x00" + method }

// serving is the rail that serves (currency, method) now, from what Files
// knows of the rails. A transaction never waits for the rails to be read
// again: on PostgreSQL the read pool is the write pool, and callers that
// each hold a connection while they wait for another exhaust it under load.
// Files learns the rails at start (Load), again in each of Run's rounds,
// and, when what it knows is older than CacheTTL (no Run, as in a test of
// the services), in the background, its caller going on with what it knew.
// Only when it knows nothing yet (after Forget) does it read, through q, the
// caller's own transaction.
func (f *Files) serving(ctx context.Context, q store.Querier, currency, method string) (Rail, bool, error) {
	f.mu.Lock()
	served, stale := f.served, f.machine.Now().Sub(f.readAt) >= f.CacheTTL
	f.mu.Unlock()
	switch {
	case served == nil:
		rails, err := f.read(ctx, q)
		if err != nil {
			return Rail{}, false, err
		}
		served = rails
	case stale:
		f.readSoon()
	}
	r, ok := served[servedKey(currency, rail.RailMethod(method))]
	return r, ok, nil
}

// Load reads the rails now (payd serve does at start, before any request).
func (f *Files) Load(ctx context.Context) error {
	_, err := f.read(ctx, f.DB.Read())
	return err
}

// read reads the rails that serve transfers through q and remembers them.
func (f *Files) read(ctx context.Context, q store.Querier) (map[string]Rail, error) {
	readAt := f.machine.Now()
	rails, err := readRails(ctx, q, false)
	if err != nil {
		return nil, err
	}
	return f.remember(rails, readAt), nil
}

// remember keeps rails, read at readAt, as the ones serving transfers,
// unless what Files knows was read later.
func (f *Files) remember(rails []Rail, readAt time.Time) map[string]Rail {
	served := map[string]Rail{}
	for _, r := range rails {
		if r.Unset {
			continue
		}
		for _, m := range r.Methods {
			served[servedKey(r.Currency, m)] = r
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.served == nil || !readAt.Before(f.readAt) {
		f.served, f.readAt = served, readAt
	}
	return served
}

// readSoon reads the rails again in the background, once at a time.
func (f *Files) readSoon() {
	if !f.reading.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer f.reading.Store(false)
		if _, err := f.read(context.Background(), f.DB.Read()); err != nil {
			f.Log.Warn("read the bank-file rails", "err", err)
		}
	}()
}

// Forget drops what Files knows of the rails, so that the next question
// reads them (a test that sets a rail and uses it at once).
func (f *Files) Forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.served = nil
}

// FileFormat is the format of the rail that serves (currency, method), or
// "" when none does (rail.FileFormats).
func (f *Files) FileFormat(ctx context.Context, q store.Querier, currency, method string) (payfile.Format, error) {
	r, ok, err := f.serving(ctx, q, currency, method)
	if err != nil || !ok {
		return "", err
	}
	return r.Format, nil
}

// Listen sets where the outcomes of keys beginning with prefix go.
func (f *Files) Listen(prefix string, h rail.OutcomeHandler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[prefix] = h
}

// handler is the listener of key: the one with the longest matching prefix.
func (f *Files) handler(key string) rail.OutcomeHandler {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best rail.OutcomeHandler
	bestLen := -1
	for prefix, h := range f.handlers {
		if strings.HasPrefix(key, prefix) && len(prefix) > bestLen {
			best, bestLen = h, len(prefix)
		}
	}
	return best
}

// Submit records t as waiting for the next cut-off of the rail that serves
// it, in tx (the caller's, which records the hand-over): one row per Key,
// a second Submit of the same Key counted and changing nothing else. Its
// hand-over time is the real clock's.
func (f *Files) Submit(ctx context.Context, tx *store.Tx, t rail.Transfer) error {
	r, ok, err := f.serving(ctx, tx, t.Currency, t.Method)
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	if !ok {
		return fmt.Errorf("submit %s: no bank-file rail serves %s %s (unset since it was routed)", t.Key, t.Currency, rail.RailMethod(t.Method))
	}
	if !rail.ValidReference(r.Format, t.BankReference) {
		return fmt.Errorf("submit %s: bank reference %q is not one of a %s rail", t.Key, t.BankReference, r.Format)
	}
	remitter, err := f.remitter(ctx, t.MerchantID)
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	params, err := json.Marshal(t.Params)
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	err = tx.Send(ctx, `INSERT INTO rail_submissions (key, merchant_id, rail, method, currency, amount, params, attempts, created_at,
		bank_reference, waiting, handed_at, payee, description, remitter)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (merchant_id, key) DO UPDATE SET attempts = rail_submissions.attempts + 1`,
		t.Key, t.MerchantID, r.Name, t.Method, t.Currency, t.AmountMinor, string(params), t.At.UnixMilli(),
		t.BankReference, true, f.Clock.Now().UnixMilli(), t.Payee, t.Description, remitter)
	if err != nil {
		return fmt.Errorf("submit %s: %w", t.Key, err)
	}
	return nil
}

// remitter is the merchant's name, which a file shows its recipients as who
// paid (the ABA remitter name cuts it to 16).
func (f *Files) remitter(ctx context.Context, merchantID string) (string, error) {
	if v, ok := f.remitters.Load(merchantID); ok {
		return v.(string), nil
	}
	var name string
	if err := f.DB.Read().QueryRowContext(ctx, `SELECT name FROM merchants WHERE id = $1`, merchantID).Scan(&name); err != nil {
		return "", fmt.Errorf("read the name of merchant %s: %w", merchantID, err)
	}
	f.remitters.Store(merchantID, name)
	return name, nil
}

// kill ends the process at step when Deps.KillAt names it, saying so in
// the log first with what the step has (attrs: the file, its SHA-256).
func (f *Files) kill(step Step, attrs ...any) {
	if f.KillAt == step {
		f.Log.Warn("killing the process at a bank-file step (PAYD_TEST_BANKFILE_KILL)", append([]any{"step", string(step)}, attrs...)...)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
