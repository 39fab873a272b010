package bankchannel

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"
)

// files is what the channel's rules need of a file system: the local one
// (dir:) or an SFTP server's. Paths are absolute, slash-separated.
type files interface {
	// guard makes the end of ctx abort the calls made until stop is called
	// (an SFTP call cannot be cancelled otherwise).
	guard(ctx context.Context) (stop func())
	// alive fails when the connection ended: nothing on it can succeed.
	alive() error
	// stat describes p itself (a link is not followed).
	stat(p string) (fs.FileInfo, error)
	readDir(p string) ([]fs.FileInfo, error)
	// read reads p, failing with ErrTooLarge past maxBytes.
	read(p string, maxBytes int64) ([]byte, error)
	// create makes p, which must not exist, writes content, syncs it to
	// stable storage and closes it; wrote is called after each chunk.
	create(p string, content []byte, wrote func(n int64)) error
	// renameNoReplace renames from to to, failing with fs.ErrExist when to
	// exists: a file is never replaced.
	renameNoReplace(from, to string) error
	remove(p string) error
	// mkdir makes p, failing with fs.ErrExist when it exists.
	mkdir(p string) error
	// syncDir makes the names in directory p durable (a no-op where the
	// server does that itself).
	syncDir(p string) error
	close() error
}

// channel is an Endpoint: the rules of delivering and filing away, the same
// over either file system.
type channel struct {
	url          string
	dir          string
	files        files
	timeout      time.Duration // bounds each operation
	maxFileBytes int64
	hooks        hooks
}

// hooks let the tests crash or cut a delivery at a chosen step.
type hooks struct {
	// wrote is called after each chunk of a temporary file is written.
	wrote func(n int64)
	// beforeRename is called once the temporary file is written and synced.
	beforeRename func()
}

// chunkBytes is how much of a file is written between calls to hooks.wrote.
const chunkBytes = 1 << 20

func (c *channel) String() string { return c.url }

func (c *channel) Close() error {
	return fail(nil, c.url, "close", "", c.files.close())
}

// run runs op bounded by the endpoint's timeout, its error made an *Error.
func (c *channel) run(ctx context.Context, op, name string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := errors.Join(ctx.Err(), c.files.alive()); err != nil {
		return fail(ctx, c.url, op, name, err)
	}
	stop := c.files.guard(ctx)
	err := f(ctx)
	stop()
	return fail(ctx, c.url, op, name, err)
}

// Put writes content under a temporary name, syncs it, renames it to name
// without replacing anything, and syncs the directory (CONTRACT §17: a
// partial upload is never under the final name).
func (c *channel) Put(ctx context.Context, name string, content []byte) error {
	if err := checkName(name); err != nil {
		return fail(ctx, c.url, "put", name, err)
	}
	if int64(len(content)) > c.maxFileBytes {
		return fail(ctx, c.url, "put", name, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(content), c.maxFileBytes))
	}
	return c.run(ctx, "put", name, func(ctx context.Context) error { return c.put(ctx, name, content) })
}

func (c *channel) put(ctx context.Context, name string, content []byte) error {
	final := path.Join(c.dir, name)
	there, err := c.holds(final, content)
	if err != nil {
		return err
	}
	if there {
		// Delivered by an earlier Put, which may have crashed before its
		// directory sync.
		return c.files.syncDir(c.dir)
	}
	tmp := path.Join(c.dir, temporaryName(name))
	if err := c.files.create(tmp, content, c.hooks.wrote); err != nil {
		c.removeAfterFailure(tmp)
		return err
	}
	if c.hooks.beforeRename != nil {
		c.hooks.beforeRename()
	}
	if err := ctx.Err(); err != nil {
		c.removeAfterFailure(tmp)
		return err
	}
	if err := c.files.renameNoReplace(tmp, final); err != nil {
		c.removeAfterFailure(tmp)
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		// Another Put of the name got there between the check and the
		// rename.
		there, err := c.holds(final, content)
		if err != nil {
			return err
		}
		if !there {
			return fmt.Errorf("%s was there at the rename and is gone", name)
		}
	}
	return c.files.syncDir(c.dir)
}

// removeAfterFailure removes the temporary file of a failed Put. Where the
// connection is gone it cannot: the temporary stays under its dot name, which
// List never shows and no Put reuses.
func (c *channel) removeAfterFailure(tmp string) { _ = c.files.remove(tmp) }

