package job

import (
	"context"
	"encoding/json"
	"fmt"

	"payd/internal/store"
)

// Kind is a job kind whose payload is a T: the one value a kind is
// registered (Register) and enqueued (Enqueue) by, so that a job of one
// kind cannot be enqueued with another kind's payload, nor handled as one:
// that does not compile. It is River's JobArgs with its Kind() turned
// around, so that kinds may share a payload type (a payin's expiry and its
// clearing both name the payin).
//
// T's JSON form is what the jobs table stores and what the handler is
// given back: jobs enqueued by an earlier version of payd run after an
// upgrade only while T keeps its JSON member names (encoding/json
// decoding ignores members T no longer has, and leaves new ones zero).
type Kind[T any] struct{ name string }

// NewKind returns the kind called name (a package's own prefix, a dot and
// a verb: "payin.clear"), whose payload is a T. It panics on an empty name.
func NewKind[T any](name string) Kind[T] {
	if name == "" {
		panic("job: a kind needs a name")
	}
	return Kind[T]{name: name}
}

// String is the kind's name, as the jobs table stores it.
func (k Kind[T]) String() string { return k.name }

// Work is a typed handler: it does a job's work inside tx, given the job
// and its payload decoded. Returning an error rolls the work back and
// retries the job later with a growing delay.
type Work[T any] func(ctx context.Context, tx *store.Tx, j Job, args T) error

// Register makes work the handler of kind's jobs on q. It panics when q
// already has a handler for kind (River's AddWorker does too): a kind
// registered twice is a programming error that would otherwise silently
// replace one handler by the other, and registering happens at start.
//
// A payload that does not decode as a T fails the run as the handler's
// error would: the job is retried, and fails for good once its attempts
// are used.
func Register[T any](q *Queue, kind Kind[T], work Work[T]) {
	q.register(kind.name, func(ctx context.Context, tx *store.Tx, j Job) error {
		var args T
		if err := json.Unmarshal(j.Payload, &args); err != nil {
			return fmt.Errorf("job %d (%s) payload: %w", j.ID, j.Kind, err)
		}
		return work(ctx, tx, j, args)
	})
}

// Enqueue adds a job of kind with payload args in tx, on q; it exists only
// if tx commits. The payload is stored as args' JSON.
func Enqueue[T any](ctx context.Context, tx *store.Tx, q *Queue, kind Kind[T], args T, opt Options) error {
	return q.enqueue(ctx, tx, kind.name, args, opt)
}
