// Package feed is production money in (CONTRACT §18, §25): the operator's
// collection and treasury accounts at its banks, whose booked entries payd
// reads from bank files (camt.054 notifications, camt.053 statements, BAI2,
// MT940: package statement and its readers) and applies where they
// belong, each exactly once, with the rest left for the operator as
// exceptions.
//
// Feeds are operator records in the database (payd feed set|list|unset),
// so every process sees the same set. Each feed's inbox is read every
// PollEvery by one process at a time (package inbox's rule, shared with the
// bank-file rails), and payd feed import applies one file by hand, the
// same way (Import). A file is known by its SHA-256 and decided whole
// before anything of it is applied: it must read as one of the formats,
// hold its own control totals, and be about the feed's account (its
// digits) in the feed's currency; refused, it is recorded rejected and
// filed away in rejected/. Taken, each booked entry is applied once by its
// key within its account (feed_entries), in short transactions of up to
// 64 entries (claim.go), so that SQLite's one writer is never held for a
// whole statement and the same entry in a camt.054 and then in the camt.053, or in a file
// read twice, is applied once; a restart resumes a file where it stopped.
//
// Matching (match.go) goes in §18's order: a payin (its payment details or
// its uuid in the remittance text), a PayID, a treasury account, a
// transfer's bank or file reference; each through the domain function
// the sandbox's simulations use, so that there is one rule: the payin's
// Receive, the PayID's Receive, the deposit's Credit, the bank-file rail's
// Outcome and ConfirmFile. Anything else is an exception (exception.go),
// which the operator matches or ignores.
package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/deposit"
	"payd/internal/fault"
	"payd/internal/inbox"
	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/payin"
	"payd/internal/rail/bankfile"
	"payd/internal/statement"
	"payd/internal/store"
)

// Step is a point of an import at which Deps.KillAt kills the process, for
// the crash tests (PAYD_TEST_BANKFILE_KILL, as the rails' steps).
type Step = bankfile.Step

// StepApplying: a file's first entry is applied and committed, the others
// not yet, nor the file's done mark.
const StepApplying = bankfile.StepApplying

// Deps are what a Service needs.
type Deps struct {
	DB *store.DB
	// Clock is the real clock: feeds serve many merchants, none of whose
	// test clocks they could follow (what an entry moves is dated by its
	// merchant's clock, as its domain function reads it).
	Clock    clock.Clock
	Log      *slog.Logger
	Payins   *payin.Service
	PayIDs   *payid.Service
	Deposits *deposit.Service
	// Files is the bank-file rail, whose Outcome and ConfirmFile apply
	// debits and returns naming a transfer's or a file's reference.
	Files *bankfile.Files
	// OpenInbox opens a feed's inbox (default OpenInbox).
	OpenInbox Opener
	// PollEvery is how often Run reads the feeds' inboxes (--feed-poll;
	// default DefaultPoll).
	PollEvery time.Duration
	// MaxFileBytes bounds a file (default DefaultMaxFileBytes; at most
	// statement.HardMaxBytes): a larger one is rejected whole.
	MaxFileBytes int64
	// KillAt, when set, kills the process at that step.
	KillAt Step
}

// Defaults of Deps.
const (
	DefaultPoll         = 30 * time.Second
	DefaultMaxFileBytes = 128 << 20
)

// Service reads the feeds.
type Service struct {
	Deps
	// polling makes one goroutine of the process at a time read the
	// inboxes; across processes, each inbox's lock does.
	polling sync.Mutex
}

// New returns the feeds' Service.
func New(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.OpenInbox == nil {
		d.OpenInbox = OpenInbox
	}
	if d.PollEvery <= 0 {
		d.PollEvery = DefaultPoll
	}
	if d.MaxFileBytes <= 0 || d.MaxFileBytes > statement.HardMaxBytes {
		d.MaxFileBytes = DefaultMaxFileBytes
	}
	return &Service{Deps: d}
}

// Settings are what payd feed set says of a feed.
type Settings struct {
	Name, Currency, Account, BSB, BIC, Inbox string
	SFTPKey, SFTPKnownHosts                  string
}

