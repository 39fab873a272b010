// Package idempotency makes a retried POST or PUT safe: the first request
// with an Idempotency-Key claims the key in the same transaction as its
// effect and stores its response; a replay gets that response back, a
// different request under the same key is refused, and a duplicate that
// arrives while the first is still running is told to wait (409).
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
)

// MaxKeyLen bounds the Idempotency-Key header (CONTRACT §3).
const MaxKeyLen = 255

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

// Fingerprint hashes what makes two requests "the same".
func Fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", method, path)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
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

// Begin starts a keyed request. It returns the stored response when the
// request is a replay, an error when the key was used for another request or
// is in flight, and otherwise a Claim to attach to the request's context (and
// to Release when the request ends).
func (k *Keeper) Begin(ctx context.Context, r Request) (*Claim, *Stored, error) {
	if stored, err := lookup(ctx, k.db.Read(), r); stored != nil || err != nil {
		return nil, stored, err
	}
	id := r.MerchantID + "\x00" + r.Key
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inFlight[id] {
		return nil, nil, errInFlight
	}
	k.inFlight[id] = true
	return &Claim{keeper: k, req: r, id: id}, nil, nil
}

// lookup returns the stored response for r, errReused when the key belongs
// to another request, or nothing when the key is free.
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
	if hash != r.Hash {
		return nil, errReused
	}
	return &s, nil
}

// Claim is a keyed request in progress: the code that opens the
// transaction carrying the request's effect (httpapi's inTx) runs the effect
// under the Claim (Within), which stores the response in that transaction.
type Claim struct {
	keeper *Keeper
	req    Request
	id     string
	// Status and Render produce the stored response from the transaction's
	// result; the HTTP layer sets them before calling the service.
	Status int
	Render func(result any) ([]byte, error)
	// Replayed is set when, inside the transaction, the key turned out to be
	// taken already (another process finished the same request first).
	Replayed *Stored
	// check is what acquire found, until verdict reads it.
	check *check
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

// Within runs effect, the keyed request's effect, in tx under the claim c
// (with c nil, just effect): the key is claimed in tx, and the response
// rendered from effect's result is stored in tx, so the effect and the stored
// answer are one atomic fact (CONTRACT §3). When the key turns out to be
// taken already, the effect's work is rolled back with tx: Within returns
// ErrReplay (the earlier response is in c.Replayed), the in-flight 409, or
// the reused-key refusal, whatever effect returned.
func Within[T any](ctx context.Context, tx *store.Tx, c *Claim, effect func() (T, error)) (T, error) {
	var zero T
	if c == nil || c.used {
		return effect()
	}
	if err := c.acquire(ctx, tx); err != nil {
		return zero, err
	}
	if c.check.read { // SQLite: the check ran at once, before the effect
		if verdict := c.verdict(ctx, tx); verdict != nil {
			return zero, verdict
		}
	}
	v, err := effect()
	if c.check != nil { // PostgreSQL: the check went with the effect's first read
		if verdict := c.verdict(ctx, tx); verdict != nil {
			return zero, tx.Answer(verdict)
		}
	}
	if err != nil {
		return zero, err
	}
	if err := c.complete(ctx, tx, v); err != nil {
		return zero, err
	}
	return v, nil
}

// check is what the claim found of its key inside the transaction.
type check struct {
	read   bool // the check's row was read: what follows is known
	locked bool // the key's advisory lock was free (always, on SQLite)
	hash   sql.NullString
	status sql.NullInt32
	body   []byte
}

// checkSQL reads the key's stored response, one row whether or not there is
// one (its columns NULL when the key is free), so its reader knows it ran.
const checkSQL = `SELECT true, k.request_hash, k.status_code, k.body FROM (SELECT 1) one
	LEFT JOIN idempotency_keys k ON k.merchant_id = $1 AND k.key = $2`

// acquire claims the key at the start of the effect's transaction. On
// PostgreSQL, a transaction-scoped advisory lock on the key turns a
// concurrent duplicate from another process into a 409 instead of a second
// effect; then the key is checked again inside the transaction, after the
// lock is taken, on a snapshot of its own, so the check sees a duplicate
// that committed before the lock was free. Neither costs a round trip of its
// own: both are queued (store.Tx.SendRow) to go to the server with the
// effect's first read, and verdict reads what they found. On SQLite, which
// runs one writer at a time, the check runs at once and no lock is needed.
func (c *Claim) acquire(ctx context.Context, tx *store.Tx) error {
	found := &check{locked: true}
	c.check = found
	if tx.DB().Dialect() == store.Postgres {
		if err := tx.SendRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, []any{lockID(c.id)}, &found.locked); err != nil {
			return fmt.Errorf("idempotency lock: %w", err)
		}
	}
	err := tx.SendRow(ctx, checkSQL, []any{c.req.MerchantID, c.req.Key}, &found.read, &found.hash, &found.status, &found.body)
	if err != nil {
		return fmt.Errorf("idempotency check: %w", err)
	}
	return nil
}

