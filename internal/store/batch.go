package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. Every commit waits for the disk (payd flushes SQLite's log,
// sqlite_walsync.go; PostgreSQL flushes its WAL), and on a hot account every
// transaction also waits for the one before it to release its row locks.
// So transactions that queue up behind each other are run together: one
// BEGIN, each transaction inside its own SAVEPOINT (a failing one is rolled
// back to it alone and the others go on), and one COMMIT for all. Nothing is
// acknowledged before that COMMIT, so durability is unchanged; under load one
// flush serves many transactions.
//
// On SQLite every write goes through one lane (SQLite has one writer anyway).
// On PostgreSQL, transactions run in parallel on the pool unless their
// context names a lane (WithLane), which callers use for work that contends
// on the same rows, such as receipts into one account.
//
// A transaction must never start another of its lane from inside itself
// (on SQLite, any other): the lane's goroutine runs the first, so the
// second would wait for a writer that is waiting for it. Do finds such a
// transaction and refuses it with ErrNested.

// maxBatch bounds the transactions of one group commit.
const maxBatch = 64

// laneIdle is how long a lane's goroutine waits for work before it exits.
var laneIdle atomic.Int64 // nanoseconds; 2 s unless a test shortens it

func init() { laneIdle.Store(int64(2 * time.Second)) }

type laneKey struct{}

// WithLane asks for ctx's transactions to be group-committed with others of
// the same lane (on PostgreSQL; on SQLite they always are).
func WithLane(ctx context.Context, lane string) context.Context {
	return context.WithValue(ctx, laneKey{}, lane)
}

// LaneOf returns the lane ctx names (WithLane), or "".
func LaneOf(ctx context.Context) string {
	lane, _ := ctx.Value(laneKey{}).(string)
	return lane
}

// MerchantLane is the lane of a merchant's writes that contend on its
// balance rows.
func MerchantLane(merchantID string) string { return "merchant:" + merchantID }

// ErrNested is the failure of a transaction started inside another of its
// lane's (store.Do inside the function of a store.Do of the same DB; on
// SQLite, of any): the lane runs one transaction at a time, the outer one,
// which would wait for the inner one for ever.
var ErrNested = errors.New("a transaction was started inside another of its lane (store.Do within store.Do's function): it would wait for ever for the writer the outer one holds")

// nestedAfter is how long a transaction waits for its lane, while the lane
// runs one transaction throughout, before it asks whether that transaction
// is its own caller (ErrNested): only a wait that long pays for asking.
const nestedAfter = 50 * time.Millisecond

// batchItem is one transaction waiting for its group commit.
type batchItem struct {
	ctx   context.Context
	run   func(tx *Tx) error
	done  chan struct{}
	err   error
	panic any
	tx    *Tx
	// abandoned marks an item its submitter gave up on (ErrNested): the
	// lane skips it.
	abandoned atomic.Bool
}

// lanes runs group commits, one goroutine per busy lane.
type lanes struct {
	mu    sync.Mutex
	queue map[string]*lane
}

// lane is one lane's queue and how many submitters are about to use it, so
// that its goroutine never exits while one of them still will.
type lane struct {
	q     chan *batchItem
	users int
	// goroutine is the id of the lane's goroutine, and running counts the
	// items it has started and finished (odd while it runs one): a
	// submitter that finds the lane in one item for long asks whether it
	// is that goroutine itself (nested).
	goroutine atomic.Uint64
	running   atomic.Uint64
}

// submit queues run on lane and waits for its group commit.
func (db *DB) submit(ctx context.Context, name string, run func(tx *Tx) error) error {
	it := &batchItem{ctx: ctx, run: run, done: make(chan struct{})}
	db.lanes.mu.Lock()
	l, ok := db.lanes.queue[name]
	if !ok {
		l = &lane{q: make(chan *batchItem, maxBatch)}
		db.lanes.queue[name] = l
		go db.runLane(name, l)
	}
	l.users++
	db.lanes.mu.Unlock()
	var err error
	select {
	case l.q <- it:
	case <-ctx.Done():
		err = ctx.Err()
	default: // the queue is full
		err = l.enqueue(ctx, it)
	}
	db.lanes.mu.Lock()
	l.users--
	db.lanes.mu.Unlock()
	if err != nil {
		return err
	}
	if err := l.wait(it); err != nil {
		return err
	}
	if it.panic != nil {
		panic(it.panic)
	}
	if it.err != nil {
		return it.err
	}
	// After-commit work runs on the caller's goroutine, as it would
	// without batching: a hook that waits, or starts a transaction, must not
	// hold up (or wait for) the lane.
	for _, f := range it.tx.afterCommit {
		f()
	}
	return nil
}

// enqueue puts it on the lane's full queue, waiting for room, unless its
// submitter is the lane's own goroutine (nested).
func (l *lane) enqueue(ctx context.Context, it *batchItem) error {
	run := l.running.Load()
	if run%2 == 1 {
		t := time.NewTimer(nestedAfter)
		defer t.Stop()
		select {
		case l.q <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if l.nested(run) {
				return ErrNested
			}
		}
	}
	select {
	case l.q <- it:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait waits for it's group commit, unless its submitter is the lane's
// own goroutine (nested): then it abandons it and returns ErrNested.
func (l *lane) wait(it *batchItem) error {
	run := l.running.Load()
	if run%2 == 1 {
		t := time.NewTimer(nestedAfter)
		defer t.Stop()
		select {
		case <-it.done:
			return nil
		case <-t.C:
			if l.nested(run) {
				it.abandoned.Store(true)
				return ErrNested
			}
		}
	}
	<-it.done
	return nil
}

// nested reports whether the caller is the lane's goroutine, inside the
// item it was running at run (running's count then): a transaction
// started inside that one. It is asked only when the lane has run one item
// all the while for nestedAfter, as a nested call's lane does, and never
// while the lane runs no item, whose goroutine cannot be the caller.
func (l *lane) nested(run uint64) bool {
	return l.running.Load() == run && l.goroutine.Load() == goroutineID()
}

// goroutineID is the calling goroutine's id, from the first line of its
// stack ("goroutine 18 [running]:"). It costs microseconds; the lane asks
// for it only when it must (wait).
func goroutineID() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// runLane group-commits what arrives on the lane until it stays idle with
// no submitter on its way.
func (db *DB) runLane(name string, l *lane) {
	l.goroutine.Store(goroutineID())
	timer := time.NewTimer(time.Duration(laneIdle.Load()))
	defer timer.Stop()
	for {
		var first *batchItem
		select {
		case first = <-l.q:
		case <-timer.C:
			db.lanes.mu.Lock()
			if len(l.q) == 0 && l.users == 0 {
				delete(db.lanes.queue, name)
				db.lanes.mu.Unlock()
				return
			}
			db.lanes.mu.Unlock()
			timer.Reset(time.Duration(laneIdle.Load()))
			continue
		}
		batch := []*batchItem{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case it := <-l.q:
				batch = append(batch, it)
			default:
				break drain
			}
		}
		db.commitBatch(l, batch)
		db.drv.betweenBatches(context.Background())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Duration(laneIdle.Load()))
	}
}

// commitBatch runs each item in its own savepoint of one transaction and
// commits them together. On PostgreSQL an item's savepoint goes to the
// server with its first statement, and its queued statements (Send) with
// its release: an item is done only once everything it sent has run.
func (db *DB) commitBatch(l *lane, batch []*batchItem) {
	defer func() {
		for _, it := range batch {
			close(it.done)
		}
	}()
	ctx := context.Background()
	root, err := db.begin(ctx)
	if err != nil {
		for _, it := range batch {
			it.err = err
		}
		return
	}
	defer root.end()
	if len(batch) == 1 {
		commitOne(ctx, l, root, batch[0])
		return
	}
	var committed []*batchItem
	for i, it := range batch {
		if it.err = it.ctx.Err(); it.err != nil || it.abandoned.Load() {
			continue
		}
		it.tx = root.share()
		var err error
		if it.err, err = root.inSavepoint(ctx, "gc"+strconv.Itoa(i), it.tx, func() error { return l.runItem(it) }); err != nil {
			abortBatch(root, batch, err)
			return
		}
		if it.err == nil {
			committed = append(committed, it)
		}
	}
	if err := root.commit(ctx); err != nil {
		for _, it := range committed {
			it.err = err
		}
	}
}

// commitOne is commitBatch for a batch of one, which needs no savepoint:
// on failure the whole transaction is rolled back.
func commitOne(ctx context.Context, l *lane, root *Tx, it *batchItem) {
	if it.abandoned.Load() {
		root.rollback()
		return
	}
	if it.err = it.ctx.Err(); it.err == nil {
		it.tx = root.share()
		it.err = it.tx.outcome(l.runItem(it))
	}
	if it.err != nil {
		root.rollback()
		return
	}
	it.err = root.commit(ctx)
}

// abortBatch rolls the whole transaction back: every item fails, including
// those that had succeeded inside it (nothing of theirs was committed).
func abortBatch(root *Tx, batch []*batchItem, err error) {
	root.rollback()
	for _, it := range batch {
		if it.err == nil && it.panic == nil {
			it.err = err
		}
	}
}

// runItem runs one transaction's work, turning a panic into a failure of
// that item alone (re-raised in its caller's goroutine).
func (l *lane) runItem(it *batchItem) (err error) {
	l.running.Add(1)
	defer l.running.Add(1)
	defer func() {
		if p := recover(); p != nil {
			it.panic = p
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return it.run(it.tx)
}
