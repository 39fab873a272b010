package bankfile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	inboxes "payd/internal/inbox"
	"regexp"
	"slices"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/payfile"
	"payd/internal/payout"
	"payd/internal/store"
)

// Settings are a rail as the operator sets it (payd rail set, CONTRACT
// §17, §25).
type Settings struct {
	Name     string
	Format   payfile.Format
	Currency string
	// Methods are what the rail serves: payout method codes of its
	// currency, settlements and transfers.
	Methods []string
	// The debtor: the operator's account the files pay from, and its bank
	// (a BSB, a BIC, or a Zengin bank and branch).
	DebtorName, DebtorAccount        string
	DebtorBSB, DebtorBIC             string
	DebtorBankCode, DebtorBranchCode string
	DebtorAccountType                payfile.AccountType
	OriginatorID, BankAbbrev         string
	Cutoffs                          []Cutoff
	Timezone                         string
	Outbox, Inbox                    string
	SFTPKey, SFTPKnownHosts          string
}

// Settlements and Transfers are the names by which a rail serves the
// merchants' settlements and external transfers in its currency.
const (
	Settlements = "settlements"
	Transfers   = "transfers"
)

// MethodPayID is the one payout method an aba rail cannot serve: an ABA file
// pays accounts, never a PayID (CONTRACT §25).
const MethodPayID = "au_payid_npp_aud"

var (
	namePattern       = regexp.MustCompile(`^[a-z0-9-]{1,16}$`)
	bsbPattern        = regexp.MustCompile(`^[0-9]{3}-?[0-9]{3}$`)
	bicPattern        = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	bankCodePattern   = regexp.MustCompile(`^[0-9]{4}$`)
	branchCodePattern = regexp.MustCompile(`^[0-9]{3}$`)
	abbrevPattern     = regexp.MustCompile(`^[A-Z]{3}$`)
	apcaPattern       = regexp.MustCompile(`^[0-9]{6}$`)
	zenginIDPattern   = regexp.MustCompile(`^[0-9]{10}$`)
	accountPattern    = regexp.MustCompile(`^[0-9A-Za-z-]{1,34}$`)
)

// sandboxRail is the rail name of the sandbox network's submissions.
const sandboxRail = "sandbox"

// Bounds of the text a rail is set with.
const (
	maxDebtorName = 140
	maxPathLen    = 1024
)

// formatCurrency is the one currency a national format pays in; pain.001
// pays in any.
var formatCurrency = map[payfile.Format]string{payfile.ABA: "AUD", payfile.Zengin: "JPY"}

// check adds to f what is wrong with s on its own; the rules against the
// other rails (a clash, a shared inbox) are Set's.
func (s *Settings) check(f fault.Fields) {
	switch {
	case !namePattern.MatchString(s.Name):
		f.Add("--name", "must be 1 to 16 lower-case letters, digits or dashes")
	case s.Name == sandboxRail:
		f.Add("--name", "sandbox names the sandbox's simulated network: choose another name")
	}
	if !s.Format.Valid() {
		f.Add("--format", "must be aba, pain001 or zengin")
	}
	if _, err := money.Lookup(s.Currency); err != nil || s.Currency != strings.ToUpper(s.Currency) {
		f.Add("--currency", "must be a supported ISO 4217 currency code such as AUD")
	} else if want, ok := formatCurrency[s.Format]; ok && s.Currency != want {
		f.Add("--currency", fmt.Sprintf("must be %s: %s files pay in %s only", want, s.Format, want))
	}
	s.checkMethods(f)
	s.checkDebtor(f)
	if len(s.Cutoffs) == 0 {
		f.Add("--cutoffs", "must name at least one local time such as 09:30")
	}
	if s.Timezone == "" || s.Timezone == "Local" {
		f.Add("--timezone", "must be an IANA time zone such as Australia/Sydney")
	} else if _, err := time.LoadLocation(s.Timezone); err != nil {
		f.Add("--timezone", "must be an IANA time zone such as Australia/Sydney")
	}
	sftp := false
	for _, c := range []struct{ flag, value string }{{"--outbox", s.Outbox}, {"--inbox", s.Inbox}} {
		isSFTP, problem := channelProblem(c.value)
		if problem != "" {
			f.Add(c.flag, problem)
		}
		sftp = sftp || isSFTP
	}
	if s.Outbox != "" && s.Outbox == s.Inbox {
		f.Add("--inbox", "must not be the outbox")
	}
	if sftp && (s.SFTPKey == "" || s.SFTPKnownHosts == "") {
		f.Add("--sftp-key", "and --sftp-known-hosts are required for an sftp:// outbox or inbox: payd authenticates by key and pins the host's key, never a password or an unchecked host")
	}
	for _, c := range []struct{ flag, value string }{{"--sftp-key", s.SFTPKey}, {"--sftp-known-hosts", s.SFTPKnownHosts}} {
		if len(c.value) > maxPathLen {
			f.Add(c.flag, fmt.Sprintf("must be at most %d characters", maxPathLen))
		}
	}
}

