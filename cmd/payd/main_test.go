package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// result is what one in-process `payd …` invocation produced.
type result struct {
	code           int
	stdout, stderr string
}

// invocation describes one run of the command line.
type invocation struct {
	args  []string
	stdin string
	env   map[string]string // the process environment; nothing else is visible
}

// runPayd runs the command line in-process with its own streams and an
// environment holding only inv.env.
func runPayd(t *testing.T, inv invocation) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cliEnv{
		stdin:  strings.NewReader(inv.stdin),
		stdout: &stdout,
		stderr: &stderr,
		getenv: func(k string) string { return inv.env[k] },
	}
	code := run(t.Context(), env, inv.args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// payd runs args with no stdin and an empty environment.
func payd(t *testing.T, args ...string) result {
	t.Helper()
	return runPayd(t, invocation{args: args})
}

// mustPayd runs args and fails the test unless they exit 0.
func mustPayd(t *testing.T, args ...string) string {
	t.Helper()
	r := payd(t, args...)
	if r.code != 0 {
		t.Fatalf("payd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// decodeExact decodes out as exactly one JSON value into v, refusing members
// v does not declare, and checks that the object has exactly the keys want
// (DisallowUnknownFields alone would let a missing member pass).
func decodeExact(t *testing.T, out string, v any, want ...string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("output %q holds more than one JSON value", out)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &members); err != nil {
		t.Fatalf("decode %q as an object: %v", out, err)
	}
	if got := sortedKeys(members); !slices.Equal(got, sorted(want)) {
		t.Fatalf("members of %s = %v, want %v", out, got, sorted(want))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// createdMerchant is the --json output of `merchant create`.
type createdMerchant struct {
	MerchantID string `json:"merchant_id"`
	Accounts   []struct {
		Currency      string `json:"currency"`
		AccountNumber string `json:"account_number"`
		AppID         string `json:"app_id"`
		SecretKey     string `json:"secret_key"`
	} `json:"accounts"`
}

// createMerchant makes a merchant through the command line.
func createMerchant(t *testing.T, dsn string, currencies string, extra ...string) createdMerchant {
	t.Helper()
	args := append([]string{"merchant", "create", "--db", dsn, "--name", "Acme Pty Ltd", "--country", "AU",
		"--timezone", "Australia/Sydney", "--currencies", currencies, "--json"}, extra...)
	var m createdMerchant
	decodeExact(t, mustPayd(t, args...), &m, "merchant_id", "accounts")
	return m
}

// services opens dsn (as a second process would) for checking what a command did.
func services(t *testing.T, dsn string) (*merchant.Service, *store.DB) {
	t.Helper()
	db := storetest.Open(t, dsn)
	return merchant.NewService(db, clock.Real{}), db
}

// authenticate returns the principal an app-id/secret-key pair authenticates
// as, and whether it is accepted at all.
func authenticate(t *testing.T, svc *merchant.Service, appID, secret string) (merchant.Principal, bool) {
	t.Helper()
	p, err := svc.Authenticate(t.Context(), appID, secret)
	if errors.Is(err, merchant.ErrUnauthenticated) {
		return merchant.Principal{}, false
	}
	if err != nil {
		t.Fatalf("authenticate %s: %v", appID, err)
	}
	return p, true
}

// syncBuffer is a bytes.Buffer that a running server and the test may use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestVersion: payd --version prints the version and commit the binary
// was built from, and nothing on standard error.
func TestVersion(t *testing.T) {
	t.Parallel()
	got := payd(t, "--version")
	if got.code != 0 || !strings.HasPrefix(got.stdout, "payd ") || !strings.Contains(got.stdout, "commit ") || got.stderr != "" {
		t.Errorf("payd --version: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
}

func TestRunDispatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"unknown command", []string{"frobnicate"}, 2, "payd: unknown command \"frobnicate\"\nusage: payd <command>"},
		{"unknown subcommand", []string{"merchant", "delete"}, 2, "payd: unknown command \"merchant delete\"\nusage: payd <command>"},
		{"group without subcommand", []string{"merchant"}, 2, "usage: payd <command>"},
		{"help", []string{"help"}, 0, "usage: payd <command>"},
		{"--help", []string{"--help"}, 0, "usage: payd <command>"},
		{"no arguments", nil, 2, "usage: payd <command>"},
		{"usage lists the operator commands", []string{"help"}, 0, "account update"},
		{"command -h", []string{"merchant", "create", "-h"}, 0, "-currencies"},
		{"unknown flag", []string{"migrate", "--frobnicate"}, 2, "flag provided but not defined: -frobnicate"},
		{"stray argument", []string{"migrate", "--db", "sqlite:" + t.TempDir() + "/x.db", "extra"}, 2, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := payd(t, tt.args...)
			if got.code != tt.wantCode {
				t.Errorf("exit = %d, want %d (stderr %q)", got.code, tt.wantCode, got.stderr)
			}
			if !strings.Contains(got.stderr, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", got.stderr, tt.wantStderr)
			}
			if got.stdout != "" {
				t.Errorf("stdout = %q, want nothing", got.stdout)
			}
		})
	}
}

// TestDatabaseFromEnvironment checks CONTRACT §1's environment twin of --db:
// PAYD_DB is used when --db is absent, and --db wins over it.
func TestDatabaseFromEnvironment(t *testing.T) {
	t.Chdir(t.TempDir()) // a fallback to the default sqlite:payd.db lands here, not in the source tree
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		tests := []struct {
			name string
			args []string
			env  map[string]string
		}{
			{"PAYD_DB alone", []string{"merchant", "create"}, map[string]string{"PAYD_DB": dsn}},
			{"--db over PAYD_DB", []string{"merchant", "create", "--db", dsn}, map[string]string{"PAYD_DB": "nosuchdriver:elsewhere"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := slices.Concat(tt.args, []string{"--name", tt.name, "--country", "AU", "--timezone", "Australia/Sydney", "--currencies", "AUD", "--json"})
				r := runPayd(t, invocation{args: args, env: tt.env})
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				var m createdMerchant
				decodeExact(t, r.stdout, &m, "merchant_id", "accounts")
				_, db := services(t, dsn)
				var got string
				if err := db.Read().QueryRowContext(t.Context(), `SELECT name FROM merchants WHERE id = $1`, m.MerchantID).Scan(&got); err != nil {
					t.Fatalf("merchant %s not in %s: %v", m.MerchantID, dsn, err)
				}
				if got != tt.name {
					t.Errorf("name = %q, want %q", got, tt.name)
				}
			})
		}
	})
}

// TestErrorMessagesAreStable runs each failing command several times: the
// message must be the same every time (no map order leaking into it), so an
// operator's script can match it.
func TestErrorMessagesAreStable(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + t.TempDir() + "/payd.db"
	mustPayd(t, "migrate", "--db", dsn)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"several flags missing", []string{"merchant", "create", "--db", dsn}, 2,
			"payd: missing --country, --currencies, --name, --timezone\n"},
		{"several flags invalid", []string{"merchant", "create", "--db", dsn, "--name", "Acme", "--country", "aus", "--timezone", "Mars/Base", "--currencies", "AUD,XYZ"}, 1,
			"payd: invalid input:\n" +
				"  country: must be an ISO 3166-1 alpha-2 code such as AU\n" +
				"  currencies: \"XYZ\" is not a supported currency\n" +
				"  timezone: must be an IANA time zone such as Australia/Sydney\n"},
		{"one flag invalid", []string{"merchant", "create", "--db", dsn, "--name", "Acme", "--country", "AU", "--timezone", "Mars/Base", "--currencies", "AUD"}, 1,
			"payd: timezone must be an IANA time zone such as Australia/Sydney\n"},
		{"a setting of serve invalid", []string{"serve", "--db", dsn, "--addr", "127.0.0.1:0", "--analyze", "sometimes"}, 2,
			"payd: --analyze: must be auto or off\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[result]bool{}
			for range 8 {
				seen[payd(t, tt.args...)] = true
			}
			want := map[result]bool{{code: tt.wantCode, stderr: tt.wantStderr}: true}
			if !maps.Equal(seen, want) {
				t.Errorf("results over 8 runs = %+v, want only exit %d with stderr %q", slices.Collect(maps.Keys(seen)), tt.wantCode, tt.wantStderr)
			}
		})
	}
}
