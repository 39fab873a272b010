// Package server assembles payd: it opens the database, applies migrations,
// builds the services, and runs the HTTP API and the job workers until told
// to stop. cmd/payd and the end-to-end tests both start payd through it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"payd/internal/bank"
	"payd/internal/clock"
	"payd/internal/contact"
	"payd/internal/deposit"
	"payd/internal/dispute"
	"payd/internal/feed"
	"payd/internal/gateway"
	"payd/internal/httpapi"
	"payd/internal/idempotency"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/payout"
	approval "payd/internal/policy"
	"payd/internal/portal"
	"payd/internal/proxy"
	"payd/internal/rail"
	"payd/internal/rail/bankfile"
	"payd/internal/reconcile"
	"payd/internal/report"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/store/migrate"
	"payd/internal/transfer"
	"payd/internal/treasury"
	"payd/internal/web"
	"payd/internal/webhook"
)

// Config is what payd serve is told (CONTRACT §1).
type Config struct {
	DB        string
	Env       httpapi.Environment
	PublicURL string
	Log       *slog.Logger
	// Clock defaults to the real clock.
	Clock clock.Clock
	// Workers is the number of job workers (default 2).
	Workers int
	// StoreOptions tunes the database (tests relax SQLite's fsync).
	StoreOptions store.Options
	// WebhookSchedule overrides the webhook retry delays (tests shorten them).
	WebhookSchedule []time.Duration
	// SMTPURL, when set, sends verification emails through that mail server
	// (smtp://user:password@host:587, smtps:// for TLS from the start), from
	// the address SMTPFrom.
	SMTPURL, SMTPFrom string
	// TrustedProxies are the reverse proxies whose forwarding headers name
	// the client (--trusted-proxies); none by default.
	TrustedProxies proxy.Trust
	// FundingDelay is how long the funding check holds JPY, VND, IDR and INR
	// settlements (--funding-check-delay; default an hour).
	FundingDelay time.Duration
	// TreasuryBank is who holds the treasury accounts, as their details
	// show it (--treasury-bank-name, --treasury-bsb).
	TreasuryBank treasury.Bank
	// ClockWorkLimit bounds how long POST /v2/sandbox/clock waits for the
	// work that became due (default httpapi.DefaultClockWorkLimit).
	ClockWorkLimit time.Duration
	// Analyze has Serve keep payd's tables analyzed (store.AnalyzeStale)
	// when the PostgreSQL server's autovacuum is off (--analyze auto).
	Analyze bool
	// BankChannel opens the bank-file rails' outboxes.
	BankChannel bankfile.Opener
	// BankFileKillAt kills the process at a step of a cut-off or a delivery
	// (the crash tests; PAYD_TEST_BANKFILE_KILL).
	BankFileKillAt bankfile.Step
	// FeedPoll is how often the bank feeds' inboxes are read (--feed-poll;
	// default feed.DefaultPoll).
	FeedPoll time.Duration
	// FeedMaxFileBytes bounds a bank-feed file (--feed-max-file-mib;
	// default feed.DefaultMaxFileBytes).
	FeedMaxFileBytes int64
	// EventRetention is how long GET /v2/events keeps events
	// (--event-retention; default webhook.DefaultRetention).
	EventRetention time.Duration
	// WebhookDisableAfter, StreamHeartbeat and StreamPoll override the
	// dispatcher's (tests change them): how long an endpoint's deliveries
	// may fail before it is disabled, how often an idle event stream says
	// so, how often a stream looks for events no signal told of.
	WebhookDisableAfter, StreamHeartbeat, StreamPoll time.Duration
	// OIDC, when set, adds the portal's sign-in by OpenID Connect
	// (--oidc-issuer and the rest, CONTRACT §23).
	OIDC *web.OIDC
}

// DefaultDBTimeout bounds a write transaction, or a one-row read, on
// PostgreSQL when StoreOptions.Timeout does not (--db-timeout).
const DefaultDBTimeout = time.Minute

