package reconcile

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/statement"
	"payd/internal/store"
)

// stored is a statement row.
type stored struct {
	Summary
	currency         money.Currency
	from, to         statement.Date
	opening, closing sql.NullInt64
}

const statementColumns = `id, sha256, format, account_number, currency, from_date, to_date, opening_balance, closing_balance, entries, created_at`

func scanStatement(sc interface{ Scan(...any) error }) (stored, error) {
	var (
		st       stored
		from, to string
		created  int64
	)
	if err := sc.Scan(&st.ID, &st.SHA256, &st.Format, &st.AccountNumber, &st.Currency, &from, &to, &st.opening, &st.closing, &st.Entries, &created); err != nil {
		return stored{}, err
	}
	c, err := money.Lookup(st.Currency)
	if err != nil {
		return stored{}, fmt.Errorf("statement %s: %w", st.ID, err)
	}
	st.currency, st.From, st.To, st.CreatedAt = c, from, to, clock.Time{T: clock.FromMillis(created)}
	if st.from, err = statement.ParseDate(from); err != nil {
		return stored{}, fmt.Errorf("statement %s: %w", st.ID, err)
	}
	if st.to, err = statement.ParseDate(to); err != nil {
		return stored{}, fmt.Errorf("statement %s: %w", st.ID, err)
	}
	if st.opening.Valid {
		v := money.StringOf(st.opening.Int64, c)
		st.OpeningBalance = &v
	}
	if st.closing.Valid {
		v := money.StringOf(st.closing.Int64, c)
		st.ClosingBalance = &v
	}
	return st, nil
}

func getStatement(ctx context.Context, q store.Querier, merchantID, id string) (stored, error) {
	st, err := scanStatement(q.QueryRowContext(ctx, `SELECT `+statementColumns+` FROM reconciliation_statements WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if store.IsNoRows(err) {
		return stored{}, fault.NotFoundf("no statement %s", id)
	}
	if err != nil {
		return stored{}, fmt.Errorf("read statement %s: %w", id, err)
	}
	return st, nil
}

// counts fills in st's line counts.
func counts(ctx context.Context, q store.Querier, merchantID string, st *Summary) error {
	rows, err := q.QueryContext(ctx, `SELECT status, count(*) FROM reconciliation_lines WHERE merchant_id = $1 AND statement_id = $2 GROUP BY status`, merchantID, st.ID)
	if err != nil {
		return fmt.Errorf("count statement lines: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status LineStatus
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return err
		}
		switch status {
		case Matched:
			st.Matched = n
		case Unmatched:
			st.Unmatched = n
		case Ignored:
			st.Ignored = n
		}
	}
	return rows.Err()
}

// missing lists the completed records to st's account whose date is in
// st's period that no line (of any statement) matched (CONTRACT §19, §25).
func missing(ctx context.Context, q store.Querier, merchantID string, st stored, loc *time.Location) ([]MissingRecord, error) {
	lo, hi := window(st.from, st.to, loc)
	rs, err := records(ctx, q, merchantID, st.Currency, digitsOf(st.AccountNumber), lo, hi, loc)
	if err != nil {
		return nil, err
	}
	out := []MissingRecord{}
	for _, r := range rs {
		if !r.completed || r.matchedBy != "" || r.date.Before(st.from) || st.to.Before(r.date) {
			continue
		}
		out = append(out, MissingRecord{Type: r.typ, UUID: r.uuid, Amount: money.StringOf(r.amountMinor, st.currency), Date: r.date.String()})
	}
	return out, nil
}

// summary is statement id with its counts.
func (s *Service) summary(ctx context.Context, q store.Querier, merchantID, id string, loc *time.Location) (Statement, error) {
	st, err := getStatement(ctx, q, merchantID, id)
	if err != nil {
		return Statement{}, err
	}
	return summarise(ctx, q, merchantID, st, loc)
}

func summarise(ctx context.Context, q store.Querier, merchantID string, st stored, loc *time.Location) (Statement, error) {
	if err := counts(ctx, q, merchantID, &st.Summary); err != nil {
		return Statement{}, err
	}
	miss, err := missing(ctx, q, merchantID, st, loc)
	if err != nil {
		return Statement{}, err
	}
	return Statement{Summary: st.Summary, Missing: len(miss)}, nil
}

// List is a page of the merchant's statements, newest first, with their counts.
func (s *Service) List(ctx context.Context, p merchant.Principal, page, perPage int) ([]Statement, int, error) {
	q := s.db.Read()
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM reconciliation_statements WHERE merchant_id = $1`, p.MerchantID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count statements: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+statementColumns+` FROM reconciliation_statements WHERE merchant_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, p.MerchantID, perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, fmt.Errorf("list statements: %w", err)
	}
	var list []stored
	for rows.Next() {
		st, err := scanStatement(rows)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		list = append(list, st)
	}
	if err := rows.Close(); err != nil {
		return nil, 0, err
	}
	loc := merchant.Location(p.Timezone)
	out := make([]Statement, 0, len(list))
	for _, st := range list {
		v, err := summarise(ctx, q, p.MerchantID, st, loc)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, nil
}

// Get is statement id with its lines and the records missing from it.
func (s *Service) Get(ctx context.Context, p merchant.Principal, id string) (Detail, error) {
	return s.detail(ctx, s.db.Read(), p, id)
}

func (s *Service) detail(ctx context.Context, q store.Querier, p merchant.Principal, id string) (Detail, error) {
	st, err := getStatement(ctx, q, p.MerchantID, id)
	if err != nil {
		return Detail{}, err
	}
	loc := merchant.Location(p.Timezone)
	if err := counts(ctx, q, p.MerchantID, &st.Summary); err != nil {
		return Detail{}, err
	}
	d := Detail{Summary: st.Summary, Lines: []Line{}}
	if d.Missing, err = missing(ctx, q, p.MerchantID, st, loc); err != nil {
		return Detail{}, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+lineColumns+` FROM reconciliation_lines WHERE merchant_id = $1 AND statement_id = $2 ORDER BY seq`, p.MerchantID, id)
	if err != nil {
		return Detail{}, fmt.Errorf("read statement lines: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanLine(rows, st.currency)
		if err != nil {
			return Detail{}, err
		}
		d.Lines = append(d.Lines, l.Line)
	}
	return d, rows.Err()
}

const lineColumns = `id, statement_id, value_date, amount, reference, description, status, matched_type, matched_uuid, reason`

// storedLine is a line row with its statement.
type storedLine struct {
	Line
	statementID string
}

func scanLine(sc interface{ Scan(...any) error }, c money.Currency) (storedLine, error) {
	var (
		l         storedLine
		typ, uuid sql.NullString
		reason    string
	)
	if err := sc.Scan(&l.ID, &l.statementID, &l.Date, &l.amountMinor, &l.Reference, &l.Description, &l.Status, &typ, &uuid, &reason); err != nil {
		return storedLine{}, fmt.Errorf("read statement line: %w", err)
	}
	l.Amount = money.StringOf(l.amountMinor, c)
	if typ.Valid && uuid.Valid {
		l.MatchedTo = &RecordRef{Type: RecordType(typ.String), UUID: uuid.String}
	}
	if l.Status == Ignored {
		l.Reason = &reason
	}
	return l, nil
}
