package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Flushing SQLite's log. With synchronous=FULL SQLite fsyncs the log (the
// -wal file) at every commit. An fsync also writes the file's inode, whose
// modification time each commit changes, and on ext4 an inode goes to the
// disk with the file system's journal, one for the whole file system, which
// also carries the database file's changes as the checkpointer copies the
// log into it and grows it. An fdatasync writes the data and only the
// metadata needed to read it back (the size, while the log grows): the same
// durability for the log's frames, without a journal commit for a changed
// modification time (bench-results/2026-12-04.md has what it changed).
//
// So by default the writer runs synchronous=NORMAL, which in WAL mode
// leaves the log unflushed at commit (and still flushes it before each
// checkpoint copies it, and the database after), and payd fdatasyncs the
// log itself after every commit, before any transaction of the group is
// answered. A commit is as durable as with FULL: its frames, commit frame
// included, are on the disk when the flush returns. (The power-loss tests
// cut the power under load and count every acknowledged write.)

// walSync flushes the log of the database at path.
type walSync struct {
	path string
	mu   sync.Mutex
	// f is the log, opened at the first flush: SQLite creates it at the
	// first write. It is reopened when the file at path is another one
	// (SQLite removes the log when its last connection closes, which payd's
	// open connections prevent, but a flush must never go to a file that
	// is no longer the log).
	f *os.File
}

func newWALSync(path string) *walSync { return &walSync{path: path + "-wal"} }

// syncLog is how walSync flushes the log: fdatasync, but for the tests.
var syncLog = fdatasync

// flush makes what SQLite has written to the log durable.
func (w *walSync) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.open(); err != nil {
		return err
	}
	if err := syncLog(w.f); err != nil {
		return fmt.Errorf("flush the sqlite log: %w", err)
	}
	return nil
}

// open opens the log, or reopens it when path names another file now.
func (w *walSync) open() error {
	now, err := os.Stat(w.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("flush the sqlite log: %s is missing after a commit", w.path)
		}
		return fmt.Errorf("flush the sqlite log: %w", err)
	}
	if w.f != nil {
		held, err := w.f.Stat()
		if err == nil && os.SameFile(held, now) {
			return nil
		}
		w.f.Close()
		w.f = nil
	}
	f, err := os.Open(w.path)
	if err != nil {
		return fmt.Errorf("flush the sqlite log: %w", err)
	}
	w.f = f
	return nil
}

func (w *walSync) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}