// checkMethods checks the methods: payout methods of the rail's currency,
// settlements or transfers, each once; and no PayID on an aba rail.
func (s *Settings) checkMethods(f fault.Fields) {
	if len(s.Methods) == 0 {
		f.Add("--methods", "must name at least one method (a payout method, settlements or transfers)")
		return
	}
	for i, m := range s.Methods {
		switch {
		case slices.Contains(s.Methods[:i], m):
			f.Add("--methods", fmt.Sprintf("lists %s twice", m))
		case m == Settlements || m == Transfers:
		case m == MethodPayID && s.Format == payfile.ABA:
			f.Add("--methods", "au_payid_npp_aud cannot be served by an aba rail: an ABA file pays accounts, not PayIDs (use a pain001 rail)")
		default:
			pm, err := payout.Lookup(m)
			if err != nil {
				f.Add("--methods", fmt.Sprintf("%q is not a payout method, settlements or transfers", m))
			} else if s.Currency != "" && pm.Currency != s.Currency {
				f.Add("--methods", fmt.Sprintf("%s pays out %s, not the rail's %s", m, pm.Currency, s.Currency))
			}
		}
	}
}

// checkDebtor checks the debtor's account and bank against what the format
// writes of them.
func (s *Settings) checkDebtor(f fault.Fields) {
	if n := len([]rune(strings.TrimSpace(s.DebtorName))); n == 0 || n > maxDebtorName {
		f.Add("--debtor-name", fmt.Sprintf("must be 1 to %d characters", maxDebtorName))
	}
	if !accountPattern.MatchString(s.DebtorAccount) {
		f.Add("--debtor-account", "must be 1 to 34 letters, digits or dashes")
	}
	if s.DebtorBSB != "" && !bsbPattern.MatchString(s.DebtorBSB) {
		f.Add("--debtor-bsb", "must be a BSB such as 062-000")
	}
	if s.DebtorBIC != "" && !bicPattern.MatchString(s.DebtorBIC) {
		f.Add("--debtor-bic", "must be a SWIFT/BIC code of 8 or 11 characters")
	}
	if (s.DebtorBankCode == "") != (s.DebtorBranchCode == "") {
		f.Add("--debtor-bank-code", "and --debtor-branch-code go together")
	}
	if s.DebtorBankCode != "" && !bankCodePattern.MatchString(s.DebtorBankCode) {
		f.Add("--debtor-bank-code", "must be a 4-digit Zengin bank code")
	}
	if s.DebtorBranchCode != "" && !branchCodePattern.MatchString(s.DebtorBranchCode) {
		f.Add("--debtor-branch-code", "must be a 3-digit Zengin branch code")
	}
	agents := 0
	for _, v := range []string{s.DebtorBSB, s.DebtorBIC, s.DebtorBankCode} {
		if v != "" {
			agents++
		}
	}
	if agents > 1 {
		f.Add("--debtor-bsb", "give one of --debtor-bsb, --debtor-bic and --debtor-bank-code with --debtor-branch-code")
	}
	switch s.DebtorAccountType {
	case "", payfile.Ordinary, payfile.Current:
	default:
		f.Add("--debtor-account-type", "must be ordinary or current")
	}
	switch s.Format {
	case payfile.ABA:
		if s.DebtorBSB == "" {
			f.Add("--debtor-bsb", "is required on an aba rail")
		}
		if !apcaPattern.MatchString(s.OriginatorID) {
			f.Add("--originator-id", "must be the APCA user id of 6 digits on an aba rail")
		}
		if !abbrevPattern.MatchString(s.BankAbbrev) {
			f.Add("--bank-abbrev", "must be the bank's 3-letter abbreviation (such as CBA) on an aba rail")
		}
	case payfile.Zengin:
		if s.DebtorBankCode == "" {
			f.Add("--debtor-bank-code", "and --debtor-branch-code are required on a zengin rail")
		}
		if !zenginIDPattern.MatchString(s.OriginatorID) {
			f.Add("--originator-id", "must be the 10-digit 依頼人コード on a zengin rail")
		}
	case payfile.Pain001:
		if agents == 0 {
			f.Add("--debtor-bsb", "a pain001 rail needs the debtor's bank: --debtor-bsb, --debtor-bic or --debtor-bank-code with --debtor-branch-code")
		}
		if len(s.OriginatorID) > 35 {
			f.Add("--originator-id", "must be at most 35 characters")
		}
	}
}

