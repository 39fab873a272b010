package bankchannel_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payd/internal/bankchannel"
	"payd/internal/bankchannel/sftptest"
)

// The behaviours every endpoint has are tested on each kind of endpoint: a
// local directory and a directory on a real OpenSSH server.

// box is one endpoint's directory, empty, as the test sees it on disk (the
// SFTP server serves this machine's file system).
type box struct {
	url    string
	dir    string
	config bankchannel.Config
}

type backend struct {
	name string
	new  func(t *testing.T) box
}

var backends = []backend{
	{"dir", func(t *testing.T) box {
		dir := t.TempDir()
		return box{url: "dir:" + dir, dir: dir}
	}},
	{"sftp", func(t *testing.T) box {
		s := sftptest.Start(t)
		dir := s.Mkdir("box")
		return box{url: s.URL(dir), dir: dir, config: bankchannel.Config{KeyFile: s.KeyFile, KnownHostsFile: s.KnownHostsFile}}
	}},
}

// eachBackend runs test on each kind of endpoint, in parallel.
func eachBackend(t *testing.T, test func(t *testing.T, b box)) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			test(t, be.new(t))
		})
	}
}

func open(t *testing.T, b box) bankchannel.Endpoint {
	t.Helper()
	e, err := bankchannel.Open(context.Background(), b.url, b.config)
	if err != nil {
		t.Fatalf("Open(%s) = %v", b.url, err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return e
}

// onDisk lists what is in dir, dot names included, with a slash after
// directories.
func onDisk(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	return names
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, file string) string {
	t.Helper()
	content, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}

// wantError fails t unless err is kind and matches target.
func wantError(t *testing.T, what string, err error, kind bankchannel.Kind, target error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s = nil; want a %v error (%v)", what, kind, target)
	}
	if got := bankchannel.KindOf(err); got != kind || !errors.Is(err, target) {
		t.Fatalf("%s = %v (%v); want a %v error (%v)", what, err, got, kind, target)
	}
}

// bigFile is larger than a few chunks of a Put, so that a Put can be cut
// midway.
func bigFile() []byte {
	return bytes.Repeat([]byte("0123456789ABCDEF\r\n"), 8<<20/18)
}

// TestPutDelivers: the bytes arrive under the final name, and nothing else
// is left beside them.
func TestPutDelivers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		e := open(t, b)
		content := bigFile()
		if err := e.Put(context.Background(), "payd-au-20261202-001.aba", content); err != nil {
			t.Fatalf("Put() = %v", err)
		}
		if got, want := onDisk(t, b.dir), []string{"payd-au-20261202-001.aba"}; !slices.Equal(got, want) {
			t.Errorf("on disk %q; want %q", got, want)
		}
		if got := read(t, filepath.Join(b.dir, "payd-au-20261202-001.aba")); got != string(content) {
			t.Errorf("delivered %d bytes; want the %d put", len(got), len(content))
		}
	})
}

// TestPutAgain: a Put of a name that holds the same bytes succeeds (a retry
// after a crash); one with other bytes fails for good and changes nothing.
func TestPutAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		e := open(t, b)
		ctx := context.Background()
		if err := e.Put(ctx, "f.aba", []byte("first")); err != nil {
			t.Fatalf("Put() = %v", err)
		}
		if err := e.Put(ctx, "f.aba", []byte("first")); err != nil {
			t.Errorf("Put(same bytes) = %v; want nil", err)
		}
		wantError(t, "Put(other bytes)", e.Put(ctx, "f.aba", []byte("other")), bankchannel.Permanent, bankchannel.ErrConflict)
		wantError(t, "Put(longer)", e.Put(ctx, "f.aba", []byte("first, longer")), bankchannel.Permanent, bankchannel.ErrConflict)
		if got := read(t, filepath.Join(b.dir, "f.aba")); got != "first" {
			t.Errorf("f.aba holds %q; want %q", got, "first")
		}
		if err := os.Mkdir(filepath.Join(b.dir, "d.aba"), 0o755); err != nil {
			t.Fatal(err)
		}
		wantError(t, "Put(a directory's name)", e.Put(ctx, "d.aba", []byte("x")), bankchannel.Permanent, bankchannel.ErrConflict)
		if got, want := onDisk(t, b.dir), []string{"d.aba/", "f.aba"}; !slices.Equal(got, want) {
			t.Errorf("on disk %q; want %q", got, want)
		}
	})
}

// TestPutCutMidway: a Put whose context ends during the upload leaves
// nothing under the final name (at most a temporary dot name), and the next
// Put delivers the file once.
func TestPutCutMidway(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		e := open(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		bankchannel.SetHooks(e, func(int64) { cancel() }, nil)
		content := bigFile()
		wantError(t, "Put(cut)", e.Put(ctx, "f.xml", content), bankchannel.Temporary, context.Canceled)
		for _, name := range onDisk(t, b.dir) {
			if !strings.HasPrefix(name, ".f.xml.") || !strings.HasSuffix(name, ".tmp") {
				t.Errorf("after a cut Put, %q is on disk; want only a temporary", name)
			}
		}

		again := open(t, b)
		if got, err := again.List(context.Background()); err != nil || len(got) != 0 {
			t.Errorf("List() = %q, %v; want nothing", got, err)
		}
		if err := again.Put(context.Background(), "f.xml", content); err != nil {
			t.Fatalf("Put(again) = %v", err)
		}
		if got, err := again.List(context.Background()); err != nil || !slices.Equal(got, []string{"f.xml"}) {
			t.Errorf("List() = %q, %v; want [f.xml]", got, err)
		}
		if got := read(t, filepath.Join(b.dir, "f.xml")); got != string(content) {
			t.Errorf("delivered %d bytes; want %d", len(got), len(content))
		}
	})
}

