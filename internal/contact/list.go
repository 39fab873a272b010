package contact

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"payd/internal/fault"
	"payd/internal/store"
)

// validate checks the filters of a list, which reach the database as they are.
func (lq *ListQuery) validate() error {
	f := fault.Fields{}
	text(f, "email", &lq.Email, maxEmailLen, false)
	text(f, "external_id", &lq.ExternalID, maxExternalIDLen, false)
	return f.Err()
}

// where is a WHERE clause built condition by condition, with numbered
// placeholders, always scoped to one merchant (tenancy in the query).
type where struct {
	conds []string
	args  []any
}

func newWhere(merchantID string, lq ListQuery) *where {
	w := &where{}
	w.add("merchant_id = ?", merchantID)
	if !lq.From.IsZero() {
		w.add("created_at >= ?", lq.From.UnixMilli())
	}
	if !lq.To.IsZero() {
		w.add("created_at < ?", lq.To.UnixMilli())
	}
	return w
}

// add appends a condition with one ? placeholder for arg.
func (w *where) add(cond string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1))
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }

// list reads one page of table, newest first, and the count of every row
// that matches.
func list[T any](ctx context.Context, q store.Querier, table, columns string, w *where, lq ListQuery,
	scan func(interface{ Scan(...any) error }) (T, error)) (Listed[T], error) {
	out := Listed[T]{Records: []T{}}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE `+w.String(), w.args...).Scan(&out.Total); err != nil {
		return out, fmt.Errorf("count %s: %w", table, err)
	}
	offset := (lq.Page - 1) * lq.PerPage
	if offset >= out.Total {
		return out, nil
	}
	n := len(w.args)
	args := append(append([]any(nil), w.args...), lq.PerPage, offset)
	rows, err := q.QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+w.String()+
		` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), args...)
	if err != nil {
		return out, fmt.Errorf("list %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return out, fmt.Errorf("list %s: %w", table, err)
		}
		out.Records = append(out.Records, rec)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("list %s: %w", table, err)
	}
	return out, nil
}
