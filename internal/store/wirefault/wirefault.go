// Package wirefault is a TCP proxy for tests, put between payd and
// PostgreSQL, that breaks the database wire on command: it resets every
// open connection, holds all traffic (a blackhole), delays it, or cuts a
// connection after its COMMIT has reached the server and before the
// server's answer reaches the client. That last cut is the one a database
// client cannot tell from a failure: its transaction committed, and it
// heard nothing. payd must then neither lose the write it acknowledges on
// a retry nor make it twice.
//
// The proxy reads the PostgreSQL protocol only as far as it must to find a
// COMMIT and its answer: the untyped startup message, then frames of a
// type byte and an int32 length. It answers an SSLRequest itself with "no",
// so that the bytes it reads are never encrypted (the tests' DSNs say
// sslmode=disable, and a client that prefers TLS goes on without it).
package wirefault

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bounds of the proxy.
const (
	// maxStartup is PostgreSQL's own bound on a startup message.
	maxStartup = 10000
	// maxInspected bounds the Parse, Bind and Query messages read whole for
	// a COMMIT; a longer one is passed on unread (no COMMIT is that long).
	maxInspected = 64 << 10
	// maxHeld bounds the bytes read from one side and not yet written to
	// the other.
	maxHeld = 64 << 10
	// maxLinks bounds the connections the proxy carries at once; one more
	// is closed as soon as it is accepted.
	maxLinks = 256
	// maxCommitStatements bounds the prepared statements a connection's
	// client names a COMMIT by (pgx prepares each statement once, under a
	// name of its text's hash).
	maxCommitStatements = 16
	// dialWithin bounds the connection to the server behind the proxy.
	dialWithin = 5 * time.Second
	// cutWithin bounds how long a cut waits for the server's answer to the
	// COMMIT before it resets the client anyway.
	cutWithin = 10 * time.Second
)

// Startup codes of the messages a client may send before its startup
// message (protocol version 3.0 is 196608).
const (
	codeCancel   = 80877102
	codeSSL      = 80877103
	codeGSSENC   = 80877104
	protocolV3_0 = 196608
)

// Stats counts what the proxy did.
type Stats struct {
	// Links is how many connections the proxy accepted in all.
	Links int64
	// Reset is how many connections Reset broke.
	Reset int64
	// Commits is how many COMMITs passed through; Cut how many of them were
	// cut (CutCommits) after reaching the server, their answers dropped.
	Commits, Cut int64
}

// Proxy carries TCP connections to one PostgreSQL server and breaks them on
// command. Its methods are safe for concurrent use.
type Proxy struct {
	upstream string
	ln       net.Listener
	wg       sync.WaitGroup

	mu     sync.Mutex
	links  map[*link]struct{}
	closed bool
	delay  time.Duration
	// hole is set while the proxy is a blackhole, and closed when it stops
	// being one.
	hole chan struct{}

	// armed is how many COMMITs are still to be cut (CutCommits).
	armed atomic.Int64
	stats struct{ links, reset, commits, cut atomic.Int64 }
}

// Start listens on a port of 127.0.0.1 and carries every connection made to
// it to upstream, a PostgreSQL server's host:port.
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("wirefault: listen: %w", err)
	}
	p := &Proxy{upstream: upstream, ln: ln, links: map[*link]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// DSN is dsn, a postgres:// URL, pointed at the proxy instead of its host.
func (p *Proxy) DSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("wirefault: parse DSN: %w", err)
	}
	u.Host = p.Addr()
	return u.String(), nil
}

// Around starts a proxy in front of dsn's server, closed when the test
// ends, and returns it with dsn pointed at it: the set-up of every test
// that breaks payd's wire.
func Around(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	upstream, err := Upstream(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	via, err := p.DSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return p, via
}

// Upstream is the host:port of dsn, a postgres:// URL, for Start.
func Upstream(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("wirefault: parse DSN: %w", err)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(host, port), nil
}

// Stats reports what the proxy did so far.
func (p *Proxy) Stats() Stats {
	return Stats{Links: p.stats.links.Load(), Reset: p.stats.reset.Load(),
		Commits: p.stats.commits.Load(), Cut: p.stats.cut.Load()}
}

// Reset breaks every open connection at once, to the client and to the
// server alike (a TCP reset each), and reports how many it broke. New
// connections are carried as before.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	n := 0
	for _, l := range links {
		if l.end(true) {
			n++
		}
	}
	p.stats.reset.Add(int64(n))
	return n
}