// TestPutTooLarge: Put refuses what Get would.
func TestPutTooLarge(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		b.config.MaxFileBytes = 10
		e := open(t, b)
		wantError(t, "Put(11 bytes)", e.Put(context.Background(), "f", []byte("01234567890")), bankchannel.Permanent, bankchannel.ErrTooLarge)
		if err := e.Put(context.Background(), "g", []byte("0123456789")); err != nil {
			t.Errorf("Put(10 bytes) = %v", err)
		}
		if got, want := onDisk(t, b.dir), []string{"g"}; !slices.Equal(got, want) {
			t.Errorf("on disk %q; want %q", got, want)
		}
	})
}

// TestNamesRefused: a name that is not a plain file name of the directory
// is refused by every operation, before anything is touched.
func TestNamesRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		write(t, filepath.Join(filepath.Dir(b.dir), "outside"), "not the inbox's")
		e := open(t, b)
		ctx := context.Background()
		for _, name := range []string{"", ".", "..", "../outside", "a/b", "/etc/passwd", "a\x00b", ".hidden", "x\n", strings.Repeat("a", 201)} {
			t.Run(name, func(t *testing.T) {
				wantError(t, "Put", e.Put(ctx, name, []byte("x")), bankchannel.Permanent, bankchannel.ErrInvalid)
				_, err := e.Get(ctx, name)
				wantError(t, "Get", err, bankchannel.Permanent, bankchannel.ErrInvalid)
				wantError(t, "Move", e.Move(ctx, name, bankchannel.Processed), bankchannel.Permanent, bankchannel.ErrInvalid)
			})
		}
		if got := onDisk(t, b.dir); len(got) != 0 {
			t.Errorf("on disk %q; want nothing", got)
		}
	})
}

// TestInbox: List names the files waiting (not directories, temporaries,
// processed/ or rejected/), Get reads them and Move files them away
// (CONTRACT §25's inbox layout).
func TestInbox(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		write(t, filepath.Join(b.dir, "b.xml"), "<b/>")
		write(t, filepath.Join(b.dir, "a.xml"), "<a/>")
		write(t, filepath.Join(b.dir, ".upload.tmp"), "the bank is still writing")
		write(t, filepath.Join(b.dir, "processed", "old.xml"), "<old/>")
		write(t, filepath.Join(b.dir, "sub", "c.xml"), "<c/>")
		if err := os.Symlink(filepath.Join(b.dir, "a.xml"), filepath.Join(b.dir, "link.xml")); err != nil {
			t.Fatal(err)
		}
		e := open(t, b)
		ctx := context.Background()

		got, err := e.List(ctx)
		if err != nil || !slices.Equal(got, []string{"a.xml", "b.xml"}) {
			t.Fatalf("List() = %q, %v; want [a.xml b.xml]", got, err)
		}
		content, err := e.Get(ctx, "a.xml")
		if err != nil || string(content) != "<a/>" {
			t.Fatalf("Get(a.xml) = %q, %v", content, err)
		}
		if err := e.Move(ctx, "a.xml", bankchannel.Processed); err != nil {
			t.Fatalf("Move(a.xml, processed) = %v", err)
		}
		if err := e.Move(ctx, "a.xml", bankchannel.Processed); err != nil {
			t.Errorf("Move(a.xml, processed) again = %v; want nil", err)
		}
		if err := e.Move(ctx, "b.xml", bankchannel.Rejected); err != nil {
			t.Fatalf("Move(b.xml, rejected) = %v", err)
		}
		if got, err := e.List(ctx); err != nil || len(got) != 0 {
			t.Errorf("List() = %q, %v; want nothing", got, err)
		}
		if got, want := onDisk(t, filepath.Join(b.dir, "processed")), []string{"a.xml", "old.xml"}; !slices.Equal(got, want) {
			t.Errorf("processed/ holds %q; want %q", got, want)
		}
		if got := read(t, filepath.Join(b.dir, "rejected", "b.xml")); got != "<b/>" {
			t.Errorf("rejected/b.xml holds %q", got)
		}

		_, err = e.Get(ctx, "a.xml")
		wantError(t, "Get(moved)", err, bankchannel.Permanent, fs.ErrNotExist)
		_, err = e.Get(ctx, "sub")
		wantError(t, "Get(a directory)", err, bankchannel.Permanent, bankchannel.ErrInvalid)
		wantError(t, "Move(missing)", e.Move(ctx, "missing.xml", bankchannel.Rejected), bankchannel.Permanent, fs.ErrNotExist)
		wantError(t, "Move(sub)", e.Move(ctx, "sub", bankchannel.Rejected), bankchannel.Permanent, bankchannel.ErrInvalid)
		write(t, filepath.Join(b.dir, "d.xml"), "<d/>")
		wantError(t, "Move(to another folder)", e.Move(ctx, "d.xml", "elsewhere"), bankchannel.Permanent, bankchannel.ErrInvalid)
		wantError(t, "Move(to ../)", e.Move(ctx, "d.xml", "../processed"), bankchannel.Permanent, bankchannel.ErrInvalid)
	})
}