// channelProblem checks an outbox or inbox (inbox.URLProblem: the rule
// the feeds' inboxes keep too).
func channelProblem(v string) (isSFTP bool, problem string) { return inboxes.URLProblem(v) }

// Rail is a rail as stored: its settings and where its cut-offs stand.
type Rail struct {
	Settings
	// CutThrough is the instant of its last cut-off: the next one follows it.
	CutThrough time.Time
	// Unset is set when the rail was unset: it takes no transfer, and what
	// it holds still goes out.
	Unset                bool
	CreatedAt, UpdatedAt time.Time
	loc                  *time.Location
}

// Location is the rail's time zone.
func (r Rail) Location() *time.Location { return r.loc }

// NextCutoff is the rail's next cut-off.
func (r Rail) NextCutoff() time.Time { return NextCutoff(r.Cutoffs, r.loc, r.CutThrough) }

// railColumns are the columns scanRail reads.
const railColumns = `name, format, currency, methods, debtor_name, debtor_account, debtor_bsb, debtor_bic, debtor_bank_code,
	debtor_branch_code, debtor_account_type, originator_id, bank_abbrev, cutoffs, timezone, outbox, inbox, sftp_key,
	sftp_known_hosts, cut_through, unset_at, created_at, updated_at`

func scanRail(sc store.Row) (Rail, error) {
	var (
		r                                Rail
		methods, cutoffs                 string
		cutThrough, createdAt, updatedAt int64
		unsetAt                          sql.NullInt64
	)
	err := sc.Scan(&r.Name, &r.Format, &r.Currency, &methods, &r.DebtorName, &r.DebtorAccount, &r.DebtorBSB, &r.DebtorBIC,
		&r.DebtorBankCode, &r.DebtorBranchCode, &r.DebtorAccountType, &r.OriginatorID, &r.BankAbbrev, &cutoffs, &r.Timezone,
		&r.Outbox, &r.Inbox, &r.SFTPKey, &r.SFTPKnownHosts, &cutThrough, &unsetAt, &createdAt, &updatedAt)
	if err != nil {
		return Rail{}, err
	}
	r.Methods = strings.Split(methods, ",")
	if r.Cutoffs, err = ParseCutoffs(cutoffs); err != nil {
		return Rail{}, fmt.Errorf("rail %s: cut-offs: %w", r.Name, err)
	}
	if r.loc, err = time.LoadLocation(r.Timezone); err != nil {
		return Rail{}, fmt.Errorf("rail %s: %w", r.Name, err)
	}
	r.CutThrough, r.CreatedAt, r.UpdatedAt = clock.FromMillis(cutThrough), clock.FromMillis(createdAt), clock.FromMillis(updatedAt)
	r.Unset = unsetAt.Valid
	return r, nil
}

