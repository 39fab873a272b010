package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/migrate"
	"payd/internal/store/storetest"
)

func TestMigrate(t *testing.T) {
	t.Parallel()
	storetest.EachUnmigratedDSN(t, func(t *testing.T, dsn string) {
		all, err := migrate.Migrations(string(dialectOf(dsn)))
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for _, m := range all {
			want.WriteString("applied " + m.Name + "\n")
		}
		runs := []struct {
			name string
			want string
		}{
			{"fresh database", want.String()},
			{"second run", "database is up to date\n"},
		}
		for _, r := range runs {
			t.Run(r.name, func(t *testing.T) {
				if got := mustPayd(t, "migrate", "--db", dsn); got != r.want {
					t.Errorf("stdout = %q, want %q", got, r.want)
				}
			})
		}
	})
}

func dialectOf(dsn string) store.Dialect {
	if strings.HasPrefix(dsn, "postgres") {
		return store.Postgres
	}
	return store.SQLite
}

// served is a `payd serve` running in-process.
type served struct {
	stdout, stderr *syncBuffer
	root           string // http://host:port, from the "listening on" log line
	stop           func() (code int, took time.Duration)
}

// stopTimeout bounds a clean stop; an idle server should take far less.
const stopTimeout = 10 * time.Second

// serve starts `payd serve args…` with the given environment, waits until it
// logs that it listens, and stops it (as SIGTERM would) when the test ends.
func serve(t *testing.T, env map[string]string, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	cli := &cliEnv{stdin: strings.NewReader(""), stdout: s.stdout, stderr: s.stderr, getenv: func(k string) string { return env[k] }}
	var code int
	done := make(chan struct{})
	go func() {
		defer close(done)
		code = run(ctx, cli, slices.Concat([]string{"serve"}, args))
	}()
	s.stop = sync.OnceValues(func() (int, time.Duration) {
		started := time.Now()
		cancel()
		select {
		case <-done:
			return code, time.Since(started)
		case <-time.After(stopTimeout):
			t.Errorf("payd serve did not stop within %v of its context ending", stopTimeout)
			return -1, time.Since(started)
		}
	})
	t.Cleanup(func() { s.stop() })
	s.root = waitListening(t, s.stderr, done, &code)
	return s
}

// How long a start may take before it listens: startWithin, or
// migrationWithin when it waited for another process's migration (its log
// says server.MigrationWaitMessage).
const (
	startWithin     = 30 * time.Second
	migrationWithin = 5 * time.Minute
)

