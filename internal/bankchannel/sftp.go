package bankchannel

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// maxKeyFileBytes bounds the private key file read (an RSA 16384-bit key in
// OpenSSH format is under 13 KiB).
const maxKeyFileBytes = 64 << 10

// openSFTP connects, checks the host key, signs in and checks the directory.
func openSFTP(ctx context.Context, loc location, c Config) (Endpoint, error) {
	url := loc.String()
	conn, err := dialSFTP(ctx, loc, c)
	if err != nil {
		return nil, fail(ctx, url, "open", "", err)
	}
	ch := &channel{
		url:          url,
		dir:          loc.dir,
		files:        conn,
		timeout:      c.Timeout,
		maxFileBytes: c.MaxFileBytes,
	}
	err = ch.run(ctx, "open", "", func(context.Context) error {
		info, err := conn.client.Stat(loc.dir)
		err = pathError("stat", loc.dir, err)
		if err == nil && !info.IsDir() {
			err = fmt.Errorf("%w: %s is not a directory", ErrInvalid, loc.dir)
		}
		return err
	})
	if err != nil {
		conn.close()
		return nil, err
	}
	return ch, nil
}

// sftpFiles is a directory on an SFTP server, over one SSH connection.
type sftpFiles struct {
	ssh      *ssh.Client
	client   *sftp.Client
	canFsync bool
	// gone is closed when the connection ends, by Close, a cancelled
	// operation or the server.
	gone      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

func dialSFTP(ctx context.Context, loc location, c Config) (*sftpFiles, error) {
	config, err := clientConfig(loc, c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	dialer := net.Dialer{Timeout: c.Timeout}
	conn, err := dialer.DialContext(ctx, "tcp", loc.addr())
	if err != nil {
		return nil, err
	}
	// The handshake and the SFTP start have no context of their own: the
	// deadline bounds them and a cancel closes the connection.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		conn.Close()
		return nil, err
	}
	files, err := startSFTP(conn, loc, config)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		files.close()
		return nil, err
	}
	return files, nil
}

func startSFTP(conn net.Conn, loc location, config *ssh.ClientConfig) (*sftpFiles, error) {
	// The callback runs on the handshake's goroutine, at the start and at
	// each key re-exchange.
	var mu sync.Mutex
	var hostKeyErr error
	check := config.HostKeyCallback
	config.HostKeyCallback = func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := hostKeyError(check(host, remote, key))
		mu.Lock()
		defer mu.Unlock()
		hostKeyErr = err
		return err
	}
	sshConn, chans, reqs, err := ssh.NewClientConn(conn, loc.addr(), config)
	mu.Lock()
	refused := hostKeyErr
	mu.Unlock()
	switch {
	case refused != nil:
		return nil, refused
	case err != nil && strings.Contains(err.Error(), "ssh: unable to authenticate"):
		// x/crypto/ssh has no error type for a refused key; its message
		// has been this one since 2014.
		return nil, fmt.Errorf("%w as %s: %v", ErrAuth, loc.user, err)
	case err != nil:
		return nil, err
	}
	client := ssh.NewClient(sshConn, chans, reqs)
	sc, err := sftp.NewClient(client, sftp.UseConcurrentWrites(true))
	if err != nil {
		client.Close()
		return nil, err
	}
	fsync, _ := sc.HasExtension("fsync@openssh.com")
	files := &sftpFiles{ssh: client, client: sc, canFsync: fsync == "1", gone: make(chan struct{})}
	go func() {
		_ = sc.Wait()
		close(files.gone)
	}()
	return files, nil
}

// hostKeyError says why known_hosts refused the host's key.
func hostKeyError(err error) error {
	var keyErr *knownhosts.KeyError
	var revoked *knownhosts.RevokedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return ErrUnknownHost
	case errors.As(err, &keyErr):
		return fmt.Errorf("%w: the server's key is not the one pinned at %s:%d", ErrHostKey, keyErr.Want[0].Filename, keyErr.Want[0].Line)
	case errors.As(err, &revoked):
		return fmt.Errorf("%w: the server's key is revoked at %s:%d", ErrHostKey, revoked.Revoked.Filename, revoked.Revoked.Line)
	}
	return fmt.Errorf("%w: %v", ErrHostKey, err)
}

// clientConfig reads the key and the known_hosts file. The host key
// algorithms offered are those of the keys known_hosts pins for the host,
// so that a server with several host keys shows the pinned one; a host
// known_hosts does not name is refused before dialling.
func clientConfig(loc location, c Config) (*ssh.ClientConfig, error) {
	if c.KeyFile == "" || c.KnownHostsFile == "" {
		return nil, fmt.Errorf("%w config: sftp needs a key file and a known_hosts file (--sftp-key, --sftp-known-hosts)", ErrInvalid)
	}
	signer, err := readKey(c.KeyFile)
	if err != nil {
		return nil, err
	}
	check, err := knownhosts.New(c.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("%w known_hosts file: %v", ErrInvalid, err)
	}
	algorithms, err := pinnedAlgorithms(check, loc.addr())
	if err != nil {
		return nil, err
	}
	return &ssh.ClientConfig{
		User:              loc.user,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback:   check,
		HostKeyAlgorithms: algorithms,
	}, nil
}

