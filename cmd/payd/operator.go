package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/ratelimit"
	"payd/internal/report"
	"payd/internal/store"
	"payd/internal/treasury"
)

// openMerchants opens the database for an operator command. Operator
// commands never create or migrate a database (payd serve and payd migrate
// do): a SQLite file that does not exist, or a database with migrations
// still to apply, is refused saying so.
func openMerchants(ctx context.Context, dsn string) (*merchant.Service, *store.DB, error) {
	db, err := store.Open(ctx, dsn, store.Options{MustExist: true})
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, nil, fmt.Errorf("%w: payd serve or payd migrate --db %s creates it", err, store.Redact(dsn))
	}
	if err != nil {
		return nil, nil, err
	}
	unapplied, err := db.Unapplied(ctx)
	if err == nil && len(unapplied) > 0 {
		err = fmt.Errorf("the database %s is not migrated (%d migrations to apply, from %s): run payd migrate --db %s first (payd serve migrates too)",
			store.Redact(dsn), len(unapplied), unapplied[0], store.Redact(dsn))
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return merchant.NewService(db, clock.Real{}), db, nil
}

// operator is the frame every operator command shares: its flags (--db and
// --json for each, and the ones it needs), the database opened and migrated
// (ledger verify's too: a database payd has not used yet has an empty
// ledger, which holds every invariant), and its answer printed as JSON or
// as text.
type operator struct {
	*flagSet
	dsn    *string
	asJSON *bool
	needed map[string]*string
}

func newOperator(env *cliEnv, name string) *operator {
	f := newFlags(env, name)
	return &operator{flagSet: f, dsn: f.db(), asJSON: f.Bool("json", false, "print JSON"), needed: map[string]*string{}}
}

// need defines a string flag the command cannot run without.
func (o *operator) need(name, usage string) *string {
	v := o.String(name, "", usage)
	o.needed[name] = v
	return v
}

// answer is what an operator command prints: value as JSON with --json,
// else text. exit, when set, ends the command once the answer is printed
// (ledger verify's exit 1 on a broken invariant).
type answer struct {
	value any
	text  func(w io.Writer)
	exit  error
}

// run parses args and checks them (the needed flags, then check, nil for
// none) before the database is opened, so that a usage error touches no
// database; then opens it and prints what do answers.
func (o *operator) run(ctx context.Context, args []string, check func() error, do func(merchants *merchant.Service, db *store.DB) (answer, error)) error {
	if err := o.parse(args); err != nil {
		return err
	}
	if err := required(o.needed); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	merchants, db, err := openMerchants(ctx, *o.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	a, err := do(merchants, db)
	if err != nil {
		return err
	}
	if err := output(o.env.stdout, *o.asJSON, a.value, a.text); err != nil {
		return err
	}
	return a.exit
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runMerchantCreate(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "merchant create")
	name := o.need("name", "merchant name")
	country := o.need("country", "ISO 3166-1 alpha-2 country, e.g. AU")
	tz := o.need("timezone", "IANA time zone, e.g. Australia/Sydney")
	currencies := o.need("currencies", "comma-separated currencies, e.g. AUD,USD,JPY")
	approvals := o.Bool("approvals", false, "hold payouts for maker-checker approval")
	return o.run(ctx, args, nil, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		created, err := merchants.Create(ctx, merchant.CreateParams{Name: *name, Country: *country, Timezone: *tz,
			Currencies: splitList(*currencies), Approvals: *approvals})
		return answer{value: created, text: func(w io.Writer) {
			fmt.Fprintf(w, "merchant %s\n", created.MerchantID)
			for _, a := range created.Accounts {
				fmt.Fprintf(w, "  %s account %s app-id %s secret-key %s\n", a.Currency, a.AccountNumber, a.AppID, a.SecretKey)
			}
		}}, err
	})
}

