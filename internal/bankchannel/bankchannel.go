// Package bankchannel moves files to and from a bank (CONTRACT §17, §18,
// §25): the bank-file rail puts its payment files in an outbox, and the
// rail's and the feeds' inbox readers list, fetch and file away what the bank
// leaves in an inbox. An endpoint is a local directory (dir:PATH) or a
// directory on an SFTP server (sftp://USER@HOST:PORT/PATH) reached with a
// key and a host key pinned in a known_hosts file, never a password and never
// an unchecked host.
//
// A file is delivered whole or not at all: it is written under a temporary
// name in the same directory and renamed to its name, so the bank never
// reads part of a file under the final name. The channel tries each
// operation once; its errors say whether trying again can help (IsTemporary,
// IsPermanent), and the caller retries with backoff.
package bankchannel

import (
	"context"
	"fmt"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout      = time.Minute
	DefaultMaxFileBytes = 64 << 20
)

// Config is what an endpoint needs besides its URL. The SFTP fields are the
// rail's and feed's --sftp-key and --sftp-known-hosts; a dir: endpoint
// ignores them.
type Config struct {
	// KeyFile is the private key payd signs in with (OpenSSH or PEM,
	// unencrypted: payd runs unattended).
	KeyFile string
	// KnownHostsFile pins the server's host key (OpenSSH known_hosts
	// format; a port other than 22 is written [HOST]:PORT).
	KnownHostsFile string
	// Timeout bounds connecting and each operation (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxFileBytes bounds what Get reads and Put writes
	// (DefaultMaxFileBytes when 0).
	MaxFileBytes int64
}

// Folder is a subdirectory of an inbox that its files are filed away in
// (CONTRACT §25's inbox layout).
type Folder string

const (
	// Processed holds the files that were applied.
	Processed Folder = "processed"
	// Rejected holds the files that were refused whole.
	Rejected Folder = "rejected"
)

// maxListNames bounds what one List returns: the rest wait for the next
// poll, once these are filed away.
const maxListNames = 10_000

// Endpoint is an outbox or an inbox at the bank. Its names are plain file
// names in the endpoint's directory: no slash, no NUL, no control
// character, not beginning with a dot (dot names are the channel's
// temporaries and are never listed), at most 200 bytes.
type Endpoint interface {
	// Put delivers content under name atomically: a reader sees the whole
	// file under name or nothing. Putting a name that holds the same bytes
	// succeeds (a retry after a crash); one that holds other bytes fails
	// with ErrConflict.
	Put(ctx context.Context, name string, content []byte) error
	// List names the files waiting in the directory, sorted: regular files
	// only, no temporaries, nothing in Processed or Rejected; at most 10,000.
	List(ctx context.Context) ([]string, error)
	// Get reads a file, refusing one larger than Config.MaxFileBytes.
	Get(ctx context.Context, name string) ([]byte, error)
	// Move files name away into folder (created when missing). Moving a
	// file that is already there succeeds. When folder holds another file of
	// that name, name goes in beside it as NAME.<first 12 hex digits of its
	// SHA-256>, so that a bank that reuses its file names is not refused.
	Move(ctx context.Context, name string, folder Folder) error
	// Close ends the endpoint's connection.
	Close() error
	// String is the endpoint's URL.
	String() string
}

// Open reaches the endpoint rawURL names: for sftp:// it connects, checks the
// host key against c.KnownHostsFile and signs in with c.KeyFile; for both it
// checks that the directory is there. A connection lost later is not
// reopened: the operations fail Temporary, and the caller opens again.
func Open(ctx context.Context, rawURL string, c Config) (Endpoint, error) {
	loc, err := parseURL(rawURL)
	if err != nil {
		return nil, &Error{Endpoint: redact(rawURL), Op: "open", Kind: Permanent, Err: err}
	}
	c, err = c.withDefaults()
	if err != nil {
		return nil, fail(ctx, loc.String(), "open", "", err)
	}
	if loc.scheme == schemeDir {
		return openDir(ctx, loc, c)
	}
	return openSFTP(ctx, loc, c)
}

func (c Config) withDefaults() (Config, error) {
	if c.Timeout < 0 || c.MaxFileBytes < 0 {
		return c, fmt.Errorf("%w config: negative Timeout or MaxFileBytes", ErrInvalid)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	return c, nil
}
