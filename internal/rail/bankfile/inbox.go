package bankfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"payd/internal/bankchannel"
	inboxes "payd/internal/inbox"
	"payd/internal/iso20022"
	"payd/internal/money"
	"payd/internal/rail"
	"payd/internal/store"
)

// The inbox (CONTRACT §17, §25): what the bank leaves in a rail's inbox,
// read every InboxPoll by Run, in the loop of the cut-offs and deliveries.
// Each file is known by its SHA-256 (inbox_files) and applied once: the
// same bytes again, under any name, are filed away as applied. A file is
// decided whole before anything of it is applied (it parses as a
// pain.002.001.11 and holds its own counts, ReadPain002; it reports on a
// bank file of the inbox's rail, names that file's payment information and
// states its counts and sum); refused, it is moved to rejected/ with a log
// line and counted (payd_bankfile_inbox_rejected_total), nothing of it
// applied. Taken, each of the file's transfers that a status decides is
// applied by the one outcome function (Outcome), each once by its bank
// reference in a short transaction of its own that also marks it applied
// (inbox_entries), so that SQLite's one writer is never held for the whole
// file; a mark for the file ends it (applied), and it is moved to
// processed/. A restart resumes a file where it stopped: its marked
// entries are not applied again. A reference that names no transfer of
// the file changes nothing and is logged and counted
// (payd_bankfile_inbox_unknown_references_total).
//
// One process at a time reads an inbox: on PostgreSQL the poll runs inside
// a transaction of its own holding the inbox's lock (as a delivery holds
// its rail's), which a killed process's connection lets go; SQLite has one
// writer, which a poll must not hold, and there one process serves, as
// for deliveries. Within a process, one goroutine at a time polls
// (Files.polling).

// lockInbox is the namespace of an inbox's lock: one process at a time
// reads an inbox.
const lockInbox = "bankfile.inbox"

// maxInboxFiles bounds the files one poll takes from an inbox: the rest
// wait for the next.
const maxInboxFiles = inboxes.MaxFiles

// InboxStatus is where an inbox file stands (package inbox's, shared with
// the bank feeds).
type InboxStatus = inboxes.Status

const (
	InboxApplying = inboxes.Applying
	InboxApplied  = inboxes.Applied
	InboxRejected = inboxes.Rejected
)

// formatPain002 is what inbox_files.format calls a status report.
const formatPain002 = "pain.002.001.11"

// inbox is one inbox and the rails that read it: one that serves, and any
// unset since whose files may still be answered there.
type inbox struct {
	url   string
	rails []Rail
}

// PollInboxes reads every rail's inbox once and applies what it finds
// there; another process's poll of an inbox is left to it. It returns the
// errors met (a file whose application failed is tried again at the next
// poll, where it stopped).
func (f *Files) PollInboxes(ctx context.Context) error {
	f.polling.Lock()
	defer f.polling.Unlock()
	rails, err := readRails(ctx, f.DB.Read(), true)
	if err != nil {
		return err
	}
	var errs []error
	for _, in := range inboxesOf(rails) {
		if err := inboxes.Exclusive(ctx, f.DB, lockInbox, in.url, func(ctx context.Context) error { return f.readInbox(ctx, in) }); err != nil {
			errs = append(errs, fmt.Errorf("inbox %s: %w", in.url, err))
		}
	}
	return errors.Join(errs...)
}

// inboxesOf groups rails by inbox, a serving rail first in each.
func inboxesOf(rails []Rail) []inbox {
	var out []inbox
	for _, r := range rails {
		i := slices.IndexFunc(out, func(in inbox) bool { return in.url == r.Inbox })
		switch {
		case i < 0:
			out = append(out, inbox{url: r.Inbox, rails: []Rail{r}})
		case !r.Unset:
			out[i].rails = slices.Insert(out[i].rails, 0, r)
		default:
			out[i].rails = append(out[i].rails, r)
		}
	}
	return out
}