// runMerchantUpdate changes a merchant's settings. --embed-origins replaces
// the origins that may frame its Payment Gateway 3 pages besides each link's
// success origin (CONTRACT §11); an empty value clears them.
func runMerchantUpdate(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "merchant update")
	id := o.need("merchant", "merchant id")
	origins := o.String("embed-origins", "", "comma-separated origins that may frame Payment Gateway 3 pages, e.g. https://a.example,https://b.example (empty: none)")
	check := func() error {
		set := false
		o.Visit(func(fl *flag.Flag) { set = set || fl.Name == "embed-origins" })
		if !set {
			return usageError{"nothing to change: give --embed-origins"}
		}
		return nil
	}
	return o.run(ctx, args, check, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		list, err := merchants.SetEmbedOrigins(ctx, *id, splitList(*origins))
		return answer{value: map[string]any{"merchant_id": *id, "embed_origins": list}, text: func(w io.Writer) {
			shown := strings.Join(list, ",")
			if shown == "" {
				shown = "(none: only each link's success origin)"
			}
			fmt.Fprintf(w, "merchant %s: embed origins %s\n", *id, shown)
		}}, err
	})
}

func runWebhookSecret(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "merchant webhook-secret")
	id := o.need("merchant", "merchant id")
	rotate := o.Bool("rotate", false, "replace the secret with a new one")
	return o.run(ctx, args, nil, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		secret, err := merchants.WebhookSecret(ctx, *id, *rotate)
		return answer{value: map[string]string{"signing_secret": secret}, text: func(w io.Writer) { fmt.Fprintln(w, secret) }}, err
	})
}

func runAppCreate(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "app create")
	id := o.need("merchant", "merchant id")
	currency := o.need("currency", "currency of the payments account")
	scopes := o.String("scopes", merchant.AllScopes, "what the key may do: a comma list of RESOURCE:read or RESOURCE:write (write includes read), RESOURCE one of "+
		strings.Join(merchant.Resources, ", ")+"; * is everything its account can")
	expires := o.String("expires-at", "", "when the key stops being accepted (RFC 3339); empty never")
	allowed := o.String("allowed-ips", "", "the client addresses the key is accepted from: a comma list of addresses and CIDR prefixes; empty any")
	var access merchant.Access
	check := func() (err error) {
		access, err = merchant.ParseAccess(*scopes, *expires, *allowed, merchant.AccessFields{Scopes: "scopes", ExpiresAt: "expires-at", AllowedIPs: "allowed-ips"})
		return err
	}
	return o.run(ctx, args, check, func(merchants *merchant.Service, db *store.DB) (answer, error) {
		app, err := store.Do(ctx, db, func(tx *store.Tx) (merchant.NewApp, error) {
			return merchants.CreateAppWith(ctx, tx, *id, *currency, access)
		})
		var expiresAt *time.Time
		if !access.ExpiresAt.IsZero() {
			expiresAt = &access.ExpiresAt
		}
		ips := make([]string, len(access.AllowedIPs))
		for i, p := range access.AllowedIPs {
			ips[i] = p.String()
		}
		shown := map[string]any{"app_id": app.AppID, "secret_key": app.SecretKey, "currency": app.Currency,
			"scopes": access.Scopes, "expires_at": expiresAt, "allowed_ips": ips}
		return answer{value: shown, text: func(w io.Writer) {
			fmt.Fprintf(w, "%s app-id %s secret-key %s scopes %s\n", app.Currency, app.AppID, app.SecretKey, strings.Join(access.Scopes, ","))
		}}, err
	})
}

func runAppRevoke(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "app revoke")
	id := o.need("merchant", "merchant id")
	appID := o.need("app-id", "the app to revoke")
	return o.run(ctx, args, nil, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		err := merchants.RevokeApp(ctx, *id, *appID)
		return answer{value: map[string]any{"app_id": *appID, "revoked": true}, text: func(w io.Writer) {
			fmt.Fprintf(w, "revoked %s\n", *appID)
		}}, err
	})
}