// readRails reads the rails, the unset ones too when all.
func readRails(ctx context.Context, q store.Querier, all bool) ([]Rail, error) {
	filter := ` WHERE unset_at IS NULL`
	if all {
		filter = ``
	}
	// global lookup: rails are operator records, no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT `+railColumns+` FROM rails`+filter+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read rails: %w", err)
	}
	defer rows.Close()
	var out []Rail
	for rows.Next() {
		r, err := scanRail(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// readRail reads one rail, unset or not; fault NOT_FOUND when there is none.
func readRail(ctx context.Context, q store.Querier, name string) (Rail, error) {
	// global lookup: rails are operator records, no merchant's.
	r, err := scanRail(q.QueryRowContext(ctx, `SELECT `+railColumns+` FROM rails WHERE name = $1`, name))
	if store.IsNoRows(err) {
		return Rail{}, fault.NotFoundf("no rail %s", name)
	}
	if err != nil {
		return Rail{}, fmt.Errorf("read rail %s: %w", name, err)
	}
	return r, nil
}

// Refusals of payd rail set against the other rails (CONTRACT §25), each
// an exit 1 with its message; errors.Is tells them apart. They are the
// operator's, never an API answer.
var (
	ErrRailClash   = errors.New("the currency and method have a rail")
	ErrInboxShared = errors.New("the inbox is another rail's")
	ErrRailInUse   = errors.New("transfers wait for the rail")
)

// refusal is one of those refusals, with its message.
type refusal struct {
	kind error
	msg  string
}

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == r.kind }

// lockRails and lockRailsKey name the lock that makes sets and unsets one
// at a time: the checks against the other rails read what they write.
const (
	lockRails    = "bankfile.rails"
	lockRailsKey = "set"
)

// Set creates the rail s names or replaces its settings, in tx (which the
// caller's audit entry shares); this process sees it once tx commits, the
// others within CacheTTL. It refuses, changing nothing, a
// (currency, method) another rail serves, an inbox another rail reads, and
// a change of format or currency while transfers wait for the rail (their
// bank references have the old format's width). A rail set again after
// unset serves again. A new rail's cut-offs, and those of one set again
// after unset, start now (its first is the first after now); a rail set
// again while it serves keeps where its cut-offs stand.
func (f *Files) Set(ctx context.Context, tx *store.Tx, s Settings) (Rail, error) {
	problems := fault.Fields{}
	s.check(problems)
	if s.DebtorBankCode != "" && f.Banks != nil && problems["--debtor-bank-code"] == "" && problems["--debtor-branch-code"] == "" {
		if _, err := f.Banks.Branch(s.DebtorBankCode, s.DebtorBranchCode); err != nil {
			problems.Add("--debtor-branch-code", fmt.Sprintf("bank %s has no branch %s in the Zengin directory", s.DebtorBankCode, s.DebtorBranchCode))
		}
	}
	if err := problems.Err(); err != nil {
		return Rail{}, err
	}
	if s.Format == payfile.Zengin && s.DebtorAccountType == "" {
		s.DebtorAccountType = payfile.Ordinary
	}
	var refused *fieldRefusal
	if err := f.probe(s); errors.As(err, &refused) {
		return Rail{}, fault.Field(refused.flag, refused.problem)
	}
	now := f.Clock.Now()
	tx.AfterCommit(f.Forget)
	if err := tx.LockKey(ctx, lockRails, lockRailsKey); err != nil {
		return Rail{}, err
	}
	if err := checkAgainstOthers(ctx, tx, s); err != nil {
		return Rail{}, err
	}
	old, err := readRail(ctx, tx, s.Name)
	exists := err == nil
	if err != nil && !fault.Is(err, fault.CodeNotFound) {
		return Rail{}, err
	}
	if exists && (old.Format != s.Format || old.Currency != s.Currency) {
		if n, err := WaitingFor(ctx, tx, s.Name); err != nil || n > 0 {
			if err != nil {
				return Rail{}, err
			}
			return Rail{}, refuse(ErrRailInUse, "rail %s is a %s rail in %s and %d transfers wait for its next cut-off: its format and currency stay until they are in a file (payd bankfile cut --rail %s)",
				s.Name, old.Format, old.Currency, n, s.Name)
		}
	}
	ms := now.UnixMilli()
	args := []any{s.Name, string(s.Format), s.Currency, strings.Join(s.Methods, ","), strings.TrimSpace(s.DebtorName), s.DebtorAccount,
		s.DebtorBSB, s.DebtorBIC, s.DebtorBankCode, s.DebtorBranchCode, string(s.DebtorAccountType), s.OriginatorID, s.BankAbbrev,
		formatCutoffs(s.Cutoffs), s.Timezone, s.Outbox, s.Inbox, s.SFTPKey, s.SFTPKnownHosts, ms}
	// global lookup: rails are operator records, no merchant's.
	if _, err := tx.ExecContext(ctx, `INSERT INTO rails (name, format, currency, methods, debtor_name, debtor_account, debtor_bsb,
		debtor_bic, debtor_bank_code, debtor_branch_code, debtor_account_type, originator_id, bank_abbrev, cutoffs, timezone, outbox,
		inbox, sftp_key, sftp_known_hosts, cut_through, unset_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, NULL, $20, $20)
		ON CONFLICT (name) DO UPDATE SET format = excluded.format, currency = excluded.currency, methods = excluded.methods,
		debtor_name = excluded.debtor_name, debtor_account = excluded.debtor_account, debtor_bsb = excluded.debtor_bsb,
		debtor_bic = excluded.debtor_bic, debtor_bank_code = excluded.debtor_bank_code, debtor_branch_code = excluded.debtor_branch_code,
		debtor_account_type = excluded.debtor_account_type, originator_id = excluded.originator_id, bank_abbrev = excluded.bank_abbrev,
		cutoffs = excluded.cutoffs, timezone = excluded.timezone, outbox = excluded.outbox, inbox = excluded.inbox,
		sftp_key = excluded.sftp_key, sftp_known_hosts = excluded.sftp_known_hosts,
		cut_through = CASE WHEN rails.unset_at IS NULL THEN rails.cut_through ELSE excluded.cut_through END,
		unset_at = NULL, updated_at = excluded.updated_at`,
		args...); err != nil {
		return Rail{}, fmt.Errorf("set rail %s: %w", s.Name, err)
	}
	// global lookup: rail_methods are operator records, no merchant's.
	if _, err := tx.ExecContext(ctx, `DELETE FROM rail_methods WHERE rail = $1`, s.Name); err != nil {
		return Rail{}, fmt.Errorf("set rail %s: %w", s.Name, err)
	}
	for _, m := range s.Methods {
		// global lookup: rail_methods are operator records, no merchant's.
		if err := tx.Send(ctx, `INSERT INTO rail_methods (currency, method, rail) VALUES ($1, $2, $3)`, s.Currency, m, s.Name); err != nil {
			return Rail{}, fmt.Errorf("set rail %s: %w", s.Name, err)
		}
	}
	return readRail(ctx, tx, s.Name)
}

// checkAgainstOthers refuses a (currency, method) another rail serves and
// an inbox another rail reads (CONTRACT §25).
func checkAgainstOthers(ctx context.Context, tx *store.Tx, s Settings) error {
	others, err := readRails(ctx, tx, false)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.Name == s.Name {
			continue
		}
		if o.Currency == s.Currency {
			for _, m := range s.Methods {
				if slices.Contains(o.Methods, m) {
					return refuse(ErrRailClash, "rail %s serves %s %s already: each currency and method has at most one rail (unset it, or leave %s out)",
						o.Name, s.Currency, m, m)
				}
			}
		}
		if o.Inbox == s.Inbox {
			return refuse(ErrInboxShared, "rail %s reads the inbox %s already: no two rails share an inbox", o.Name, s.Inbox)
		}
	}
	feed, err := inboxes.FeedOf(ctx, tx, s.Inbox)
	if err != nil || feed == "" {
		return err
	}
	return refuse(ErrInboxShared, "feed %s reads the inbox %s already: no rail shares an inbox with a feed", feed, s.Inbox)
}

