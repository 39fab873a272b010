package bankfile

import (
	"context"
	"database/sql"
	"fmt"

	"payd/internal/clock"
	"payd/internal/money"
	"payd/internal/store"
)

// An exception is what the bank said that payd would not apply by itself,
// left for the operator (CONTRACT §18, §25): the rails' evidence that
// contradicts a transfer's state, and the feeds' entries that match
// nothing. Exceptions are operator records, in bank_exceptions, shared by
// rails and feeds; the shape is §25's (payd feed exceptions --json).
//
// A rail's exception is about a transfer, not about an entry booked on an
// account: it has its source (the rail), the transfer's currency and
// amount, the bank reference as entry_key, its kind, status and reason;
// direction, booking_date, value_date, remittance and the counterparty
// describe a booked entry, and are null. A feed fills them in.

// ExceptionKind is why an exception is open.
type ExceptionKind string

const (
	// Unmatched: a feed entry matched nothing.
	Unmatched ExceptionKind = "unmatched"
	// AmountMismatch: a feed entry matched a record whose amount it is not.
	AmountMismatch ExceptionKind = "amount_mismatch"
	// StateMismatch: evidence contradicts where its transfer stands (a
	// failure of a done transfer, a return of a pending one).
	StateMismatch ExceptionKind = "state_mismatch"
)

// ExceptionStatus is where an exception stands.
type ExceptionStatus string

const (
	ExceptionOpen    ExceptionStatus = "open"
	ExceptionMatched ExceptionStatus = "matched"
	ExceptionIgnored ExceptionStatus = "ignored"
)

// SourceKind is what an exception's (and an inbox file's) source is.
type SourceKind string

const (
	SourceRail SourceKind = "rail"
	SourceFeed SourceKind = "feed"
)

// Exception is one exception as payd feed exceptions --json shows it
// (CONTRACT §25): Feed names its source, a feed or a rail.
type Exception struct {
	ID                  int64           `json:"id"`
	Feed                string          `json:"feed"`
	Currency            *string         `json:"currency"`
	Direction           *string         `json:"direction"`
	Amount              *money.String   `json:"amount"`
	BookingDate         *string         `json:"booking_date"`
	ValueDate           *string         `json:"value_date"`
	EntryKey            *string         `json:"entry_key"`
	Remittance          *string         `json:"remittance"`
	CounterpartyName    *string         `json:"counterparty_name"`
	CounterpartyAccount *string         `json:"counterparty_account"`
	Kind                ExceptionKind   `json:"kind"`
	Status              ExceptionStatus `json:"status"`
	ResolvedBy          *string         `json:"resolved_by"`
	ResolvedAt          *clock.Time     `json:"resolved_at"`
	Reason              string          `json:"reason"`
	// SourceKind says whether Feed is a rail or a feed.
	SourceKind SourceKind `json:"-"`
}

// maxExceptionReason bounds an exception's reason.
const maxExceptionReason = 2000

// openStateMismatch opens the state_mismatch exception of a transfer in
// tx and returns its id: an open one of the same source, reference and
// reason is that one (the same contrary evidence told twice is one thing
// for the operator to look into).
func openStateMismatch(ctx context.Context, tx *store.Tx, src Source, t Transfer, currency string, amountMinor int64, reason string, now int64) (int64, error) {
	if len(reason) > maxExceptionReason {
		reason = reason[:maxExceptionReason]
	}
	var id int64
	// global lookup: bank_exceptions are operator records, no merchant's.
	err := tx.QueryRowContext(ctx, `SELECT id FROM bank_exceptions WHERE source_kind = $1 AND source = $2 AND entry_key = $3 AND kind = $4
		AND status = $5 AND reason = $6`, string(src.Kind), src.Name, t.BankReference, string(StateMismatch), string(ExceptionOpen), reason).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !store.IsNoRows(err) {
		return 0, fmt.Errorf("open an exception of %s: %w", t.BankReference, err)
	}
	var inbox any
	if src.InboxFile != "" {
		inbox = src.InboxFile
	}
	// global lookup: bank_exceptions are operator records, no merchant's.
	err = tx.QueryRowContext(ctx, `INSERT INTO bank_exceptions (source_kind, source, currency, amount, entry_key, kind, status, reason,
		inbox_sha256, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		string(src.Kind), src.Name, currency, amountMinor, t.BankReference, string(StateMismatch), string(ExceptionOpen), reason, inbox, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("open an exception of %s: %w", t.BankReference, err)
	}
	return id, nil
}

// maxExceptionsListed bounds ListExceptions: the newest.
const maxExceptionsListed = 1000

// ListExceptions is the exceptions, newest first: the open ones, or all.
func ListExceptions(ctx context.Context, q store.Querier, all bool) ([]Exception, error) {
	filter := ` WHERE status = 'open'`
	if all {
		filter = ``
	}
	// global lookup: bank_exceptions are operator records, no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT id, source_kind, source, currency, direction, amount, booking_date, value_date, entry_key,
		remittance, counterparty_name, counterparty_account, kind, status, resolved_by, resolved_at, reason
		FROM bank_exceptions`+filter+` ORDER BY id DESC`+store.Limit(maxExceptionsListed))
	if err != nil {
		return nil, fmt.Errorf("list exceptions: %w", err)
	}
	defer rows.Close()
	out := []Exception{}
	for rows.Next() {
		var (
			e          Exception
			amount     sql.NullInt64
			resolvedAt sql.NullInt64
		)
		if err := rows.Scan(&e.ID, &e.SourceKind, &e.Feed, &e.Currency, &e.Direction, &amount, &e.BookingDate, &e.ValueDate, &e.EntryKey,
			&e.Remittance, &e.CounterpartyName, &e.CounterpartyAccount, &e.Kind, &e.Status, &e.ResolvedBy, &resolvedAt, &e.Reason); err != nil {
			return nil, err
		}
		if amount.Valid && e.Currency != nil {
			c, err := money.Lookup(*e.Currency)
			if err != nil {
				return nil, fmt.Errorf("exception %d: %w", e.ID, err)
			}
			a := money.StringOf(amount.Int64, c)
			e.Amount = &a
		}
		if resolvedAt.Valid {
			e.ResolvedAt = &clock.Time{T: clock.FromMillis(resolvedAt.Int64)}
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
