package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"payd/internal/bank"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payfile"
	"payd/internal/rail/bankfile"
	"payd/internal/store"
)

// The bank-file rail's operator commands (CONTRACT §17, §25): payd rail
// set|list|unset, payd bankfile list|show|get|cut. Those that change
// something are audited (audit.go). A file cut here is delivered by the
// serving processes' next round (bankfile.Poll).

// bankFiles is the bank-file rail as an operator command uses it: the rails
// and the cut-offs, no outbox (payd serve delivers). Its warnings go to
// standard error; PAYD_TEST_BANKFILE_KILL kills it at a step of a cut-off
// (the crash tests).
func bankFiles(env *cliEnv, db *store.DB) (*bankfile.Files, error) {
	banks, err := bank.Load()
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return bankfile.New(bankfile.Deps{DB: db, Banks: banks, Writers: bankfile.FormatWriters(), Log: log,
		KillAt: bankfile.Step(env.getenv(killEnv))}), nil
}

// killEnv names the bank-file step at which a process kills itself, for the
// crash tests (bankfile.Deps.KillAt).
const killEnv = "PAYD_TEST_BANKFILE_KILL"

func runRailSet(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "rail set")
	name := o.need("name", "the rail's name: 1 to 16 lower-case letters, digits or dashes")
	format := o.need("format", "aba, pain001 or zengin")
	methods := o.need("methods", "comma-separated payout methods of the currency, settlements, transfers")
	currency := o.need("currency", "the rail's currency, e.g. AUD")
	debtorName := o.need("debtor-name", "the name of the operator's account the files pay from")
	debtorAccount := o.need("debtor-account", "its account number")
	bsb := o.String("debtor-bsb", "", "its BSB, e.g. 062-000 (aba; pain001 in AUD)")
	bic := o.String("debtor-bic", "", "its bank's SWIFT/BIC (pain001)")
	bankCode := o.String("debtor-bank-code", "", "its Zengin bank code, e.g. 0001 (zengin; with --debtor-branch-code)")
	branchCode := o.String("debtor-branch-code", "", "its Zengin branch code, e.g. 001")
	accountType := o.String("debtor-account-type", "", "ordinary or current (zengin; default ordinary)")
	originator := o.String("originator-id", "", "the bank's id of the operator: the APCA user id (aba, 6 digits), the 依頼人コード (zengin, 10 digits), the initiating party's id (pain001)")
	abbrev := o.String("bank-abbrev", "", "the bank's 3-letter abbreviation in the ABA descriptive record, e.g. CBA (aba)")
	cutoffs := o.need("cutoffs", "comma-separated local times of the daily cut-offs, e.g. 09:30,15:00")
	tz := o.need("timezone", "the IANA zone of the cut-offs, e.g. Australia/Sydney")
	outbox := o.need("outbox", "where files go: dir:PATH or sftp://USER@HOST:PORT/PATH")
	inbox := o.need("inbox", "where the bank's answers come: dir:PATH or sftp://USER@HOST:PORT/PATH")
	key := o.String("sftp-key", "", "the private key payd signs in to the SFTP server with (sftp://)")
	knownHosts := o.String("sftp-known-hosts", "", "the known_hosts file that pins the SFTP server's host key (sftp://)")
	who, checkActor := o.actor()
	return o.run(ctx, args, checkActor, func(_ *merchant.Service, db *store.DB) (answer, error) {
		files, err := bankFiles(env, db)
		if err != nil {
			return answer{}, err
		}
		s := bankfile.Settings{Name: *name, Format: payfile.Format(*format), Currency: *currency, Methods: splitList(*methods),
			DebtorName: *debtorName, DebtorAccount: *debtorAccount, DebtorBSB: *bsb, DebtorBIC: *bic, DebtorBankCode: *bankCode,
			DebtorBranchCode: *branchCode, DebtorAccountType: payfile.AccountType(*accountType), OriginatorID: *originator, BankAbbrev: *abbrev,
			Timezone: *tz, Outbox: *outbox, Inbox: *inbox, SFTPKey: *key, SFTPKnownHosts: *knownHosts}
		var r bankfile.Rail
		err = audited(ctx, db, *who, "rail set", args, func(tx *store.Tx) (string, error) {
			var err error
			if s.Cutoffs, err = bankfile.ParseCutoffs(*cutoffs); err != nil {
				return "", fault.Field("--cutoffs", err.Error())
			}
			r, err = files.Set(ctx, tx, s)
			return fmt.Sprintf("rail %s set", s.Name), err
		})
		if err != nil {
			return answer{}, err
		}
		listed, err := bankfile.List(ctx, db.Read())
		var shown bankfile.Listed
		for _, l := range listed {
			if l.Name == r.Name {
				shown = l
			}
		}
		return answer{value: shown, text: func(w io.Writer) {
			fmt.Fprintf(w, "rail %s: %s files in %s for %s; cut-offs %s %s, next %s; outbox %s, inbox %s\n", shown.Name, shown.Format,
				shown.Currency, strings.Join(shown.Methods, ","), strings.Join(shown.Cutoffs, ","), shown.Timezone,
				shown.NextCutoffAt.T.In(r.Location()).Format(time.RFC3339), shown.Outbox, shown.Inbox)
		}}, err
	})
}