// Server is a running payd's parts.
type Server struct {
	cfg         Config
	DB          *store.DB
	Queue       *job.Queue
	Merchants   *merchant.Service
	Deposits    *deposit.Service
	Webhooks    *webhook.Dispatcher
	Contacts    *contact.Service
	Payins      *payin.Service
	Payouts     *payout.Service
	PayIDs      *payid.Service
	Banks       *bank.Directory
	Settlements *settlement.Service
	Treasury    *treasury.Service
	Transfers   *transfer.Service
	Reports     *report.Service
	Reconcile   *reconcile.Service
	Policies    *approval.Service
	Portal      *portal.Service
	Gateway     *gateway.Service
	Disputes    *dispute.Service
	Files       *bankfile.Files
	Feeds       *feed.Service
	Pages       *web.Pages
	API         *httpapi.API
	Metrics     *httpapi.Metrics
}

// MigrationWaitMessage is what a start logs when it finds another process
// migrating the database and waits for it (store.Options.MigrationWait):
// a start that hangs there says why.
const MigrationWaitMessage = "waiting for another process's migration of the database to finish"

// Open connects to the database, migrates it, and builds the services.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Env == "" {
		cfg.Env = httpapi.Sandbox
	}
	if cfg.Env != httpapi.Sandbox && cfg.Env != httpapi.Production {
		return nil, fmt.Errorf("environment %q: want sandbox or production", cfg.Env)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.EventRetention <= 0 {
		cfg.EventRetention = webhook.DefaultRetention
	}
	email, err := emailSender(cfg)
	if err != nil {
		return nil, err
	}
	opts := cfg.StoreOptions
	if opts.Timeout == 0 {
		opts.Timeout = DefaultDBTimeout
	}
	if opts.MigrationWait == nil {
		opts.MigrationWait = func() {
			cfg.Log.Info(MigrationWaitMessage, "advisory_lock", migrate.LockID)
		}
	}
	db, err := store.Open(ctx, cfg.DB, opts)
	if err != nil {
		return nil, err
	}
	applied, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	for _, m := range applied {
		cfg.Log.Info("migration applied", "migration", m)
	}
	if advice, err := db.VacuumAdvice(ctx); err != nil {
		cfg.Log.Warn("could not read the database's autovacuum settings", "err", err)
	} else if advice != "" {
		cfg.Log.Warn(advice)
	}
	s := &Server{cfg: cfg, DB: db, Metrics: httpapi.NewMetrics()}
	s.Queue = job.New(db, cfg.Clock, cfg.Log, s.Metrics.ObserveJob)
	s.Merchants = merchant.NewService(db, cfg.Clock)
	merchantClock := merchant.NewClock(cfg.Clock)
	s.Deposits = deposit.NewService(deposit.Deps{DB: db, Queue: s.Queue, Clock: merchantClock})
	job.Register(s.Queue, jobPurgeIdempotency, func(ctx context.Context, tx *store.Tx, _ job.Job, _ struct{}) error {
		_, err := idempotency.Purge(ctx, tx, cfg.Clock.Now())
		return err
	})
	s.Webhooks = webhook.NewDispatcher(db, cfg.Clock, cfg.Log, webhook.Policy{AllowPrivate: cfg.Env == httpapi.Sandbox}, s.Metrics.ObserveWebhook)
	if cfg.WebhookSchedule != nil {
		s.Webhooks.Schedule = cfg.WebhookSchedule
	}
	if cfg.WebhookDisableAfter > 0 {
		s.Webhooks.DisableAfter = cfg.WebhookDisableAfter
	}
	if cfg.StreamHeartbeat > 0 {
		s.Webhooks.StreamHeartbeat = cfg.StreamHeartbeat
	}
	if cfg.StreamPoll > 0 {
		s.Webhooks.StreamPoll = cfg.StreamPoll
	}
	s.Webhooks.RegisterPrune(s.Queue, cfg.EventRetention)
	policy := webhook.Policy{AllowPrivate: cfg.Env == httpapi.Sandbox}
	s.Contacts = contact.NewService(contact.Deps{DB: db, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks, Policy: policy, PublicURL: cfg.PublicURL})
	s.Contacts.Deliver(contact.Delivery{Sandbox: cfg.Env == httpapi.Sandbox, Email: email, Queue: s.Queue})
	linkKey, err := db.Secret(ctx, "links")
	if err != nil {
		db.Close()
		return nil, err
	}
	s.Payins = payin.NewService(payin.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks,
		Policy: policy, Contacts: s.Contacts, PublicURL: cfg.PublicURL, LinkKey: linkKey})
	banks, err := bank.Load()
	if err != nil {
		db.Close()
		return nil, err
	}
	s.Banks = banks
	// A transfer goes to the bank-file rail when a rail in the database
	// serves its currency and method (payd rail set), else to the
	// deployment's network: the sandbox's, or none in production.
	var other rail.Rail = rail.None{}
	if cfg.Env == httpapi.Sandbox {
		other = rail.NewSandbox(s.Queue)
	} else {
		cfg.Log.Warn("payouts, settlements and transfers that no bank-file rail serves (payd rail set) wait in processing: production has no other payment network")
	}
	s.Files = bankfile.New(bankfile.Deps{DB: db, Clock: cfg.Clock, Log: cfg.Log, Banks: banks, Writers: bankfile.FormatWriters(),
		Open: cfg.BankChannel, KillAt: cfg.BankFileKillAt})
	if err := s.Files.Load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	network := rail.NewRouter(s.Files, other)
	s.Policies = approval.NewService(approval.Deps{DB: db})
	s.Payouts = payout.NewService(payout.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks,
		Policy: policy, Rail: network, Banks: banks, Policies: s.Policies})
	s.Settlements = settlement.NewService(settlement.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks,
		Policy: policy, Rail: network, Banks: banks, FundingDelay: cfg.FundingDelay, Policies: s.Policies})
	s.Reports, err = report.NewService(ctx, report.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks, PublicURL: cfg.PublicURL})
	if err != nil {
		db.Close()
		return nil, err
	}
	if cfg.TreasuryBank.Name == "" {
		cfg.TreasuryBank.Name = "payd"
	}
	s.Treasury = treasury.NewService(treasury.Deps{DB: db, Clock: merchantClock, Bank: cfg.TreasuryBank})
	s.Transfers = transfer.NewService(transfer.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Webhooks: s.Webhooks, Policy: policy,
		Rail: network, Banks: banks, Sandbox: cfg.Env == httpapi.Sandbox, Policies: s.Policies})
	s.PayIDs = payid.NewService(payid.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks, Policy: policy,
		Sandbox: cfg.Env == httpapi.Sandbox})
	s.Feeds = feed.New(feed.Deps{DB: db, Clock: cfg.Clock, Log: cfg.Log, Payins: s.Payins, PayIDs: s.PayIDs, Deposits: s.Deposits, Files: s.Files,
		PollEvery: cfg.FeedPoll, MaxFileBytes: cfg.FeedMaxFileBytes, KillAt: cfg.BankFileKillAt})
	s.Portal = portal.NewService(portal.Deps{DB: db, Clock: merchantClock})
	s.Reconcile = reconcile.NewService(reconcile.Deps{DB: db, Clock: merchantClock})
	var cards gateway.CardNetwork = gateway.NoCards{}
	if cfg.Env == httpapi.Sandbox {
		cards = gateway.SandboxCards{}
	}
	s.Gateway = gateway.NewService(gateway.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Log: cfg.Log, Webhooks: s.Webhooks,
		Policy: policy, Cards: cards, PayIDs: s.PayIDs, PublicURL: cfg.PublicURL, LinkKey: linkKey})
	s.Disputes = dispute.NewService(dispute.Deps{DB: db, Queue: s.Queue, Clock: merchantClock, Webhooks: s.Webhooks, Gateway: s.Gateway})
	s.Pages = web.New(web.Deps{Sandbox: cfg.Env == httpapi.Sandbox, Log: cfg.Log, PublicURL: cfg.PublicURL, Contacts: s.Contacts, Payins: s.Payins,
		Gateway: s.Gateway, CheckoutPayID: s.Gateway, Portal: web.PortalDeps{Portal: s.Portal, Merchants: s.Merchants, Payouts: s.Payouts, Payins: s.Payins, Webhooks: s.Webhooks, Settlements: s.Settlements, Reports: s.Reports, Reconcile: s.Reconcile, Policies: s.Policies, Transfers: s.Transfers, Disputes: s.Disputes, DB: db, Trust: cfg.TrustedProxies, OIDC: cfg.OIDC}})
	s.registerGauges()
	s.API = httpapi.New(httpapi.Deps{
		Env: cfg.Env, PublicURL: cfg.PublicURL, DB: db, Clock: cfg.Clock, MerchantClock: merchantClock, Log: cfg.Log, Metrics: s.Metrics,
		Queue: s.Queue, Merchants: s.Merchants, Deposits: s.Deposits, Webhooks: s.Webhooks,
		Contacts: s.Contacts, Payins: s.Payins, Payouts: s.Payouts, PayIDs: s.PayIDs, Banks: s.Banks, Settlements: s.Settlements, Reports: s.Reports, Treasury: s.Treasury, Transfers: s.Transfers, Policies: s.Policies, Reconcile: s.Reconcile, Disputes: s.Disputes, Pages: s.Pages, TrustedProxies: cfg.TrustedProxies, Gateway: s.Gateway,
		ClockWorkLimit: cfg.ClockWorkLimit,
	})
	return s, nil
}

