package payin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"payd/internal/clock"
	"payd/internal/job"
	"payd/internal/store"
)

// Expiry. A pending payin expires at its expired_at, on its merchant's
// clock. A job for each payin would cost every create a job row and its four
// index entries, and leave a row waiting for each pending payin (a day's
// worth at the default expiry). Instead, the payins of a merchant that
// expire within the same minute share one job, due at the start of that
// minute: the first create of the minute enqueues it, and the creates after
// it meet its unique key and write nothing. When it runs, it expires the
// payins of its minute that are due by then and queues itself again for the
// first one that is not (an expiry carries milliseconds), so each payin
// still expires at its expired_at, and a sandbox clock moved to that instant
// finds the work due. A minute's payins are all created a minute or more
// before it comes (minExpiry), so none arrives after its job has run.
//
// (Earlier versions queued a job per second, payin.expire_second, and
// before that one per payin, payin.expire: their handlers stay for the jobs
// they left. A sandbox clock moved hours at a time made a second's job due
// for every second of a merchant's creates, each a transaction of SQLite's
// one writer, most of them finding the payins paid.)

// jobExpireMinute is the kind of a minute's expiry job.
var jobExpireMinute = job.NewKind[expiryWindow]("payin.expire_minute")

// expiryWindow is a minute's expiry job: the merchant, the minute's start on
// its clock (Unix milliseconds), and how many runs of it came before.
type expiryWindow struct {
	MerchantID string `json:"merchant_id"`
	Start      int64  `json:"start"`
	Run        int    `json:"run,omitempty"`
}

// expiryMinute is the length of a window in milliseconds. It must not
// exceed minExpiry: a payin created into a window after its job has run
// would wait for a run that never comes.
const expiryMinute = int64(time.Minute / time.Millisecond)

// A window longer than minExpiry does not compile: the difference would be
// a negative constant converted to uint64.
const _ = uint64(int64(minExpiry/time.Millisecond) - expiryMinute)

// expiryKey is the unique key of a window's run of kind: its start, and
// the run after the first.
func expiryKey(kind string, start int64, run int) string {
	k := kind + ":" + strconv.FormatInt(start, 10)
	if run > 0 {
		k += ":" + strconv.Itoa(run)
	}
	return k
}

// jobExpireSecond is the kind of the per-second expiry jobs earlier
// versions queued.
var jobExpireSecond = job.NewKind[expirySecond]("payin.expire_second")

// expirySecond is such a job: a window one second long.
type expirySecond struct {
	MerchantID string `json:"merchant_id"`
	Second     int64  `json:"second"`
	Run        int    `json:"run,omitempty"`
}

// maxExpiredPerRun bounds the payins one run expires, so that its
// transaction stays short; a run that has more queues the next at once.
const maxExpiredPerRun = 100

// enqueueExpiry has the payin that expires at expiredAt expired then, by
// its minute's job.
func (s *Service) enqueueExpiry(ctx context.Context, tx *store.Tx, merchantID string, expiredAt time.Time) error {
	ms := expiredAt.UnixMilli()
	w := expiryWindow{MerchantID: merchantID, Start: ms - ms%expiryMinute}
	return s.enqueueMinute(ctx, tx, w, w.Start)
}

func (s *Service) enqueueMinute(ctx context.Context, tx *store.Tx, w expiryWindow, at int64) error {
	return job.Enqueue(ctx, tx, s.queue, jobExpireMinute, w, job.Options{ClockOf: w.MerchantID, RunAt: clock.FromMillis(at), UniqueKey: expiryKey(jobExpireMinute.String(), w.Start, w.Run)})
}

// expireMinuteJob expires the pending payins of its minute that are due.
func (s *Service) expireMinuteJob(ctx context.Context, tx *store.Tx, j job.Job, w expiryWindow) error {
	return s.expireWindow(ctx, tx, j, w, expiryMinute, func(next expiryWindow, at int64) error {
		return s.enqueueMinute(ctx, tx, next, at)
	})
}

// expireSecondJob is expireMinuteJob for a job of an earlier version.
func (s *Service) expireSecondJob(ctx context.Context, tx *store.Tx, j job.Job, e expirySecond) error {
	w := expiryWindow{MerchantID: e.MerchantID, Start: e.Second, Run: e.Run}
	return s.expireWindow(ctx, tx, j, w, 1000, func(next expiryWindow, at int64) error {
		e := expirySecond{MerchantID: next.MerchantID, Second: next.Start, Run: next.Run}
		return job.Enqueue(ctx, tx, s.queue, jobExpireSecond, e, job.Options{ClockOf: e.MerchantID, RunAt: clock.FromMillis(at), UniqueKey: expiryKey(jobExpireSecond.String(), e.Second, e.Run)})
	})
}

// expireWindow expires the pending payins of window w (length ms long) that
// are due, and calls again to queue the window's next run for the first that
// is not.
func (s *Service) expireWindow(ctx context.Context, tx *store.Tx, j job.Job, w expiryWindow, length int64, again func(expiryWindow, int64) error) error {
	now, err := s.clock.OfJob(ctx, tx, j, w.MerchantID)
	if err != nil {
		return err
	}
	type pending struct {
		uuid      string
		expiredAt int64
	}
	var found []pending
	err = tx.Query(ctx, `SELECT uuid, expired_at FROM payins
		WHERE merchant_id = $1 AND expired_at >= $2 AND expired_at < $3 AND status = 'pending'
		ORDER BY expired_at, uuid`+store.Limit(maxExpiredPerRun+1), []any{w.MerchantID, w.Start, w.Start + length}, func(row store.Row) error {
		var p pending
		err := row.Scan(&p.uuid, &p.expiredAt)
		found = append(found, p)
		return err
	})
	if err != nil {
		return fmt.Errorf("find expiring payins: %w", err)
	}
	for i, p := range found {
		if p.expiredAt > now.UnixMilli() || i == maxExpiredPerRun {
			w.Run++
			return again(w, max(p.expiredAt, now.UnixMilli()))
		}
		r, err := s.get(ctx, tx, w.MerchantID, p.uuid, lockAccount)
		if err != nil {
			return err
		}
		if r.status == Pending { // a receipt may have come between the read and the lock
			if err := s.setStatus(ctx, tx, &r, Expired, now); err != nil {
				return err
			}
		}
	}
	return nil
}
