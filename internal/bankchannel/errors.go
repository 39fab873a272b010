package bankchannel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/pkg/sftp"
)

// Kind says what a caller may do after an error: the channel never retries
// by itself (the rail retries with backoff), so it says whether trying again
// can help.
type Kind int

const (
	// Temporary errors may clear by themselves: a connection refused, lost
	// or timed out, a cancelled context, a server's passing failure, a full
	// disk. Try again later.
	Temporary Kind = iota + 1
	// Permanent errors need an operator: a bad URL or configuration, a host
	// key that is not the pinned one, a key the server refuses, a name that
	// exists with other bytes, a file too large, a file that is not there.
	// Trying again as is cannot succeed.
	Permanent
)

func (k Kind) String() string {
	switch k {
	case Temporary:
		return "temporary"
	case Permanent:
		return "permanent"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// The errors a caller may test with errors.Is. A file that is not there
// answers fs.ErrNotExist.
var (
	// ErrInvalid: a URL, file name, folder or Config the channel refuses.
	ErrInvalid = errors.New("invalid")
	// ErrUnknownHost: the known_hosts file has no key for the server.
	ErrUnknownHost = errors.New("host not in known_hosts")
	// ErrHostKey: the server's host key is not the one known_hosts pins
	// (or is revoked there).
	ErrHostKey = errors.New("host key does not match known_hosts")
	// ErrAuth: the server refused the key.
	ErrAuth = errors.New("server refused the key")
	// ErrConflict: a file of that name exists with other bytes.
	ErrConflict = errors.New("exists with other bytes")
	// ErrTooLarge: a file larger than Config.MaxFileBytes.
	ErrTooLarge = errors.New("file too large")
)

// Error is every error the channel returns. It names the endpoint by its
// URL (which never holds a secret: passwords are refused in it, and the key
// is named by Config, never quoted).
type Error struct {
	Endpoint string // the endpoint's URL
	Op       string // open, put, list, get, move, close
	Name     string // the file, when the operation names one
	Kind     Kind
	Err      error
}

func (e *Error) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("bankchannel %s: %s: %v", e.Endpoint, e.Op, e.Err)
	}
	return fmt.Sprintf("bankchannel %s: %s %s: %v", e.Endpoint, e.Op, e.Name, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf is the Kind of an error the channel returned; an error from
// elsewhere counts as Temporary.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Temporary
}

// IsTemporary reports whether err may clear by itself, so that trying again
// later can succeed. It is false for nil.
func IsTemporary(err error) bool { return err != nil && KindOf(err) == Temporary }

// IsPermanent reports whether err needs an operator before trying again can
// succeed.
func IsPermanent(err error) bool { return err != nil && KindOf(err) == Permanent }

// fail makes err an *Error of the endpoint, classified; nil stays nil. When
// ctx ended, the error says so first (a cancelled sftp operation shows as a
// lost connection underneath).
func fail(ctx context.Context, endpoint, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if ctx != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return &Error{Endpoint: endpoint, Op: op, Name: name, Kind: classify(err), Err: err}
}

// classify decides whether err may clear by itself. What is not known to
// need an operator is Temporary: the rail keeps trying and reports it.
func classify(err error) Kind {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Temporary
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrUnknownHost), errors.Is(err, ErrHostKey),
		errors.Is(err, ErrAuth), errors.Is(err, ErrConflict), errors.Is(err, ErrTooLarge),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return Permanent
	}
	var status *sftp.StatusError
	if errors.As(err, &status) {
		return statusKind(status)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errnoKind(errno)
	}
	// The rest: connections refused, reset, lost or timed out
	// (net.Error, io.EOF, sftp.ErrSSHFxConnectionLost), and what is not
	// known.
	return Temporary
}

// statusKind classifies an SFTP server's answer. SSH_FX_FAILURE is the
// catch-all of a server (a full disk, a busy file), worth another try.
func statusKind(status *sftp.StatusError) Kind {
	switch status.FxCode() {
	case sftp.ErrSSHFxNoSuchFile, sftp.ErrSSHFxPermissionDenied, sftp.ErrSSHFxBadMessage,
		sftp.ErrSSHFxOpUnsupported:
		return Permanent
	}
	return Temporary
}

// errnoKind classifies a local file system's answer: what a change of
// configuration or permissions must fix is Permanent; a full disk or an I/O
// error may pass.
func errnoKind(errno syscall.Errno) Kind {
	switch errno {
	case syscall.ENOENT, syscall.ENOTDIR, syscall.EISDIR, syscall.EACCES, syscall.EPERM,
		syscall.EROFS, syscall.ENAMETOOLONG, syscall.ELOOP:
		return Permanent
	}
	return Temporary
}