// jobPurgeIdempotency is the hourly purge of expired idempotency keys.
var jobPurgeIdempotency = job.NewKind[struct{}]("idempotency.purge")

// emailSender is the sender of cfg's SMTP settings, or nil without them.
func emailSender(cfg Config) (contact.Sender, error) {
	if cfg.SMTPURL == "" {
		return nil, nil
	}
	sender, err := contact.NewSMTPSender(cfg.SMTPURL, cfg.SMTPFrom)
	if err != nil {
		return nil, err
	}
	return sender, nil
}

// Handler is the root HTTP handler.
func (s *Server) Handler() http.Handler { return s.API.Handler() }

// Close waits for the emails being sent, then releases the database.
func (s *Server) Close() error {
	s.Contacts.Close()
	return s.DB.Close()
}

// writeTimeout bounds the time to answer a request. A sandbox clock advance
// waits longer for the work that became due, and moves its own deadline.
const writeTimeout = 120 * time.Second

// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
const shutdownGrace = 20 * time.Second

// Serve answers HTTP on ln and runs the job workers until ctx is done, then
// stops cleanly: the listener closes, in-flight requests finish, running jobs
// roll back and stay queued for the next start.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn),
	}
	// Event streams end when shutdown starts, or they would hold it for the grace.
	srv.RegisterOnShutdown(s.Webhooks.CloseStreams)
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.Queue.Run(workCtx, s.cfg.Workers) })
	wg.Go(func() { s.schedulePeriodic(workCtx) })
	wg.Go(func() { s.Webhooks.Run(workCtx) })
	wg.Go(func() { s.Files.Run(workCtx) })
	wg.Go(func() { s.Feeds.Run(workCtx) })
	wg.Go(func() {
		if err := s.Gateway.ListenDisputes(workCtx); err != nil && workCtx.Err() == nil {
			s.cfg.Log.Error("the card network's dispute notices stopped", "err", err)
		}
	})
	if s.cfg.Analyze {
		wg.Go(func() { s.keepStatistics(workCtx) })
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.cfg.Log.Info("listening on http://" + ln.Addr().String())

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
		s.cfg.Log.Info("shutting down: no new connections; requests in flight get " + shutdownGrace.String() + " to finish")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		serveErr = srv.Shutdown(shutdownCtx)
		cancel()
		if serveErr != nil {
			s.cfg.Log.Warn("shutting down: requests still running after the grace were cut off", "err", serveErr)
		} else {
			s.cfg.Log.Info("shutting down: every request answered; stopping the workers (running jobs roll back and stay queued)")
		}
	}
	stopWork()
	wg.Wait()
	if ctx.Err() != nil {
		s.cfg.Log.Info("stopped")
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return serveErr
}