// readKey reads an unencrypted private key. Its errors name the file, never
// its content.
func readKey(file string) (ssh.Signer, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w key file: %v", ErrInvalid, err)
	}
	defer f.Close()
	pem, err := readBounded(f, maxKeyFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w key file %s: %v", ErrInvalid, file, err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%w key file %s: it is encrypted; payd needs a key without a passphrase", ErrInvalid, file)
	}
	if err != nil {
		return nil, fmt.Errorf("%w key file %s: not a private key payd reads", ErrInvalid, file)
	}
	return signer, nil
}

// probeKey is a key no known_hosts file holds: checking it lists the keys
// pinned for a host.
var probeKey, _ = ssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))

type addrString string

func (addrString) Network() string  { return "tcp" }
func (a addrString) String() string { return string(a) }

func pinnedAlgorithms(check ssh.HostKeyCallback, addr string) ([]string, error) {
	var keyErr *knownhosts.KeyError
	if err := check(addr, addrString(addr), probeKey); !errors.As(err, &keyErr) {
		return nil, fmt.Errorf("%w known_hosts file: checking %s: %v", ErrInvalid, addr, err)
	}
	if len(keyErr.Want) == 0 {
		return nil, fmt.Errorf("%w: no key for %s (a port other than 22 is written [HOST]:PORT)", ErrUnknownHost, addr)
	}
	var algorithms []string
	for _, known := range keyErr.Want {
		switch t := known.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			algorithms = append(algorithms, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
		default:
			algorithms = append(algorithms, t)
		}
	}
	return algorithms, nil
}

// guard closes the connection when ctx ends: pkg/sftp's calls take no
// context, and a closed connection ends them all.
func (s *sftpFiles) guard(ctx context.Context) func() {
	stop := context.AfterFunc(ctx, func() { s.close() })
	return func() { stop() }
}

// errGone is what the calls on a connection that ended say.
var errGone = errors.New("the connection is gone (open the endpoint again)")

func (s *sftpFiles) alive() error {
	select {
	case <-s.gone:
		return errGone
	default:
		return nil
	}
}

func (s *sftpFiles) stat(p string) (fs.FileInfo, error) {
	info, err := s.client.Lstat(p)
	return info, pathError("lstat", p, err)
}

func (s *sftpFiles) readDir(p string) ([]fs.FileInfo, error) {
	infos, err := s.client.ReadDir(p)
	return infos, pathError("readdir", p, err)
}

// pathError names p in err, as the os package's errors do (pkg/sftp's
// often do not).
func pathError(op, p string, err error) error {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	if err == nil || errors.As(err, &pathErr) || errors.As(err, &linkErr) {
		return err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

func (s *sftpFiles) read(p string, maxBytes int64) ([]byte, error) {
	f, err := s.client.Open(p)
	if err != nil {
		return nil, pathError("open", p, err)
	}
	defer f.Close()
	return readBounded(f, maxBytes)
}

func (s *sftpFiles) create(p string, content []byte, wrote func(int64)) error {
	f, err := s.client.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return pathError("create", p, err)
	}
	if err := writeChunks(f, content, wrote); err != nil {
		f.Close()
		return err
	}
	if s.canFsync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// renameNoReplace uses SFTP's own rename, which refuses an existing target
// (draft-ietf-secsh-filexfer-02 §6.5; OpenSSH links then unlinks), not
// posix-rename@openssh.com, which would replace it. A refusal says only
// "failure", so the target is looked at.
func (s *sftpFiles) renameNoReplace(from, to string) error {
	err := s.client.Rename(from, to)
	if err == nil {
		return nil
	}
	if _, statErr := s.client.Lstat(to); statErr == nil {
		err = fs.ErrExist
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

func (s *sftpFiles) remove(p string) error { return pathError("remove", p, s.client.Remove(p)) }

func (s *sftpFiles) mkdir(p string) error {
	err := s.client.Mkdir(p)
	if err == nil {
		return nil
	}
	if info, statErr := s.client.Lstat(p); statErr == nil && info.IsDir() {
		return fs.ErrExist
	}
	return pathError("mkdir", p, err)
}

// syncDir is the server's: SFTP has no directory sync.
func (s *sftpFiles) syncDir(string) error { return nil }

func (s *sftpFiles) close() error {
	s.closeOnce.Do(func() {
		s.closeErr = errors.Join(closeError(s.client.Close()), closeError(s.ssh.Close()))
	})
	return s.closeErr
}

// closeError drops what closing a connection already gone says.
func closeError(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, sftp.ErrSSHFxConnectionLost) {
		return nil
	}
	return err
}
