package payout

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/rail"
	"payd/internal/store"
)

// ref names a payout in a job's payload.
type ref struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// jobPayout reads the payout a job names, locked, and the time on its
// merchant's clock. With posts (the job may post: its funds go back) it
// locks the account first: a worker runs the job among the merchant's other
// jobs in one transaction, each of which queues on the account before
// anything else (ledger.LockAccount).
func (s *Service) jobPayout(ctx context.Context, tx *store.Tx, j job.Job, ref ref, posts bool) (row, time.Time, error) {
	if posts {
		if err := sendAccountLock(ctx, tx, ref.MerchantID, ref.UUID); err != nil {
			return row{}, time.Time{}, err
		}
	}
	r, err := s.lock(ctx, tx, ref.MerchantID, ref.UUID)
	if err != nil {
		return row{}, time.Time{}, err
	}
	now, err := s.clock.OfJob(ctx, tx, j, r.merchantID)
	return r, now, err
}

// releaseJob starts a scheduled payout at its scheduled time.
func (s *Service) releaseJob(ctx context.Context, tx *store.Tx, j job.Job, ref ref) error {
	r, now, err := s.jobPayout(ctx, tx, j, ref, false)
	if err != nil || r.status != Scheduled {
		return err
	}
	return s.process(ctx, tx, &r, now)
}

// process moves a payout to processing and queues its submission.
func (s *Service) process(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	if err := s.setStatus(ctx, tx, r, Processing, now.UnixMilli()); err != nil {
		return err
	}
	return s.start(ctx, tx, *r, now)
}

// submitJob hands a processing payout's transactions to the rail. It runs in
// the transaction that marks them submitted, so each reaches the rail once
// (a rolled-back run is made again, with the same keys). Each transaction
// gets its bank reference there (CONTRACT §17, §25): null on its record
// until it is handed to a rail.
func (s *Service) submitJob(ctx context.Context, tx *store.Tx, j job.Job, ref ref) error {
	r, now, err := s.jobPayout(ctx, tx, j, ref, false)
	if err != nil || r.status != Processing {
		return err
	}
	for _, t := range r.txs {
		if t.status != TxPending || t.submittedAt != nil {
			continue
		}
		var params map[string]any
		if err := json.Unmarshal([]byte(t.params), &params); err != nil {
			return fmt.Errorf("payout transaction %s params: %w", t.uuid, err)
		}
		reference, err := rail.DrawReference(ctx, tx, s.rail, r.merchantID, r.currency, r.method)
		if err != nil {
			return err
		}
		if err := s.rail.Submit(ctx, tx, rail.Transfer{Key: t.uuid, MerchantID: r.merchantID, Method: r.method,
			Currency: r.currency, AmountMinor: t.amount, Params: params, At: now, BankReference: reference,
			Payee: t.payee(), Description: r.description}); err != nil {
			return err
		}
		if err := tx.Send(ctx, `UPDATE payout_transactions SET submitted_at = $1, updated_at = $1, bank_reference = $2 WHERE uuid = $3 AND merchant_id = $4`,
			now.UnixMilli(), reference, t.uuid, r.merchantID); err != nil {
			return fmt.Errorf("submit payout transaction %s: %w", t.uuid, err)
		}
	}
	return nil
}

// settle applies the rail's outcome of one transaction, in the outcome
// order (rail.Judge): a pending one done, the money leaves outgoing (the
// fee to fees), or failed, amount and fee return to available; a done one
// returned, amount and fee come back (returnTransaction). An outcome the
// order does not allow changes nothing and says so. The payout completes
// when its last transaction settles. The work is the transaction's alone
// (its row, its entry, its event), however large the batch: the payout row
// is locked, not read with all its transactions.
func (s *Service) settle(ctx context.Context, tx *store.Tx, o rail.Outcome) (rail.Applied, error) {
	r, t, othersPending, now, err := s.readOutcome(ctx, tx, o)
	if err != nil {
		return rail.Applied{}, fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	// A transaction's statuses are the outcome order's states, by name.
	applied := rail.Applied{Effect: rail.Judge(rail.State(t.status), o.Verdict), Was: string(t.status), Status: string(t.status)}
	if applied.Effect != rail.Changed {
		return applied, nil
	}
	if o.Verdict == rail.Returned {
		err = s.returnTransaction(ctx, tx, r, t, o.Reason, now)
		return rail.Applied{Effect: rail.Changed, Was: applied.Was, Status: string(TxReturned)}, err
	}
	legs, final, status := []ledger.Leg{
		{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -(t.amount + t.fee)},
		{Account: r.accountID, Bucket: ledger.External, Amount: t.amount},
		{Account: r.accountID, Bucket: ledger.Fees, Amount: t.fee},
	}, ledger.Done, TxDone
	if o.Verdict == rail.Failed {
		legs, final, status = []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -(t.amount + t.fee)},
			{Account: r.accountID, Bucket: ledger.Available, Amount: t.amount + t.fee},
		}, ledger.Failed, TxFailed
		t.failureReason = o.Reason
	}
	applied = rail.Applied{Effect: rail.Changed, Was: applied.Was, Status: string(status)}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency,
		Kind: "payout_transaction." + string(status), RecordID: t.balanceID, At: now, Legs: legs}); err != nil {
		return applied, err
	}
	if err := ledger.Finish(ctx, tx, r.merchantID, t.balanceID, final, now); err != nil {
		return applied, err
	}
	t.status = status
	if err := s.saveTransaction(ctx, tx, r.merchantID, t, now); err != nil {
		return applied, err
	}
	if err := s.emitTransaction(ctx, tx, r, t, now); err != nil {
		return applied, err
	}
	if othersPending > 0 {
		return applied, s.touch(ctx, tx, &r, now)
	}
	// payout.completed carries every transaction.
	if r.txs, err = readTransactions(ctx, tx, r.merchantID, r.id); err != nil {
		return applied, err
	}
	return applied, s.setStatus(ctx, tx, &r, Completed, now.UnixMilli())
}

