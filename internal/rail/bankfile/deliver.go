package bankfile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/bankchannel"
	"payd/internal/store"
)

// Status of a bank file.
type Status string

const (
	// Written: made and stored, not yet in the outbox.
	Written Status = "written"
	// Delivered: the outbox holds it.
	Delivered Status = "delivered"
)

// lockDeliver is the namespace of a rail's delivery lock: one process at a
// time puts a rail's files.
const lockDeliver = "bankfile.deliver"

// maxDeliveries bounds the files one round tries to deliver.
const maxDeliveries = 16

// deliverDue tries to deliver each written file whose next attempt is due
// by now, and returns those delivered.
func (f *Files) deliverDue(ctx context.Context, now time.Time) ([]string, error) {
	var due []string
	// global lookup: bank_files are operator records, no merchant's.
	rows, err := f.DB.Read().QueryContext(ctx, `SELECT name FROM bank_files WHERE status = $1 AND next_attempt_at <= $2
		ORDER BY next_attempt_at, name`+store.Limit(maxDeliveries), string(Written), now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("read the files to deliver: %w", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		due = append(due, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var delivered []string
	var errs []error
	for _, name := range due {
		ok, err := f.Deliver(ctx, name)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			delivered = append(delivered, name)
		}
	}
	return delivered, errors.Join(errs...)
}

// outgoing is a written file and where it goes.
type outgoing struct {
	name, rail, outbox string
	keys               Keys
	content            []byte
	attempts           int
}

// Deliver puts the written file name into its rail's outbox, once: it
// reports whether the file is delivered now (false when it was already, or
// another process is delivering it). A failed attempt is recorded with its
// error and retried later, with a delay that doubles with each attempt
// (RetryBase up to maxRetryDelay; at once the longest after an error that
// needs the operator, bankchannel.IsPermanent); the error is returned too.
//
// On PostgreSQL the attempt runs inside a transaction holding the rail's
// delivery lock, so that one process at a time puts a rail's files, and a
// process killed in the middle leaves the lock with its connection: the
// next attempt need not wait out a lease. SQLite has one writer, which an
// upload must not hold: there one process serves, and the attempt reads
// the file, puts it, then records the result.
func (f *Files) Deliver(ctx context.Context, name string) (bool, error) {
	if f.DB.OneWriter() {
		o, ok, err := readOutgoing(ctx, f.DB.Read(), name)
		if err != nil || !ok {
			return false, err
		}
		putErr := f.put(ctx, o)
		return putErr == nil, errors.Join(putErr, f.DB.Exec(ctx, func(tx *store.Tx) error { return f.record(ctx, tx, o, putErr) }))
	}
	var putErr error
	delivered, err := store.Do(ctx, f.DB, func(tx *store.Tx) (bool, error) {
		putErr = nil
		if err := tx.TryLockKey(ctx, lockDeliver, railOf(name)); err != nil {
			return false, err
		}
		o, ok, err := readOutgoing(ctx, tx, name) // read under the lock
		if err != nil || !ok {
			return false, err
		}
		putErr = f.put(ctx, o)
		return putErr == nil, f.record(ctx, tx, o, putErr)
	})
	if store.IsKeyLocked(err) {
		return false, nil // another process is delivering the rail's files
	}
	return delivered, errors.Join(putErr, err)
}

// railOf is the rail a file's name names: payd-{rail}-{YYYYMMDD}-{seq}.{ext}.
func railOf(name string) string {
	rest := strings.TrimPrefix(name, "payd-")
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		if j := strings.LastIndexByte(rest[:i], '-'); j > 0 {
			return rest[:j]
		}
	}
	return rest
}

// readOutgoing reads the file name with its rail's outbox, when it is still
// to be delivered.
func readOutgoing(ctx context.Context, q store.Querier, name string) (outgoing, bool, error) {
	var o outgoing
	// global lookup: bank_files and rails are operator records, no merchant's.
	err := q.QueryRowContext(ctx, `SELECT f.name, f.rail, r.outbox, r.sftp_key, r.sftp_known_hosts, f.content, f.attempts
		FROM bank_files f JOIN rails r ON r.name = f.rail WHERE f.name = $1 AND f.status = $2`, name, string(Written)).
		Scan(&o.name, &o.rail, &o.outbox, &o.keys.SFTPKey, &o.keys.SFTPKnownHosts, &o.content, &o.attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("read bank file %s: %w", name, err)
	}
	return o, true, nil
}

// put is one attempt to put o into its outbox.
func (f *Files) put(ctx context.Context, o outgoing) error {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	f.kill(StepUploading)
	out, err := f.Open(ctx, o.outbox, o.keys)
	if err != nil {
		return fmt.Errorf("deliver %s: open %s: %w", o.name, o.outbox, err)
	}
	err = out.Put(ctx, o.name, o.content)
	err = errors.Join(err, out.Close())
	if err != nil {
		return fmt.Errorf("deliver %s to %s: %w", o.name, o.outbox, err)
	}
	f.kill(StepUploaded)
	return nil
}

// record writes how an attempt ended: delivered, with the time, or its
// error and when the next attempt is due.
func (f *Files) record(ctx context.Context, tx *store.Tx, o outgoing, putErr error) error {
	now := f.Clock.Now()
	if putErr == nil {
		f.Log.Info("bank file delivered", "file", o.name, "rail", o.rail, "outbox", o.outbox, "attempt", o.attempts+1)
		// global lookup: bank_files are operator records, no merchant's.
		return tx.Send(ctx, `UPDATE bank_files SET status = $1, delivered_at = $2, attempts = attempts + 1, last_error = '' WHERE name = $3 AND status = $4`,
			string(Delivered), now.UnixMilli(), o.name, string(Written))
	}
	delay := f.retryDelay(o.attempts + 1)
	if bankchannel.IsPermanent(putErr) {
		// Trying again as is cannot help (a host key that is not the
		// pinned one, a key refused): the operator must act; payd tries
		// again at the longest delay, so that their fix is taken up.
		delay = maxRetryDelay
	}
	next := now.Add(delay)
	f.Log.Warn("bank file not delivered", "file", o.name, "rail", o.rail, "attempt", o.attempts+1, "retry_at", next, "err", putErr)
	msg := putErr.Error()
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen]
	}
	// global lookup: bank_files are operator records, no merchant's.
	return tx.Send(ctx, `UPDATE bank_files SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2 WHERE name = $3 AND status = $4`,
		next.UnixMilli(), msg, o.name, string(Written))
}

// maxErrorLen bounds a delivery's recorded error.
const maxErrorLen = 1000

// retryDelay is the delay after the attempt-th failed attempt.
func (f *Files) retryDelay(attempt int) time.Duration {
	d := f.RetryBase
	for i := 1; i < attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}
