package feed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	"payd/internal/bankchannel"
	"payd/internal/inbox"
	"payd/internal/iso20022"
	"payd/internal/rail/bankfile"
	"payd/internal/statement"
	"payd/internal/statement/bai2"
	"payd/internal/statement/mt940"
	"payd/internal/store"
)

// ImportStatus is what became of a file (payd feed import --json).
type ImportStatus string

const (
	// Applied: its entries are applied now (or were, by a poll the import
	// resumed).
	Applied ImportStatus = "applied"
	// Duplicate: the same bytes were applied before: nothing applied twice.
	Duplicate ImportStatus = "duplicate"
	// Rejected: refused whole, nothing of it applied.
	Rejected ImportStatus = "rejected"
)

// Imported is what an import did, as payd feed import --json shows it
// (CONTRACT §25): the file's SHA-256, its status, its booked entries, how
// many of them moved something, how many became exceptions, and a
// rejection's reason.
type Imported struct {
	SHA256     string       `json:"sha256"`
	Status     ImportStatus `json:"status"`
	Entries    int          `json:"entries"`
	Applied    int          `json:"applied"`
	Exceptions int          `json:"exceptions"`
	Reason     string       `json:"reason"`
}

// file is a feed's file being taken.
type file struct {
	feed    Feed
	name    string
	sha256  string
	content []byte
	format  statement.Format
	header  statement.Header
	// booked are the file's booked entries, in their order, as decide read
	// them: the file is parsed once.
	booked []statement.Entry
}

// Import applies the file name, whose bytes are content, to feed f: once,
// by its SHA-256 (the same bytes again are Duplicate, nothing applied
// twice; a file stopped by a crash is resumed), or rejected whole, decided
// before anything is applied. The returned error is a failure to apply
// (the database), after which the file is tried again where it stopped;
// a refusal of the file is an answer (Rejected, Reason).
func (s *Service) Import(ctx context.Context, f Feed, name string, content []byte) (Imported, error) {
	sum := sha256.Sum256(content)
	fl := file{feed: f, name: name, sha256: hex.EncodeToString(sum[:]), content: content}
	status, err := inbox.StatusOf(ctx, s.DB.Read(), fl.sha256)
	if err != nil {
		return Imported{}, err
	}
	switch status {
	case inbox.Applied:
		got, err := s.imported(ctx, fl.sha256)
		got.Status = Duplicate
		return got, err
	case inbox.Rejected:
		got, err := s.imported(ctx, fl.sha256)
		got.Status = Rejected
		return got, err
	}
	refusal := s.decide(&fl)
	switch {
	case refusal != "" && status == inbox.Applying:
		// Taken once, some of it may be applied: it is not rejected now.
		return Imported{}, fmt.Errorf("file %s (%s) is applying since an earlier read and is now refused (%s): left for the operator", name, fl.sha256, refusal)
	case refusal != "":
		return s.reject(ctx, fl, refusal)
	}
	if err := s.apply(ctx, fl); err != nil {
		return Imported{}, err
	}
	got, err := s.imported(ctx, fl.sha256)
	got.Status = Applied
	return got, err
}

// reader is a format's Read.
type reader func(r io.Reader, each func(statement.Entry) error) (statement.Header, error)

// readerOf is the reader of a bank feed's format.
func readerOf(f statement.Format) (reader, bool) {
	switch f {
	case statement.Camt053, statement.Camt054:
		return iso20022.ReadCamt, true
	case statement.BAI2:
		return bai2.Read, true
	case statement.MT940:
		return mt940.Read, true
	}
	return nil, false
}