// CutCommits has the proxy cut the next n COMMITs, on whichever
// connections they come: each is passed on to the server, and its
// connection is reset once the server has answered, the answer dropped.
// It replaces what was armed before; 0 disarms.
func (p *Proxy) CutCommits(n int) { p.armed.Store(int64(n)) }

// takeCut reports whether the COMMIT just found is to be cut, counting it.
func (p *Proxy) takeCut() bool {
	for {
		n := p.armed.Load()
		if n <= 0 {
			p.stats.commits.Add(1)
			return false
		}
		if p.armed.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// Blackhole stops (on) or resumes the traffic of every connection, open or
// new, in both directions. What is held is neither lost nor answered: the
// client waits, as behind a network partition, until the traffic resumes
// or the connection is reset.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.hole == nil:
		p.hole = make(chan struct{})
	case !on && p.hole != nil:
		close(p.hole)
		p.hole = nil
	}
}

// SetDelay has every write of the proxy, in either direction, wait d first:
// a round trip through the proxy takes at least 2d more. 0 ends the delay.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Close stops accepting, resets every open connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.Reset()
	p.wg.Wait()
	return err
}

// pass waits, before a write, for what the proxy is told to do to traffic:
// a blackhole to end, then the delay. It reports false when done is closed
// meanwhile (the connection ended).
func (p *Proxy) pass(done <-chan struct{}) bool {
	for {
		p.mu.Lock()
		hole, delay := p.hole, p.delay
		p.mu.Unlock()
		if hole == nil {
			return wait(delay, done)
		}
		select {
		case <-hole:
		case <-done:
			return false
		}
	}
}

// wait waits for d, or until done is closed (false).
func wait(d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.stats.links.Add(1)
		l := &link{p: p, client: c, done: make(chan struct{})}
		p.mu.Lock()
		full := p.closed || len(p.links) >= maxLinks
		if !full {
			p.links[l] = struct{}{}
		}
		p.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		p.wg.Go(l.run)
	}
}

// link is one client connection and its connection to the server.
type link struct {
	p              *Proxy
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
	// syncs counts the client's messages that the server answers with one
	// ReadyForQuery each (Sync, Query), answered the ReadyForQuerys
	// relayed or dropped so far; cutAt is syncs at the COMMIT being cut
	// (0: none), whose ReadyForQuery ends the connection.
	syncs atomic.Int64
	cutAt atomic.Int64
}

// run carries the connection until either side ends it or the proxy breaks it.
func (l *link) run() {
	defer func() {
		l.end(false)
		l.p.mu.Lock()
		delete(l.p.links, l)
		l.p.mu.Unlock()
	}()
	server, err := net.DialTimeout("tcp", l.p.upstream, dialWithin)
	if err != nil {
		return
	}
	l.p.mu.Lock()
	l.server = server
	l.p.mu.Unlock()
	select {
	case <-l.done: // reset while dialing: end() could not close server
		server.Close()
		return
	default:
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := l.fromServer(); !errors.Is(err, errCut) {
			l.end(false)
		}
	})
	if err := l.fromClient(); !errors.Is(err, errCut) {
		l.end(false)
	}
	wg.Wait()
}

// errCut ends a direction of a connection that is being cut.
var errCut = errors.New("wirefault: the connection is cut")

// end closes both sides of the connection, once, with a TCP reset when
// reset is set, and reports whether this call ended it.
func (l *link) end(reset bool) bool {
	ended := false
	l.once.Do(func() {
		ended = true
		close(l.done)
		l.p.mu.Lock()
		server := l.server
		l.p.mu.Unlock()
		for _, c := range []net.Conn{l.client, server} {
			if c == nil {
				continue
			}
			if tc, ok := c.(*net.TCPConn); ok && reset {
				tc.SetLinger(0) // close sends RST, not FIN
			}
			c.Close()
		}
	})
	return ended
}

