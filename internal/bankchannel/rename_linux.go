package bankchannel

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames atomically without replacing (renameat2's
// RENAME_NOREPLACE). Where the file system cannot (NFS, say: EINVAL), it
// links and unlinks instead, which refuses an existing name as well.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return linkNoReplace(from, to)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