// waitListening polls the JSON log for `listening on http://…` and returns
// the address: within startWithin, or within migrationWithin once payd has
// said it waits for another process's migration (on Citus the parallel
// tests' schema changes take the migration lock one at a time, each for
// tens of seconds under load).
func waitListening(t *testing.T, log *syncBuffer, done <-chan struct{}, code *int) string {
	t.Helper()
	started := time.Now()
	for {
		said := log.String()
		if root := listeningOn(said); root != "" {
			return root
		}
		within := startWithin
		if strings.Contains(said, server.MigrationWaitMessage) {
			within = migrationWithin
		}
		if time.Since(started) > within {
			t.Fatalf("no `listening on` log line within %v; log:\n%s", within, said)
		}
		select {
		case <-done:
			t.Fatalf("payd serve exited %d before listening; log:\n%s", *code, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// listeningOn finds the log record whose msg is `listening on http://…`.
func listeningOn(log string) string {
	for line := range strings.Lines(log) {
		var rec struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if root, ok := strings.CutPrefix(rec.Msg, "listening on "); ok && strings.HasPrefix(root, "http://") {
			return root
		}
	}
	return ""
}

// fetch sends a request and returns the status and body.
func fetch(t *testing.T, method, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if header != nil {
		req.Header = header
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// banner is what the first sandbox start prints about the demo merchant.
type banner struct {
	merchantID      string
	email, password string
	apps            []bannerApp
	curlURL         string
	curlHeader      http.Header
}

type bannerApp struct {
	currency, accountNumber, appID, secretKey string
}

var (
	bannerHead  = regexp.MustCompile(`(?m)^payd sandbox: created the demo merchant ([0-9A-Z]{8})\.`)
	bannerLogin = regexp.MustCompile(`(?m)^\s+portal login\s+(\S+) / (\S+)$`)
	bannerApps  = regexp.MustCompile(`(?m)^\s+([A-Z]{3})\s+([0-9]{12})\s+(\S+)\s+(\S+)$`)
	bannerCurl  = regexp.MustCompile(`(?m)^\s+curl -s (\S+)((?: -H '[^']*')+)$`)
	curlHeader  = regexp.MustCompile(`-H '([^:']+): ([^']*)'`)
)

// parseBanner reads the demo merchant banner, failing the test when a part is missing.
func parseBanner(t *testing.T, out string) banner {
	t.Helper()
	head, login, curl := bannerHead.FindStringSubmatch(out), bannerLogin.FindStringSubmatch(out), bannerCurl.FindStringSubmatch(out)
	if head == nil || login == nil || curl == nil {
		t.Fatalf("banner lacks the merchant, portal login or curl line:\n%s", out)
	}
	b := banner{merchantID: head[1], email: login[1], password: login[2], curlURL: curl[1], curlHeader: http.Header{}}
	for _, m := range bannerApps.FindAllStringSubmatch(out, -1) {
		b.apps = append(b.apps, bannerApp{currency: m[1], accountNumber: m[2], appID: m[3], secretKey: m[4]})
	}
	for _, h := range curlHeader.FindAllStringSubmatch(curl[2], -1) {
		b.curlHeader.Add(h[1], h[2])
	}
	return b
}

// TestServeSandbox starts a sandbox twice on one database: the first start
// creates the demo merchant and prints its credentials, which work; the
// second prints nothing.
func TestServeSandbox(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		s := serve(t, nil, "--db", dsn, "--addr", "127.0.0.1:0")
		b := parseBanner(t, s.stdout.String())
		svc, db := services(t, dsn)

		t.Run("demo apps", func(t *testing.T) {
			var currencies []string
			for _, a := range b.apps {
				currencies = append(currencies, a.currency)
			}
			if want := []string{"AUD", "USD", "JPY", "VND", "IDR", "KRW", "THB"}; !slices.Equal(currencies, want) {
				t.Fatalf("banner currencies = %v, want %v\n%s", currencies, want, s.stdout.String())
			}
			for _, a := range b.apps {
				p, ok := authenticate(t, svc, a.appID, a.secretKey)
				got := [4]any{ok, p.MerchantID, p.Currency, p.AccountNumber}
				if want := [4]any{true, b.merchantID, a.currency, a.accountNumber}; got != want {
					t.Errorf("%s app authenticates (ok, merchant, currency, account) = %v, want %v", a.currency, got, want)
				}
			}
		})

		t.Run("portal login", func(t *testing.T) {
			var merchantID, role, hash string
			err := db.Read().QueryRowContext(t.Context(), `SELECT merchant_id, role, password_hash FROM users WHERE email = $1`, b.email).
				Scan(&merchantID, &role, &hash)
			if err != nil {
				t.Fatalf("portal user %s: %v", b.email, err)
			}
			if merchantID != b.merchantID || role != string(merchant.Admin) {
				t.Errorf("portal user belongs to %s with role %s, want %s admin", merchantID, role, b.merchantID)
			}
			if !merchant.CheckPassword(hash, b.password) {
				t.Errorf("the printed portal password does not match the stored hash")
			}
		})

		t.Run("curl line", func(t *testing.T) {
			if want := s.root + "/api/v2/balances"; b.curlURL != want {
				t.Errorf("curl URL = %q, want %q", b.curlURL, want)
			}
			code, body := fetch(t, "GET", b.curlURL, b.curlHeader)
			var got struct {
				Records []struct {
					Currency string `json:"currency"`
				} `json:"records"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Records) != 7 {
				t.Errorf("the printed curl request answered %d %s, want 200 with 7 balance records", code, body)
			}
		})

		t.Run("routes", func(t *testing.T) {
			tests := []struct {
				method, path string
				wantStatus   int
			}{
				{"GET", "/healthz", 200},
				{"GET", "/readyz", 200},
				{"POST", "/api/v1/simulate_deposit", 401}, // routed in the sandbox: asks for credentials
				{"GET", "/api/v2/nosuch", 404},
			}
			for _, tt := range tests {
				t.Run(tt.method+" "+tt.path, func(t *testing.T) {
					if got, body := fetch(t, tt.method, s.root+tt.path, nil); got != tt.wantStatus {
						t.Errorf("status = %d %s, want %d", got, body, tt.wantStatus)
					}
				})
			}
		})

		code, took := s.stop()
		if code != 0 || took > 5*time.Second {
			t.Errorf("after cancel, serve returned %d in %v, want 0 promptly; log:\n%s", code, took, s.stderr.String())
		}
		// The drain is logged step by step, in order.
		log, last := s.stderr.String(), -1
		for _, step := range []string{"shutting down: no new connections", "shutting down: every request answered", `"msg":"stopped"`} {
			at := strings.Index(log, step)
			if at <= last {
				t.Errorf("the stop's log lacks %q after the step before; log:\n%s", step, log)
				break
			}
			last = at
		}

		t.Run("second start", func(t *testing.T) {
			again := serve(t, map[string]string{"PAYD_ADDR": "127.0.0.1:0"}, "--db", dsn)
			if got, body := fetch(t, "GET", again.root+"/healthz", nil); got != 200 {
				t.Errorf("healthz = %d %s", got, body)
			}
			if code, _ := again.stop(); code != 0 {
				t.Errorf("serve returned %d, want 0", code)
			}
			if out := again.stdout.String(); out != "" {
				t.Errorf("second start printed %q, want nothing", out)
			}
			if n := count(t, db.Read(), `SELECT count(*) FROM merchants`); n != 1 {
				t.Errorf("%d merchants after two starts, want the demo merchant only", n)
			}
		})
	})
}

// TestServePublicURL checks that the banner's links use --public-url.
func TestServePublicURL(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		s := serve(t, nil, "--db", dsn, "--addr", "127.0.0.1:0", "--public-url", "https://sandbox.payd.example/")
		b := parseBanner(t, s.stdout.String())
		if want := "https://sandbox.payd.example/api/v2/balances"; b.curlURL != want {
			t.Errorf("curl URL = %q, want %q", b.curlURL, want)
		}
	})
}

// TestServeProduction checks that production neither creates a demo merchant
// nor routes the sandbox's simulation endpoints, whether it is chosen by flag
// or by environment.
func TestServeProduction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"--env production", []string{"--env", "production"}, nil},
		{"PAYD_ENV=production", nil, map[string]string{"PAYD_ENV": "production"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storetest.EachDSN(t, func(t *testing.T, dsn string) {
				s := serve(t, tt.env, slices.Concat([]string{"--db", dsn, "--addr", "127.0.0.1:0"}, tt.args)...)
				if out := s.stdout.String(); out != "" {
					t.Errorf("production printed %q, want nothing", out)
				}
				_, db := services(t, dsn)
				if n := count(t, db.Read(), `SELECT count(*) FROM merchants`); n != 0 {
					t.Errorf("production start made %d merchants, want none", n)
				}
				// An operator makes a merchant while the server runs; its keys
				// work, but the sandbox endpoint is not there for it.
				m := createMerchant(t, dsn, "AUD")
				keys := http.Header{"App-Id": {m.Accounts[0].AppID}, "Secret-Key": {m.Accounts[0].SecretKey}}
				routes := []struct {
					method, path string
					wantStatus   int
				}{
					{"GET", "/healthz", 200},
					{"GET", "/readyz", 200},
					{"GET", "/api/v2/balances", 200},
					{"POST", "/api/v1/simulate_deposit", 404},
					{"POST", "/api/v2/sandbox/clock", 404},
				}
				for _, rt := range routes {
					t.Run(rt.method+" "+rt.path, func(t *testing.T) {
						if got, body := fetch(t, rt.method, s.root+rt.path, keys.Clone()); got != rt.wantStatus {
							t.Errorf("status = %d %s, want %d", got, body, rt.wantStatus)
						}
					})
				}
				if code, took := s.stop(); code != 0 || took > 5*time.Second {
					t.Errorf("after cancel, serve returned %d in %v, want 0 promptly", code, took)
				}
			})
		})
	}
}

// TestServeStartFailures checks that serve exits 1 with the reason when it
// cannot start, instead of running.
func TestServeStartFailures(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantStderr string
	}{
		{"--env bogus", []string{"--env", "bogus", "--addr", "127.0.0.1:0"}, nil, `payd: environment "bogus": want sandbox or production`},
		{"PAYD_ENV=bogus", []string{"--addr", "127.0.0.1:0"}, map[string]string{"PAYD_ENV": "bogus"}, `payd: environment "bogus": want sandbox or production`},
		{"address in use", []string{"--addr", taken.Addr().String()}, nil, "address already in use"},
		{"unknown database scheme", []string{"--addr", "127.0.0.1:0", "--db", "mysql://localhost/payd"}, nil, `payd: database "mysql://localhost/payd": want sqlite:FILE or postgres://`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a server that starts anyway returns 0 here
			defer cancel()
			var stdout, stderr syncBuffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return tt.env[k] }}
			code := run(ctx, env, slices.Concat([]string{"serve", "--db", storetest.SQLiteDSN(t)}, tt.args))
			if code != 1 {
				t.Errorf("exit = %d, want 1", code)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
			if stdout.String() != "" {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestServeRefusesBadSettings: a setting out of its range is refused by
// name, with exit 2, before payd opens its database or listens.
func TestServeRefusesBadSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"feed poll too short", []string{"--feed-poll", "10ms"}, "payd: --feed-poll: must be a duration from 1s to 24h, such as 30s\n"},
		{"feed files of no size", []string{"--feed-max-file-mib", "0"}, "payd: --feed-max-file-mib: must be a whole number of MiB from 1 to 256, such as 128\n"},
		{"feed files too large", []string{"--feed-max-file-mib", "1024"}, "payd: --feed-max-file-mib: must be a whole number of MiB from 1 to 256, such as 128\n"},
		{"event retention too long", []string{"--event-retention", "9000h"}, "payd: --event-retention: must be a duration from 1h to 8760h, such as 720h\n"},
		{"write timeout too short", []string{"--db-timeout", "500ms"}, "payd: --db-timeout: must be a duration from 1s to 10m, such as 60s\n"},
		{"write timeout not a duration", []string{"--db-timeout", "soon"}, "payd: --db-timeout: must be a duration from 1s to 10m, such as 60s\n"},
		{"analyze neither", []string{"--analyze", "sometimes"}, "payd: --analyze: must be auto or off\n"},
		{"treasury BSB not 6 digits", []string{"--treasury-bsb", "06200"}, "payd: --treasury-bsb: must be 6 digits\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "payd.db")
			var stdout, stderr syncBuffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			code := run(t.Context(), env, slices.Concat([]string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + file}, tt.args))
			if code != 2 || stderr.String() != tt.wantStderr || stdout.String() != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q and nothing", code, stderr.String(), stdout.String(), tt.wantStderr)
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Errorf("the database file was touched (%v)", err)
			}
		})
	}
}
