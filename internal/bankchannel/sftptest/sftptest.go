// Package sftptest runs a real OpenSSH server for tests: Debian's sshd on a
// free loopback port, with a host key of its own, one authorised client key,
// SFTP only (internal-sftp) and no password. A test plays the bank by
// reading and writing the server's directories directly (the server runs on
// this machine and serves its file system as is).
//
// A rail's test, say:
//
//	s := sftptest.Start(t)
//	outbox := s.Mkdir("outbox")
//	c := bankchannel.Config{KeyFile: s.KeyFile, KnownHostsFile: s.KnownHostsFile}
//	e, err := bankchannel.Open(ctx, s.URL(outbox), c)
//	// … os.ReadFile(filepath.Join(outbox, name)) is what the bank got;
//	// s.Stop() and s.Restart() take the server down and back;
//	// s.KnownHostsWithOtherKey() pins a key that is not the server's.
//
// Without /usr/sbin/sshd (Debian's openssh-server) a test skips, and fails
// where CI=true: CI installs it (.ci/run). Run as root, the server signs in
// root with the key only; run as another user, it signs in that user, whose
// account must not be locked.
package sftptest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHD is where Debian's openssh-server puts the server.
const SSHD = "/usr/sbin/sshd"

// startTimeout bounds waiting for sshd to listen.
const startTimeout = 10 * time.Second

// Server is a running sshd. Its fields are what a client needs; Root is the
// test's own directory on the server.
type Server struct {
	// Root is a fresh directory for the test's outboxes and inboxes, served
	// under the same path.
	Root string
	// User is the user the client signs in as (the one running the test).
	User string
	// Addr is 127.0.0.1:PORT.
	Addr string
	// KeyFile is the authorised client key (OpenSSH format, unencrypted).
	KeyFile string
	// KnownHostsFile pins the server's host key for Addr.
	KnownHostsFile string

	t       testing.TB
	dir     string // the server's configuration, keys and logs
	config  string
	hostKey ssh.PublicKey

	mu     sync.Mutex
	cmd    *exec.Cmd
	logs   *logBuffer
	stderr *os.File      // the read end of the running sshd's standard error
	ended  chan struct{} // closed when the log reader saw standard error end
}

// Start starts a server for t, stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(SSHD); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs the SFTP tests against OpenSSH: %v", err)
		}
		t.Skipf("SFTP tests need Debian's openssh-server at %s (apt-get install openssh-server): %v", SSHD, err)
	}
	if err := privilegeSeparationDir(); err != nil {
		t.Fatal(err)
	}
	current, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, Root: t.TempDir(), User: current.Username, dir: t.TempDir(), logs: &logBuffer{}}
	if err := s.writeKeys(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("sshd's log:\n%s", s.logs.String())
		}
	})
	// A free port may be taken between choosing it and sshd binding it.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := s.writeConfig(port); err != nil {
			t.Fatal(err)
		}
		err = s.start()
		if err == nil {
			break
		}
		if attempt == 2 {
			t.Fatalf("sshd did not start: %v\n%s", err, s.logs.String())
		}
	}
	if err := s.writeKnownHosts(); err != nil {
		t.Fatal(err)
	}
	return s
}

// URL is the sftp:// URL of dir, a directory under Root (which the URL
// names as is).
func (s *Server) URL(dir string) string {
	return fmt.Sprintf("sftp://%s@%s%s", s.User, s.Addr, dir)
}

// Mkdir makes a directory under Root and returns its path.
func (s *Server) Mkdir(name string) string {
	s.t.Helper()
	dir := filepath.Join(s.Root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	return dir
}

// Stop kills sshd and every session it started, as a crash of the server
// would: connections drop and new ones are refused until Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	master := s.cmd.Process.Pid
	// sshd's sessions leave its process group (setsid), and once it is
	// gone they are no longer its children: find them first, stop it
	// forking, then kill them all.
	_ = syscall.Kill(master, syscall.SIGSTOP)
	sessions := sessionsOf(master)
	_ = syscall.Kill(master, syscall.SIGKILL)
	for _, pid := range sessions {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = s.cmd.Wait()
	s.cmd = nil
	select {
	case <-s.ended:
	case <-time.After(startTimeout):
		// Something else holds standard error open: stop reading.
	}
	s.stderr.Close()
}

// Restart starts sshd again on the same port, with the same keys.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("sshd did not restart on %s: %v\n%s", s.Addr, err, s.logs.String())
	}
}

