package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LazyFS (github.com/dsrhaslab/lazyfs) is a FUSE file system with its own
// page cache: what is written under its mount reaches the disk underneath
// only when it is fsynced, and lazyfs::clear-cache drops every byte that was
// not, which is what a power cut does to a database's files. The power-loss
// tests put payd's SQLite files, or a PostgreSQL data directory, on it.

// lazyFSInstall is how a developer gets LazyFS; CI runs it (.ci/run).
const lazyFSInstall = "bash ../shared/lazyfs/install.sh"

// needLazyFS returns the lazyfs binary and fusermount. Without them the test
// is skipped, except on CI (CI=true), where a missing LazyFS would turn the
// power-loss promise into an untested one: there it fails.
func needLazyFS(t *testing.T) (bin, fusermount string) {
	t.Helper()
	bin, fusermount, missing := findLazyFS()
	if missing == "" {
		return bin, fusermount
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI runs the power-loss tests, but %s (%s installs LazyFS)", missing, lazyFSInstall)
	}
	t.Skipf("LazyFS is not available: %s. %s installs it; without it the power-loss promise goes untested", missing, lazyFSInstall)
	return "", ""
}

// findLazyFS looks for lazyfs on PATH, then in ${LAZYFS_HOME:-/opt/lazyfs}
// where install.sh builds it, and for what FUSE needs; missing says what is not there.
func findLazyFS() (bin, fusermount, missing string) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "", "", "there is no /dev/fuse"
	}
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			fusermount = p
			break
		}
	}
	if fusermount == "" {
		return "", "", "neither fusermount3 nor fusermount is on PATH (Debian's fuse3)"
	}
	if p, err := exec.LookPath("lazyfs"); err == nil {
		return p, fusermount, ""
	}
	home := os.Getenv("LAZYFS_HOME")
	if home == "" {
		home = "/opt/lazyfs"
	}
	p := filepath.Join(home, "lazyfs", "build", "lazyfs")
	if _, err := os.Stat(p); err != nil {
		return "", "", "lazyfs is neither on PATH nor at " + p
	}
	return p, fusermount, ""
}

// lazyFS is one LazyFS mount at dir over the directory under.
type lazyFS struct {
	t          *testing.T
	bin        string
	fusermount string
	dir        string // the mount: the database's files go here
	under      string // the disk underneath: what a power cut leaves
	config     string
	faults     string // fifo that takes lazyfs::clear-cache
	done       string // fifo on which LazyFS reports the cache cleared
	log        string

	cmd    *exec.Cmd
	exited chan struct{}
	report *os.File // the reading end of done
}

// lazyFSCacheSize bounds LazyFS's cache, which it allocates at each mount
// (a trial's writes fit; past it LazyFS writes through, like an OS's writeback).
const lazyFSCacheSize = "128mb"

// mountLazyFS mounts LazyFS at base/mnt over base/disk until the test ends.
// Both directories, like base, can be entered by every user (PostgreSQL runs
// as its own).
func mountLazyFS(t *testing.T, base string) *lazyFS {
	t.Helper()
	bin, fusermount := needLazyFS(t)
	l := &lazyFS{t: t, bin: bin, fusermount: fusermount, dir: filepath.Join(base, "mnt"), under: filepath.Join(base, "disk"),
		config: filepath.Join(base, "lazyfs.toml"), faults: filepath.Join(base, "faults.fifo"),
		done: filepath.Join(base, "done.fifo"), log: filepath.Join(base, "lazyfs.log")}
	for _, d := range []string{l.dir, l.under} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`[faults]
fifo_path=%q
fifo_path_completed=%q
[cache]
apply_eviction=false
[cache.simple]
custom_size=%q
blocks_per_page=1
[filesystem]
log_all_operations=false
logfile=""
`, l.faults, l.done, lazyFSCacheSize)
	if err := os.WriteFile(l.config, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	l.mount()
	t.Cleanup(l.unmount)
	return l
}

