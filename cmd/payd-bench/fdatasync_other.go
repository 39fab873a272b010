//go:build !linux

package main

import "os"

// fdatasync is fsync where payd has no fdatasync either.
func fdatasync(f *os.File) error { return f.Sync() }
