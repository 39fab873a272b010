package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Reports are made by a chain of jobs per account and frequency, the way
// end-of-day settlements are: each job is due at the end of its period on
// the merchant's clock, makes the report of that period (and of any later
// period that has also ended: downtime, a test clock moved far ahead), then
// queues the job of the next period. What makes it once per period, however
// many processes run and however often a job is retried or queued twice, is
// the reports table's unique period: making a period that exists is a no-op.

// jobMake is the kind of the report-making job.
var jobMake = job.NewKind[periodRef]("report.make")

// maxPerRun bounds the periods one job makes before it hands over to the
// next, so that catching up after a long gap is many short transactions.
const maxPerRun = 31

// periodRef names the first period a job makes.
type periodRef struct {
	MerchantID string    `json:"merchant_id"`
	AccountID  int64     `json:"account_id"`
	Frequency  Frequency `json:"frequency"`
	Start      int64     `json:"period_start"` // unix milliseconds
}

// accountOf reads a payments account of merchantID with its merchant's time zone.
func accountOf(ctx context.Context, q store.Querier, merchantID string, accountID int64) (account, error) {
	acc := account{ID: accountID, MerchantID: merchantID}
	var tz string
	err := q.QueryRowContext(ctx, `SELECT a.currency, m.timezone FROM accounts a JOIN merchants m ON m.id = a.merchant_id
		WHERE a.id = $1 AND a.merchant_id = $2 AND a.kind = $3`, accountID, merchantID, string(merchant.Payments)).Scan(&acc.Currency, &tz)
	if err != nil {
		return account{}, fmt.Errorf("report account %d: %w", accountID, err)
	}
	acc.Location = merchant.Location(tz)
	return acc, nil
}

// schedule queues the job that makes p when it ends. Its unique key makes
// queueing the same period again (Ensure racing a job) a no-op.
func (s *Service) schedule(ctx context.Context, tx *store.Tx, acc account, p Period) error {
	return job.Enqueue(ctx, tx, s.queue, jobMake, periodRef{MerchantID: acc.MerchantID, AccountID: acc.ID, Frequency: p.Frequency, Start: p.Start.UnixMilli()},
		job.Options{ClockOf: acc.MerchantID, RunAt: p.End, UniqueKey: fmt.Sprintf("%s:%d:%s:%d", jobMake, acc.ID, p.Frequency, p.Start.UnixMilli())})
}

// Ensure starts the chains of a merchant's payments accounts that have
// none: each continues after the account's last report of its frequency,
// or begins with the period in which the account was opened. Calling it
// again, from any process, changes nothing.
func (s *Service) Ensure(ctx context.Context, tx *store.Tx, merchantID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT a.id, a.currency, a.created_at, m.timezone FROM accounts a JOIN merchants m ON m.id = a.merchant_id
		WHERE a.merchant_id = $1 AND a.kind = $2 ORDER BY a.id`, merchantID, string(merchant.Payments))
	if err != nil {
		return fmt.Errorf("report chains of %s: %w", merchantID, err)
	}
	type opened struct {
		acc     account
		created time.Time
	}
	var accounts []opened
	for rows.Next() {
		var (
			o       opened
			tz      string
			created int64
		)
		if err := rows.Scan(&o.acc.ID, &o.acc.Currency, &created, &tz); err != nil {
			rows.Close()
			return fmt.Errorf("report chains of %s: %w", merchantID, err)
		}
		o.acc.MerchantID, o.acc.Location, o.created = merchantID, merchant.Location(tz), time.UnixMilli(created)
		accounts = append(accounts, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("report chains of %s: %w", merchantID, err)
	}
	for _, o := range accounts {
		for _, f := range frequencies {
			p, err := nextPeriod(ctx, tx, o.acc, f, o.created)
			if err != nil {
				return err
			}
			if err := s.schedule(ctx, tx, o.acc, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextPeriod is the first period of f that acc has no report of.
func nextPeriod(ctx context.Context, q store.Querier, acc account, f Frequency, opened time.Time) (Period, error) {
	var last sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(period_end) FROM reports WHERE merchant_id = $1 AND account_id = $2 AND frequency = $3`,
		acc.MerchantID, acc.ID, string(f)).Scan(&last); err != nil {
		return Period{}, fmt.Errorf("last report of account %d: %w", acc.ID, err)
	}
	if !last.Valid {
		return periodContaining(f, opened, acc.Location), nil
	}
	return periodFrom(f, time.UnixMilli(last.Int64).In(acc.Location), acc.Location), nil
}

