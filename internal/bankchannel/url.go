package bankchannel

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	schemeDir  = "dir"
	schemeSFTP = "sftp"

	maxURLBytes  = 2048
	maxNameBytes = 200
)

// location is an endpoint's URL, checked: dir:PATH or
// sftp://USER@HOST:PORT/PATH, PATH absolute and clean.
type location struct {
	scheme string
	user   string
	host   string // a host name or an IP address, without brackets
	port   int
	dir    string
}

func (l location) String() string {
	if l.scheme == schemeDir {
		return "dir:" + l.dir
	}
	return fmt.Sprintf("sftp://%s@%s%s", l.user, l.addr(), l.dir)
}

// addr is HOST:PORT as payd dials it and known_hosts names it.
func (l location) addr() string { return net.JoinHostPort(l.host, strconv.Itoa(l.port)) }

var (
	// userPattern is a POSIX portable user name, as SFTP servers take them.
	userPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$`)
	// labelPattern is one label of a DNS host name (RFC 1123).
	labelPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// parseURL checks an endpoint's URL strictly (CONTRACT §17: dir:PATH or
// sftp://USER@HOST:PORT/PATH): no password, no query, no fragment, no escape,
// an explicit port, an absolute path without "." or "..".
func parseURL(raw string) (location, error) {
	switch {
	case len(raw) > maxURLBytes:
		return location{}, fmt.Errorf("%w URL: longer than %d bytes", ErrInvalid, maxURLBytes)
	case strings.ContainsAny(raw, "%?#\\") || strings.ContainsFunc(raw, isControl):
		return location{}, fmt.Errorf("%w URL: it has an escape, a query, a fragment, a backslash or a control character", ErrInvalid)
	}
	if dir, ok := strings.CutPrefix(raw, schemeDir+":"); ok {
		if err := checkDir(dir); err != nil {
			return location{}, err
		}
		return location{scheme: schemeDir, dir: dir}, nil
	}
	if !strings.HasPrefix(raw, schemeSFTP+"://") {
		return location{}, fmt.Errorf("%w URL: want dir:PATH or sftp://USER@HOST:PORT/PATH", ErrInvalid)
	}
	return parseSFTP(raw)
}

func parseSFTP(raw string) (location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return location{}, fmt.Errorf("%w URL: %v", ErrInvalid, redactErr(err))
	}
	if u.User == nil {
		return location{}, fmt.Errorf("%w URL: no USER@", ErrInvalid)
	}
	if _, has := u.User.Password(); has {
		return location{}, fmt.Errorf("%w URL: a password in the URL (payd signs in with a key only)", ErrInvalid)
	}
	if !userPattern.MatchString(u.User.Username()) {
		return location{}, fmt.Errorf("%w URL: user %q", ErrInvalid, u.User.Username())
	}
	host := u.Hostname()
	if err := checkHost(host); err != nil {
		return location{}, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != u.Port() {
		return location{}, fmt.Errorf("%w URL: want a port from 1 to 65535 after the host", ErrInvalid)
	}
	if err := checkDir(u.Path); err != nil {
		return location{}, err
	}
	return location{scheme: schemeSFTP, user: u.User.Username(), host: host, port: port, dir: u.Path}, nil
}

// checkHost takes an IP address or a DNS host name.
func checkHost(host string) error {
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return fmt.Errorf("%w URL: host %q has a zone", ErrInvalid, host)
		}
		return nil
	}
	labels := strings.Split(host, ".")
	if host == "" || len(host) > 253 {
		return fmt.Errorf("%w URL: host %q", ErrInvalid, host)
	}
	for _, label := range labels {
		if !labelPattern.MatchString(label) {
			return fmt.Errorf("%w URL: host %q", ErrInvalid, host)
		}
	}
	return nil
}

// checkDir takes an absolute, clean directory path: no ".", "..", doubled or
// trailing slash (the directory a URL names is the one payd writes in).
func checkDir(dir string) error {
	if !strings.HasPrefix(dir, "/") || path.Clean(dir) != dir || !utf8.ValidString(dir) {
		return fmt.Errorf("%w URL: path %q is not absolute and clean (no ., .., // or trailing /)", ErrInvalid, dir)
	}
	return nil
}

// checkName takes a plain file name of the endpoint's directory. A dot name
// is the channel's own (its temporaries), and "." and ".." are dot names.
func checkName(name string) error {
	switch {
	case name == "" || len(name) > maxNameBytes:
		return fmt.Errorf("%w name: want 1 to %d bytes", ErrInvalid, maxNameBytes)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%w name %q: begins with a dot", ErrInvalid, name)
	case strings.ContainsAny(name, "/\\") || strings.ContainsFunc(name, isControl) || !utf8.ValidString(name):
		return fmt.Errorf("%w name %q: a slash, a backslash, a control character or not UTF-8", ErrInvalid, name)
	}
	return nil
}

func checkFolder(f Folder) error {
	if f != Processed && f != Rejected {
		return fmt.Errorf("%w folder %q: want %q or %q", ErrInvalid, f, Processed, Rejected)
	}
	return nil
}

// isControl is true for C0 controls (NUL among them) and DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// redact names a URL that did not parse without what could be a password.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && len(raw) <= maxURLBytes {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// redactErr drops the URL that url.Parse quotes in its errors (it may hold a
// password).
func redactErr(err error) error {
	if uerr, ok := err.(*url.Error); ok {
		return uerr.Err
	}
	return err
}