func runUserCreate(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "user create")
	id := o.need("merchant", "merchant id")
	email := o.need("email", "login email")
	role := o.need("role", "admin, finance, developer or viewer")
	passwordStdin := o.Bool("password-stdin", false, "read the password from standard input")
	var password string
	readPassword := func() error {
		if !*passwordStdin {
			return usageError{"--password-stdin is required: payd never takes a password on the command line"}
		}
		raw, err := io.ReadAll(io.LimitReader(env.stdin, 4096))
		password = strings.TrimRight(string(raw), "\r\n")
		return err
	}
	return o.run(ctx, args, readPassword, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		u, err := merchants.CreateUser(ctx, *id, *email, merchant.Role(*role), password)
		return answer{value: u, text: func(w io.Writer) { fmt.Fprintf(w, "user %s %s (%s)\n", u.UserID, u.Email, u.Role) }}, err
	})
}

func runAccountUpdate(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "account update")
	id := o.need("merchant", "merchant id")
	currency := o.need("currency", "currency of the payments account")
	approvals := o.String("approvals", "", "on or off: hold payouts for maker-checker approval")
	methods := o.String("methods", "", "comma-separated enabled method codes ('default' for the catalogue's defaults)")
	accountType := o.String("account-type", "", "aggregated or dedicated")
	hold := o.Duration("approval-hold", 0, "how long a held payout waits for a decision before it expires (default of a new account: 168h)")
	disputeFee := o.String("dispute-fee", "", "what a lost card dispute debits, in the account's currency (default of a new account: 25.00)")
	var u merchant.AccountUpdate
	check := func() error {
		switch *approvals {
		case "":
		case "on", "off":
			on := *approvals == "on"
			u.Approvals = &on
		default:
			return usageError{"--approvals must be on or off"}
		}
		if *methods != "" {
			list := splitList(*methods)
			if *methods == "default" {
				list = nil
			}
			u.Methods = &list
		}
		if *accountType != "" {
			t := merchant.AccountType(*accountType)
			u.AccountType = &t
		}
		if *hold != 0 {
			u.ApprovalHold = hold
		}
		if *disputeFee != "" {
			u.DisputeFee = disputeFee
		}
		return nil
	}
	return o.run(ctx, args, check, func(merchants *merchant.Service, _ *store.DB) (answer, error) {
		acc, err := merchants.UpdateAccount(ctx, *id, *currency, u)
		fee := ""
		if err == nil {
			fee = money.Format(acc.DisputeFee, money.MustLookup(acc.Currency))
		}
		view := map[string]any{"currency": acc.Currency, "account_number": acc.AccountNumber, "approvals": acc.Approvals,
			"approval_hold": acc.ApprovalHold.String(), "methods": acc.Methods, "account_type": acc.AccountType,
			"dispute_fee": fee}
		return answer{value: view, text: func(w io.Writer) {
			fmt.Fprintf(w, "%s account %s: approvals %v (hold %s), type %s, methods %s, dispute fee %s\n", acc.Currency, acc.AccountNumber, acc.Approvals,
				acc.ApprovalHold, acc.AccountType, methodList(acc.Methods), fee)
		}}, err
	})
}

// optionalRate is a rate flag that may be left out (nil: unchanged), so
// that its help shows no default.
type optionalRate struct{ v *int64 }

func (r *optionalRate) String() string {
	if r == nil || r.v == nil {
		return ""
	}
	return strconv.FormatInt(*r.v, 10)
}

func (r *optionalRate) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errors.New("must be a whole number of requests per second, 0 or more")
	}
	r.v = &n
	return nil
}