// Sweep runs Ensure for every merchant, each in its own transaction: it
// starts the chains of accounts opened by another process (payd merchant
// create) and of a database that had none. payd serve runs it at start and
// every hour.
func (s *Service) Sweep(ctx context.Context) error {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT id FROM merchants ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sweep report chains: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("sweep report chains: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sweep report chains: %w", err)
	}
	for _, id := range ids {
		if err := s.db.Exec(ctx, func(tx *store.Tx) error { return s.Ensure(ctx, tx, id) }); err != nil {
			return err
		}
	}
	return nil
}

// makeJob makes the job's period and every later one that has ended on
// the merchant's clock (up to maxPerRun), then queues the next.
func (s *Service) makeJob(ctx context.Context, tx *store.Tx, j job.Job, ref periodRef) error {
	if _, ok := parseFrequency(string(ref.Frequency)); !ok {
		return fmt.Errorf("job %d: report frequency %q", j.ID, ref.Frequency)
	}
	acc, err := accountOf(ctx, tx, ref.MerchantID, ref.AccountID)
	if err != nil {
		return err
	}
	// The account's lock waits for the ledger writes in flight on it, so
	// that what the report reads of its period is complete.
	if err := ledger.LockAccount(ctx, tx, acc.MerchantID, acc.ID, acc.Currency); err != nil {
		return err
	}
	now, err := s.clock.Read(ctx, tx, acc.MerchantID)
	if err != nil {
		return err
	}
	p := periodFrom(ref.Frequency, time.UnixMilli(ref.Start).In(acc.Location), acc.Location)
	for made := 0; made < maxPerRun && !now.Before(p.End); made++ {
		if err := s.makeReport(ctx, tx, acc, p, now); err != nil {
			return err
		}
		p = p.next(acc.Location)
	}
	return s.schedule(ctx, tx, acc, p)
}

// makeReport stores the report of acc for p, unless it exists, and sends
// report.created to the account's settlement webhook_notification in the
// same transaction.
func (s *Service) makeReport(ctx context.Context, tx *store.Tx, acc account, p Period, now time.Time) error {
	var exists int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM reports WHERE merchant_id = $1 AND account_id = $2 AND frequency = $3 AND period_start = $4`,
		acc.MerchantID, acc.ID, string(p.Frequency), p.Start.UnixMilli()).Scan(&exists); err != nil {
		return fmt.Errorf("report of account %d: %w", acc.ID, err)
	}
	if exists > 0 {
		return nil
	}
	f, err := build(ctx, tx, acc, p)
	if err != nil {
		return err
	}
	id := store.RandomID(store.UUIDLen)
	inserted, err := store.OneRow(tx.ExecContext(ctx, `INSERT INTO reports (merchant_id, id, account_id, currency, frequency, period_start, period_end,
		file_name, content_type, content, sha256, settlement_count, settled_amount, settled_fee, closing_balance, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (merchant_id, account_id, frequency, period_start) DO NOTHING`,
		acc.MerchantID, id, acc.ID, acc.Currency, string(p.Frequency), p.Start.UnixMilli(), p.End.UnixMilli(), fileName(acc.Currency, p, acc.Location),
		ContentType, f.content, f.sha256, f.totals.settlementCount, f.totals.settledAmount, f.totals.settledFee, f.totals.closingBalance, now.UnixMilli()))
	if err != nil || !inserted {
		return err // !inserted: another process made it first
	}
	return s.announce(ctx, tx, acc, id, now)
}

// announce emits report.created for a new report: to the events log and
// the webhook endpoints, and to the account's settlement config's
// webhook_notification when it names one.
func (s *Service) announce(ctx context.Context, tx *store.Tx, acc account, id string, now time.Time) error {
	target, err := settlement.NotificationTarget(ctx, tx, acc.MerchantID, acc.ID)
	if err != nil {
		return err
	}
	r, err := getStored(ctx, tx, acc.MerchantID, id)
	if err != nil {
		return err
	}
	_, err = s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: acc.MerchantID, Type: EventCreated, RecordUUID: id, Target: target, Payload: r.view(), At: now})
	return err
}

func getStored(ctx context.Context, q store.Querier, merchantID, id string) (stored, error) {
	r, err := scanStored(q.QueryRowContext(ctx, `SELECT `+storedColumns+` FROM reports WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return stored{}, fmt.Errorf("report %s: not found", id)
	}
	return r, err
}

// Rebuild makes a stored report's file again from the ledger, without
// storing it: the same bytes as stored, since a report reads only what its
// period's end has fixed.
func (s *Service) Rebuild(ctx context.Context, merchantID, id string) ([]byte, error) {
	q := s.db.Read()
	r, err := getStored(ctx, q, merchantID, id)
	if err != nil {
		return nil, err
	}
	acc, err := accountOf(ctx, q, merchantID, r.accountID)
	if err != nil {
		return nil, err
	}
	f, err := build(ctx, q, acc, Period{Frequency: r.frequency, Start: time.UnixMilli(r.start), End: time.UnixMilli(r.end)})
	return f.content, err
}
