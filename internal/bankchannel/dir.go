package bankchannel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// openDir opens a dir: endpoint: the directory must be there (payd does not
// make an outbox or inbox an operator may have misspelled).
func openDir(ctx context.Context, loc location, c Config) (Endpoint, error) {
	info, err := os.Stat(loc.dir)
	if err == nil && !info.IsDir() {
		err = fmt.Errorf("%w: %s is not a directory", ErrInvalid, loc.dir)
	}
	if err != nil {
		return nil, fail(ctx, loc.String(), "open", "", err)
	}
	return &channel{
		url:          loc.String(),
		dir:          loc.dir,
		files:        localFiles{},
		timeout:      c.Timeout,
		maxFileBytes: c.MaxFileBytes,
	}, nil
}

// localFiles is the local file system. Its calls are not cancelled midway;
// the channel checks its context between them.
type localFiles struct{}

// filePerm lets the operator's group read what payd delivers (a transfer
// agent picking files up), nobody else; the umask may take more away.
const filePerm = 0o640

func (localFiles) guard(context.Context) func() { return func() {} }

func (localFiles) alive() error { return nil }

func (localFiles) stat(p string) (fs.FileInfo, error) { return os.Lstat(p) }

func (localFiles) readDir(p string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // moved away since the directory was read
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

func (localFiles) read(p string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, maxBytes)
}

// readBounded reads r to its end, failing past maxBytes.
func readBounded(r io.Reader, maxBytes int64) ([]byte, error) {
	content, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(content)) > maxBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, maxBytes)
	}
	return content, nil
}

func (localFiles) create(p string, content []byte, wrote func(int64)) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	if err := writeChunks(f, content, wrote); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeChunks writes content chunk by chunk, telling wrote (when set) how
// much is written after each.
func writeChunks(w io.Writer, content []byte, wrote func(int64)) error {
	for off := 0; off < len(content); {
		n := min(chunkBytes, len(content)-off)
		if _, err := w.Write(content[off : off+n]); err != nil {
			return err
		}
		off += n
		if wrote != nil {
			wrote(int64(off))
		}
	}
	return nil
}

func (localFiles) renameNoReplace(from, to string) error { return renameNoReplace(from, to) }

func (localFiles) remove(p string) error { return os.Remove(p) }

func (localFiles) mkdir(p string) error { return os.Mkdir(p, 0o750) }

// syncDir fsyncs directory p, so that a rename in it survives a power loss.
// File systems that cannot sync a directory say EINVAL; their renames are as
// durable as they make them.
func (localFiles) syncDir(p string) error {
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) {
		err = nil
	}
	return errors.Join(err, d.Close())
}

func (localFiles) close() error { return nil }
