package main

import (
	"os"
	"syscall"
)

// fdatasync flushes f as payd flushes SQLite's log (store's sqlite_walsync.go).
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