// Unset stops the rail serving anything: from the moment every process
// sees it (CacheTTL), its methods go to the deployment's other rail again.
// What waits for it still goes into its next cut-off's file, and its files
// are still delivered; it is kept for them (its files name it) and comes
// back with its name by Set.
func (f *Files) Unset(ctx context.Context, tx *store.Tx, name string) (Rail, error) {
	now := f.Clock.Now()
	tx.AfterCommit(f.Forget)
	if err := tx.LockKey(ctx, lockRails, lockRailsKey); err != nil {
		return Rail{}, err
	}
	r, err := readRail(ctx, tx, name)
	if err != nil {
		return Rail{}, err
	}
	if r.Unset {
		return Rail{}, fault.NotFoundf("rail %s is unset already", name)
	}
	// global lookup: rail_methods are operator records, no merchant's.
	if err := tx.Send(ctx, `DELETE FROM rail_methods WHERE rail = $1`, name); err != nil {
		return Rail{}, fmt.Errorf("unset rail %s: %w", name, err)
	}
	// global lookup: rails are operator records, no merchant's.
	if _, err := tx.ExecContext(ctx, `UPDATE rails SET unset_at = $1, updated_at = $1 WHERE name = $2`, now.UnixMilli(), name); err != nil {
		return Rail{}, fmt.Errorf("unset rail %s: %w", name, err)
	}
	r.Unset = true
	return r, nil
}