// mount starts LazyFS in the foreground and waits until the mount is up.
func (l *lazyFS) mount() {
	l.t.Helper()
	logFile, err := os.OpenFile(l.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		l.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(l.bin, l.dir, "--config-path", l.config,
		"-o", "allow_other", "-o", "modules=subdir", "-o", "subdir="+l.under, "-f")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("start lazyfs: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	l.cmd, l.exited = cmd, exited
	waitUntil(l.t, "LazyFS mounted at "+l.dir, 60*time.Second, func() bool {
		select {
		case <-exited:
			l.t.Fatalf("lazyfs exited before mounting:\n%s", l.logTail())
		default:
		}
		return mounted(l.dir)
	})
	// LazyFS's fault thread opens the report fifo for writing before it
	// reads commands; opened read-write, this end never blocks on it.
	if l.report, err = os.OpenFile(l.done, os.O_RDWR, 0); err != nil {
		l.t.Fatalf("open %s: %v", l.done, err)
	}
}

// mounted reports whether a FUSE file system is mounted at dir.
func mounted(dir string) bool {
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir && strings.Contains(line, " - fuse") {
			return true
		}
	}
	return false
}

// powerCut drops every byte written under dir and not fsynced since, as a
// power loss does, and waits until LazyFS reports it done. Whoever wrote
// there must be dead already.
func (l *lazyFS) powerCut() {
	l.t.Helper()
	var fifo *os.File
	// Non-blocking, the open fails (ENXIO) until LazyFS's fault thread reads the fifo.
	waitUntil(l.t, "LazyFS to read its fault fifo", 30*time.Second, func() bool {
		f, err := os.OpenFile(l.faults, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		fifo = f
		return err == nil
	})
	_, err := fifo.WriteString("lazyfs::clear-cache\n")
	fifo.Close()
	if err != nil {
		l.t.Fatalf("send lazyfs::clear-cache: %v", err)
	}
	if err := l.report.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		l.t.Fatalf("wait for LazyFS's report: %v", err)
	}
	line, err := bufio.NewReader(l.report).ReadString('\n')
	if err != nil || line != "finished::clear-cache\n" {
		l.t.Fatalf("LazyFS did not report the cache cleared (%q, %v):\n%s", line, err, l.logTail())
	}
}

// unmount unmounts LazyFS and waits for it to exit. What was not fsynced
// and is still in its cache is gone with it. Should the mount stay busy,
// it is detached and LazyFS killed, so that no test leaves a mount behind.
func (l *lazyFS) unmount() {
	l.t.Helper()
	if l.cmd == nil {
		return
	}
	cmd := l.cmd
	l.cmd = nil
	l.report.Close()
	// An unmount is refused while a killed process's files are still being closed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(l.fusermount, "-u", l.dir).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			exec.Command(l.fusermount, "-u", "-z", l.dir).Run()
			cmd.Process.Kill()
			l.t.Fatalf("unmount %s: %v: %s", l.dir, err, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-l.exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		l.t.Fatalf("lazyfs did not exit after unmount:\n%s", l.logTail())
	}
}

// remount is the machine coming back after the power cut.
func (l *lazyFS) remount() {
	l.t.Helper()
	l.unmount()
	l.mount()
}

func (l *lazyFS) logTail() string {
	raw, _ := os.ReadFile(l.log)
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
	}
	return string(raw)
}

// powerLossDir makes a directory that every user may enter (PostgreSQL
// runs as its own user) and removes it when the test ends.
func powerLossDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "payd-powerloss-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pgCluster is a throwaway PostgreSQL server whose data directory is on a
// LazyFS mount.
type pgCluster struct {
	t       *testing.T
	bin     string // directory of initdb and postgres
	port    int
	as      *syscall.Credential // the postgres user when the test runs as root
	dataDir string              // on the mount
	log     string
	cmd     *exec.Cmd
}

// needPostgresBinaries returns the directory of initdb and postgres: on
// PATH, or Debian's newest /usr/lib/postgresql/N/bin. Missing, the test is
// skipped, or fails on CI like a missing LazyFS.
func needPostgresBinaries(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		// A symlink on PATH (Debian's /usr/local/bin/initdb) points to the
		// directory that holds the rest of the server's programs.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) < pgVersion(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[len(dirs)-1])
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI runs the PostgreSQL power-loss test, but initdb is not installed (Debian's postgresql)")
	}
	t.Skip("initdb is not installed (Debian's postgresql): no PostgreSQL power-loss test")
	return ""
}

