package bankchannel_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"payd/internal/bankchannel"
)

// crashDirEnv tells the test binary run by TestDirCrashBeforeRename to put
// a file in that directory and die before renaming it.
const crashDirEnv = "BANKCHANNEL_CRASH_DIR"

// TestDirCrashBeforeRename: payd killed between writing (and syncing) the
// temporary file and renaming it leaves no final name; the Put after the
// restart delivers the file.
func TestDirCrashBeforeRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDirCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the crashing Put ended with %v; want SIGKILL\n%s", err, out)
	}
	disk := onDisk(t, dir)
	if len(disk) != 1 || !strings.HasPrefix(disk[0], ".f.aba.") || !strings.HasSuffix(disk[0], ".tmp") {
		t.Fatalf("after the crash, on disk %q; want one temporary", disk)
	}
	if got := read(t, filepath.Join(dir, disk[0])); got != crashContent {
		t.Errorf("the temporary holds %q; want the whole file, synced", got)
	}

	e := open(t, box{url: "dir:" + dir, dir: dir})
	ctx := context.Background()
	if got, err := e.List(ctx); err != nil || len(got) != 0 {
		t.Errorf("List() = %q, %v; want nothing", got, err)
	}
	if err := e.Put(ctx, "f.aba", []byte(crashContent)); err != nil {
		t.Fatalf("Put(after the crash) = %v", err)
	}
	if got, err := e.List(ctx); err != nil || !slices.Equal(got, []string{"f.aba"}) {
		t.Errorf("List() = %q, %v; want [f.aba]", got, err)
	}
	if got := read(t, filepath.Join(dir, "f.aba")); got != crashContent {
		t.Errorf("f.aba holds %q", got)
	}
}

const crashContent = "0123456789\r\n7999-999\r\n"

// TestDirCrashHelper is TestDirCrashBeforeRename's payd: it kills itself
// between the write and the rename.
func TestDirCrashHelper(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestDirCrashBeforeRename")
	}
	e, err := bankchannel.Open(context.Background(), "dir:"+dir, bankchannel.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bankchannel.SetHooks(e, nil, func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) })
	err = e.Put(context.Background(), "f.aba", []byte(crashContent))
	t.Fatalf("Put() = %v after the process should have died", err)
}