// TestMoveBeside: a bank that sends a name again is not refused: the same
// bytes are filed already, other bytes go beside the first under their
// SHA-256.
func TestMoveBeside(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		write(t, filepath.Join(b.dir, "processed", "statement.xml"), "<monday/>")
		write(t, filepath.Join(b.dir, "statement.xml"), "<tuesday/>")
		e := open(t, b)
		ctx := context.Background()
		if err := e.Move(ctx, "statement.xml", bankchannel.Processed); err != nil {
			t.Fatalf("Move(tuesday) = %v", err)
		}
		sum := sha256.Sum256([]byte("<tuesday/>"))
		beside := "statement.xml." + hex.EncodeToString(sum[:6])
		if got, want := onDisk(t, filepath.Join(b.dir, "processed")), []string{"statement.xml", beside}; !slices.Equal(got, want) {
			t.Fatalf("processed/ holds %q; want %q", got, want)
		}
		if got := read(t, filepath.Join(b.dir, "processed", "statement.xml")); got != "<monday/>" {
			t.Errorf("processed/statement.xml holds %q; want monday's", got)
		}

		write(t, filepath.Join(b.dir, "statement.xml"), "<tuesday/>")
		if err := e.Move(ctx, "statement.xml", bankchannel.Processed); err != nil {
			t.Fatalf("Move(tuesday again) = %v", err)
		}
		write(t, filepath.Join(b.dir, "statement.xml"), "<monday/>")
		if err := e.Move(ctx, "statement.xml", bankchannel.Processed); err != nil {
			t.Fatalf("Move(monday again) = %v", err)
		}
		if got, want := onDisk(t, filepath.Join(b.dir, "processed")), []string{"statement.xml", beside}; !slices.Equal(got, want) {
			t.Errorf("processed/ holds %q; want %q", got, want)
		}
		if got, want := onDisk(t, b.dir), []string{"processed/"}; !slices.Equal(got, want) {
			t.Errorf("the inbox holds %q; want %q", got, want)
		}
	})
}

// TestGetTooLarge: Get refuses a file larger than MaxFileBytes.
func TestGetTooLarge(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		write(t, filepath.Join(b.dir, "big.xml"), "01234567890")
		write(t, filepath.Join(b.dir, "fits.xml"), "0123456789")
		b.config.MaxFileBytes = 10
		e := open(t, b)
		_, err := e.Get(context.Background(), "big.xml")
		wantError(t, "Get(11 bytes)", err, bankchannel.Permanent, bankchannel.ErrTooLarge)
		if got, err := e.Get(context.Background(), "fits.xml"); err != nil || string(got) != "0123456789" {
			t.Errorf("Get(10 bytes) = %q, %v", got, err)
		}
	})
}

// TestOpenRefuses: an endpoint whose directory is not there, or is a file,
// is refused for good.
func TestOpenRefuses(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		write(t, filepath.Join(b.dir, "file"), "x")
		for _, tt := range []struct {
			name   string
			dir    string
			target error
		}{
			{"missing", "/missing", fs.ErrNotExist},
			{"a file", "/file", bankchannel.ErrInvalid},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := bankchannel.Open(context.Background(), b.url+tt.dir, b.config)
				wantError(t, "Open", err, bankchannel.Permanent, tt.target)
			})
		}
	})
}

// TestPutRace: of Puts of one name racing, those with the bytes that won
// succeed and the others are refused; the file holds the winner's bytes and
// nothing else is left.
func TestPutRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, b box) {
		dir := b.dir
		e := open(t, b)
		ctx := context.Background()
		const racers = 16
		errs := make(chan error, racers)
		for i := range racers {
			content := []byte{'a' + byte(i%2)}
			go func() { errs <- e.Put(ctx, "f", content) }()
		}
		var conflicts int
		for range racers {
			err := <-errs
			switch {
			case errors.Is(err, bankchannel.ErrConflict):
				conflicts++
			case err != nil:
				t.Errorf("Put() = %v", err)
			}
		}
		got := read(t, filepath.Join(dir, "f"))
		if got != "a" && got != "b" {
			t.Fatalf("f holds %q", got)
		}
		if conflicts != racers/2 {
			t.Errorf("%d Puts refused; want the %d with other bytes than %q", conflicts, racers/2, got)
		}
		if disk := onDisk(t, dir); !slices.Equal(disk, []string{"f"}) {
			t.Errorf("on disk %q; want [f]", disk)
		}
	})
}