// decide reads the whole file once without applying anything (its
// format, schema, control totals), and says why it is refused whole, ""
// when it is taken (CONTRACT §25: parse, schema, account, currency and
// control totals are checked first).
func (s *Service) decide(fl *file) string {
	if int64(len(fl.content)) > s.MaxFileBytes {
		return fmt.Sprintf("the file has %d bytes, more than the %d a feed file may have", len(fl.content), s.MaxFileBytes)
	}
	format, err := statement.Detect(fl.content)
	if err != nil {
		return err.Error()
	}
	read, ok := readerOf(format)
	if !ok {
		return fmt.Sprintf("a %s file is a reconciliation upload, not a bank feed's (camt.053, camt.054, BAI2, MT940)", format)
	}
	var booked []statement.Entry
	h, err := read(statement.LimitReader(bytes.NewReader(fl.content), s.MaxFileBytes), func(e statement.Entry) error {
		if e.Status == statement.Booked {
			booked = append(booked, e)
		}
		return statement.CheckEntryText(e)
	})
	if err != nil {
		return err.Error()
	}
	if h.Account.Digits() != fl.feed.Digits {
		return fmt.Sprintf("it is a statement of account %s; feed %s is account %s", h.Account.Number, fl.feed.Name, fl.feed.Account)
	}
	if h.Account.Currency != fl.feed.Currency {
		return fmt.Sprintf("it is in %s; feed %s is in %s", h.Account.Currency, fl.feed.Name, fl.feed.Currency)
	}
	fl.format, fl.header, fl.booked = format, h, booked
	return ""
}

// reject records the file as rejected with its reason and logs it.
func (s *Service) reject(ctx context.Context, fl file, reason string) (Imported, error) {
	now := s.Clock.Now().UnixMilli()
	err := s.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files are operator records, no merchant's.
		return tx.Send(ctx, `INSERT INTO inbox_files (sha256, source_kind, source, name, status, reason, received_at, finished_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (sha256) DO NOTHING`,
			fl.sha256, string(bankfile.SourceFeed), fl.feed.Name, fl.name, string(inbox.Rejected), reason, now)
	})
	if err != nil {
		return Imported{}, fmt.Errorf("record the rejection of %s: %w", fl.name, err)
	}
	s.Log.Warn("feed file rejected whole: nothing of it applied", "feed", fl.feed.Name, "file", fl.name, "sha256", fl.sha256, "reason", reason)
	return Imported{SHA256: fl.sha256, Status: Rejected, Reason: reason}, nil
}

// imported reads what inbox_files says of the file sha256.
func (s *Service) imported(ctx context.Context, sha string) (Imported, error) {
	got := Imported{SHA256: sha}
	// global lookup: inbox_files are operator records, no merchant's.
	err := s.DB.Read().QueryRowContext(ctx, `SELECT entries, applied, exceptions, reason FROM inbox_files WHERE sha256 = $1`, sha).
		Scan(&got.Entries, &got.Applied, &got.Exceptions, &got.Reason)
	if err != nil {
		return Imported{}, fmt.Errorf("read inbox file %s: %w", sha, err)
	}
	return got, nil
}

// apply applies a decided file: the file recorded as applying (once), then
// each booked entry not yet marked, in chunks, each entry with its mark in
// its chunk's transaction (applyEntries), then the file's done mark with
// its counts.
func (s *Service) apply(ctx context.Context, fl file) error {
	now := s.Clock.Now().UnixMilli()
	err := s.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files are operator records, no merchant's.
		return tx.Send(ctx, `INSERT INTO inbox_files (sha256, source_kind, source, name, format, document, status, entries, received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (sha256) DO NOTHING`,
			fl.sha256, string(bankfile.SourceFeed), fl.feed.Name, fl.name, string(fl.format), fl.header.MessageID, string(inbox.Applying), fl.header.Booked, now)
	})
	if err != nil {
		return fmt.Errorf("record inbox file %s: %w", fl.sha256, err)
	}
	if err := s.applyEntries(ctx, fl); err != nil {
		return fmt.Errorf("apply %s: %w", fl.name, err)
	}
	err = s.DB.Exec(ctx, func(tx *store.Tx) error {
		// global lookup: inbox_files and inbox_entries are operator records, no merchant's.
		return tx.Send(ctx, `UPDATE inbox_files SET status = $1, finished_at = $2,
			applied = (SELECT count(*) FROM inbox_entries WHERE sha256 = $3 AND effect NOT IN ($4, $5)),
			exceptions = (SELECT count(*) FROM inbox_entries WHERE sha256 = $3 AND effect = $4)
			WHERE sha256 = $3 AND status = $6`,
			string(inbox.Applied), s.Clock.Now().UnixMilli(), fl.sha256, string(EffectException), string(EffectDuplicate), string(inbox.Applying))
	})
	if err != nil {
		return fmt.Errorf("mark inbox file %s applied: %w", fl.sha256, err)
	}
	s.Log.Info("feed file applied", "feed", fl.feed.Name, "file", fl.name, "sha256", fl.sha256, "format", fl.format.String(),
		"document", fl.header.MessageID, "entries", fl.header.Booked)
	return nil
}

