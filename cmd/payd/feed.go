package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"payd/internal/clock"
	"payd/internal/deposit"
	"payd/internal/feed"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/rail/bankfile"
	"payd/internal/statement"
	"payd/internal/store"
	"payd/internal/webhook"
)

// The bank feeds' operator commands (CONTRACT §18, §25): payd feed
// set|list|unset|import, and the exceptions the feeds leave for the
// operator, payd feed exceptions|match|ignore. Those that change something
// are audited (audit.go). What an import or a match moves goes through the
// domain functions payd serve uses (feed.Service's); their webhooks go to
// the outbox, which the serving processes deliver.

// feeds is the feeds' service as an operator command uses it, with the
// payins, PayIDs, deposits and the bank-file rail's outcome function wired
// as payd serve wires them. PAYD_TEST_BANKFILE_KILL kills it at a step of
// an import (the crash tests).
func feeds(env *cliEnv, db *store.DB) (*feed.Service, error) {
	return feedsBounded(env, db, feed.DefaultMaxFileBytes)
}

// feedsBounded is feeds taking files of at most maxBytes.
func feedsBounded(env *cliEnv, db *store.DB, maxBytes int64) (*feed.Service, error) {
	files, err := outcomeFiles(env, db)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	queue := job.New(db, clock.Real{}, log, nil)
	policy := webhook.Policy{}
	hooks := webhook.NewDispatcher(db, clock.Real{}, log, policy, nil)
	clk := merchant.NewClock(clock.Real{})
	return feed.New(feed.Deps{DB: db, Log: log, Files: files, KillAt: bankfile.Step(env.getenv(killEnv)), MaxFileBytes: maxBytes,
		Payins:   payin.NewService(payin.Deps{DB: db, Queue: queue, Clock: clk, Log: log, Webhooks: hooks, Policy: policy}),
		PayIDs:   payid.NewService(payid.Deps{DB: db, Queue: queue, Clock: clk, Log: log, Webhooks: hooks, Policy: policy}),
		Deposits: deposit.NewService(deposit.Deps{DB: db, Queue: queue, Clock: clk}),
	}), nil
}

func runFeedSet(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed set")
	name := o.need("name", "the feed's name: 1 to 16 lower-case letters, digits or dashes")
	currency := o.need("currency", "the account's currency, e.g. AUD")
	account := o.need("account", "the operator's account number at the bank, as its files name it (without the BSB)")
	bsb := o.String("bsb", "", "its BSB, e.g. 062-000")
	bic := o.String("bic", "", "its bank's SWIFT/BIC")
	inbox := o.need("inbox", "where the bank's files come: dir:PATH or sftp://USER@HOST:PORT/PATH")
	key := o.String("sftp-key", "", "the private key payd signs in to the SFTP server with (sftp://)")
	knownHosts := o.String("sftp-known-hosts", "", "the known_hosts file that pins the SFTP server's host key (sftp://)")
	who, checkActor := o.actor()
	return o.run(ctx, args, checkActor, func(_ *merchant.Service, db *store.DB) (answer, error) {
		svc, err := feeds(env, db)
		if err != nil {
			return answer{}, err
		}
		var f feed.Feed
		err = audited(ctx, db, *who, "feed set", args, func(tx *store.Tx) (string, error) {
			var err error
			f, err = svc.Set(ctx, tx, feed.Settings{Name: *name, Currency: *currency, Account: *account, BSB: *bsb, BIC: *bic, Inbox: *inbox,
				SFTPKey: *key, SFTPKnownHosts: *knownHosts})
			return fmt.Sprintf("feed %s set", *name), err
		})
		return answer{value: f, text: func(w io.Writer) {
			fmt.Fprintf(w, "feed %s: account %s in %s, inbox %s (read every %s by payd serve)\n", f.Name, f.Account, f.Currency, f.Inbox, feed.DefaultPoll)
		}}, err
	})
}

func runFeedList(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed list")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		list, err := feed.List(ctx, db.Read())
		return answer{value: map[string]any{"records": list}, text: func(w io.Writer) {
			if len(list) == 0 {
				fmt.Fprintln(w, "no feeds: nothing reads the bank's statements (payd feed set adds one)")
			}
			for _, f := range list {
				fmt.Fprintf(w, "%-16s %s %-20s %s\n", f.Name, f.Currency, f.Account, f.Inbox)
			}
		}}, err
	})
}