// half is one direction of a link: what is read from src and held until it
// is written to dst.
type half struct {
	l    *link
	src  *bufio.Reader
	dst  net.Conn
	held []byte
}

func (l *link) half(src, dst net.Conn) *half {
	return &half{l: l, src: bufio.NewReaderSize(src, maxHeld), dst: dst, held: make([]byte, 0, maxHeld)}
}

// flush writes what is held, once the proxy lets it pass.
func (h *half) flush() error {
	if len(h.held) == 0 {
		return nil
	}
	if !h.l.p.pass(h.l.done) {
		return net.ErrClosed
	}
	_, err := h.dst.Write(h.held)
	h.held = h.held[:0]
	return err
}

// settle writes what is held when nothing more has arrived (a batch of
// messages goes on as one write) or when the bound on what is held is met.
func (h *half) settle() error {
	if h.src.Buffered() == 0 || len(h.held) >= maxHeld {
		return h.flush()
	}
	return nil
}

// pass copies n bytes of src through, or drops them when drop is set.
func (h *half) pass(n int, drop bool) error {
	for n > 0 {
		if drop {
			k, err := h.src.Discard(min(n, maxHeld))
			if err != nil {
				return err
			}
			n -= k
			continue
		}
		if len(h.held) >= maxHeld {
			if err := h.flush(); err != nil {
				return err
			}
		}
		chunk := min(n, maxHeld-len(h.held))
		start := len(h.held)
		h.held = h.held[:start+chunk]
		if _, err := io.ReadFull(h.src, h.held[start:]); err != nil {
			return err
		}
		n -= chunk
	}
	return nil
}

// header reads a frame's type and the length of its body.
func (h *half) header() (byte, int, error) {
	var b [5]byte
	if _, err := io.ReadFull(h.src, b[:]); err != nil {
		return 0, 0, err
	}
	n := int(int32(binary.BigEndian.Uint32(b[1:])))
	if n < 4 {
		return 0, 0, fmt.Errorf("wirefault: frame %q of length %d", b[0], n)
	}
	return b[0], n - 4, nil
}

// fromClient carries the client's messages to the server: the startup,
// then frames, watching for the COMMITs to cut.
func (l *link) fromClient() error {
	h := l.half(l.client, l.server)
	if err := h.startup(); err != nil {
		return err
	}
	// commitNames are the prepared statements whose text is a COMMIT, and
	// bound is set once one of them is bound: its Sync runs it.
	commitNames := map[string]bool{}
	bound := false
	for {
		typ, n, err := h.header()
		if err != nil {
			return err
		}
		var body []byte // the frame's body, when it is read whole
		if (typ == 'P' || typ == 'B' || typ == 'Q') && n <= maxInspected {
			if body, err = h.whole(typ, n); err != nil {
				return err
			}
		} else {
			h.held = binary.BigEndian.AppendUint32(append(h.held, typ), uint32(n+4))
			if err := h.pass(n, false); err != nil {
				return err
			}
		}
		commit := false
		switch typ {
		case 'P': // Parse: statement name, query text, …
			name, rest := cstring(body)
			query, _ := cstring(rest)
			switch {
			case !isCommit(query):
				delete(commitNames, name)
			case len(commitNames) < maxCommitStatements:
				commitNames[name] = true
			}
		case 'B': // Bind: portal name, statement name, …
			_, rest := cstring(body)
			name, _ := cstring(rest)
			bound = bound || commitNames[name]
		case 'Q': // Query: the text, in the simple protocol
			query, _ := cstring(body)
			l.syncs.Add(1)
			commit = isCommit(query)
		case 'S': // Sync: what was bound runs
			l.syncs.Add(1)
			commit, bound = bound, false
		}
		if commit && l.p.takeCut() {
			// The answer of this message is the COMMIT's: fromServer drops it
			// and resets the connection.
			l.cutAt.Store(l.syncs.Load())
			time.AfterFunc(cutWithin, func() { l.end(true) })
			if err := h.flush(); err != nil {
				return err
			}
			return errCut
		}
		if err := h.settle(); err != nil {
			return err
		}
	}
}