func runMerchantLimits(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "merchant limits")
	id := o.need("merchant", "merchant id")
	var write, read optionalRate
	o.Var(&write, "write-rate", fmt.Sprintf("`N` POST and PUT requests per second (0: the default, %d; unset: unchanged)", ratelimit.DefaultWriteRate))
	o.Var(&read, "read-rate", fmt.Sprintf("`N` GET requests per second (0: the default, %d; unset: unchanged)", ratelimit.DefaultReadRate))
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		limits, err := ratelimit.SetLimits(ctx, db, *id, write.v, read.v)
		return answer{value: limits, text: func(out io.Writer) {
			show := func(v, def int64) string {
				if v == 0 {
					return fmt.Sprintf("%d/s (default)", def)
				}
				return fmt.Sprintf("%d/s", v)
			}
			fmt.Fprintf(out, "merchant %s: writes %s, reads %s\n", *id, show(limits.WriteRate, ratelimit.DefaultWriteRate), show(limits.ReadRate, ratelimit.DefaultReadRate))
		}}, err
	})
}

func runTreasuryReview(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "treasury review")
	id := o.need("merchant", "merchant id")
	account := o.need("account", "the treasury account's id")
	approve := o.Bool("approve", false, "approve the submission in review: the account becomes active")
	reject := o.Bool("reject", false, "reject it (with --reason)")
	reason := o.String("reason", "", "why it is rejected")
	check := func() error {
		if *approve == *reject {
			return usageError{"give exactly one of --approve and --reject"}
		}
		return nil
	}
	return o.run(ctx, args, check, func(_ *merchant.Service, db *store.DB) (answer, error) {
		outcome := treasury.Approve
		if *reject {
			outcome = treasury.Reject
		}
		svc := treasury.NewService(treasury.Deps{DB: db, Clock: merchant.NewClock(clock.Real{})})
		acc, err := svc.ReviewByOperator(ctx, *id, treasury.ReviewRequest{TreasuryAccountID: *account, Outcome: outcome, Reason: *reason})
		return answer{value: acc, text: func(out io.Writer) {
			fmt.Fprintf(out, "treasury account %s (%s): %s\n", acc.ID, acc.Currency, acc.Status)
		}}, err
	})
}

func methodList(m []string) string {
	if m == nil {
		return "(catalogue defaults)"
	}
	return strings.Join(m, ",")
}

// runLedgerVerify checks every ledger invariant: exit 1 when one breaks,
// once the problems are printed.
func runLedgerVerify(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "ledger verify")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		problems, err := ledger.Verify(ctx, db.Read())
		var entries int64
		if err == nil {
			// spans merchants: the operator's check of the whole ledger.
			err = db.Read().QueryRowContext(ctx, `SELECT count(*) FROM journal_entries`).Scan(&entries)
		}
		a := answer{value: map[string]any{"ok": len(problems) == 0, "problems": problemList(problems)}, text: func(w io.Writer) {
			switch {
			case len(problems) == 0 && entries == 0:
				fmt.Fprintln(w, "ledger verified: nothing to check, no journal entries yet")
			case len(problems) == 0:
				fmt.Fprintf(w, "ledger verified: every invariant holds over %d journal entries\n", entries)
			}
			for _, p := range problems {
				fmt.Fprintf(w, "%s: %s\n", p.Check, p.Detail)
			}
		}}
		if len(problems) > 0 {
			a.exit = exitCode(1)
		}
		return a, err
	})
}

func problemList(p []ledger.Problem) []ledger.Problem {
	if p == nil {
		return []ledger.Problem{}
	}
	return p
}

// runReportRotateKey adds a new key for signing report links. Every running
// server signs with it from its next listing; links signed by the keys it
// replaces stay valid until they expire (report.LinkTTL).
func runReportRotateKey(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "report rotate-key")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		rotated, err := report.RotateKey(ctx, db, clock.Real{}.Now())
		return answer{value: rotated, text: func(w io.Writer) {
			fmt.Fprintf(w, "report links are signed by key %s\n", rotated.KeyID)
			if len(rotated.Retired) > 0 {
				fmt.Fprintf(w, "links signed by %s stay valid until they expire\n", strings.Join(rotated.Retired, ", "))
			}
		}}, err
	})
}