// KnownHostsWithOtherKey writes a known_hosts file that pins another key for
// Addr (a server that is not the one it claims to be) and returns its path.
func (s *Server) KnownHostsWithOtherKey() string {
	s.t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		s.t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		s.t.Fatal(err)
	}
	file := filepath.Join(s.dir, "known_hosts_other_key")
	line := knownhosts.Line([]string{s.Addr}, key) + "\n"
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return file
}

// start runs sshd and waits until it says it listens.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(SSHD, "-D", "-e", "-f", s.config)
	cmd.Stdout = w
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	w.Close()
	listening := make(chan struct{})
	ended := make(chan struct{})
	go s.logs.read(r, "Server listening on ", listening, ended)
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-listening:
		s.cmd, s.stderr, s.ended = cmd, r, ended
		return nil
	case <-ended:
		err = errors.New("sshd exited")
	case <-timer.C:
		err = fmt.Errorf("sshd did not listen within %s", startTimeout)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	<-ended
	r.Close()
	return err
}

// privilegeSeparationDir makes /run/sshd, which sshd run as root needs
// empty and root's (Debian's service script makes it the same way).
func privilegeSeparationDir() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return fmt.Errorf("sshd's privilege separation directory: %w", err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) writeKeys() error {
	hostKey, err := writePrivateKey(filepath.Join(s.dir, "host_ed25519"))
	if err != nil {
		return err
	}
	clientKey, err := writePrivateKey(filepath.Join(s.dir, "client_ed25519"))
	if err != nil {
		return err
	}
	s.KeyFile = filepath.Join(s.dir, "client_ed25519")
	s.KnownHostsFile = filepath.Join(s.dir, "known_hosts")
	authorized := ssh.MarshalAuthorizedKey(clientKey)
	if err := os.WriteFile(filepath.Join(s.dir, "authorized_keys"), authorized, 0o600); err != nil {
		return err
	}
	s.hostKey = hostKey
	return nil
}

func (s *Server) writeKnownHosts() error {
	line := knownhosts.Line([]string{s.Addr}, s.hostKey) + "\n"
	return os.WriteFile(s.KnownHostsFile, []byte(line), 0o600)
}

// writePrivateKey writes a new ed25519 key in OpenSSH's format, readable by
// its owner only (sshd ignores a host key others can read).
func writePrivateKey(file string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "payd sftptest")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(pub)
}

// writeConfig writes sshd_config: SFTP only, to the authorised key only.
// StrictModes is off because the test's directories are temporary ones;
// root may sign in with a key (CI runs as root).
func (s *Server) writeConfig(port int) error {
	s.config = filepath.Join(s.dir, "sshd_config")
	config := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s
PidFile %s
AuthorizedKeysFile %s
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers %s
StrictModes no
UsePAM no
UseDNS no
Subsystem sftp internal-sftp
ForceCommand internal-sftp
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTTY no
PrintMotd no
LoginGraceTime 20
MaxStartups 64
LogLevel VERBOSE
`, port, filepath.Join(s.dir, "host_ed25519"), filepath.Join(s.dir, "sshd.pid"),
		filepath.Join(s.dir, "authorized_keys"), s.User)
	return os.WriteFile(s.config, []byte(config), 0o600)
}

// sessionsOf lists the processes sshd master started: its children and,
// as each child leads a session of its own, every process of those
// sessions.
func sessionsOf(master int) []int {
	type proc struct{ pid, ppid, sid int }
	var procs []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 4 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		sid, _ := strconv.Atoi(fields[3])
		procs = append(procs, proc{pid, ppid, sid})
	}
	children := map[int]bool{}
	for _, p := range procs {
		if p.ppid == master {
			children[p.pid] = true
		}
	}
	var pids []int
	for _, p := range procs {
		if children[p.pid] || children[p.sid] {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// logBuffer keeps sshd's log for a failing test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// read copies r's lines into the log until r ends, closing listening at the
// first line that begins with ready (once) and ended at the end.
func (b *logBuffer) read(r *os.File, ready string, listening, ended chan struct{}) {
	defer close(ended)
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		line := scanner.Text()
		b.mu.Lock()
		b.buf.WriteString(line + "\n")
		b.mu.Unlock()
		if listening != nil && strings.HasPrefix(line, ready) {
			close(listening)
			listening = nil
		}
	}
}
