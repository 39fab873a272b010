package bankchannel_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"payd/internal/bankchannel"
	"payd/internal/bankchannel/sftptest"
)

func sftpBox(t *testing.T) (*sftptest.Server, box) {
	s := sftptest.Start(t)
	dir := s.Mkdir("outbox")
	return s, box{url: s.URL(dir), dir: dir, config: bankchannel.Config{KeyFile: s.KeyFile, KnownHostsFile: s.KnownHostsFile}}
}

// newKey writes a new ed25519 private key in OpenSSH format, encrypted when
// passphrase is not empty.
func newKey(t *testing.T, passphrase string) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if passphrase != "" {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return file, key
}

// TestSFTPHostRefused: a server whose host key is not the pinned one, or
// that known_hosts does not name, is never signed in to.
func TestSFTPHostRefused(t *testing.T) {
	t.Parallel()
	s, b := sftpBox(t)
	_, hostKey := newKey(t, "")
	_, port, _ := net.SplitHostPort(s.Addr)
	otherPort, _ := strconv.Atoi(port)
	otherPort++
	anotherPort := filepath.Join(t.TempDir(), "known_hosts")
	write(t, anotherPort, knownhosts.Line([]string{net.JoinHostPort("127.0.0.1", strconv.Itoa(otherPort))}, hostKey)+"\n")
	hostOnly := filepath.Join(t.TempDir(), "known_hosts")
	write(t, hostOnly, knownhosts.Line([]string{"127.0.0.1"}, hostKey)+"\n")
	empty := filepath.Join(t.TempDir(), "known_hosts")
	write(t, empty, "")

	tests := []struct {
		name       string
		knownHosts string
		target     error
	}{
		{"another key pinned", s.KnownHostsWithOtherKey(), bankchannel.ErrHostKey},
		{"another port pinned", anotherPort, bankchannel.ErrUnknownHost},
		{"port 22 pinned", hostOnly, bankchannel.ErrUnknownHost},
		{"empty known_hosts", empty, bankchannel.ErrUnknownHost},
		{"no known_hosts file", filepath.Join(t.TempDir(), "missing"), bankchannel.ErrInvalid},
		{"no known_hosts given", "", bankchannel.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := b.config
			c.KnownHostsFile = tt.knownHosts
			_, err := bankchannel.Open(context.Background(), b.url, c)
			wantError(t, "Open", err, bankchannel.Permanent, tt.target)
		})
	}
	if got := onDisk(t, b.dir); len(got) != 0 {
		t.Errorf("on disk %q; want nothing", got)
	}
}

// TestSFTPKeyRefused: a key the server does not know, an encrypted key and a
// file that is not a key are refused for good, and no error quotes the key
// file's content.
func TestSFTPKeyRefused(t *testing.T) {
	t.Parallel()
	_, b := sftpBox(t)
	unknown, _ := newKey(t, "")
	encrypted, _ := newKey(t, "a passphrase")
	garbage := filepath.Join(t.TempDir(), "key")
	write(t, garbage, "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETSECRETSECRET\n-----END OPENSSH PRIVATE KEY-----\n")

	tests := []struct {
		name   string
		key    string
		target error
	}{
		{"not authorised", unknown, bankchannel.ErrAuth},
		{"encrypted", encrypted, bankchannel.ErrInvalid},
		{"not a key", garbage, bankchannel.ErrInvalid},
		{"missing", filepath.Join(t.TempDir(), "missing"), bankchannel.ErrInvalid},
		{"none given", "", bankchannel.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := b.config
			c.KeyFile = tt.key
			_, err := bankchannel.Open(context.Background(), b.url, c)
			wantError(t, "Open", err, bankchannel.Permanent, tt.target)
			if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "PRIVATE KEY") || !strings.Contains(msg, b.url) {
				t.Errorf("Open() = %q; want the endpoint named and the key not quoted", msg)
			}
		})
	}
}

// TestSFTPServerDownThenBack: while the server is down, opening and putting
// fail Temporary; once it is back, the retry delivers the file once.
func TestSFTPServerDownThenBack(t *testing.T) {
	t.Parallel()
	s, b := sftpBox(t)
	ctx := context.Background()
	before := open(t, b)
	s.Stop()

	if err := before.Put(ctx, "f.aba", []byte("file")); !bankchannel.IsTemporary(err) {
		t.Fatalf("Put(server down) = %v; want a temporary error", err)
	}
	_, err := bankchannel.Open(ctx, b.url, b.config)
	wantError(t, "Open(server down)", err, bankchannel.Temporary, syscall.ECONNREFUSED)

	s.Restart()
	e := open(t, b)
	for range 2 {
		if err := e.Put(ctx, "f.aba", []byte("file")); err != nil {
			t.Fatalf("Put(server back) = %v", err)
		}
	}
	if got, want := onDisk(t, b.dir), []string{"f.aba"}; !slices.Equal(got, want) {
		t.Errorf("on disk %q; want %q", got, want)
	}
}

// TestSFTPServerKilledMidUpload: a server that dies during an upload leaves
// at most a temporary name; once it is back, the retry delivers the file.
func TestSFTPServerKilledMidUpload(t *testing.T) {
	t.Parallel()
	s, b := sftpBox(t)
	ctx := context.Background()
	e := open(t, b)
	bankchannel.SetHooks(e, func(int64) { s.Stop() }, nil)
	content := bigFile()
	err := e.Put(ctx, "f.xml", content)
	if !bankchannel.IsTemporary(err) {
		t.Fatalf("Put(server killed) = %v; want a temporary error", err)
	}
	disk := onDisk(t, b.dir)
	if len(disk) != 1 || !strings.HasPrefix(disk[0], ".f.xml.") {
		t.Fatalf("after the server died, on disk %q; want one temporary", disk)
	}

	s.Restart()
	again := open(t, b)
	if err := again.Put(ctx, "f.xml", content); err != nil {
		t.Fatalf("Put(server back) = %v", err)
	}
	if got, err := again.List(ctx); err != nil || !slices.Equal(got, []string{"f.xml"}) {
		t.Errorf("List() = %q, %v; want [f.xml]", got, err)
	}
	if got := read(t, filepath.Join(b.dir, "f.xml")); got != string(content) {
		t.Errorf("delivered %d bytes; want %d", len(got), len(content))
	}
}

// TestSFTPOpenTimesOut: a server that takes the connection and never
// answers is given Config.Timeout, then a Temporary error.
func TestSFTPOpenTimesOut(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := l.Accept()
		if err == nil {
			accepted <- conn
		}
		close(accepted)
	}()
	keyFile, hostKey := newKey(t, "")
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	write(t, knownHosts, knownhosts.Line([]string{l.Addr().String()}, hostKey)+"\n")

	c := bankchannel.Config{KeyFile: keyFile, KnownHostsFile: knownHosts, Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err = bankchannel.Open(context.Background(), "sftp://payd@"+l.Addr().String()+"/out", c)
	if !bankchannel.IsTemporary(err) {
		t.Errorf("Open(a silent server) = %v; want a temporary error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open(a silent server) took %s; want about %s", took, c.Timeout)
	}
	if conn := <-accepted; conn != nil {
		conn.Close()
	}
}
