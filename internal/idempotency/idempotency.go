// Package idempotency makes a retried POST or PUT safe: the first request
// with an Idempotency-Key claims the key in the same transaction as its
// effect and stores its response; a replay gets that response back, a
// different request under the same key is refused, and a duplicate that
// arrives while the first is still running is told to wait (409).
package idempotency

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// Retention is how long stored responses are kept (at least 7 days).
const Retention = 8 * 24 * time.Hour

// Error codes of the idempotency rules.
const (
	CodeKeyReused = "IDEMPOTENCY_KEY_REUSED"
	CodeInFlight  = "IDEMPOTENCY_KEY_IN_USE"
)

var (
	errReused   = fault.Rule(CodeKeyReused, "this Idempotency-Key was used with a different request")
	errInFlight = fault.New(fault.Conflict, CodeInFlight, "a request with this Idempotency-Key is still being processed; retry later")
)

// Stored is a response kept for replay.
type Stored struct {
	Status int
	Body   []byte
}

// Request identifies one keyed request.
type Request struct {
	MerchantID string
	Key        string
	// Hash is the fingerprint of method, path and body.
	Hash string
}

// Keeper checks and stores keyed requests.
type Keeper struct {
	db    *store.DB
	clock clock.Clock // dates stored responses, for Purge
	mu    sync.Mutex
	// inFlight holds the keys this process is running now, so a duplicate is
	// refused at once instead of queueing behind SQLite's single writer.
	inFlight map[string]bool
}

// NewKeeper returns a Keeper on db.
func NewKeeper(db *store.DB, clk clock.Clock) *Keeper {
	return &Keeper{db: db, clock: clk, inFlight: map[string]bool{}}
}

// Begin starts a keyed request. It returns an error when the key is in
// flight in this process, and otherwise a Claim to attach to the request's
// context (and to Finish when the request ends). It reads nothing: the key
// is claimed and checked in the transaction of the request's effect (Do),
// or, for an answer no transaction made, just before it is written
// (Claim.Stored).
func (k *Keeper) Begin(r Request) (*Claim, error) {
	id := r.MerchantID + "\x00" + r.Key
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inFlight[id] {
		return nil, errInFlight
	}
	k.inFlight[id] = true
	return &Claim{keeper: k, req: r, id: id}, nil
}

