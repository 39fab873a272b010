package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"payd/internal/clock"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/ratelimit"
	"payd/internal/report"
	"payd/internal/store"
	"payd/internal/treasury"
)

// openMerchants opens and migrates the database for an operator command.
func openMerchants(ctx context.Context, dsn string) (*merchant.Service, *store.DB, error) {
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return nil, nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	return merchant.NewService(db, clock.Real{}), db, nil
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
	f := newFlags(env, "merchant create")
	dsn := f.db()
	name := f.String("name", "", "merchant name")
	country := f.String("country", "", "ISO 3166-1 alpha-2 country, e.g. AU")
	tz := f.String("timezone", "", "IANA time zone, e.g. Australia/Sydney")
	currencies := f.String("currencies", "", "comma-separated currencies, e.g. AUD,USD,JPY")
	approvals := f.Bool("approvals", false, "hold payouts for maker-checker approval")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"name": name, "country": country, "timezone": tz, "currencies": currencies}); err != nil {
		return err
	}
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	created, err := svc.Create(ctx, merchant.CreateParams{Name: *name, Country: *country, Timezone: *tz,
		Currencies: splitList(*currencies), Approvals: *approvals})
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, created, func(w io.Writer) {
		fmt.Fprintf(w, "merchant %s\n", created.MerchantID)
		for _, a := range created.Accounts {
			fmt.Fprintf(w, "  %s account %s app-id %s secret-key %s\n", a.Currency, a.AccountNumber, a.AppID, a.SecretKey)
		}
	})
}

// runMerchantUpdate changes a merchant's settings. --embed-origins replaces
// the origins that may frame its Payment Gateway 3 pages besides each link's
// success origin (CONTRACT §11); an empty value clears them.
func runMerchantUpdate(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "merchant update")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	origins := f.String("embed-origins", "", "comma-separated origins that may frame Payment Gateway 3 pages, e.g. https://a.example,https://b.example (empty: none)")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id}); err != nil {
		return err
	}
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == "embed-origins" })
	if !set {
		return usageError{"nothing to change: give --embed-origins"}
	}
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	list, err := svc.SetEmbedOrigins(ctx, *id, splitList(*origins))
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, map[string]any{"merchant_id": *id, "embed_origins": list}, func(w io.Writer) {
		shown := strings.Join(list, ",")
		if shown == "" {
			shown = "(none: only each link's success origin)"
		}
		fmt.Fprintf(w, "merchant %s: embed origins %s\n", *id, shown)
	})
}

func runWebhookSecret(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "merchant webhook-secret")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	rotate := f.Bool("rotate", false, "replace the secret with a new one")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id}); err != nil {
		return err
	}
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	secret, err := svc.WebhookSecret(ctx, *id, *rotate)
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, map[string]string{"signing_secret": secret}, func(w io.Writer) { fmt.Fprintln(w, secret) })
}

func runAppCreate(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "app create")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	currency := f.String("currency", "", "currency of the payments account")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id, "currency": currency}); err != nil {
		return err
	}
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	app, err := svc.CreateApp(ctx, *id, *currency)
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, app, func(w io.Writer) {
		fmt.Fprintf(w, "%s app-id %s secret-key %s\n", app.Currency, app.AppID, app.SecretKey)
	})
}

func runAppRevoke(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "app revoke")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	appID := f.String("app-id", "", "the app to revoke")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id, "app-id": appID}); err != nil {
		return err
	}
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := svc.RevokeApp(ctx, *id, *appID); err != nil {
		return err
	}
	return output(env.stdout, *asJSON, map[string]any{"app_id": *appID, "revoked": true}, func(w io.Writer) {
		fmt.Fprintf(w, "revoked %s\n", *appID)
	})
}

func runUserCreate(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "user create")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	email := f.String("email", "", "login email")
	role := f.String("role", "", "admin, finance, developer or viewer")
	passwordStdin := f.Bool("password-stdin", false, "read the password from standard input")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id, "email": email, "role": role}); err != nil {
		return err
	}
	if !*passwordStdin {
		return usageError{"--password-stdin is required: payd never takes a password on the command line"}
	}
	raw, err := io.ReadAll(io.LimitReader(env.stdin, 4096))
	if err != nil {
		return err
	}
	password := strings.TrimRight(string(raw), "\r\n")
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := svc.CreateUser(ctx, *id, *email, merchant.Role(*role), password)
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, u, func(w io.Writer) { fmt.Fprintf(w, "user %s %s (%s)\n", u.UserID, u.Email, u.Role) })
}