func runFeedUnset(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed unset")
	name := o.need("name", "the feed to unset")
	who, checkActor := o.actor()
	return o.run(ctx, args, checkActor, func(_ *merchant.Service, db *store.DB) (answer, error) {
		svc, err := feeds(env, db)
		if err != nil {
			return answer{}, err
		}
		err = audited(ctx, db, *who, "feed unset", args, func(tx *store.Tx) (string, error) {
			return fmt.Sprintf("feed %s unset", *name), svc.Unset(ctx, tx, *name)
		})
		return answer{value: map[string]any{"name": *name, "unset": true}, text: func(w io.Writer) {
			fmt.Fprintf(w, "feed %s unset: its inbox is read no more (payd feed import still takes its files by hand once it is set again)\n", *name)
		}}, err
	})
}

// runFeedImport imports one file by hand (payd feed import --name NAME
// FILE): applied, a duplicate of one applied before, or rejected whole
// (then exit 1, after the answer).
func runFeedImport(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed import")
	name := o.need("name", "the feed whose account the file is a statement of")
	maxMiB := o.String("max-file-mib", "128", "the largest file taken, in MiB (1 to 256): a larger one is rejected whole")
	who, checkActor := o.actor()
	path, rest, err := fileArg(o, "feed import --name FEED", args)
	if err != nil {
		return err
	}
	var content []byte
	var maxBytes int64
	readFile := func() error {
		if err := checkActor(); err != nil {
			return err
		}
		if maxBytes, err = feedMaxFileBytes("--max-file-mib", *maxMiB); err != nil {
			return err
		}
		fh, err := os.Open(path)
		if err != nil {
			return usageError{fmt.Sprintf("read %s: %v", path, err)}
		}
		defer fh.Close()
		content, err = io.ReadAll(io.LimitReader(fh, maxBytes+1))
		return err
	}
	return o.run(ctx, rest, readFile, func(_ *merchant.Service, db *store.DB) (answer, error) {
		svc, err := feedsBounded(env, db, maxBytes)
		if err != nil {
			return answer{}, err
		}
		f, err := feed.Get(ctx, db.Read(), *name)
		if err != nil {
			return answer{}, err
		}
		got, err := svc.Import(ctx, f, filepath.Base(path), content)
		if err != nil {
			return answer{}, err
		}
		outcome := importText(got)
		// The import applied its entries in transactions of their own; the
		// audit says what it did.
		if err := audited(ctx, db, *who, "feed import", args, func(*store.Tx) (string, error) { return outcome, nil }); err != nil {
			return answer{}, err
		}
		a := answer{value: got, text: func(w io.Writer) { fmt.Fprintln(w, outcome) }}
		if got.Status == feed.Rejected {
			a.exit = exitCode(1)
		}
		return a, nil
	})
}

// feedMaxFileBytes reads a bound of a feed's files given in MiB (1 to
// statement.HardMaxBytes).
func feedMaxFileBytes(flagName, mib string) (int64, error) {
	n, err := strconv.ParseInt(mib, 10, 64)
	if err != nil || n < 1 || n > statement.HardMaxBytes>>20 {
		return 0, usageError{fmt.Sprintf("%s: must be a whole number of MiB from 1 to %d, such as 128", flagName, statement.HardMaxBytes>>20)}
	}
	return n << 20, nil
}

func importText(got feed.Imported) string {
	switch got.Status {
	case feed.Rejected:
		return fmt.Sprintf("file %s rejected whole, nothing of it applied: %s", got.SHA256, got.Reason)
	case feed.Duplicate:
		return fmt.Sprintf("file %s applied before: nothing applied twice (%d entries, %d applied, %d exceptions)", got.SHA256, got.Entries, got.Applied, got.Exceptions)
	}
	return fmt.Sprintf("file %s applied: %d entries, %d applied, %d exceptions", got.SHA256, got.Entries, got.Applied, got.Exceptions)
}

