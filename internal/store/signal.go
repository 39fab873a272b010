package store

import (
	"context"
	"fmt"
)

// Signals are a word from one payd process to the others sharing its
// database that something they may be waiting for has happened: on
// PostgreSQL a NOTIFY, heard by the processes that LISTEN; on SQLite
// nothing, the one serving process having heard it already. A signal is a
// hint, never the record: one sent while a process was not listening (it
// was reconnecting, or not yet started) is lost to it, so whoever waits for
// signals also looks for itself now and then.
//
// Channels are the database's, not the schema's: two payd deployments in
// two schemas of one database would hear each other's signals, so a
// channel's name is scoped by the schema payd runs in (the driver's).

// Bounds of a signal.
const (
	// MaxSignalPayload bounds one payload's bytes, well within PostgreSQL's
	// 8000.
	MaxSignalPayload = 1000
	// MaxSignals bounds the payloads one Signal sends.
	MaxSignals = 1000
)

// Listener is what hears a channel (DB.Listen).
type Listener struct {
	// Heard is called with each payload heard, one at a time.
	Heard func(payload string)
	// Connected is called each time listening starts or starts again
	// after a broken connection: what was signalled meanwhile was missed.
	Connected func()
	// Broke, when set, hears why a listening connection ended before it is
	// opened again, to log it.
	Broke func(err error)
}

// Signal sends each of payloads on channel, at once and outside any
// transaction, to every process listening there (Listen), this one too.
// Its commit does not wait for the disk: a signal lost in a crash is a
// hint lost. At most MaxSignals payloads of at most MaxSignalPayload bytes.
func (db *DB) Signal(ctx context.Context, channel string, payloads []string) error {
	if len(payloads) > MaxSignals {
		return fmt.Errorf("signal %s: %d payloads, over the bound of %d", channel, len(payloads), MaxSignals)
	}
	for _, p := range payloads {
		if len(p) > MaxSignalPayload {
			return fmt.Errorf("signal %s: a payload of %d bytes, over the bound of %d", channel, len(p), MaxSignalPayload)
		}
	}
	if len(payloads) == 0 {
		return nil
	}
	if err := db.drv.signal(ctx, channel, payloads); err != nil {
		return fmt.Errorf("signal %s: %w", channel, err)
	}
	return nil
}

// Listen hears channel until ctx ends, on one connection of its own
// (never one of the pool's), which it opens again when it breaks, after a
// pause that doubles from listenRetryMin up to listenRetryMax. Where there
// is nothing to hear (SQLite) it only waits for ctx.
func (db *DB) Listen(ctx context.Context, channel string, l Listener) {
	db.drv.listen(ctx, channel, l)
}
