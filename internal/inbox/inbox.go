// Package inbox is what the bank-file rails' and the bank feeds' inboxes
// share (CONTRACT §17, §18, §25): where the bank leaves its files (an
// Endpoint of package bankchannel, dir:PATH or sftp://), the record of each
// file by its SHA-256 (inbox_files: applying, applied, rejected), and the
// rule that one process at a time reads an inbox. What a file means, and
// what applying an entry of it does, is each reader's own (rail/bankfile's
// status reports, feed's statements).
//
// A file is decided whole before anything of it is applied; refused, it is
// recorded rejected and filed away in rejected/; taken, it is recorded
// applying, its entries are applied each in a short transaction of its own
// with its mark, and a done mark ends it (applied), when it is filed away
// in processed/. The same bytes again, under any name, are that file: the
// readers file them away without applying anything twice, and resume an
// applying one where it stopped.
package inbox

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"payd/internal/bankchannel"
	"payd/internal/store"
)

// Status is where an inbox file stands.
type Status string

const (
	// Applying: taken, its entries being applied.
	Applying Status = "applying"
	// Applied: every entry applied; it is in processed/.
	Applied Status = "applied"
	// Rejected: refused whole, nothing applied; it is in rejected/.
	Rejected Status = "rejected"
)

// Box is an inbox as its readers use it: bankchannel's Endpoint. List
// names the files waiting (not those filed away); Move files one away into
// processed/ or rejected/.
type Box interface {
	List(ctx context.Context) ([]string, error)
	Get(ctx context.Context, name string) ([]byte, error)
	Move(ctx context.Context, name string, folder bankchannel.Folder) error
	Close() error
}

// MaxFiles bounds the files one poll takes from an inbox: the rest wait
// for the next.
const MaxFiles = 100

// StatusOf is the status of the inbox file sha256, "" when it is new.
func StatusOf(ctx context.Context, q store.Querier, sha256 string) (Status, error) {
	var status Status
	// global lookup: inbox_files are operator records, no merchant's.
	err := q.QueryRowContext(ctx, `SELECT status FROM inbox_files WHERE sha256 = $1`, sha256).Scan(&status)
	if store.IsNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read inbox file %s: %w", sha256, err)
	}
	return status, nil
}

// Exclusive runs read while this process alone reads the inbox url of the
// readers of namespace: on PostgreSQL inside a transaction of its own that
// holds the inbox's lock (which a killed process's connection lets go),
// and not at all when another process holds it (that one reads the
// inbox); on SQLite, whose one writer a poll must not hold, at once (there
// one process serves). read does its own transactions.
func Exclusive(ctx context.Context, db *store.DB, namespace, url string, read func(ctx context.Context) error) error {
	if db.OneWriter() {
		return read(ctx)
	}
	err := db.Exec(ctx, func(tx *store.Tx) error {
		if err := tx.TryLockKey(ctx, namespace, url); err != nil {
			return err
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil { // the lock's answer
			return err
		}
		return read(ctx)
	})
	if store.IsKeyLocked(err) {
		return nil // another process reads it
	}
	return err
}

// maxURLLen bounds an inbox's (or outbox's) address.
const maxURLLen = 1024

// URLProblem checks an inbox's (or a rail's outbox's) address: dir:PATH
// (an absolute path) or sftp://USER@HOST:PORT/PATH without a password,
// and reports whether it is SFTP; problem is "" when it is good.
func URLProblem(v string) (isSFTP bool, problem string) {
	const want = "must be dir:PATH (an absolute path) or sftp://USER@HOST:PORT/PATH"
	switch {
	case len(v) > maxURLLen:
		return false, fmt.Sprintf("must be at most %d characters", maxURLLen)
	case strings.HasPrefix(v, "dir:"):
		if p := strings.TrimPrefix(v, "dir:"); !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			return false, want
		}
		return false, ""
	case strings.HasPrefix(v, "sftp://"):
		u, err := url.Parse(v)
		if err != nil || u.User == nil || u.User.Username() == "" || u.Hostname() == "" || u.Port() == "" || u.Path == "" || u.RawQuery != "" || u.Fragment != "" {
			return true, want
		}
		if _, hasPassword := u.User.Password(); hasPassword {
			return true, "must not carry a password: payd authenticates by key (--sftp-key)"
		}
		return true, ""
	}
	return false, want
}

// RailOf is the rail (not unset) that reads the inbox url, "" for none;
// FeedOf the feed. No two rails or feeds share an inbox (CONTRACT §25):
// payd rail set and payd feed set ask both.
func RailOf(ctx context.Context, q store.Querier, url string) (string, error) {
	// global lookup: rails are operator records, no merchant's.
	return nameOf(ctx, q, `SELECT name FROM rails WHERE inbox = $1 AND unset_at IS NULL`, url)
}

// FeedOf is the feed (not unset) that reads the inbox url, "" for none.
func FeedOf(ctx context.Context, q store.Querier, url string) (string, error) {
	// global lookup: feeds are operator records, no merchant's.
	return nameOf(ctx, q, `SELECT name FROM feeds WHERE inbox = $1 AND unset_at IS NULL`, url)
}

func nameOf(ctx context.Context, q store.Querier, query, url string) (string, error) {
	var name string
	err := q.QueryRowContext(ctx, query, url).Scan(&name)
	if store.IsNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the reader of inbox %s: %w", url, err)
	}
	return name, nil
}