// readInbox opens in and takes each file waiting there.
func (f *Files) readInbox(ctx context.Context, in inbox) error {
	serving := in.rails[0]
	box, err := f.OpenInbox(ctx, in.url, Keys{SFTPKey: serving.SFTPKey, SFTPKnownHosts: serving.SFTPKnownHosts})
	if err != nil {
		return err
	}
	defer box.Close()
	names, err := box.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i, name := range names {
		if i == maxInboxFiles || ctx.Err() != nil {
			break
		}
		if err := f.takeFile(ctx, box, in, name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// takeFile reads the inbox file name and applies it, files it away as
// applied again (the same bytes seen before), or rejects it.
func (f *Files) takeFile(ctx context.Context, box Inbox, in inbox, name string) error {
	content, err := box.Get(ctx, name)
	if errors.Is(err, bankchannel.ErrTooLarge) {
		f.Log.Warn("inbox file rejected whole: too large to be a status report", "inbox", in.url, "file", name, "err", err)
		return box.Move(ctx, name, bankchannel.Rejected)
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(content)
	file := inboxFile{sha256: hex.EncodeToString(sum[:]), name: name, rail: in.rails[0].Name}
	status, err := inboxes.StatusOf(ctx, f.DB.Read(), file.sha256)
	if err != nil {
		return err
	}
	switch status {
	case InboxApplied:
		f.Log.Info("inbox file applied before: filed away again, nothing applied twice", "inbox", in.url, "file", name, "sha256", file.sha256)
		return box.Move(ctx, name, bankchannel.Processed)
	case InboxRejected:
		f.Log.Warn("inbox file rejected before: filed away again", "inbox", in.url, "file", name, "sha256", file.sha256)
		return box.Move(ctx, name, bankchannel.Rejected)
	}
	p, refusal, err := f.decide(ctx, in, content)
	switch {
	case err != nil:
		return err
	case refusal != "" && status == InboxApplying:
		// Taken once, some of it may be applied: it is not rejected now.
		return fmt.Errorf("applying since an earlier poll, and now refused (%s): left for the operator", refusal)
	case refusal != "":
		return f.reject(ctx, box, file, refusal)
	}
	if err := f.applyFile(ctx, file, p); err != nil {
		return err
	}
	return box.Move(ctx, name, bankchannel.Processed)
}

// inboxFile is a file of an inbox as inbox_files names it.
type inboxFile struct {
	sha256, name, rail string
}

// reject records the inbox file as rejected with its reason, logs it and
// files it away in rejected/.
func (f *Files) reject(ctx context.Context, box Inbox, file inboxFile, reason string) error {
	now := f.Clock.Now().UnixMilli()
	err := f.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files are operator records, no merchant's.
		return tx.Send(ctx, `INSERT INTO inbox_files (sha256, source_kind, source, name, status, reason, received_at, finished_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (sha256) DO NOTHING`,
			file.sha256, string(SourceRail), file.rail, file.name, string(InboxRejected), reason, now)
	})
	if err != nil {
		return err
	}
	f.Log.Warn("inbox file rejected whole: nothing of it applied", "rail", file.rail, "file", file.name, "sha256", file.sha256, "reason", reason)
	return box.Move(ctx, file.name, bankchannel.Rejected)
}

// plan is a status report decided: what it says of each transfer of its
// file that a status decides, and the references it names of no transfer
// of the file.
type plan struct {
	msgID, file, rail string
	lines             []line
	unknown           []string
}

// line is what a status report says of one transfer.
type line struct {
	sub     submission
	verdict rail.Verdict
	reason  string
}

// reportedFile is the bank file a status report reports on.
type reportedFile struct {
	name, rail, reference, currency string
	count                           int
	total                           int64
}

// decide reads content as a status report on a file of in's rails and
// says what it does to each of the file's transfers, or why it is refused
// whole (refusal).
func (f *Files) decide(ctx context.Context, in inbox, content []byte) (p plan, refusal string, err error) {
	report, err := iso20022.ReadPain002(content)
	if err != nil {
		return plan{}, fmt.Sprintf("not a valid %s status report: %v", formatPain002, err), nil
	}
	file, found, err := reportedOn(ctx, f.DB.Read(), in, report.OriginalMsgID)
	if err != nil || !found {
		return plan{}, fmt.Sprintf("it reports on %s, which is no bank file of rail %s", report.OriginalMsgID, railNames(in.rails)), err
	}
	if refusal, err := checkCounts(report, file); refusal != "" || err != nil {
		return plan{}, refusal, err
	}
	subs, err := fileSubmissions(ctx, f.DB.Read(), file.name)
	if err != nil {
		return plan{}, "", err
	}
	p = plan{msgID: report.MsgID, file: file.name, rail: file.rail}
	listed := map[string]iso20022.TransactionStatus{}
	for _, t := range report.Transactions {
		listed[t.EndToEndID] = t
	}
	inFile := map[string]bool{}
	for _, sub := range subs {
		inFile[sub.bankReference] = true
		t, isListed := listed[sub.bankReference]
		if v, reason, ok := verdictOf(report, t, isListed); ok {
			p.lines = append(p.lines, line{sub: sub, verdict: v, reason: reason})
		}
	}
	for _, t := range report.Transactions {
		if !inFile[t.EndToEndID] {
			p.unknown = append(p.unknown, t.EndToEndID)
		}
	}
	return p, "", nil
}

// verdictOf is what the report says of a transfer (t, when it lists it):
// its transaction status when that decides it, else its payment
// information's, else the group's (CONTRACT §17, §25: a group or payment
// RJCT fails every transfer of the file or payment; ACSC and ACCC are
// done at any level). ok is false when nothing decides it (ACSP, PDNG, …).
func verdictOf(r iso20022.StatusReport, t iso20022.TransactionStatus, listed bool) (rail.Verdict, string, bool) {
	if listed {
		if v, ok := verdictOfStatus(t.Status); ok {
			return v, t.Reason.FailureReason(), true
		}
	}
	for _, p := range r.Payments { // the file's one payment information (checkCounts)
		if v, ok := verdictOfStatus(p.Status); ok {
			return v, p.Reason.FailureReason(), true
		}
	}
	if v, ok := verdictOfStatus(r.GroupStatus); ok {
		return v, r.GroupReason.FailureReason(), true
	}
	return "", "", false
}

// verdictOfStatus is a pain.002 status's verdict (Status.Outcome).
func verdictOfStatus(s iso20022.Status) (rail.Verdict, bool) {
	switch s.Outcome() {
	case iso20022.OutcomeDone:
		return rail.Done, true
	case iso20022.OutcomeFailed:
		return rail.Failed, true
	}
	return "", false
}

// reportedOn finds the bank file of in's rails that a report's OrgnlMsgId
// names: a pain.001's MsgId is its file's name without the extension.
func reportedOn(ctx context.Context, q store.Querier, in inbox, msgID string) (reportedFile, bool, error) {
	for _, r := range in.rails {
		var f reportedFile
		// global lookup: bank_files are operator records, no merchant's.
		err := q.QueryRowContext(ctx, `SELECT name, rail, file_reference, currency, count, total FROM bank_files WHERE name = $1 AND rail = $2`,
			msgID+"."+r.Format.Extension(), r.Name).Scan(&f.name, &f.rail, &f.reference, &f.currency, &f.count, &f.total)
		if err == nil {
			return f, true, nil
		}
		if !store.IsNoRows(err) {
			return reportedFile{}, false, fmt.Errorf("find the bank file %s: %w", msgID, err)
		}
	}
	return reportedFile{}, false, nil
}

func railNames(rails []Rail) string {
	names := make([]string, len(rails))
	for i, r := range rails {
		names[i] = r.Name
	}
	return strings.Join(names, " or ")
}

// checkCounts refuses a report that names another payment information
// than its file's (its file reference), or states counts or sums the file
// does not have: it is not the bank's answer to this file.
func checkCounts(r iso20022.StatusReport, file reportedFile) (string, error) {
	c, err := money.Lookup(file.currency)
	if err != nil {
		return "", err
	}
	total := new(big.Rat).SetFrac(big.NewInt(file.total), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Digits)), nil))
	check := func(where string, count int64, ctrlSum string) string {
		if count != 0 && count != int64(file.count) {
			return fmt.Sprintf("%s counts %d transactions; %s holds %d", where, count, file.name, file.count)
		}
		if ctrlSum == "" {
			return ""
		}
		if sum, ok := new(big.Rat).SetString(ctrlSum); !ok || sum.Cmp(total) != 0 {
			return fmt.Sprintf("%s sums to %s; %s to %s %s", where, ctrlSum, file.name, money.Format(file.total, c), file.currency)
		}
		return ""
	}
	if refusal := check("its group", r.OriginalCount, r.OriginalCtrlSum); refusal != "" {
		return refusal, nil
	}
	for _, p := range r.Payments {
		if p.InfoID != file.reference {
			return fmt.Sprintf("it names payment information %s; %s's is %s", p.InfoID, file.name, file.reference), nil
		}
		if refusal := check("its payment information", p.OriginalCount, p.OriginalCtrlSum); refusal != "" {
			return refusal, nil
		}
	}
	return "", nil
}