func runFeedExceptions(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed exceptions")
	all := o.Bool("all", false, "list the resolved exceptions too")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		list, err := bankfile.ListExceptions(ctx, db.Read(), *all)
		return answer{value: map[string]any{"records": list}, text: func(w io.Writer) {
			if len(list) == 0 {
				fmt.Fprintln(w, "no exceptions")
			}
			for _, e := range list {
				fmt.Fprintf(w, "%d %s %s %s %s %s %s: %s\n", e.ID, e.Feed, e.Kind, e.Status, deref(e.Direction), amountText(e), deref(e.EntryKey), e.Reason)
			}
		}}, err
	})
}

func deref(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func amountText(e bankfile.Exception) string {
	if e.Amount == nil || e.Currency == nil {
		return "-"
	}
	return e.Amount.String() + " " + *e.Currency
}

// entryFlag defines --entry, an exception's id, checked by the returned
// function.
func entryFlag(o *operator) (id *int64, check func() error) {
	raw := o.need("entry", "the exception's id (payd feed exceptions)")
	id = new(int64)
	return id, func() error {
		n, err := strconv.ParseInt(strings.TrimSpace(*raw), 10, 64)
		if err != nil || n <= 0 {
			return usageError{"--entry: give the exception's id, a positive number (payd feed exceptions)"}
		}
		*id = n
		return nil
	}
}

func runFeedMatch(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed match")
	id, checkEntry := entryFlag(o)
	var t feed.Target
	targets := []struct {
		name, usage string
		value       *string
	}{
		{"payin", "a payin's uuid", &t.Payin},
		{"payment-request", "a PayID payment request's id", &t.PaymentRequest},
		{"static-payid", "a static PayID's id", &t.StaticPayID},
		{"treasury", "a treasury account's id", &t.Treasury},
		{"reference", "a transfer's bank reference, or a bank file's reference", &t.Reference},
	}
	for _, tg := range targets {
		o.StringVar(tg.value, tg.name, "", "the entry is "+tg.usage)
	}
	who, checkActor := o.actor()
	check := func() error {
		if err := checkActor(); err != nil {
			return err
		}
		if err := checkEntry(); err != nil {
			return err
		}
		n := 0
		o.Visit(func(fl *flag.Flag) {
			for _, tg := range targets {
				if fl.Name == tg.name && strings.TrimSpace(*tg.value) != "" {
					n++
				}
			}
		})
		if n != 1 {
			return usageError{"give one of --payin UUID, --payment-request ID, --static-payid ID, --treasury ID and --reference REF"}
		}
		return nil
	}
	return o.run(ctx, args, check, func(_ *merchant.Service, db *store.DB) (answer, error) {
		svc, err := feeds(env, db)
		if err != nil {
			return answer{}, err
		}
		var res feed.Resolution
		err = audited(ctx, db, *who, "feed match", args, func(tx *store.Tx) (string, error) {
			var err error
			if res, err = svc.Match(ctx, tx, *id, t, *who); err != nil {
				return "", err
			}
			return fmt.Sprintf("exception %d matched to %s", res.Exception, res.Record), nil
		})
		return answer{value: res, text: func(w io.Writer) { fmt.Fprintf(w, "exception %d matched: %s\n", res.Exception, res.Record) }}, err
	})
}

func runFeedIgnore(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "feed ignore")
	id, checkEntry := entryFlag(o)
	reason := o.need("reason", "why the entry is left as it is (it is never applied)")
	who, checkActor := o.actor()
	check := func() error {
		if err := checkActor(); err != nil {
			return err
		}
		return checkEntry()
	}
	return o.run(ctx, args, check, func(_ *merchant.Service, db *store.DB) (answer, error) {
		svc, err := feeds(env, db)
		if err != nil {
			return answer{}, err
		}
		var res feed.Resolution
		err = audited(ctx, db, *who, "feed ignore", args, func(tx *store.Tx) (string, error) {
			var err error
			if res, err = svc.Ignore(ctx, tx, *id, *who, *reason); err != nil {
				return "", err
			}
			return fmt.Sprintf("exception %d ignored: %s", res.Exception, *reason), nil
		})
		return answer{value: res, text: func(w io.Writer) { fmt.Fprintf(w, "exception %d ignored\n", res.Exception) }}, err
	})
}