func runRailList(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "rail list")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		rails, err := bankfile.List(ctx, db.Read())
		return answer{value: map[string]any{"records": rails}, text: func(w io.Writer) {
			if len(rails) == 0 {
				fmt.Fprintln(w, "no rails: every payout, settlement and transfer goes to the deployment's network (payd rail set adds one)")
			}
			for _, r := range rails {
				fmt.Fprintf(w, "%-16s %-7s %s %-40s %d waiting, next cut-off %s (%s)\n", r.Name, r.Format, r.Currency, strings.Join(r.Methods, ","),
					r.Waiting, r.NextCutoffAt.T.UTC().Format(time.RFC3339), r.Timezone)
			}
		}}, err
	})
}

func runRailUnset(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "rail unset")
	name := o.need("name", "the rail to unset")
	who, checkActor := o.actor()
	return o.run(ctx, args, checkActor, func(_ *merchant.Service, db *store.DB) (answer, error) {
		files, err := bankFiles(env, db)
		if err != nil {
			return answer{}, err
		}
		var waiting int
		err = audited(ctx, db, *who, "rail unset", args, func(tx *store.Tx) (string, error) {
			r, err := files.Unset(ctx, tx, *name)
			if err != nil {
				return "", err
			}
			waiting, err = bankfile.WaitingFor(ctx, tx, r.Name)
			return fmt.Sprintf("rail %s unset, %d transfers waiting for its next cut-off", r.Name, waiting), err
		})
		return answer{value: map[string]any{"name": *name, "unset": true, "waiting": waiting}, text: func(w io.Writer) {
			fmt.Fprintf(w, "rail %s unset: it takes no new transfers (every process sees it within %s); %d waiting still go into its next cut-off's file\n",
				*name, bankfile.DefaultCacheTTL, waiting)
		}}, err
	})
}

func runBankfileList(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "bankfile list")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		files, err := bankfile.ListFiles(ctx, db.Read())
		return answer{value: map[string]any{"records": files}, text: func(w io.Writer) {
			if len(files) == 0 {
				fmt.Fprintln(w, "no bank files yet")
			}
			for _, f := range files {
				fmt.Fprintf(w, "%s %-9s %d transfers %s %s cut-off %s\n", f.Name, f.Status, f.Count, f.Total, f.Currency, f.CutoffAt.T.UTC().Format(time.RFC3339))
			}
		}}, err
	})
}

// fileArg takes the file's name, the command's one argument, from among
// its flags (payd bankfile show NAME --json, or --db … NAME), and returns
// the flags without it.
func fileArg(o *operator, command string, args []string) (string, []string, error) {
	if err := o.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return "", nil, exitCode(0)
		}
		return "", nil, exitCode(2)
	}
	if o.NArg() == 0 {
		return "", nil, usageError{fmt.Sprintf("give the file's name: payd %s NAME", command)}
	}
	rest := slices.Concat(args[:len(args)-o.NArg()], o.Args()[1:])
	return o.Arg(0), rest, nil
}

func runBankfileShow(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "bankfile show")
	name, rest, err := fileArg(o, "bankfile show", args)
	if err != nil {
		return err
	}
	return o.run(ctx, rest, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		f, err := bankfile.ShowFile(ctx, db.Read(), name)
		return answer{value: f, text: func(w io.Writer) {
			fmt.Fprintf(w, "%s (rail %s, file reference %s): %d transfers, %s %s, %s", f.Name, f.Rail, f.FileReference, f.Count, f.Total, f.Currency, f.Status)
			if f.DeliveredAt != nil {
				fmt.Fprintf(w, " at %s", f.DeliveredAt.T.UTC().Format(time.RFC3339))
			} else if f.LastError != "" {
				fmt.Fprintf(w, " after %d attempts: %s", f.Attempts, f.LastError)
			}
			fmt.Fprintf(w, "\nsha256 %s, %d bytes, cut-off %s\n", f.SHA256, f.Size, f.CutoffAt.T.UTC().Format(time.RFC3339))
			for _, t := range f.Transfers {
				fmt.Fprintf(w, "  %s %-18s %s %s %s %s\n", t.BankReference, t.Type, t.MerchantID, t.UUID, t.Amount, t.Status)
			}
		}}, err
	})
}

func runBankfileGet(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "bankfile get")
	name, rest, err := fileArg(o, "bankfile get", args)
	if err != nil {
		return err
	}
	return o.run(ctx, rest, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		content, err := bankfile.FileContent(ctx, db.Read(), name)
		return answer{value: map[string]any{"name": name, "content": content}, text: func(w io.Writer) { w.Write(content) }}, err
	})
}

func runBankfileCut(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "bankfile cut")
	railName := o.need("rail", "the rail whose cut-off to make now")
	who, checkActor := o.actor()
	return o.run(ctx, args, checkActor, func(_ *merchant.Service, db *store.DB) (answer, error) {
		files, err := bankFiles(env, db)
		if err != nil {
			return answer{}, err
		}
		var file string
		err = audited(ctx, db, *who, "bankfile cut", args, func(tx *store.Tx) (string, error) {
			var err error
			if file, err = files.Cut(ctx, tx, *railName, files.Clock.Now()); err != nil {
				return "", err
			}
			if file == "" {
				return "no file: nothing was waiting", nil
			}
			return "file " + file, nil
		})
		var shown any
		if file != "" {
			shown = file
		}
		return answer{value: map[string]any{"file": shown}, text: func(w io.Writer) {
			if file == "" {
				fmt.Fprintf(w, "rail %s: nothing was waiting, no file\n", *railName)
				return
			}
			fmt.Fprintf(w, "rail %s: %s written; payd serve delivers it\n", *railName, file)
		}}, err
	})
}