// lookup returns the stored response for r, errReused when the key belongs
// to another request, errInFlight when its effect committed and its answer
// is still being written, or nothing when the key is free.
func lookup(ctx context.Context, q store.Querier, r Request) (*Stored, error) {
	var hash string
	var s Stored
	err := q.QueryRowContext(ctx, `SELECT request_hash, status_code, body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
		r.MerchantID, r.Key).Scan(&hash, &s.Status, &s.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency lookup: %w", err)
	}
	return r.replay(hash, s)
}

// replay is the answer to r under a key stored for the request whose
// fingerprint is hash: the stored response s, or errReused when that was
// another request.
func (r Request) replay(hash string, s Stored) (*Stored, error) {
	switch {
	case hash != r.Hash:
		return nil, errReused
	case s.Status == answerPending:
		return nil, errInFlight
	}
	return &s, nil
}

// answerPending is the status a key is claimed with when its effect's
// transaction cannot render the answer (Claim.Render unset): Finish stores
// the answer written once it commits.
const answerPending = 0

// Claim is a keyed request in progress: the code that opens the
// transaction carrying the request's effect (httpapi's inTx) runs it through
// Do, which claims the key and stores the response in that transaction.
type Claim struct {
	keeper *Keeper
	req    Request
	id     string
	// Status and Render produce the stored response from the transaction's
	// result; the HTTP layer sets them before calling the service.
	Status int
	Render func(result any) ([]byte, error)
	// Answer, when set, produces the stored response, status and body,
	// from the result instead of Status and Render: for an effect whose
	// answer depends on what it found (a wrong code commits its attempt
	// and answers 400), stored with the effect all the same, so that an
	// effect whose commit's answer was lost is replayed, never left
	// pending.
	Answer func(result any) (status int, body []byte, err error)
	// Replayed is set when the key turned out to be taken already (an
	// earlier request, or another process's, finished first).
	Replayed *Stored
	// settled is set once what the key holds is known to this request: a
	// transaction ran under the claim, or Stored looked.
	settled bool
	// used is set once a transaction has completed under this claim: one
	// claim, one effect, so later transactions of the request are not keyed.
	used   bool
	stored bool
	// body is the response stored with the committed effect.
	body []byte
	// inFlight is set when another process held the key: that 409 is an
	// answer about timing, not about the request, so it is never stored.
	inFlight bool
}

// ErrReplay tells the HTTP layer to answer with Claim.Replayed: the effect was
// already made by an earlier request with the same key.
var ErrReplay = errors.New("idempotent replay")

// Do runs effect in one write transaction (store.Do) under the claim c (with
// c nil, or used already, just effect): the key is claimed in that
// transaction, and the response rendered from effect's result is stored in
// it, so the effect and the stored answer are one atomic fact (CONTRACT §3).
// When the key turns out to be taken already, the effect's work is rolled
// back with the transaction: Do returns ErrReplay (the earlier response is
// in c.Replayed), the in-flight 409, or the reused-key refusal, whatever
// effect returned.
//
// Nothing is read for the key before the COMMIT, so on PostgreSQL a keyed
// write costs no round trip more than its effect, and on SQLite no read in
// the one writer: the stored response is a plain insert, which fails the
// transaction when the key is taken already (or, on PostgreSQL, was taken
// meanwhile: it fails the COMMIT); on PostgreSQL the key's advisory lock is
// taken by a statement that fails the transaction when another process's
// transaction holds the key (the 409). Only a transaction that failed looks
// the key up, after its rollback: a taken key is the answer, not the
// effect's own failure.
func Do[T any](ctx context.Context, db *store.DB, c *Claim, effect func(tx *store.Tx) (T, error)) (T, error) {
	if c == nil || c.used {
		return store.Do(ctx, db, effect)
	}
	v, err := store.Do(ctx, db, func(tx *store.Tx) (T, error) {
		var zero T
		if err := c.acquire(ctx, tx); err != nil {
			return zero, err
		}
		v, err := effect(tx)
		if err != nil {
			return zero, err
		}
		return v, c.complete(ctx, tx, v)
	})
	if err = c.settle(ctx, err); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// acquire takes the key's lock at the start of the effect's transaction
// (store.Tx.TryLockKey), queued to go with the effect's first statement.
// SQLite runs one writer at a time and takes none.
func (c *Claim) acquire(ctx context.Context, tx *store.Tx) error {
	if err := tx.TryLockKey(ctx, "idempotency", c.id); err != nil {
		return fmt.Errorf("idempotency lock: %w", err)
	}
	return nil
}

// settle turns the outcome err of the effect's transaction into the
// request's answer: a failure is the key's answer when the key turns out to
// be held (409) or taken (a replay, or the reused-key refusal).
func (c *Claim) settle(ctx context.Context, err error) error {
	c.settled = true
	switch {
	case err == nil:
		return nil
	case store.IsKeyLocked(err):
		c.inFlight = true
		return errInFlight
	}
	stored, lerr := c.look(ctx)
	switch {
	case stored != nil:
		c.Replayed = stored
		return ErrReplay
	case errors.Is(lerr, errReused), errors.Is(lerr, errInFlight):
		return lerr
	}
	return err
}

// Stored returns the response stored under the key, for an answer that no
// transaction under the claim made (a refusal before the effect, say): the
// stored one is the answer to a replay. It returns the reused-key refusal
// for another request's key, and nothing when a transaction under the claim
// has settled the key already.
func (c *Claim) Stored(ctx context.Context) (*Stored, error) {
	if c.settled {
		return nil, nil
	}
	return c.look(ctx)
}

// look reads what the key holds now (lookup), and settles the claim: a key
// whose answer is pending makes this request's answer the in-flight 409,
// which is never stored.
func (c *Claim) look(ctx context.Context) (*Stored, error) {
	c.settled = true
	stored, err := lookup(ctx, c.keeper.db.Read(), c.req)
	c.inFlight = errors.Is(err, errInFlight)
	return stored, err
}

// complete stores the response rendered from the transaction's result. The
// claim counts as used only once the transaction commits, so a transaction
// that is rolled back (or retried) leaves it free. Without Render the key
// is claimed with the answer pending, which Finish stores.
func (c *Claim) complete(ctx context.Context, tx *store.Tx, result any) error {
	status, body := answerPending, []byte{}
	var err error
	switch {
	case c.Answer != nil:
		if status, body, err = c.Answer(result); err != nil {
			return fmt.Errorf("render idempotent response: %w", err)
		}
	case c.Render != nil:
		if body, err = c.Render(result); err != nil {
			return fmt.Errorf("render idempotent response: %w", err)
		}
		status = c.Status
	}
	if err := tx.Send(ctx, insertKey, c.args(status, body)...); err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	tx.AfterCommit(func() {
		c.used, c.stored = true, status != answerPending
		if c.stored {
			c.body = body
		}
	})
	return nil
}

// Body is the response rendered (Render) and stored with the committed
// effect, or nil: the HTTP layer answers with it rather than render it again.
func (c *Claim) Body() []byte {
	if c == nil {
		return nil
	}
	return c.body
}

// Finish stores a response that no transaction stored (an error answer, a
// handler without database effect, or the answer a transaction left
// pending) and releases the key. Responses of 500 and above, and the 409 of
// a key held by another process, are not stored, so the client may retry
// them; a pending answer then stays pending (409) rather than let the
// effect run twice.
func (c *Claim) Finish(ctx context.Context, status int, body []byte) error {
	defer c.release()
	if c.stored || c.inFlight || status >= 500 {
		return nil
	}
	if body == nil {
		body = []byte{} // an answer without a body (the column is NOT NULL)
	}
	return c.keeper.db.Exec(ctx, func(tx *store.Tx) error {
		return tx.Send(ctx, insertKey+fillPending, c.args(status, body)...)
	})
}

// insertKey stores an answer under a key; complete's fails when the key is
// taken. fillPending makes Finish's store the answer a transaction left
// pending (status 0, answerPending) under the same request, and leave any
// other key as it is.
const (
	insertKey = `INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`
	fillPending = ` ON CONFLICT (merchant_id, key) DO UPDATE SET status_code = excluded.status_code, body = excluded.body
		WHERE idempotency_keys.status_code = 0 AND idempotency_keys.request_hash = excluded.request_hash`
)

// args are insertKey's arguments for the answer status, body, dated now.
func (c *Claim) args(status int, body []byte) []any {
	return []any{c.req.MerchantID, c.req.Key, c.req.Hash, status, body, c.keeper.clock.Now().UnixMilli()}
}

func (c *Claim) release() {
	c.keeper.mu.Lock()
	delete(c.keeper.inFlight, c.id)
	c.keeper.mu.Unlock()
}

// Purge deletes stored responses older than Retention.
func Purge(ctx context.Context, tx *store.Tx, now time.Time) (int64, error) {
	// This spans merchants: every merchant's expired keys at once (one
	// statement on every shard on Citus).
	res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, now.Add(-Retention).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return res.RowsAffected()
}