// readOutcome reads what an outcome needs, in one round trip, locking in
// order: the account before the payout (outcomes run in batches, and
// every batch must queue on the shared buckets first: see
// ledger.LockAccount), then the transaction, how many others of its payout
// are pending, and the merchant's clock.
func (s *Service) readOutcome(ctx context.Context, tx *store.Tx, o rail.Outcome) (row, txRow, int, time.Time, error) {
	const ofTransaction = `SELECT payout_id FROM payout_transactions WHERE uuid = $1 AND merchant_id = $2`
	if err := ledger.SendLockAccountOf(ctx, tx, o.MerchantID, `SELECT p.account_id, p.currency FROM payouts p
		WHERE p.id = (`+ofTransaction+`) AND p.merchant_id = $2`, o.Key, o.MerchantID); err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	sentPayout, err := store.SendQuery(ctx, tx, `SELECT `+rowColumns+` FROM payouts WHERE id = (`+ofTransaction+`) AND merchant_id = $2`+s.db.ForUpdate(),
		[]any{o.Key, o.MerchantID}, scanRow)
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	sentTx, err := store.SendQuery(ctx, tx, `SELECT `+txColumns+` FROM payout_transactions WHERE uuid = $1 AND merchant_id = $2`,
		[]any{o.Key, o.MerchantID}, scanTransaction)
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	sentOthers, err := store.SendValue[int](ctx, tx, `SELECT count(*) FROM payout_transactions
		WHERE payout_id = (`+ofTransaction+`) AND merchant_id = $2 AND status = $3 AND uuid <> $1`,
		o.Key, o.MerchantID, string(TxPending))
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	sentOffset, err := s.clock.SendOffset(ctx, tx, o.MerchantID)
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	if err := tx.ReadSent(ctx); err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	payouts, err := sentPayout.Get()
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	txs, err := sentTx.Get()
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	if len(payouts) == 0 || len(txs) == 0 {
		return row{}, txRow{}, 0, time.Time{}, sql.ErrNoRows
	}
	othersPending, err := sentOthers.Get()
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	offset, err := sentOffset.Get()
	if err != nil {
		return row{}, txRow{}, 0, time.Time{}, err
	}
	return payouts[0], txs[0], othersPending, s.clock.At(time.Duration(offset) * time.Millisecond), nil
}

// returnTransaction books the return of a done transaction (CONTRACT §25):
// a new money_in balance record of category payout gives amount and fee
// back to available (ledger.GiveBack), the transaction is returned with
// the return's reason as its failure_reason, and payout_transaction.returned
// is sent. The payout keeps its status and total_amount.
func (s *Service) returnTransaction(ctx context.Context, tx *store.Tx, r row, t txRow, reason string, now time.Time) error {
	if _, err := ledger.GiveBack(ctx, tx, ledger.Return{MerchantID: r.merchantID, Currency: r.currency, Operation: "payout_transaction",
		Account: r.accountID, Category: ledger.Payout, Reference: t.uuid, Amount: t.amount, Fee: t.fee}, now); err != nil {
		return err
	}
	t.status, t.failureReason = TxReturned, reason
	if err := s.saveTransaction(ctx, tx, r.merchantID, t, now); err != nil {
		return err
	}
	if err := s.emitTransaction(ctx, tx, r, t, now); err != nil {
		return err
	}
	return s.touch(ctx, tx, &r, now)
}

func (r row) transaction(uuid string) int {
	for i, t := range r.txs {
		if t.uuid == uuid {
			return i
		}
	}
	return -1
}

func (r row) pendingTransactions() int {
	n := 0
	for _, t := range r.txs {
		if t.status == TxPending {
			n++
		}
	}
	return n
}

func (s *Service) saveTransaction(ctx context.Context, tx *store.Tx, merchantID string, t txRow, now time.Time) error {
	if err := tx.Send(ctx, `UPDATE payout_transactions SET status = $1, failure_reason = $2, updated_at = $3 WHERE uuid = $4 AND merchant_id = $5`,
		string(t.status), t.failureReason, now.UnixMilli(), t.uuid, merchantID); err != nil {
		return fmt.Errorf("update payout transaction %s: %w", t.uuid, err)
	}
	return nil
}

// touch records that a payout changed without changing its status.
func (s *Service) touch(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	r.updatedAt = now.UnixMilli()
	return tx.Send(ctx, `UPDATE payouts SET updated_at = $1 WHERE id = $2 AND merchant_id = $3`, r.updatedAt, r.id, r.merchantID)
}

// giveBack ends a payout that will never be processed (rejected, expired):
// its amounts and fees return to available in one entry, and every
// transaction and its balance record fail with reason, each with its
// payout_transaction.failed event.
func (s *Service) giveBack(ctx context.Context, tx *store.Tx, r *row, reason string, now time.Time) error {
	hold := r.totalAmount + r.totalFees
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "payout.return", At: now,
		Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -hold},
			{Account: r.accountID, Bucket: ledger.Available, Amount: hold},
		}}); err != nil {
		return err
	}
	for i := range r.txs {
		t := &r.txs[i]
		if err := ledger.Finish(ctx, tx, r.merchantID, t.balanceID, ledger.Failed, now); err != nil {
			return err
		}
		t.status, t.failureReason = TxFailed, reason
		if err := s.saveTransaction(ctx, tx, r.merchantID, *t, now); err != nil {
			return err
		}
		if err := s.emitTransaction(ctx, tx, *r, *t, now); err != nil {
			return err
		}
	}
	return nil
}