func runAccountUpdate(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "account update")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	currency := f.String("currency", "", "currency of the payments account")
	approvals := f.String("approvals", "", "on or off: hold payouts for maker-checker approval")
	methods := f.String("methods", "", "comma-separated enabled method codes ('default' for the catalogue's defaults)")
	accountType := f.String("account-type", "", "aggregated or dedicated")
	hold := f.Duration("approval-hold", 0, "how long a held payout waits for a decision before it expires (default of a new account: 168h)")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id, "currency": currency}); err != nil {
		return err
	}
	var u merchant.AccountUpdate
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
	svc, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	acc, err := svc.UpdateAccount(ctx, *id, *currency, u)
	if err != nil {
		return err
	}
	view := map[string]any{"currency": acc.Currency, "account_number": acc.AccountNumber, "approvals": acc.Approvals,
		"approval_hold": acc.ApprovalHold.String(), "methods": acc.Methods, "account_type": acc.AccountType}
	return output(env.stdout, *asJSON, view, func(w io.Writer) {
		fmt.Fprintf(w, "%s account %s: approvals %v (hold %s), type %s, methods %s\n", acc.Currency, acc.AccountNumber, acc.Approvals, acc.ApprovalHold, acc.AccountType, methodList(acc.Methods))
	})
}

func runMerchantLimits(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "merchant limits")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	write := f.Int64("write-rate", -1, fmt.Sprintf("POST and PUT requests per second (0: the default, %d)", ratelimit.DefaultWriteRate))
	read := f.Int64("read-rate", -1, fmt.Sprintf("GET requests per second (0: the default, %d)", ratelimit.DefaultReadRate))
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id}); err != nil {
		return err
	}
	var w, r *int64
	if *write >= 0 {
		w = write
	}
	if *read >= 0 {
		r = read
	}
	_, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	limits, err := ratelimit.SetLimits(ctx, db, *id, w, r)
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, limits, func(out io.Writer) {
		show := func(v, def int64) string {
			if v == 0 {
				return fmt.Sprintf("%d/s (default)", def)
			}
			return fmt.Sprintf("%d/s", v)
		}
		fmt.Fprintf(out, "merchant %s: writes %s, reads %s\n", *id, show(limits.WriteRate, ratelimit.DefaultWriteRate), show(limits.ReadRate, ratelimit.DefaultReadRate))
	})
}

func runTreasuryReview(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "treasury review")
	dsn := f.db()
	id := f.String("merchant", "", "merchant id")
	account := f.String("account", "", "the treasury account's id")
	approve := f.Bool("approve", false, "approve the submission in review: the account becomes active")
	reject := f.Bool("reject", false, "reject it (with --reason)")
	reason := f.String("reason", "", "why it is rejected")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"merchant": id, "account": account}); err != nil {
		return err
	}
	if *approve == *reject {
		return usageError{"give exactly one of --approve and --reject"}
	}
	_, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	outcome := treasury.Approve
	if *reject {
		outcome = treasury.Reject
	}
	svc := treasury.NewService(db, merchant.NewClock(clock.Real{}), treasury.Bank{})
	acc, err := svc.ReviewByOperator(ctx, *id, treasury.ReviewRequest{TreasuryAccountID: *account, Outcome: outcome, Reason: *reason})
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, acc, func(out io.Writer) {
		fmt.Fprintf(out, "treasury account %s (%s): %s\n", acc.ID, acc.Currency, acc.Status)
	})
}

func methodList(m []string) string {
	if m == nil {
		return "(catalogue defaults)"
	}
	return strings.Join(m, ",")
}

func runLedgerVerify(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "ledger verify")
	dsn := f.db()
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	// Migrate like every other operator command: a database payd has not
	// used yet has an empty ledger, which holds every invariant.
	_, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	problems, err := ledger.Verify(ctx, db.Read())
	if err != nil {
		return err
	}
	err = output(env.stdout, *asJSON, map[string]any{"ok": len(problems) == 0, "problems": problemList(problems)}, func(w io.Writer) {
		if len(problems) == 0 {
			fmt.Fprintln(w, "ledger verified: every invariant holds")
		}
		for _, p := range problems {
			fmt.Fprintf(w, "%s: %s\n", p.Check, p.Detail)
		}
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return exitCode(1)
	}
	return nil
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
	f := newFlags(env, "report rotate-key")
	dsn := f.db()
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	_, db, err := openMerchants(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rotated, err := report.RotateKey(ctx, db, clock.Real{}.Now())
	if err != nil {
		return err
	}
	return output(env.stdout, *asJSON, rotated, func(w io.Writer) {
		fmt.Fprintf(w, "report links are signed by key %s\n", rotated.KeyID)
		if len(rotated.Retired) > 0 {
			fmt.Fprintf(w, "links signed by %s stay valid until they expire\n", strings.Join(rotated.Retired, ", "))
		}
	})
}