// applyFile applies a decided report: the file recorded as applying (once),
// then each line not yet marked in its own transaction with its mark, then
// the file's done mark with its counts.
func (f *Files) applyFile(ctx context.Context, file inboxFile, p plan) error {
	now := f.Clock.Now().UnixMilli()
	err := f.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files are operator records, no merchant's.
		return tx.Send(ctx, `INSERT INTO inbox_files (sha256, source_kind, source, name, format, document, status, entries, unknown, received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (sha256) DO NOTHING`,
			file.sha256, string(SourceRail), p.rail, file.name, formatPain002, p.msgID, string(InboxApplying), len(p.lines), len(p.unknown), now)
	})
	if err != nil {
		return fmt.Errorf("record inbox file %s: %w", file.sha256, err)
	}
	for _, ref := range p.unknown {
		f.Log.Warn("a status report names a bank reference of no transfer of its file: nothing changed", "rail", p.rail, "file", file.name,
			"report", p.msgID, "bank_file", p.file, "bank_reference", ref)
	}
	marked, err := markedEntries(ctx, f.DB.Read(), file.sha256)
	if err != nil {
		return err
	}
	first := true
	for _, l := range p.lines {
		if marked[l.sub.bankReference] {
			continue
		}
		if err := f.applyLine(ctx, file, p, l); err != nil {
			return err
		}
		if first {
			f.kill(StepApplying, "file", file.name, "sha256", file.sha256)
			first = false
		}
	}
	err = f.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files and inbox_entries are operator records, no merchant's.
		return tx.Send(ctx, `UPDATE inbox_files SET status = $1, finished_at = $2,
			applied = (SELECT count(*) FROM inbox_entries WHERE sha256 = $3 AND effect = $4),
			exceptions = (SELECT count(*) FROM inbox_entries WHERE sha256 = $3 AND effect = $5)
			WHERE sha256 = $3 AND status = $6`,
			string(InboxApplied), f.Clock.Now().UnixMilli(), file.sha256, string(rail.Changed), string(rail.Contrary), string(InboxApplying))
	})
	if err != nil {
		return fmt.Errorf("mark inbox file %s applied: %w", file.sha256, err)
	}
	f.Log.Info("inbox file applied", "rail", p.rail, "file", file.name, "sha256", file.sha256, "report", p.msgID, "bank_file", p.file,
		"entries", len(p.lines), "unknown", len(p.unknown))
	return nil
}