// pgVersion reads N of /usr/lib/postgresql/N/bin/initdb.
func pgVersion(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// pgTemplate is a data directory made once by initdb, copied for each cluster.
type pgTemplate struct {
	bin string              // directory of initdb and postgres
	dir string              // the data directory
	as  *syscall.Credential // the postgres user when the test runs as root
}

// initPGTemplate runs initdb once for the test. PostgreSQL refuses to run
// as root: as root, the test runs it as the postgres user.
func initPGTemplate(t *testing.T) pgTemplate {
	t.Helper()
	tpl := pgTemplate{bin: needPostgresBinaries(t), dir: filepath.Join(powerLossDir(t), "pg")}
	if err := os.Mkdir(tpl.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		tpl.as = postgresUser(t)
		if err := os.Chown(tpl.dir, int(tpl.as.Uid), int(tpl.as.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	initdb := exec.Command(filepath.Join(tpl.bin, "initdb"), "-D", tpl.dir, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: tpl.as}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	return tpl
}

// postgresUser is the postgres user's credential: PostgreSQL refuses to run
// as root, so a test running as root runs it as that user.
func postgresUser(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("the test runs as root and PostgreSQL will not: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// startPGCluster copies the template onto the disk under fs (the disk
// underneath keeps all of it, as if it had been synced) and starts
// PostgreSQL on it through the mount, on a free local port, until the test ends.
func startPGCluster(t *testing.T, fs *lazyFS, tpl pgTemplate) *pgCluster {
	t.Helper()
	c := &pgCluster{t: t, bin: tpl.bin, as: tpl.as, dataDir: filepath.Join(fs.dir, "pg"),
		log: filepath.Join(filepath.Dir(fs.dir), "postgres.log")}
	if out, err := exec.Command("cp", "-a", tpl.dir, filepath.Join(fs.under, "pg")).CombinedOutput(); err != nil {
		t.Fatalf("copy the cluster: %v\n%s", err, out)
	}
	c.port = freePort(t)
	c.start()
	t.Cleanup(c.kill)
	return c
}

// freePort returns a local TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// dsn is the cluster's database postgres.
func (c *pgCluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// start runs the postmaster and waits until it takes connections, which
// after a crash is when its recovery has finished.
func (c *pgCluster) start() {
	c.t.Helper()
	logFile, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.dataDir, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "shared_buffers=32MB",
		// After a crash PostgreSQL first fsyncs every file of the cluster, one by
		// one (slow through FUSE), in case the OS still holds the dead server's
		// writes; after the power cut LazyFS holds none, so one syncfs is the same.
		"-c", "recovery_init_sync_method=syncfs")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.as}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start postgres: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	c.cmd = cmd
	db, err := sql.Open("pgx", c.dsn())
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	waitUntil(c.t, "PostgreSQL to take connections", 120*time.Second, func() bool {
		select {
		case <-exited:
			c.t.Fatalf("postgres exited:\n%s", c.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return db.PingContext(ctx) == nil
	})
}

// kill stops PostgreSQL as a power cut does: every process at once. Each
// backend runs in a session of its own, so the postmaster is first frozen
// (it can fork no more), then it and all its children get SIGKILL; kill
// returns once none of them runs.
func (c *pgCluster) kill() {
	c.t.Helper()
	if c.cmd == nil {
		return
	}
	pm := c.cmd.Process.Pid
	c.cmd = nil
	if err := syscall.Kill(pm, syscall.SIGSTOP); err != nil {
		return // gone already, and its children with it: a backend ends when it sees the postmaster gone
	}
	procs := append(childrenOf(pm), pm)
	for _, pid := range procs {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitUntil(c.t, "every PostgreSQL process gone", 30*time.Second, func() bool {
		for _, pid := range procs {
			if running(pid) {
				return false
			}
		}
		return true
	})
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(child); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// running reports whether pid is a live process (a zombie has already
// closed its files and counts as gone).
func running(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// procStat is /proc/PID/stat from its state on (state ppid pgrp ...), or
// nothing when there is no such process.
func procStat(pid int) []string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	// pid (comm) state ...: comm may hold spaces, so read after its ")".
	s := string(raw)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func (c *pgCluster) logTail() string {
	raw, _ := os.ReadFile(c.log)
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
	}
	return string(raw)
}
