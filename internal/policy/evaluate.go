package policy

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"payd/internal/merchant"
	"payd/internal/store"
)

// Subject is a payout or external transfer being created, as its
// evaluation sees it.
type Subject struct {
	MerchantID string
	Currency   string
	// Amount is a payout's total (its amounts, fees aside) or a transfer's
	// amount, in minor units.
	Amount int64
	// CreatorLabel is approval.created_by (app:<app-id> or an email);
	// CreatorUserID the portal user's id, "" for an app.
	CreatorLabel, CreatorUserID string
	Now                         time.Time
	// Zone is the merchant's IANA zone: the daily limit's day is local.
	Zone string
}

// Hold is what an evaluation decided: Held, the approvals the record needs,
// by which roles, and the policy that caught it (nil when only the daily
// limit did).
type Hold struct {
	Held     bool
	Required int
	Roles    []merchant.Role
	Policy   *Ref
}

// Evaluate applies the merchant's active policies to a record being created
// (CONTRACT §20, §25), once, in the creation's transaction: SendEvaluate,
// read at once.
func (s *Service) Evaluate(ctx context.Context, tx *store.Tx, sub Subject) (Hold, error) {
	pending, err := s.SendEvaluate(ctx, tx, sub)
	if err != nil {
		return Hold{}, err
	}
	if err := tx.ReadSent(ctx); err != nil {
		return Hold{}, err
	}
	return pending.Get()
}

// PendingHold is an evaluation sent ahead: Get once a later statement ran.
type PendingHold struct {
	threshold *store.Pending[[]thresholdRow]
	daily     *store.Pending[dailyRow]
}

type thresholdRow struct {
	ref       Ref
	approvals int
	roles     string
}

type dailyRow struct {
	limit              sql.NullInt64
	payouts, transfers int64
	amount             int64
}

// SendEvaluate sends the evaluation of sub with the transaction's next
// statement (a payout's creation sends it with the post that holds its
// funds, costing no round trip): the threshold policy of the currency with
// the highest min_amount at or below the amount holds the record for that
// policy's approvals by its roles; the daily limit holds it for
// max(policy's, 1) approvals by admin or finance (the policy's roles when
// one applies) when the creator's payouts and external transfers created
// that local day, not rejected or expired, with this one go above the
// limit. The daily limit's row is locked first (PostgreSQL), in a statement
// of its own, so that two creations of its currency count each other.
func (s *Service) SendEvaluate(ctx context.Context, tx *store.Tx, sub Subject) (*PendingHold, error) {
	var ph PendingHold
	var err error
	if _, err = store.SendQuery(ctx, tx, `SELECT id FROM approval_policies
		WHERE merchant_id = $1 AND currency = $2 AND kind = $3 AND version > 0 AND NOT deleted`+s.db.ForUpdate(),
		[]any{sub.MerchantID, sub.Currency, string(DailyLimit)}, scanString); err != nil {
		return nil, err
	}
	ph.threshold, err = store.SendQuery(ctx, tx, `SELECT name, version, approvals, roles FROM approval_policies
		WHERE merchant_id = $1 AND currency = $2 AND kind = $3 AND version > 0 AND NOT deleted AND min_amount <= $4
		ORDER BY min_amount DESC LIMIT 1`, []any{sub.MerchantID, sub.Currency, string(Threshold), sub.Amount},
		func(r store.Row) (thresholdRow, error) {
			var t thresholdRow
			err := r.Scan(&t.ref.Name, &t.ref.Version, &t.approvals, &t.roles)
			return t, err
		})
	if err != nil {
		return nil, err
	}
	from, to := localDay(sub.Now, sub.Zone)
	// The day's sums are read only when the currency has a daily limit:
	// they read every payout and external transfer the creator made that
	// day, which without a limit made each creation cost more than the one
	// before it all day long (a CASE runs the subqueries of its branch
	// alone, on both databases).
	ph.daily, err = store.SendRow(ctx, tx, `SELECT l.min_amount,
		CASE WHEN l.min_amount IS NULL THEN 0 ELSE (SELECT COALESCE(SUM(total_amount), 0) FROM payouts
			WHERE merchant_id = $1 AND currency = $2 AND created_by_user = $4 AND ($4 <> '' OR created_by = $5)
			AND created_at >= $6 AND created_at < $7 AND status NOT IN ('rejected', 'expired')) END,
		CASE WHEN l.min_amount IS NULL THEN 0 ELSE (SELECT COALESCE(SUM(amount), 0) FROM transfers
			WHERE merchant_id = $1 AND currency = $2 AND to_account_id IS NULL AND created_by_user = $4 AND ($4 <> '' OR created_by = $5)
			AND created_at >= $6 AND created_at < $7 AND status NOT IN ('rejected', 'expired')) END
		FROM (SELECT (SELECT min_amount FROM approval_policies
			WHERE merchant_id = $1 AND currency = $2 AND kind = $3 AND version > 0 AND NOT deleted) AS min_amount) l`,
		[]any{sub.MerchantID, sub.Currency, string(DailyLimit), sub.CreatorUserID, sub.CreatorLabel, from.UnixMilli(), to.UnixMilli()},
		func(r store.Row) (dailyRow, error) {
			d := dailyRow{amount: sub.Amount}
			err := r.Scan(&d.limit, &d.payouts, &d.transfers)
			return d, err
		})
	if err != nil {
		return nil, err
	}
	return &ph, nil
}

func scanString(r store.Row) (string, error) {
	var v string
	err := r.Scan(&v)
	return v, err
}

// Get is the evaluation's outcome; a nil evaluation holds nothing.
func (ph *PendingHold) Get() (Hold, error) {
	if ph == nil {
		return Hold{}, nil
	}
	var h Hold
	thresholds, err := ph.threshold.Get()
	if err != nil {
		return Hold{}, fmt.Errorf("evaluate policies: %w", err)
	}
	if len(thresholds) > 0 {
		t := thresholds[0]
		h = Hold{Held: true, Required: t.approvals, Roles: SplitRoles(t.roles), Policy: &t.ref}
	}
	d, err := ph.daily.Get()
	if err != nil {
		return Hold{}, fmt.Errorf("evaluate the daily limit: %w", err)
	}
	if !d.limit.Valid || d.payouts+d.transfers+d.amount <= d.limit.Int64 {
		return h, nil
	}
	if !h.Held {
		h = Hold{Held: true, Required: defaultApprove, Roles: DeciderRoles}
	}
	h.Required = max(h.Required, 1)
	return h, nil
}

// localDay is the merchant's local day holding now, as instants (across a
// DST change the day is 23 or 25 hours).
func localDay(now time.Time, zone string) (from, to time.Time) {
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" {
		loc = time.UTC
	}
	l := now.In(loc)
	from = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
	return from, from.AddDate(0, 0, 1)
}