// applyLine applies one line of a report and marks it, in one short
// transaction: a line marked already (by a poll before a crash) is not
// applied again.
func (f *Files) applyLine(ctx context.Context, file inboxFile, p plan, l line) error {
	return f.DB.Exec(ctx, func(tx *store.Tx) error {
		var claimed string
		// global lookup: inbox_entries are operator records, no merchant's.
		err := tx.QueryRowContext(ctx, `INSERT INTO inbox_entries (sha256, entry_key, effect, applied_at) VALUES ($1, $2, '', $3)
			ON CONFLICT (sha256, entry_key) DO NOTHING RETURNING entry_key`, file.sha256, l.sub.bankReference, f.Clock.Now().UnixMilli()).Scan(&claimed)
		if store.IsNoRows(err) {
			return nil // applied before
		}
		if err != nil {
			return err
		}
		res, err := f.outcome(ctx, tx, l.sub, Evidence{BankReference: l.sub.bankReference, Verdict: l.verdict, Reason: l.reason,
			Source: Source{Kind: SourceRail, Name: p.rail, Document: "pain.002 " + p.msgID + " (inbox file " + file.name + ")", InboxFile: file.sha256}})
		if err != nil {
			return err
		}
		// global lookup: inbox_entries are operator records, no merchant's.
		return tx.Send(ctx, `UPDATE inbox_entries SET effect = $1 WHERE sha256 = $2 AND entry_key = $3`, string(res.Effect), file.sha256, l.sub.bankReference)
	})
}

// markedEntries are the entries of the inbox file sha256 applied so far.
func markedEntries(ctx context.Context, q store.Querier, sha256 string) (map[string]bool, error) {
	// global lookup: inbox_entries are operator records, no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT entry_key FROM inbox_entries WHERE sha256 = $1`, sha256)
	if err != nil {
		return nil, fmt.Errorf("read the entries of inbox file %s: %w", sha256, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		out[key] = true
	}
	return out, rows.Err()
}

// InboxRejected counts the rails' inbox files rejected whole
// (payd_bankfile_inbox_rejected_total).
func (f *Files) InboxRejected(ctx context.Context) (int64, error) {
	var n int64
	// global lookup: inbox_files are operator records, no merchant's.
	err := f.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM inbox_files WHERE source_kind = $1 AND status = $2`,
		string(SourceRail), string(InboxRejected)).Scan(&n)
	return n, err
}

// InboxUnknownReferences counts the bank references the rails' status
// reports named of no transfer of their files
// (payd_bankfile_inbox_unknown_references_total).
func (f *Files) InboxUnknownReferences(ctx context.Context) (int64, error) {
	var n int64
	// global lookup: inbox_files are operator records, no merchant's.
	err := f.DB.Read().QueryRowContext(ctx, `SELECT COALESCE(SUM(unknown), 0) FROM inbox_files WHERE source_kind = $1`, string(SourceRail)).Scan(&n)
	return n, err
}
