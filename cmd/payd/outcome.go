package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"payd/internal/bank"
	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/rail"
	"payd/internal/rail/bankfile"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/transfer"
	"payd/internal/webhook"
)

// payd bankfile outcome (CONTRACT §17, §25): what the bank said of a
// transfer another way than in a file payd reads (a call, a letter, its
// portal), applied by the one outcome function the inbox and the feeds use
// (bankfile.Files.Outcome), audited. A contrary word changes nothing and
// exits 1, with an exception open for the operator.

// maxOutcomeReason bounds --failed and --returned: a failure_reason.
const maxOutcomeReason = 500

// outcomeFiles is the bank-file rail with the listeners of its transfers'
// outcomes (payouts, settlements, transfers) wired as payd serve wires
// them: their webhooks go to the outbox, which the serving processes
// deliver.
func outcomeFiles(env *cliEnv, db *store.DB) (*bankfile.Files, error) {
	banks, err := bank.Load()
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	files := bankfile.New(bankfile.Deps{DB: db, Banks: banks, Writers: bankfile.FormatWriters(), Log: log})
	queue := job.New(db, clock.Real{}, log, nil)
	policy := webhook.Policy{}
	hooks := webhook.NewDispatcher(db, clock.Real{}, log, policy, nil)
	clk := merchant.NewClock(clock.Real{})
	payout.NewService(payout.Deps{DB: db, Queue: queue, Clock: clk, Log: log, Webhooks: hooks, Policy: policy, Rail: files, Banks: banks})
	settlement.NewService(settlement.Deps{DB: db, Queue: queue, Clock: clk, Log: log, Webhooks: hooks, Policy: policy, Rail: files, Banks: banks})
	transfer.NewService(transfer.Deps{DB: db, Queue: queue, Clock: clk, Webhooks: hooks, Policy: policy, Rail: files, Banks: banks})
	return files, nil
}

// outcomeFlags are the flags of payd bankfile outcome, checked.
type outcomeFlags struct {
	o                *operator
	reference, file  *string
	done             *bool
	failed, returned *string
	who              *string
	checkActor       func() error
	// What check made of them.
	set     map[string]bool
	verdict rail.Verdict
	reason  string
}

func newOutcomeFlags(o *operator) *outcomeFlags {
	f := &outcomeFlags{o: o, set: map[string]bool{}}
	f.reference = o.String("reference", "", "the bank reference of the transfer the bank answered for")
	f.file = o.String("file", "", "a bank file's name: with --done every still-pending transfer of it is done (the bank booked the file as one debit)")
	f.done = o.Bool("done", false, "the bank paid it")
	f.failed = o.String("failed", "", "the bank refused it, for this reason (its failure_reason), e.g. \"AC04 Closed account\"")
	f.returned = o.String("returned", "", "the bank sent it back after paying it, for this reason")
	f.who, f.checkActor = o.actor()
	return f
}

// check refuses, before any database is opened, flags that do not say one
// thing of one transfer or file.
func (f *outcomeFlags) check() error {
	if err := f.checkActor(); err != nil {
		return err
	}
	f.o.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.set["reference"] == f.set["file"] {
		return usageError{"give one of --reference REF and --file NAME"}
	}
	n := 0
	for _, name := range []string{"done", "failed", "returned"} {
		if f.set[name] {
			n++
		}
	}
	if n != 1 || (f.set["done"] && !*f.done) {
		return usageError{"give one of --done, --failed REASON and --returned REASON"}
	}
	if f.set["file"] && !*f.done {
		return usageError{"--file takes --done only: the bank fails or returns a file's transfers one by one (--reference)"}
	}
	switch {
	case *f.done:
		f.verdict = rail.Done
	case f.set["failed"]:
		f.verdict, f.reason = rail.Failed, strings.TrimSpace(*f.failed)
	default:
		f.verdict, f.reason = rail.Returned, strings.TrimSpace(*f.returned)
	}
	if f.verdict != rail.Done {
		if problem := reasonProblem(f.reason); problem != "" {
			return usageError{fmt.Sprintf("--%s: %s", f.verdict, problem)}
		}
	}
	return nil
}