// applyWorkers is how many transactions apply a file's entries at once,
// each up to chunkEntries of them: PostgreSQL shares one WAL flush among
// commits that meet, which entries applied one after another never do; on
// SQLite they take turns at the one writer.
const applyWorkers = 4

// chunkEntries bounds the entries one transaction applies: enough that a
// commit's cost is shared, few enough that the transaction stays short
// (on SQLite it holds the one writer).
const chunkEntries = 64

// applyEntries hands the file's booked entries to applyWorkers, which
// apply what has come in chunks (applyChunk); the first failure stops the
// file (the next read resumes it where its marks say). Each entry goes to
// the worker of its route (route.go): the records one worker's chunk
// locks are never another's to lock, so that two chunks never wait for
// each other in a cycle.
func (s *Service) applyEntries(ctx context.Context, fl file) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make([]chan statement.Entry, applyWorkers)
	var first sync.Once
	var workers sync.WaitGroup
	for i := range work {
		work[i] = make(chan statement.Entry, chunkEntries)
		workers.Go(func() {
			for chunk := range chunksOf(work[i]) {
				if ctx.Err() != nil {
					continue
				}
				done, err := s.applyChunk(ctx, fl, chunk)
				if err != nil {
					cancel(err)
					continue
				}
				if done {
					first.Do(func() { s.kill(StepApplying, "feed", fl.feed.Name, "file", fl.name, "sha256", fl.sha256) })
				}
			}
		})
	}
	booked := make(chan statement.Entry)
	var routers sync.WaitGroup
	for range applyWorkers {
		routers.Go(func() {
			for e := range booked {
				r, err := s.route(ctx, e)
				if err != nil {
					cancel(fmt.Errorf("entry %s: %w", mark(e), err))
					continue
				}
				select {
				case work[r.worker(e, applyWorkers)] <- e:
				case <-ctx.Done():
				}
			}
		})
	}
hand:
	for _, e := range fl.booked {
		select {
		case booked <- e:
		case <-ctx.Done():
			break hand
		}
	}
	close(booked)
	routers.Wait()
	for _, w := range work {
		close(w)
	}
	workers.Wait()
	return context.Cause(ctx)
}

// chunksOf yields what has come on in, up to chunkEntries at a time,
// until it is closed.
func chunksOf(in <-chan statement.Entry) func(yield func([]statement.Entry) bool) {
	return func(yield func([]statement.Entry) bool) {
		for e := range in {
			chunk := []statement.Entry{e}
		more:
			for len(chunk) < chunkEntries {
				select {
				case e, ok := <-in:
					if !ok {
						break more
					}
					chunk = append(chunk, e)
				default:
					break more
				}
			}
			if !yield(chunk) {
				return
			}
		}
	}
}

