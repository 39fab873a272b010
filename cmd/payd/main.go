// Command payd is the payment service: `payd serve` runs the API, hosted
// pages and background workers; the other commands are for operators and
// work against the same database, also while servers run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	_ "time/tzdata" // IANA zones even on machines without a zoneinfo database

	"payd/internal/fault"
)

// command is one operator command.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what every command runs with; tests replace its streams.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func commands() []command {
	return []command{
		{"serve", "run the API, hosted pages and workers", runServe},
		{"migrate", "apply database migrations and exit", runMigrate},
		{"copy", "copy the whole database into another, empty one (--to): SQLite to PostgreSQL or Citus, and back", runCopy},
		{"merchant create", "create a merchant with an account and app per currency", runMerchantCreate},
		{"merchant update", "change a merchant's settings (--embed-origins: who may frame its Payment Gateway 3 pages)", runMerchantUpdate},
		{"merchant webhook-secret", "show (or --rotate) a merchant's webhook signing secret", runWebhookSecret},
		{"merchant limits", "set a merchant's request rate limits (writes and reads per second)", runMerchantLimits},
		{"app create", "issue a new app-id/secret-key pair for an account", runAppCreate},
		{"app revoke", "revoke an app and its access tokens", runAppRevoke},
		{"user create", "add a portal user (password on standard input)", runUserCreate},
		{"account update", "change a payments account's settings", runAccountUpdate},
		{"treasury review", "approve or reject a treasury account in review", runTreasuryReview},
		{"ledger verify", "check every ledger invariant; exit 1 on any break", runLedgerVerify},
		{"report rotate-key", "sign report links with a new key (links already out stay valid until they expire)", runReportRotateKey},
		{"webhook verify", "check a webhook delivery's signature, its body on standard input: exit 0 valid, 1 not", runWebhookVerify},
		{"rail set", "set a bank-file rail: the methods it pays in its currency, its format, debtor, cut-offs and outbox", runRailSet},
		{"rail list", "list the bank-file rails, what waits for each and its next cut-off", runRailList},
		{"rail unset", "stop a rail taking transfers (what waits still goes into its next file)", runRailUnset},
		{"bankfile list", "list the bank files written", runBankfileList},
		{"bankfile show", "show a bank file (NAME) and its transfers", runBankfileShow},
		{"bankfile get", "write a bank file's bytes (NAME) to standard output", runBankfileGet},
		{"bankfile cut", "make a rail's cut-off now: what waits goes into a file", runBankfileCut},
		{"bankfile outcome", "apply what the bank said another way: a transfer (--reference) done, failed or returned, or a file (--file) done", runBankfileOutcome},
		{"feed set", "set a bank feed: the operator's account whose statements payd reads from its inbox", runFeedSet},
		{"feed list", "list the bank feeds", runFeedList},
		{"feed unset", "stop reading a feed's inbox", runFeedUnset},
		{"feed import", "apply one bank file (FILE) to a feed by hand: camt.053/054, BAI2 or MT940", runFeedImport},
		{"feed exceptions", "list the bank entries left for the operator (--all: resolved ones too)", runFeedExceptions},
		{"feed match", "apply an exception's entry (--entry) to the record it is for", runFeedMatch},
		{"feed ignore", "close an exception (--entry) without applying its entry", runFeedIgnore},
		{"audit list", "list the operator audit log: who ran which command that changes something, when", runAuditList},
		{"listen", "forward a merchant's events from payd's event stream to a local URL, signed (for integrators)", runListen},
		{"trigger", "make an event happen on a sandbox (EVENT; --list shows them) through the public API", runTrigger},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(ctx, env, os.Args[1:]))
}

// run dispatches args to a command and returns the process exit code.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(env.stdout, version())
		return 0
	}
	cmd, rest, ok := findCommand(args)
	if !ok {
		switch {
		case len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help"):
			usage(env.stderr)
			return 0
		case len(args) > 0 && !isGroup(args[0]):
			fmt.Fprintf(env.stderr, "payd: unknown command %q\n", strings.Join(args[:1], " "))
		case len(args) > 1:
			fmt.Fprintf(env.stderr, "payd: unknown command %q\n", strings.Join(args[:2], " "))
		}
		usage(env.stderr)
		return 2
	}
	if err := cmd.run(ctx, env, rest); err != nil {
		var exit exitCode
		if errors.As(err, &exit) {
			return int(exit)
		}
		printError(env.stderr, err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	return 0
}

// isGroup reports whether word opens commands of two words (merchant, rail…).
func isGroup(word string) bool {
	for _, c := range commands() {
		if strings.HasPrefix(c.name, word+" ") {
			return true
		}
	}
	return false
}

// version is the module's version and the commit the binary was built
// from, as the Go toolchain stamped them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "payd (unknown build)"
	}
	v, commit, dirty := info.Main.Version, "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("payd %s, commit %s%s, %s", v, commit, dirty, info.GoVersion)
}

func findCommand(args []string) (command, []string, bool) {
	for _, c := range commands() {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], true
		}
	}
	return command{}, nil, false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: payd <command> [flags]   (payd <command> -h for its flags; payd --version)")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-26s %s\n", c.name, c.summary)
	}
}

// exitCode ends a command with a code and nothing more printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func printError(w io.Writer, err error) {
	if e, ok := fault.As(err); ok && len(e.Fields) > 1 {
		// The message already lists every field; one line each, in a fixed order, reads better.
		fmt.Fprintln(w, "payd: invalid input:")
		for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
			fmt.Fprintf(w, "  %s: %s\n", k, e.Fields[k])
		}
		return
	}
	if e, ok := fault.As(err); ok {
		fmt.Fprintf(w, "payd: %s\n", e.Message)
		return
	}
	fmt.Fprintf(w, "payd: %v\n", err)
}
