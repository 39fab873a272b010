package settlement

import (
	"context"
	"fmt"
	"time"

	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/merchant"
	"payd/internal/store"
)

// dayRef names one account's local day in an end-of-day job.
type dayRef struct {
	MerchantID string `json:"merchant_id"`
	AccountID  int64  `json:"account_id"`
	Currency   string `json:"currency"`
	Date       string `json:"date"`
}

// endOfDay is the instant a local date ends: the next day's midnight in
// loc, however long the day was (23 or 25 hours across a DST change).
func endOfDay(date string, loc *time.Location) (time.Time, error) {
	d, err := time.ParseInLocation(merchant.DateLayout, date, loc)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc), nil
}

// nextDate is the calendar day after date.
func nextDate(date string) string {
	d, _ := time.Parse(merchant.DateLayout, date)
	return d.AddDate(0, 0, 1).Format(merchant.DateLayout)
}

// scheduleDay queues the end-of-day settlement of an account's local date,
// at the end of that date on the merchant's clock. The job's unique key
// makes a second scheduling of the same day (another process, a config
// saved twice) a no-op, so each day is settled once.
func (s *Service) scheduleDay(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, date string) error {
	var tz, currency string
	if err := tx.QueryRowContext(ctx, `SELECT m.timezone, a.currency FROM merchants m JOIN accounts a ON a.merchant_id = m.id
		WHERE a.merchant_id = $2 AND a.id = $1 AND m.id = $2`,
		accountID, merchantID).Scan(&tz, &currency); err != nil {
		return fmt.Errorf("schedule end of day: %w", err)
	}
	end, err := endOfDay(date, merchant.Location(tz))
	if err != nil {
		return err
	}
	return job.Enqueue(ctx, tx, s.queue, jobEndOfDay, dayRef{MerchantID: merchantID, AccountID: accountID, Currency: currency, Date: date},
		job.Options{ClockOf: merchantID, RunAt: end, UniqueKey: fmt.Sprintf("%s:%d:%s", jobEndOfDay, accountID, date)})
}

// endOfDayJob settles an account's day, once, then queues the next day.
// After downtime the overdue day runs at start, once; the days after it
// follow, each settling what is withdrawable then (nothing, mostly).
func (s *Service) endOfDayJob(ctx context.Context, tx *store.Tx, _ job.Job, d dayRef) error {
	cfg, _, err := s.readConfig(ctx, tx, d.MerchantID, d.AccountID)
	if err != nil || cfg.Frequency != EndOfDay {
		return err // the account went on_demand: the chain of days ends
	}
	var done int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM settlements WHERE merchant_id = $1 AND account_id = $2 AND eod_date = $3`,
		d.MerchantID, d.AccountID, d.Date).Scan(&done); err != nil {
		return err
	}
	if done == 0 {
		acc, err := merchant.AccountByCurrency(ctx, tx, d.MerchantID, merchant.Payments, d.Currency)
		if err != nil {
			return err
		}
		now, err := s.clock.Read(ctx, tx, d.MerchantID)
		if err != nil {
			return err
		}
		if _, err := s.settle(ctx, tx, d.MerchantID, acc, 0, EndOfDay, d.Date, now); err != nil && !fault.Is(err, fault.CodeInsufficientFunds) {
			return err
		}
	}
	return s.scheduleDay(ctx, tx, d.MerchantID, d.AccountID, nextDate(d.Date))
}