// analyzeEvery is how often keepStatistics looks for tables to analyze.
const analyzeEvery = 2 * time.Second

// keepStatistics analyzes payd's tables as autovacuum would
// (store.AnalyzeStale) until ctx ends, when the PostgreSQL server's
// autovacuum is off; otherwise (on SQLite and Citus too) it returns at once.
func (s *Server) keepStatistics(ctx context.Context) {
	if self, err := s.DB.SelfAnalyze(ctx); err != nil || !self {
		return
	}
	s.cfg.Log.Info("autovacuum is off: payd analyzes its own tables so that the planner knows them (--analyze off stops it)")
	tick := time.NewTicker(analyzeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		analyzed, err := s.DB.AnalyzeStale(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.cfg.Log.Warn("analyze tables", "err", err)
		case len(analyzed) > 0:
			s.cfg.Log.Debug("analyzed tables", "tables", analyzed)
		}
	}
}

// schedulePeriodic enqueues housekeeping once an hour (the unique key keeps
// several processes from queueing it more than once per hour), and starts
// the report chains of accounts that have none (opened by another process,
// or before reports existed): at start, and every hour.
func (s *Server) schedulePeriodic(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		hour := s.cfg.Clock.Now().UTC().Format("2006010215")
		err := s.DB.Exec(ctx, func(tx *store.Tx) error {
			return job.Enqueue(ctx, tx, s.Queue, jobPurgeIdempotency, struct{}{}, job.Options{UniqueKey: jobPurgeIdempotency.String() + ":" + hour, MaxAttempts: 3})
		})
		if err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("schedule housekeeping", "err", err)
		}
		if err := s.Webhooks.SchedulePrune(ctx, s.Queue, s.cfg.EventRetention, hour); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("schedule event pruning", "err", err)
		}
		if err := s.Reports.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("schedule reports", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// registerGauges exposes queue depths, read from the database at scrape time.
func (s *Server) registerGauges() {
	gauge := func(read func(ctx context.Context) (int64, error)) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := read(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}
	}
	count := func(query string) func() float64 {
		return gauge(func(ctx context.Context) (n int64, err error) {
			err = s.DB.Read().QueryRowContext(ctx, query).Scan(&n)
			return n, err
		})
	}
	// The gauge spans merchants: the pending events of all of them.
	s.Metrics.GaugeFunc("payd_webhook_events_pending", "Webhook events not yet delivered or failed.",
		count(`SELECT count(*) FROM webhook_events WHERE status = 'pending'`))
	s.Metrics.GaugeFunc("payd_db_open_connections", "Database connections payd's pools hold open, in use or idle.",
		func() float64 { return float64(s.DB.OpenConnections()) })
	s.Metrics.GaugeFunc("payd_jobs_queued", "Jobs waiting or due in the queue (held for their lane run too).", gauge(s.Queue.Queued))
	s.Metrics.CounterFunc("payd_bankfile_inbox_rejected_total", "Files in the bank-file rails' inboxes rejected whole (moved to rejected/, nothing of them applied).",
		gauge(s.Files.InboxRejected))
	s.Metrics.CounterFunc("payd_bankfile_inbox_unknown_references_total", "Bank references the rails' status reports named of no transfer of their files (nothing changed).",
		gauge(s.Files.InboxUnknownReferences))
	s.Metrics.GaugeFunc("payd_feed_exceptions_open", "Bank feed entries left for the operator (payd feed exceptions), not yet matched or ignored.",
		gauge(func(ctx context.Context) (int64, error) { return feed.OpenExceptions(ctx, s.DB.Read()) }))
	s.Metrics.GaugeFunc("payd_bankfile_transfers_waiting", "Transfers handed to a bank-file rail that wait for its next cut-off, on every rail.", gauge(s.Files.Waiting))
	s.Metrics.GaugeFunc("payd_bankfile_last_delivery_timestamp_seconds", "When a bank file was last delivered to its outbox, on any rail (Unix seconds; 0 before the first).",
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			at, err := s.Files.LastDelivery(ctx)
			if err != nil {
				return -1
			}
			return at
		})
}