// whole reads a frame of n bytes whole into what is held, after its
// header, and returns its body.
func (h *half) whole(typ byte, n int) ([]byte, error) {
	if len(h.held)+5+n > cap(h.held) {
		if err := h.flush(); err != nil {
			return nil, err
		}
		if 5+n > cap(h.held) {
			h.held = make([]byte, 0, 5+n)
		}
	}
	h.held = binary.BigEndian.AppendUint32(append(h.held, typ), uint32(n+4))
	start := len(h.held)
	h.held = h.held[:start+n]
	if _, err := io.ReadFull(h.src, h.held[start:]); err != nil {
		return nil, err
	}
	return h.held[start:], nil
}

// startup carries the client's startup message, answering an SSLRequest or
// a GSSENCRequest before it with "no" itself. A CancelRequest is passed on,
// and then the rest of the connection as it comes.
func (h *half) startup() error {
	for {
		var b [8]byte
		if _, err := io.ReadFull(h.src, b[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(b[:4]))
		code := binary.BigEndian.Uint32(b[4:])
		if n < 8 || n > maxStartup {
			return fmt.Errorf("wirefault: startup message of length %d", n)
		}
		if code == codeSSL || code == codeGSSENC {
			if _, err := h.l.client.Write([]byte{'N'}); err != nil {
				return err
			}
			continue
		}
		h.held = append(h.held, b[:]...)
		if err := h.pass(n-8, false); err != nil {
			return err
		}
		if err := h.flush(); err != nil {
			return err
		}
		if code == codeCancel {
			return h.raw()
		}
		if code>>16 != protocolV3_0>>16 {
			return fmt.Errorf("wirefault: startup code %d", code)
		}
		return nil
	}
}

// raw copies the rest of the client's bytes through unread.
func (h *half) raw() error {
	buf := make([]byte, maxHeld)
	for {
		n, err := h.src.Read(buf)
		if n > 0 {
			h.held = append(h.held[:0], buf[:n]...)
			if err := h.flush(); err != nil {
				return err
			}
		}
		if err != nil {
			return err
		}
	}
}

// fromServer carries the server's frames to the client, and cuts the
// connection at the ReadyForQuery that answers a COMMIT being cut, dropping
// what answers the COMMIT's batch.
func (l *link) fromServer() error {
	h := l.half(l.server, l.client)
	var answered int64
	for {
		typ, n, err := h.header()
		if err != nil {
			return err
		}
		cutAt := l.cutAt.Load()
		drop := cutAt > 0 && answered >= cutAt-1
		if !drop {
			h.held = binary.BigEndian.AppendUint32(append(h.held, typ), uint32(n+4))
		}
		if err := h.pass(n, drop); err != nil {
			return err
		}
		if typ == 'Z' {
			answered++
			if cutAt > 0 && answered >= cutAt {
				l.p.stats.cut.Add(1)
				l.end(true)
				return errCut
			}
		}
		if err := h.settle(); err != nil {
			return err
		}
	}
}

// cstring splits b at its first NUL: the string before it and the rest.
func cstring(b []byte) (string, []byte) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:]
		}
	}
	return string(b), nil
}

// isCommit reports whether query ends a transaction by committing it:
// COMMIT or END, with WORK or TRANSACTION or nothing after, not a
// prepared transaction's COMMIT PREPARED.
func isCommit(query string) bool {
	words := strings.Fields(strings.TrimSuffix(strings.TrimSpace(query), ";"))
	if len(words) == 0 || len(words) > 2 {
		return false
	}
	if !strings.EqualFold(words[0], "COMMIT") && !strings.EqualFold(words[0], "END") {
		return false
	}
	return len(words) == 1 || strings.EqualFold(words[1], "WORK") || strings.EqualFold(words[1], "TRANSACTION")
}