// holds reports whether p is a file with exactly content, failing with
// ErrConflict when p is there with anything else.
func (c *channel) holds(p string, content []byte) (bool, error) {
	info, err := c.files.stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !info.Mode().IsRegular() || info.Size() != int64(len(content)) {
		return false, fmt.Errorf("%w: %s is there (%s, %d bytes; this one has %d)",
			ErrConflict, path.Base(p), info.Mode().Type(), info.Size(), len(content))
	}
	there, err := c.files.read(p, c.maxFileBytes)
	if err != nil {
		return false, err
	}
	if !bytes.Equal(there, content) {
		return false, fmt.Errorf("%w: %s is there with SHA-256 %s; this one has %s",
			ErrConflict, path.Base(p), shortSum(there), shortSum(content))
	}
	return true, nil
}

// temporaryName is where a Put writes before renaming: a dot name (never
// listed, never a name Put takes) unique to the attempt, so two attempts
// never write into one file.
func temporaryName(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "." + name + "." + hex.EncodeToString(b[:]) + ".tmp"
}

// List reads the directory: regular files whose names Put and Get take.
func (c *channel) List(ctx context.Context) ([]string, error) {
	var names []string
	err := c.run(ctx, "list", "", func(context.Context) error {
		infos, err := c.files.readDir(c.dir)
		if err != nil {
			return err
		}
		for _, info := range infos {
			if info.Mode().IsRegular() && checkName(info.Name()) == nil {
				names = append(names, info.Name())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) > maxListNames {
		names = names[:maxListNames]
	}
	return names, nil
}

// Get reads name, bounded by Config.MaxFileBytes.
func (c *channel) Get(ctx context.Context, name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, fail(ctx, c.url, "get", name, err)
	}
	var content []byte
	err := c.run(ctx, "get", name, func(context.Context) error {
		p := path.Join(c.dir, name)
		info, err := c.files.stat(p)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%w: not a regular file (%s)", ErrInvalid, info.Mode().Type())
		}
		if info.Size() > c.maxFileBytes {
			return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, info.Size(), c.maxFileBytes)
		}
		content, err = c.files.read(p, c.maxFileBytes)
		return err
	})
	return content, err
}

// Move files name away into folder (CONTRACT §25: applied files go to
// PATH/processed/, refused ones to PATH/rejected/).
func (c *channel) Move(ctx context.Context, name string, folder Folder) error {
	if err := errors.Join(checkName(name), checkFolder(folder)); err != nil {
		return fail(ctx, c.url, "move", name, err)
	}
	return c.run(ctx, "move", name, func(context.Context) error { return c.move(name, folder) })
}

func (c *channel) move(name string, folder Folder) error {
	src := path.Join(c.dir, name)
	dir := path.Join(c.dir, string(folder))
	dst := path.Join(dir, name)
	if err := c.files.mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	info, err := c.files.stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		// Moved already, by a Move whose answer was lost?
		if _, err := c.files.stat(dst); err != nil {
			return fmt.Errorf("%s is in neither the inbox nor %s/: %w", name, folder, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file (%s)", ErrInvalid, info.Mode().Type())
	}
	err = c.files.renameNoReplace(src, dst)
	if errors.Is(err, fs.ErrExist) {
		err = c.moveBeside(src, dst)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// Another poller of the inbox filed it between the stat and the
		// rename (each applied it once, by its SHA-256).
		if _, serr := c.files.stat(dst); serr == nil {
			return nil
		}
	}
	if err != nil {
		return err
	}
	return errors.Join(c.files.syncDir(dir), c.files.syncDir(c.dir))
}

// moveBeside files src away when its folder holds another file of its name:
// the same bytes are filed already (src goes), other bytes go under the name
// suffixed with their SHA-256.
func (c *channel) moveBeside(src, dst string) error {
	content, err := c.files.read(src, c.maxFileBytes)
	if err != nil {
		return err
	}
	for _, p := range []string{dst, dst + "." + shortSum(content)} {
		there, err := c.holds(p, content)
		if there {
			return c.files.remove(src)
		}
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		return c.files.renameNoReplace(src, p)
	}
	return fmt.Errorf("%w: %s and %s.%s are there", ErrConflict, path.Base(dst), path.Base(dst), shortSum(content))
}

// shortSum is the first 12 hex digits of content's SHA-256.
func shortSum(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:6])
}