// applyChunk applies entries in one short transaction: the entries not
// marked in this file already (by a read before a crash) are claimed,
// those of them with a key not applied in their account before (a
// notification, then the statement) are matched, and what each did is
// written (claim.go). done reports that it marked one of them.
func (s *Service) applyChunk(ctx context.Context, fl file, entries []statement.Entry) (done bool, err error) {
	err = s.DB.Exec(ctx, func(tx *store.Tx) error {
		now := s.Clock.Now().UnixMilli()
		claimed, err := claimMarks(ctx, tx, fl.sha256, entries, now)
		if err != nil {
			return err
		}
		fresh, err := claimKeys(ctx, tx, fl, claimed, now)
		if err != nil {
			return err
		}
		results := make([]result, len(claimed))
		for i, e := range claimed {
			if results[i], err = s.applyOnce(ctx, tx, fl, e, fresh[e.Key]); err != nil {
				return fmt.Errorf("entry %s: %w", mark(e), err)
			}
		}
		done = len(claimed) > 0
		return writeEffects(ctx, tx, fl, claimed, fresh, results, now)
	})
	return done, err
}

// mark is what an entry is marked applied by within its file: its key, or
// for an entry without one its place in the file.
func mark(e statement.Entry) string {
	if e.Key == "" {
		return "#" + strconv.Itoa(e.Index)
	}
	return e.Key
}

// applyOnce applies a claimed entry: one whose key is not fresh was
// applied in its account before (Duplicate); an entry without a key
// cannot be known again, and is an exception (CONTRACT §25: unmatched).
func (s *Service) applyOnce(ctx context.Context, tx *store.Tx, fl file, e statement.Entry, fresh bool) (result, error) {
	switch {
	case e.Key == "":
		return s.except(ctx, tx, fl.feed, fl.sha256, e, bankfile.Unmatched, "the entry has no bank reference to be known by: it cannot be applied by itself")
	case !fresh:
		return result{effect: EffectDuplicate}, nil
	}
	return s.match(ctx, tx, fl.feed, fl.sha256, e)
}

// kill ends the process at step when Deps.KillAt names it.
func (s *Service) kill(step Step, attrs ...any) {
	if s.KillAt == step {
		s.Log.Warn("killing the process at a feed step (PAYD_TEST_BANKFILE_KILL)", append([]any{"step", string(step)}, attrs...)...)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

// poll reads every feed's inbox once: each file waiting there imported
// and filed away (processed/ when applied or a duplicate, rejected/ when
// refused). Another process's read of an inbox is left to it.
func (s *Service) poll(ctx context.Context) error {
	feeds, err := List(ctx, s.DB.Read())
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range feeds {
		if err := inbox.Exclusive(ctx, s.DB, lockInbox, f.Inbox, func(ctx context.Context) error { return s.readInbox(ctx, f) }); err != nil {
			errs = append(errs, fmt.Errorf("feed %s: %w", f.Name, err))
		}
	}
	return errors.Join(errs...)
}

// lockInbox is the namespace of a feed inbox's lock.
const lockInbox = "feed.inbox"

// readInbox takes each file waiting in f's inbox.
func (s *Service) readInbox(ctx context.Context, f Feed) error {
	box, err := s.OpenInbox(ctx, f, s.MaxFileBytes)
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
		if i == inbox.MaxFiles || ctx.Err() != nil {
			break
		}
		if err := s.takeFile(ctx, box, f, name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// takeFile imports the inbox file name and files it away.
func (s *Service) takeFile(ctx context.Context, box inbox.Box, f Feed, name string) error {
	content, err := box.Get(ctx, name)
	if errors.Is(err, bankchannel.ErrTooLarge) {
		s.Log.Warn("feed file rejected whole: too large", "feed", f.Name, "file", name, "err", err)
		return box.Move(ctx, name, bankchannel.Rejected)
	}
	if err != nil {
		return err
	}
	got, err := s.Import(ctx, f, name, content)
	if err != nil {
		return err
	}
	if got.Status == Duplicate {
		s.Log.Info("feed file applied before: filed away again, nothing applied twice", "feed", f.Name, "file", name, "sha256", got.SHA256)
	}
	if got.Status == Rejected {
		return box.Move(ctx, name, bankchannel.Rejected)
	}
	return box.Move(ctx, name, bankchannel.Processed)
}