// Feed is a feed as stored and as payd feed list shows it.
type Feed struct {
	Name     string `json:"name"`
	Currency string `json:"currency"`
	Account  string `json:"account"`
	BSB      string `json:"bsb"`
	BIC      string `json:"bic"`
	Inbox    string `json:"inbox"`
	// Digits are the account's digits: what a file's account is compared
	// with (CONTRACT §25).
	Digits         string     `json:"-"`
	SFTPKey        string     `json:"-"`
	SFTPKnownHosts string     `json:"-"`
	CreatedAt      clock.Time `json:"created_at"`
	UpdatedAt      clock.Time `json:"updated_at"`
}

// accountKey is the account an entry's key is unique within: its digits
// and currency.
func (f Feed) accountKey() string { return f.Digits + " " + f.Currency }

var (
	nameShape = regexp.MustCompile(`^[a-z0-9-]{1,16}$`)
	bsbShape  = regexp.MustCompile(`^[0-9]{3}-[0-9]{3}$`)
	bicShape  = regexp.MustCompile(`^[A-Z0-9]{8}([A-Z0-9]{3})?$`)
)

// maxAccountLen bounds --account (an IBAN is at most 34).
const maxAccountLen = 34

// check adds what is wrong with s to f, by flag.
func (s *Settings) check(f fault.Fields) {
	s.Name, s.Currency, s.Account = strings.TrimSpace(s.Name), strings.ToUpper(strings.TrimSpace(s.Currency)), strings.TrimSpace(s.Account)
	if !nameShape.MatchString(s.Name) {
		f.Add("--name", "must be 1 to 16 lower-case letters, digits or dashes")
	}
	if _, err := money.Lookup(s.Currency); err != nil {
		f.Add("--currency", fmt.Sprintf("%q is not a currency payd holds", s.Currency))
	}
	if s.Account == "" || len(s.Account) > maxAccountLen || digitsOf(s.Account) == "" || !utf8.ValidString(s.Account) || strings.ContainsFunc(s.Account, isControl) {
		f.Add("--account", fmt.Sprintf("must be the account's number, with digits, at most %d characters", maxAccountLen))
	}
	if s.BSB != "" && !bsbShape.MatchString(s.BSB) {
		f.Add("--bsb", "must be nnn-nnn, e.g. 062-000")
	}
	if s.BIC != "" && !bicShape.MatchString(s.BIC) {
		f.Add("--bic", "must be a SWIFT/BIC of 8 or 11 capital letters and digits")
	}
	isSFTP, problem := inbox.URLProblem(s.Inbox)
	if problem != "" {
		f.Add("--inbox", problem)
	}
	if isSFTP && (s.SFTPKey == "" || s.SFTPKnownHosts == "") {
		f.Add("--sftp-key", "and --sftp-known-hosts are required for an sftp:// inbox: payd authenticates by key and pins the host's key, never a password or an unchecked host")
	}
	for _, c := range []struct{ flag, value string }{{"--sftp-key", s.SFTPKey}, {"--sftp-known-hosts", s.SFTPKnownHosts}} {
		if c.value != "" && (!strings.HasPrefix(c.value, "/") || len(c.value) > 1024) {
			f.Add(c.flag, "must be an absolute path")
		}
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func digitsOf(s string) string {
	return statement.Account{Number: s}.Digits()
}

// ErrInboxShared is the refusal of a feed whose inbox a rail or another
// feed reads (CONTRACT §25: payd feed set exits 1); errors.Is tells it.
var ErrInboxShared = errors.New("the inbox is read already")

// inboxShared is ErrInboxShared with its message.
type inboxShared struct{ msg string }

func (e *inboxShared) Error() string        { return e.msg }
func (e *inboxShared) Is(target error) bool { return target == ErrInboxShared }

// lockFeeds names the lock that makes feed sets one at a time: the check
// of the inboxes reads what they write.
const lockFeeds = "feed.feeds"

// Set creates the feed s names or replaces its settings, in tx (which the
// caller's audit entry shares). It refuses, changing nothing, an inbox a
// rail or another feed reads. A feed set again after unset is read again.
func (s *Service) Set(ctx context.Context, tx *store.Tx, set Settings) (Feed, error) {
	problems := fault.Fields{}
	set.check(problems)
	if err := problems.Err(); err != nil {
		return Feed{}, err
	}
	if err := tx.LockKey(ctx, lockFeeds, "set"); err != nil {
		return Feed{}, err
	}
	if other, err := inbox.FeedOf(ctx, tx, set.Inbox); err != nil || (other != "" && other != set.Name) {
		if err != nil {
			return Feed{}, err
		}
		return Feed{}, &inboxShared{fmt.Sprintf("feed %s reads the inbox %s already: no two feeds share an inbox", other, set.Inbox)}
	}
	if rail, err := inbox.RailOf(ctx, tx, set.Inbox); err != nil || rail != "" {
		if err != nil {
			return Feed{}, err
		}
		return Feed{}, &inboxShared{fmt.Sprintf("rail %s reads the inbox %s already: no feed shares an inbox with a rail", rail, set.Inbox)}
	}
	now := s.Clock.Now().UnixMilli()
	// global lookup: feeds are operator records, no merchant's.
	if _, err := tx.ExecContext(ctx, `INSERT INTO feeds (name, currency, account, account_digits, bsb, bic, inbox, sftp_key, sftp_known_hosts,
		unset_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10, $10)
		ON CONFLICT (name) DO UPDATE SET currency = excluded.currency, account = excluded.account, account_digits = excluded.account_digits,
		bsb = excluded.bsb, bic = excluded.bic, inbox = excluded.inbox, sftp_key = excluded.sftp_key, sftp_known_hosts = excluded.sftp_known_hosts,
		unset_at = NULL, updated_at = excluded.updated_at`,
		set.Name, set.Currency, set.Account, digitsOf(set.Account), set.BSB, set.BIC, set.Inbox, set.SFTPKey, set.SFTPKnownHosts, now); err != nil {
		return Feed{}, fmt.Errorf("set feed %s: %w", set.Name, err)
	}
	return Get(ctx, tx, set.Name)
}

// Unset stops the feed's inbox being read. It is kept (its entries name
// it) and comes back with its name by Set.
func (s *Service) Unset(ctx context.Context, tx *store.Tx, name string) error {
	// global lookup: feeds are operator records, no merchant's.
	res, err := tx.ExecContext(ctx, `UPDATE feeds SET unset_at = $1, updated_at = $1 WHERE name = $2 AND unset_at IS NULL`, s.Clock.Now().UnixMilli(), name)
	if err != nil {
		return fmt.Errorf("unset feed %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return err
		}
		return fault.NotFoundf("no feed %s", name)
	}
	return nil
}

const feedColumns = `name, currency, account, account_digits, bsb, bic, inbox, sftp_key, sftp_known_hosts, created_at, updated_at`

func scanFeed(sc interface{ Scan(...any) error }) (Feed, error) {
	var f Feed
	var created, updated int64
	if err := sc.Scan(&f.Name, &f.Currency, &f.Account, &f.Digits, &f.BSB, &f.BIC, &f.Inbox, &f.SFTPKey, &f.SFTPKnownHosts, &created, &updated); err != nil {
		return Feed{}, err
	}
	f.CreatedAt, f.UpdatedAt = clock.Time{T: clock.FromMillis(created)}, clock.Time{T: clock.FromMillis(updated)}
	return f, nil
}

// Get is the feed name (not unset); fault NOT_FOUND when there is none.
func Get(ctx context.Context, q store.Querier, name string) (Feed, error) {
	// global lookup: feeds are operator records, no merchant's.
	f, err := scanFeed(q.QueryRowContext(ctx, `SELECT `+feedColumns+` FROM feeds WHERE name = $1 AND unset_at IS NULL`, name))
	if store.IsNoRows(err) {
		return Feed{}, fault.NotFoundf("no feed %s", name)
	}
	if err != nil {
		return Feed{}, fmt.Errorf("read feed %s: %w", name, err)
	}
	return f, nil
}

// maxFeeds bounds the feeds listed and read.
const maxFeeds = 1000

// List is the feeds (not unset), by name.
func List(ctx context.Context, q store.Querier) ([]Feed, error) {
	// global lookup: feeds are operator records, no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT `+feedColumns+` FROM feeds WHERE unset_at IS NULL ORDER BY name`+store.Limit(maxFeeds))
	if err != nil {
		return nil, fmt.Errorf("list feeds: %w", err)
	}
	defer rows.Close()
	out := []Feed{}
	for rows.Next() {
		f, err := scanFeed(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
