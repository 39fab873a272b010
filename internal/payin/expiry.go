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
// expire within the same second share one job, due at the start of that
// second: the first create of the second enqueues it, and the creates after
// it meet its unique key and write nothing. When it runs, it expires the
// payins of its second that are due by then and queues itself again for the
// first one that is not (an expiry carries milliseconds), so each payin
// still expires at its expired_at, and a sandbox clock moved to that instant
// finds the work due. A second's payins are all created a minute or more
// before it comes (minExpiry), so none arrives after its job has run.

// jobExpireSecond is the kind of a second's expiry job. (jobExpire, one
// job per payin, is how earlier versions queued expiries; its handler
// stays for the jobs they left.)
var jobExpireSecond = job.NewKind[expirySecond]("payin.expire_second")

// expirySecond is a second's expiry job: the merchant, the second's start
// on its clock (Unix milliseconds), and how many runs of it came before.
type expirySecond struct {
	MerchantID string `json:"merchant_id"`
	Second     int64  `json:"second"`
	Run        int    `json:"run,omitempty"`
}

// maxExpiredPerRun bounds the payins one run expires, so that its
// transaction stays short; a run that has more queues the next at once.
const maxExpiredPerRun = 100

func (e expirySecond) key() string {
	k := jobExpireSecond.String() + ":" + strconv.FormatInt(e.Second, 10)
	if e.Run > 0 {
		k += ":" + strconv.Itoa(e.Run)
	}
	return k
}

// enqueueExpiry has the payin that expires at expiredAt expired then, by
// its second's job.
func (s *Service) enqueueExpiry(ctx context.Context, tx *store.Tx, merchantID string, expiredAt time.Time) error {
	ms := expiredAt.UnixMilli()
	e := expirySecond{MerchantID: merchantID, Second: ms - ms%1000}
	return s.enqueueSecond(ctx, tx, e, e.Second)
}

func (s *Service) enqueueSecond(ctx context.Context, tx *store.Tx, e expirySecond, at int64) error {
	return job.Enqueue(ctx, tx, s.queue, jobExpireSecond, e, job.Options{ClockOf: e.MerchantID, RunAt: clock.FromMillis(at), UniqueKey: e.key()})
}

// expireSecondJob expires the pending payins of its second that are due.
func (s *Service) expireSecondJob(ctx context.Context, tx *store.Tx, j job.Job, e expirySecond) error {
	now, err := s.clock.OfJob(ctx, tx, j, e.MerchantID)
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
		ORDER BY expired_at, uuid`+store.Limit(maxExpiredPerRun+1), []any{e.MerchantID, e.Second, e.Second + 1000}, func(row store.Row) error {
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
			e.Run++
			return s.enqueueSecond(ctx, tx, e, max(p.expiredAt, now.UnixMilli()))
		}
		r, err := s.get(ctx, tx, e.MerchantID, p.uuid, lockAccount)
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
