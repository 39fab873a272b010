package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"regexp"
	"strings"
	"time"

	"payd/internal/httpapi"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/proxy"
	"payd/internal/rail/bankfile"
	"payd/internal/server"
	"payd/internal/store"
	"payd/internal/store/dbcopy"
	"payd/internal/treasury"
)

var bsbDigits = regexp.MustCompile(`^[0-9]{6}$`)

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "serve")
	addr := f.setting("addr", "PAYD_ADDR", "127.0.0.1:8080", "listen address")
	db := f.db()
	envName := f.setting("env", "PAYD_ENV", "sandbox", "sandbox or production")
	publicURL := f.setting("public-url", "PAYD_PUBLIC_URL", "", "base of every link payd hands out (default http://{addr})")
	retries := f.setting("webhook-retry-schedule", "PAYD_WEBHOOK_RETRY_SCHEDULE", "",
		"comma-separated delays before each webhook retry (default 5s,5m,30m,2h,5h,10h,10h)")
	pprofAddr := f.setting("pprof-addr", "PAYD_PPROF_ADDR", "", "serve Go's profiler (net/http/pprof) on this address, e.g. 127.0.0.1:6060 (default off)")
	smtpURL := f.setting("smtp-url", "PAYD_SMTP_URL", "",
		"mail server for verification emails: smtp://user:password@host:587 (STARTTLS when offered) or smtps://… (TLS from the start)")
	smtpFrom := f.setting("smtp-from", "PAYD_SMTP_FROM", "", "From address of the emails payd sends (required with --smtp-url)")
	fundingDelay := f.setting("funding-check-delay", "PAYD_FUNDING_CHECK_DELAY", "1h", "how long the funding check holds JPY, VND, IDR and INR settlements, on the merchant's clock (1m to 720h)")
	treasuryBank := f.setting("treasury-bank-name", "PAYD_TREASURY_BANK_NAME", "payd", "the bank name treasury accounts' details show")
	treasuryBSB := f.setting("treasury-bsb", "PAYD_TREASURY_BSB", "", "the BSB AUD treasury accounts' details show (6 digits; shown as null when unset)")
	analyze := f.setting("analyze", "PAYD_ANALYZE", "auto",
		"auto: when the PostgreSQL server runs without autovacuum, payd ANALYZEs its own tables as autovacuum would, so that the planner knows their sizes; off: never")
	trusted := f.setting("trusted-proxies", "PAYD_TRUSTED_PROXIES", "",
		"comma-separated addresses or CIDR prefixes of the reverse proxies whose X-Forwarded-For or Forwarded header names the client (default none)")
	feedPoll := f.setting("feed-poll", "PAYD_FEED_POLL", "30s", "how often the bank feeds' inboxes are read (1s to 24h)")
	feedMax := f.setting("feed-max-file-mib", "PAYD_FEED_MAX_FILE_MIB", "128", "the largest bank-feed file payd takes, in MiB (1 to 256): a larger one is rejected whole")
	dbTimeoutSetting := f.setting("db-timeout", "PAYD_DB_TIMEOUT", "60s",
		"how long a write transaction, or a one-row read, on PostgreSQL may take before payd gives it up and drops its connection, answering 503 (1s to 10m): a database that stops answering holds up no request longer")
	eventRetention := f.setting("event-retention", "PAYD_EVENT_RETENTION", "720h", "how long GET /v2/events keeps events (1h to 8760h; default 30 days)")
	oidcFlags := f.oidc()
	if err := f.parse(args); err != nil {
		return err
	}
	sso, err := oidcFlags.config()
	if err != nil {
		return err
	}
	retention, err := time.ParseDuration(*eventRetention)
	if err != nil || retention < time.Hour || retention > 8760*time.Hour {
		return usageError{"--event-retention: must be a duration from 1h to 8760h, such as 720h"}
	}
	dbTimeout, err := time.ParseDuration(*dbTimeoutSetting)
	if err != nil || dbTimeout < time.Second || dbTimeout > 10*time.Minute {
		return usageError{"--db-timeout: must be a duration from 1s to 10m, such as 60s"}
	}
	poll, err := time.ParseDuration(*feedPoll)
	if err != nil || poll < time.Second || poll > 24*time.Hour {
		return usageError{"--feed-poll: must be a duration from 1s to 24h, such as 30s"}
	}
	feedMaxBytes, err := feedMaxFileBytes("--feed-max-file-mib", *feedMax)
	if err != nil {
		return err
	}
	if *analyze != "auto" && *analyze != "off" {
		return usageError{"--analyze: must be auto or off"}
	}
	proxies, err := proxy.ParseTrust(*trusted)
	if err != nil {
		return usageError{"--trusted-proxies: " + err.Error()}
	}
	if *treasuryBSB != "" && !bsbDigits.MatchString(*treasuryBSB) {
		return usageError{"--treasury-bsb: must be 6 digits"}
	}
	funding, err := time.ParseDuration(*fundingDelay)
	if err != nil || funding < time.Minute || funding > 720*time.Hour {
		return usageError{"--funding-check-delay: must be a duration from 1m to 720h, such as 1h"}
	}
	schedule, err := parseSchedule(*retries)
	if err != nil {
		return usageError{"--webhook-retry-schedule: " + err.Error()}
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, nil))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if *publicURL == "" {
		*publicURL = "http://" + ln.Addr().String()
	}
	srv, err := server.Open(ctx, server.Config{
		DB: *db, Env: httpapi.Environment(*envName), PublicURL: strings.TrimRight(*publicURL, "/"), Log: log,
		WebhookSchedule: schedule, SMTPURL: *smtpURL, SMTPFrom: *smtpFrom, TrustedProxies: proxies, FundingDelay: funding,
		TreasuryBank: treasury.Bank{Name: *treasuryBank, BSB: *treasuryBSB}, Analyze: *analyze == "auto",
		BankFileKillAt: bankfile.Step(env.getenv(killEnv)), FeedPoll: poll, FeedMaxFileBytes: feedMaxBytes, EventRetention: retention,
		OIDC: sso, StoreOptions: store.Options{Timeout: dbTimeout},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if srv.API.Env == httpapi.Sandbox {
		demo, created, err := srv.Merchants.EnsureDemo(ctx)
		if err != nil {
			return err
		}
		if created {
			printDemo(env.stdout, demo, strings.TrimRight(*publicURL, "/"))
		}
	}
	if *pprofAddr != "" {
		go servePprof(*pprofAddr, log)
	}
	return srv.Serve(ctx, ln)
}

// printDemo shows the demo merchant's credentials, once, on the first start.
func printDemo(w io.Writer, d merchant.Demo, base string) {
	fmt.Fprintf(w, "\npayd sandbox: created the demo merchant %s. Its secrets are shown only now.\n\n", d.MerchantID)
	fmt.Fprintf(w, "  portal login   %s / %s\n", d.Email, d.Password)
	fmt.Fprintf(w, "  AUD treasury   account %s\n\n", d.TreasuryAccountNumber)
	fmt.Fprintf(w, "  %-4s %-14s %-26s %s\n", "cur", "account", "app-id", "secret-key")
	for _, a := range d.Accounts {
		fmt.Fprintf(w, "  %-4s %-14s %-26s %s\n", a.Currency, a.AccountNumber, a.AppID, a.SecretKey)
	}
	first := d.Accounts[0]
	fmt.Fprintf(w, "\nTry it:\n  curl -s %s/api/v2/balances -H 'app-id: %s' -H 'secret-key: %s'\n", base, first.AppID, first.SecretKey)
	fmt.Fprintf(w, "API reference: %s/api/docs (the OpenAPI document: %s/api/openapi.json)\n", base, base)
	fmt.Fprintf(w, "Merchant portal: %s/portal/ (sign in with the portal login above)\n\n", base)
}

func runMigrate(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "migrate")
	dsn := f.db()
	if err := f.parse(args); err != nil {
		return err
	}
	db, err := store.Open(ctx, *dsn, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(env.stdout, "applied", m)
	}
	return nil
}

