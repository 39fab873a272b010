package feed

import (
	"context"
	"fmt"
	"slices"

	"payd/internal/statement"
	"payd/internal/store"
)

// An entry is applied once (CONTRACT §18): marked in its file
// (inbox_entries, by the file's SHA-256 and the entry's mark) and, when it
// has a key, known in its account (feed_entries, by account and key). The
// entries of a chunk are claimed in one statement per table before any is
// matched, and what each did is written in one more per table after, so
// that an entry's own statements are its match's. A claim that meets
// another transaction's claim of the same row waits for it and then finds
// it taken; the claims go in the order of their keys, so that two
// transactions claiming overlapping chunks (two files of one account read
// at once) wait for each other in one order, never in a cycle.

// claimMarks claims the marks of entries in the file sha, and returns the
// entries claimed now, in their order: not an entry marked by an earlier
// read, nor a second entry of the same mark.
func claimMarks(ctx context.Context, tx *store.Tx, sha string, entries []statement.Entry, now int64) ([]statement.Entry, error) {
	byMark := map[string]statement.Entry{}
	for _, e := range entries {
		if _, ok := byMark[mark(e)]; !ok {
			byMark[mark(e)] = e
		}
	}
	marks := sortedKeys(byMark)
	args := make([]any, 0, 4*len(marks))
	for _, m := range marks {
		args = append(args, sha, m, now, "")
	}
	// global lookup: inbox_entries are operator records, no merchant's.
	taken, err := returnedKeys(ctx, tx, `INSERT INTO inbox_entries (sha256, entry_key, applied_at, effect) VALUES `+store.ValueRows(len(marks), 4)+`
		ON CONFLICT (sha256, entry_key) DO NOTHING RETURNING entry_key`, args)
	if err != nil {
		return nil, fmt.Errorf("mark entries of file %s: %w", sha, err)
	}
	var out []statement.Entry
	for _, e := range entries {
		if taken[mark(e)] && byMark[mark(e)].Index == e.Index {
			out = append(out, e)
		}
	}
	return out, nil
}

// claimKeys claims the keys of the keyed entries in the feed's account,
// and returns those claimed now: the others were applied in the account
// before.
func claimKeys(ctx context.Context, tx *store.Tx, fl file, entries []statement.Entry, now int64) (map[string]bool, error) {
	byKey := map[string]statement.Entry{}
	for _, e := range entries {
		if e.Key != "" {
			byKey[e.Key] = e
		}
	}
	if len(byKey) == 0 {
		return nil, nil
	}
	keys := sortedKeys(byKey)
	args := make([]any, 0, 9*len(keys))
	for _, k := range keys {
		e := byKey[k]
		args = append(args, fl.feed.accountKey(), k, fl.feed.Name, fl.sha256, string(e.Direction), e.AmountMinor, e.Currency, now, "")
	}
	// global lookup: feed_entries are operator records, no merchant's.
	fresh, err := returnedKeys(ctx, tx, `INSERT INTO feed_entries (account, entry_key, feed, sha256, direction, amount, currency, applied_at, effect)
		VALUES `+store.ValueRows(len(keys), 9)+` ON CONFLICT (account, entry_key) DO NOTHING RETURNING entry_key`, args)
	if err != nil {
		return nil, fmt.Errorf("record entries of account %s: %w", fl.feed.accountKey(), err)
	}
	return fresh, nil
}

// writeEffects writes what each claimed entry did (results[i] is
// claimed[i]'s): its mark's effect, and for a fresh key the record it
// moved or the exception it opened. Each row was claimed by this
// transaction, so the upserts only update.
func writeEffects(ctx context.Context, tx *store.Tx, fl file, claimed []statement.Entry, fresh map[string]bool, results []result, now int64) error {
	if len(claimed) == 0 {
		return nil
	}
	marks := make([]any, 0, 4*len(claimed))
	var keys []any
	for i, e := range claimed {
		res := results[i]
		marks = append(marks, fl.sha256, mark(e), now, string(res.effect))
		if !fresh[e.Key] {
			continue
		}
		var exception any
		if res.exception != 0 {
			exception = res.exception
		}
		keys = append(keys, fl.feed.accountKey(), e.Key, fl.feed.Name, fl.sha256, string(e.Direction), e.AmountMinor, e.Currency, now,
			string(res.effect), res.recordType, res.owner, res.recordID, exception)
	}
	// global lookup: inbox_entries are operator records, no merchant's.
	if err := tx.Send(ctx, `INSERT INTO inbox_entries (sha256, entry_key, applied_at, effect) VALUES `+store.ValueRows(len(claimed), 4)+`
		ON CONFLICT (sha256, entry_key) DO UPDATE SET effect = excluded.effect`, marks...); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	// global lookup: feed_entries are operator records, no merchant's.
	return tx.Send(ctx, `INSERT INTO feed_entries (account, entry_key, feed, sha256, direction, amount, currency, applied_at,
		effect, record_type, record_owner, record_id, exception_id) VALUES `+store.ValueRows(len(keys)/13, 13)+`
		ON CONFLICT (account, entry_key) DO UPDATE SET effect = excluded.effect, record_type = excluded.record_type,
		record_owner = excluded.record_owner, record_id = excluded.record_id, exception_id = excluded.exception_id`, keys...)
}

// returnedKeys runs query and collects the one column it returns.
func returnedKeys(ctx context.Context, tx *store.Tx, query string, args []any) (map[string]bool, error) {
	out := map[string]bool{}
	err := tx.Query(ctx, query, args, func(row store.Row) error {
		var k string
		if err := row.Scan(&k); err != nil {
			return err
		}
		out[k] = true
		return nil
	})
	return out, err
}

func sortedKeys(m map[string]statement.Entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
