//go:build !linux

package store

import "os"

// fdatasync is fsync where the system has no fdatasync payd calls.
func fdatasync(f *os.File) error { return f.Sync() }
