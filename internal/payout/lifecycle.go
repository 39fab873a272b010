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

// settle applies the rail's outcome of one transaction: done, the money
// leaves outgoing (the fee to fees); failed, amount and fee return to
// available. An outcome for a transaction already settled changes nothing.
// The payout completes when its last transaction settles. The work is the
// transaction's alone (its row, its entry, its event), however large the
// batch: the payout row is locked, not read with all its transactions.
func (s *Service) settle(ctx context.Context, tx *store.Tx, o rail.Outcome) error {
	// One round trip reads what the outcome needs, locking in order: the
	// account before the payout (outcomes run in batches, and every batch
	// must queue on the shared buckets first: see ledger.LockAccount), then
	// the transaction, how many others of its payout are pending, and the
	// merchant's clock.
	const ofTransaction = `SELECT payout_id FROM payout_transactions WHERE uuid = $1 AND merchant_id = $2`
	if err := ledger.SendLockAccountOf(ctx, tx, o.MerchantID, `SELECT p.account_id, p.currency FROM payouts p
		WHERE p.id = (`+ofTransaction+`) AND p.merchant_id = $2`, o.Key, o.MerchantID); err != nil {
		return err
	}
	sentPayout, err := store.SendQuery(ctx, tx, `SELECT `+rowColumns+` FROM payouts WHERE id = (`+ofTransaction+`) AND merchant_id = $2`+s.db.ForUpdate(),
		[]any{o.Key, o.MerchantID}, scanRow)
	if err != nil {
		return err
	}
	sentTx, err := store.SendQuery(ctx, tx, `SELECT `+txColumns+` FROM payout_transactions WHERE uuid = $1 AND merchant_id = $2`,
		[]any{o.Key, o.MerchantID}, scanTransaction)
	if err != nil {
		return err
	}
	sentOthers, err := store.SendValue[int](ctx, tx, `SELECT count(*) FROM payout_transactions
		WHERE payout_id = (`+ofTransaction+`) AND merchant_id = $2 AND status = $3 AND uuid <> $1`,
		o.Key, o.MerchantID, string(TxPending))
	if err != nil {
		return err
	}
	sentOffset, err := s.clock.SendOffset(ctx, tx, o.MerchantID)
	if err != nil {
		return err
	}
	if err := tx.ReadSent(ctx); err != nil {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	payouts, err := sentPayout.Get()
	if err != nil {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	if len(payouts) == 0 {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, sql.ErrNoRows)
	}
	r := payouts[0]
	txs, err := sentTx.Get()
	if err != nil {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	var t txRow
	if len(txs) > 0 {
		t = txs[0]
	}
	othersPending, err := sentOthers.Get()
	if err != nil {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	offset, err := sentOffset.Get()
	if err != nil {
		return fmt.Errorf("outcome of payout transaction %s: %w", o.Key, err)
	}
	if t.status != TxPending {
		return nil
	}
	now := s.clock.At(time.Duration(offset) * time.Millisecond)
	legs, final, status := []ledger.Leg{
		{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -(t.amount + t.fee)},
		{Account: r.accountID, Bucket: ledger.External, Amount: t.amount},
		{Account: r.accountID, Bucket: ledger.Fees, Amount: t.fee},
	}, ledger.Done, TxDone
	if !o.Done {
		legs, final, status = []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -(t.amount + t.fee)},
			{Account: r.accountID, Bucket: ledger.Available, Amount: t.amount + t.fee},
		}, ledger.Failed, TxFailed
		t.failureReason = o.Reason
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency,
		Kind: "payout_transaction." + string(status), RecordID: t.balanceID, At: now, Legs: legs}); err != nil {
		return err
	}
	if err := ledger.Finish(ctx, tx, r.merchantID, t.balanceID, final, now); err != nil {
		return err
	}
	t.status = status
	if err := s.saveTransaction(ctx, tx, r.merchantID, t, now); err != nil {
		return err
	}
	if err := s.emitTransaction(ctx, tx, r, t, now); err != nil {
		return err
	}
	if othersPending > 0 {
		return s.touch(ctx, tx, &r, now)
	}
	if !r.target().IsZero() { // payout.completed carries every transaction
		var err error
		if r.txs, err = readTransactions(ctx, tx, r.merchantID, r.id); err != nil {
			return err
		}
	}
	return s.setStatus(ctx, tx, &r, Completed, now.UnixMilli())
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
