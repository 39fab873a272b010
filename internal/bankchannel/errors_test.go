package bankchannel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Temporary},
		{"connection lost", sftp.ErrSSHFxConnectionLost, Temporary},
		{"connection ended", io.EOF, Temporary},
		{"cancelled", fmt.Errorf("%w (%w)", context.Canceled, io.EOF), Temporary},
		{"timed out", context.DeadlineExceeded, Temporary},
		{"server failure", &sftp.StatusError{Code: uint32(sftp.ErrSSHFxFailure)}, Temporary},
		{"disk full", &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, Temporary},
		{"unknown", errors.New("something"), Temporary},

		{"invalid", ErrInvalid, Permanent},
		{"unknown host", ErrUnknownHost, Permanent},
		{"host key", fmt.Errorf("%w: other key", ErrHostKey), Permanent},
		{"auth", ErrAuth, Permanent},
		{"conflict", ErrConflict, Permanent},
		{"too large", ErrTooLarge, Permanent},
		{"not there", &os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, Permanent},
		{"sftp not there", fs.ErrNotExist, Permanent},
		{"permission", &os.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, Permanent},
		{"not a directory", &os.PathError{Op: "open", Path: "/x", Err: syscall.ENOTDIR}, Permanent},
		{"read-only", &os.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, Permanent},
		{"unsupported", &sftp.StatusError{Code: uint32(sftp.ErrSSHFxOpUnsupported)}, Permanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fail(context.Background(), "dir:/x", "put", "f", tt.err)
			if got := KindOf(err); got != tt.want {
				t.Errorf("KindOf(%v) = %v; want %v", err, got, tt.want)
			}
			if got, want := IsTemporary(err), tt.want == Temporary; got != want {
				t.Errorf("IsTemporary(%v) = %v; want %v", err, got, want)
			}
			if got, want := IsPermanent(err), tt.want == Permanent; got != want {
				t.Errorf("IsPermanent(%v) = %v; want %v", err, got, want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.err)
			}
		})
	}
}

func TestErrorNamesEndpoint(t *testing.T) {
	err := fail(context.Background(), "sftp://payd@127.0.0.1:22/out", "put", "f.aba", ErrConflict)
	if got, want := err.Error(), "bankchannel sftp://payd@127.0.0.1:22/out: put f.aba: exists with other bytes"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
	if IsTemporary(nil) || IsPermanent(nil) {
		t.Error("nil is temporary or permanent")
	}
}

// TestFailSaysContextFirst: an operation cut by its context says so, even
// when what broke underneath was the connection it closed.
func TestFailSaysContextFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fail(ctx, "dir:/x", "put", "f", sftp.ErrSSHFxConnectionLost)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, sftp.ErrSSHFxConnectionLost) || !IsTemporary(err) {
		t.Errorf("fail(cancelled, connection lost) = %v; want both, temporary", err)
	}
}