// reasonProblem is what is wrong with a failure's or return's reason.
func reasonProblem(reason string) string {
	switch {
	case reason == "":
		return "give the reason the bank gave, e.g. \"AC04 Closed account\""
	case utf8.RuneCountInString(reason) > maxOutcomeReason || !utf8.ValidString(reason) || strings.IndexFunc(reason, unicode.IsControl) >= 0:
		return fmt.Sprintf("must be at most %d characters, without control characters", maxOutcomeReason)
	}
	return ""
}

// outcomeView is what payd bankfile outcome --reference --json prints.
type outcomeView struct {
	bankfile.Transfer
	Was       string      `json:"was"`
	Effect    rail.Effect `json:"effect"`
	Exception *int64      `json:"exception"`
}

// stateMismatch ends payd bankfile outcome whose word is contrary to the
// transfer's state: exit 1, the exception named.
type stateMismatch struct{ res bankfile.Result }

func (e stateMismatch) Error() string {
	t := e.res.Transfer
	return fmt.Sprintf("state mismatch: %s %s of merchant %s is %s, which the bank's word cannot change: nothing changed; exception %d is open for the operator",
		t.Type, t.UUID, t.MerchantID, e.res.Was, e.res.Exception)
}

// outcomeText is what the audit log and the text answer say of res.
func outcomeText(res bankfile.Result, v rail.Verdict) string {
	t := res.Transfer
	head := fmt.Sprintf("%s (%s %s of merchant %s)", t.BankReference, t.Type, t.UUID, t.MerchantID)
	switch res.Effect {
	case rail.Changed:
		return fmt.Sprintf("%s: %s → %s", head, res.Was, t.Status)
	case rail.Same:
		return fmt.Sprintf("%s: %s already, nothing changed", head, t.Status)
	}
	return fmt.Sprintf("%s: state mismatch: it is %s and the word was %s; exception %d opened", head, res.Was, v, res.Exception)
}

func runBankfileOutcome(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "bankfile outcome")
	f := newOutcomeFlags(o)
	return o.run(ctx, args, f.check, func(_ *merchant.Service, db *store.DB) (answer, error) {
		files, err := outcomeFiles(env, db)
		if err != nil {
			return answer{}, err
		}
		if *f.file != "" {
			return confirmFile(ctx, db, files, *f.who, *f.file, args)
		}
		var res bankfile.Result
		err = audited(ctx, db, *f.who, "bankfile outcome", args, func(tx *store.Tx) (string, error) {
			var err error
			res, err = files.Outcome(ctx, tx, bankfile.Evidence{BankReference: *f.reference, Verdict: f.verdict, Reason: f.reason,
				Source: bankfile.Source{Document: "payd bankfile outcome (" + *f.who + ")"}})
			if err != nil {
				return "", err
			}
			return outcomeText(res, f.verdict), nil
		})
		if err != nil {
			return answer{}, err
		}
		view := outcomeView{Transfer: res.Transfer, Was: res.Was, Effect: res.Effect}
		a := answer{value: view, text: func(w io.Writer) { fmt.Fprintln(w, outcomeText(res, f.verdict)) }}
		if res.Effect == rail.Contrary {
			view.Exception = &res.Exception
			a.value, a.exit = view, stateMismatch{res: res}
		}
		return a, nil
	})
}

// confirmFile is payd bankfile outcome --file NAME --done: the bank booked
// the file as one debit (bankfile.Files.ConfirmFile).
func confirmFile(ctx context.Context, db *store.DB, files *bankfile.Files, who, name string, args []string) (answer, error) {
	var c bankfile.Confirmed
	err := audited(ctx, db, who, "bankfile outcome", args, func(tx *store.Tx) (string, error) {
		var err error
		if c, err = files.ConfirmFile(ctx, tx, name); err != nil {
			return "", err
		}
		return confirmedText(c), nil
	})
	return answer{value: c, text: func(w io.Writer) { fmt.Fprintln(w, confirmedText(c)) }}, err
}

func confirmedText(c bankfile.Confirmed) string {
	return fmt.Sprintf("file %s: %d still-pending transfers done, %d done already, %d failed or returned left as they were", c.File, c.Done, c.Already, c.Left)
}
