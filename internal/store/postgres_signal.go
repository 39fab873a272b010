package store

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL's signals (signal.go): NOTIFY by pg_notify on a connection of
// the pool, LISTEN on one connection of the listener's own, opened from the
// pool's DSN, on which pgx waits for notifications.

// Bounds of a listening connection.
const (
	// listenRetryMin and listenRetryMax bound the pause before a broken
	// listening connection is opened again (it doubles between them).
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
	// listenCloseWithin bounds a listening connection's goodbye.
	listenCloseWithin = 5 * time.Second
	// maxChannelName is PostgreSQL's bound on an identifier (NAMEDATALEN - 1).
	maxChannelName = 63
)

// channelScope is the suffix that scopes a channel to the schema payd runs
// in, found once.
type channelScope struct {
	mu     sync.Mutex
	suffix string
}

// channelName is channel scoped to payd's schema: channel_HASH, HASH the
// FNV-1a of current_schema().
func (d *postgresDriver) channelName(ctx context.Context, channel string) (string, error) {
	d.scope.mu.Lock()
	defer d.scope.mu.Unlock()
	if d.scope.suffix == "" {
		var schema sql.NullString
		if err := d.pool.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return "", fmt.Errorf("read the schema: %w", err)
		}
		h := fnv.New32a()
		h.Write([]byte(schema.String))
		d.scope.suffix = fmt.Sprintf("%08x", h.Sum32())
	}
	name := channel + "_" + d.scope.suffix
	if len(name) > maxChannelName {
		return "", fmt.Errorf("channel name %q is longer than %d bytes", name, maxChannelName)
	}
	return name, nil
}

// signal notifies every payload in one transaction that does not wait for
// the disk (synchronous_commit off), its statements sent in one batch: one
// round trip. A
// notifying transaction holds the database's notification lock from its
// commit until it is done, so this one must not wait for a flush. A
// connection the batch failed on is dropped rather than handed back in a
// transaction.
func (d *postgresDriver) signal(ctx context.Context, channel string, payloads []string) error {
	name, err := d.channelName(ctx, channel)
	if err != nil {
		return err
	}
	c, err := d.pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx", dc)
		}
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue("SET LOCAL synchronous_commit = off")
		for _, p := range payloads {
			b.Queue("SELECT pg_notify($1, $2)", name, p)
		}
		b.Queue("COMMIT")
		if err := pc.Conn().SendBatch(ctx, b).Close(); err != nil {
			return errors.Join(err, sqldriver.ErrBadConn)
		}
		return nil
	})
}

// listen keeps one listening connection on channel until ctx ends.
func (d *postgresDriver) listen(ctx context.Context, channel string, l Listener) {
	pause := listenRetryMin
	for {
		listened, err := d.listenOnce(ctx, channel, l)
		if ctx.Err() != nil {
			return
		}
		if l.Broke != nil {
			l.Broke(err)
		}
		if listened {
			pause = listenRetryMin
		}
		wait := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
		pause = min(2*pause, listenRetryMax)
	}
}

// listenOnce opens a connection, listens on channel and hands what it
// hears to l until the connection breaks or ctx ends; listened reports
// whether it got as far as listening.
func (d *postgresDriver) listenOnce(ctx context.Context, channel string, l Listener) (listened bool, err error) {
	name, err := d.channelName(ctx, channel)
	if err != nil {
		return false, err
	}
	cfg, err := pgx.ParseConfig(d.dsn)
	if err != nil {
		return false, fmt.Errorf("listen on %s: %w", channel, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("listen on %s: %w", channel, err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseWithin)
		defer cancel()
		conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{name}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen on %s: %w", channel, err)
	}
	if l.Connected != nil {
		l.Connected()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("listen on %s: %w", channel, err)
		}
		l.Heard(n.Payload)
	}
}