// verdict reads what acquire found (sending it now if the effect read
// nothing) and says whether the key was taken: ErrReplay, the in-flight
// 409, the reused-key refusal, or the error that kept it from knowing. It
// runs after the effect, whatever the effect returned: a key taken already
// is the answer, not the effect's own success or refusal, nor a failure of
// the effect's statements that the duplicate caused.
func (c *Claim) verdict(ctx context.Context, tx *store.Tx) error {
	found := c.check
	c.check = nil
	err := tx.ReadSent(ctx)
	switch {
	case !found.read:
		if err == nil {
			err = errors.New("its row was not read")
		}
		return fmt.Errorf("idempotency check: %w", err)
	case !found.locked:
		c.inFlight = true
		return errInFlight
	case !found.hash.Valid:
		return nil // the key is free: the effect's outcome stands
	}
	stored, err := c.req.replay(found.hash.String, Stored{Status: int(found.status.Int32), Body: found.body})
	if err != nil {
		return err
	}
	c.Replayed = stored
	return ErrReplay
}

// complete stores the response rendered from the transaction's result. The
// claim counts as used only once the transaction commits, so a transaction
// that is rolled back (or retried) leaves it free.
func (c *Claim) complete(ctx context.Context, tx *store.Tx, result any) error {
	if c.Render == nil {
		// The response is stored by Finish once the handler has written it.
		tx.AfterCommit(func() { c.used = true })
		return nil
	}
	body, err := c.Render(result)
	if err != nil {
		return fmt.Errorf("render idempotent response: %w", err)
	}
	if err := insert(ctx, tx, c.req, c.Status, body, c.keeper.clock.Now()); err != nil {
		return err
	}
	tx.AfterCommit(func() { c.used, c.stored, c.body = true, true, body })
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

// Finish stores a response that no transaction stored (an error answer, or a
// handler without database effect) and releases the key. Responses of 500 and
// above, and the 409 of a key held by another process, are not stored, so
// the client may retry them.
func (c *Claim) Finish(ctx context.Context, status int, body []byte) error {
	defer c.release()
	if c.stored || c.inFlight || status >= 500 {
		return nil
	}
	return c.keeper.db.Exec(ctx, func(tx *store.Tx) error {
		return insert(ctx, tx, c.req, status, body, c.keeper.clock.Now())
	})
}

func (c *Claim) release() {
	c.keeper.mu.Lock()
	delete(c.keeper.inFlight, c.id)
	c.keeper.mu.Unlock()
}

func insert(ctx context.Context, tx *store.Tx, r Request, status int, body []byte, now time.Time) error {
	err := tx.Send(ctx, `INSERT INTO idempotency_keys (merchant_id, key, request_hash, status_code, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (merchant_id, key) DO NOTHING`,
		r.MerchantID, r.Key, r.Hash, status, body, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}

func lockID(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("idempotency\x00" + id))
	return int64(h.Sum64())
}

// Purge deletes stored responses older than Retention.
func Purge(ctx context.Context, tx *store.Tx, now time.Time) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, now.Add(-Retention).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return res.RowsAffected()
}