// Listed is a rail as payd rail list --json shows it (CONTRACT §25).
type Listed struct {
	Name          string         `json:"name"`
	Format        payfile.Format `json:"format"`
	Currency      string         `json:"currency"`
	Methods       []string       `json:"methods"`
	DebtorName    string         `json:"debtor_name"`
	DebtorAccount string         `json:"debtor_account"`
	OriginatorID  string         `json:"originator_id"`
	Cutoffs       []string       `json:"cutoffs"`
	Timezone      string         `json:"timezone"`
	Outbox        string         `json:"outbox"`
	Inbox         string         `json:"inbox"`
	// Waiting counts the transfers waiting for the next cut-off.
	Waiting      int        `json:"waiting"`
	NextCutoffAt clock.Time `json:"next_cutoff_at"`
}

// List is the rails that serve (not those unset), by name, each with what
// waits for it and when its next cut-off is.
func List(ctx context.Context, q store.Querier) ([]Listed, error) {
	rails, err := readRails(ctx, q, false)
	if err != nil {
		return nil, err
	}
	out := []Listed{}
	for _, r := range rails {
		n, err := WaitingFor(ctx, q, r.Name)
		if err != nil {
			return nil, err
		}
		cutoffs := make([]string, len(r.Cutoffs))
		for i, c := range r.Cutoffs {
			cutoffs[i] = c.String()
		}
		out = append(out, Listed{Name: r.Name, Format: r.Format, Currency: r.Currency, Methods: r.Methods, DebtorName: r.DebtorName,
			DebtorAccount: r.DebtorAccount, OriginatorID: r.OriginatorID, Cutoffs: cutoffs, Timezone: r.Timezone, Outbox: r.Outbox,
			Inbox: r.Inbox, Waiting: n, NextCutoffAt: clock.Time{T: r.NextCutoff()}})
	}
	return out, nil
}

// WaitingFor counts the transfers waiting for rail's next cut-off.
func WaitingFor(ctx context.Context, q store.Querier, railName string) (int, error) {
	var n int
	// spans merchants: a rail's waiting transfers are every merchant's.
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM rail_submissions WHERE rail = $1 AND waiting`, railName).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the transfers waiting for rail %s: %w", railName, err)
	}
	return n, nil
}