// runCopy copies the database into another one that holds nothing yet
// (dbcopy.Copy), migrating both to this build's schema first.
func runCopy(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "copy")
	dsn := f.db()
	to := f.String("to", "", "the database to copy into, which must hold nothing yet: sqlite:FILE or postgres://…")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"to": to}); err != nil {
		return err
	}
	if *to == *dsn {
		return usageError{"--to names the database copied from"}
	}
	var dbs [2]*store.DB
	for i, d := range []string{*dsn, *to} {
		db, err := store.Open(ctx, d, store.Options{})
		if err != nil {
			return err
		}
		defer db.Close()
		if _, err := db.Migrate(ctx); err != nil {
			return err
		}
		dbs[i] = db
	}
	var total int64
	err := dbcopy.Copy(ctx, dbs[0], dbs[1], dbcopy.Options{Finish: ledger.FitCopy, Progress: func(table string, rows int64) {
		total += rows
		fmt.Fprintf(env.stdout, "%-28s %d rows\n", table, rows)
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "copied %d rows\n", total)
	return nil
}

// parseSchedule reads "1s,30s,5m"; empty means the contract's default.
func parseSchedule(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 || d > 48*time.Hour {
			return nil, fmt.Errorf("%q is not a delay between 1ns and 48h", part)
		}
		out = append(out, d)
	}
	if len(out) > 20 {
		return nil, fmt.Errorf("at most 20 retries")
	}
	return out, nil
}

// servePprof serves the profiler on its own address, never on the API's.
func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("profiler on http://" + addr + "/debug/pprof/")
	if err := http.ListenAndServe(addr, mux); err != nil {
		log.Error("profiler", "err", err)
	}
}
