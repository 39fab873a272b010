package payin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Job kinds of the payin lifecycle, each with its payload.
var (
	jobExpire         = job.NewKind[ref]("payin.expire")
	jobClear          = job.NewKind[ref]("payin.clear")
	jobReleaseReserve = job.NewKind[ref]("payin.release_reserve")
	jobIssuePayCode   = job.NewKind[ref]("payin.issue_pay_code")
	jobRefund         = job.NewKind[refundRef]("payin.refund")
)

// setStatus moves r to status (and writes its other changed columns), then
// emits the status change webhook, all in tx.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, r *row, to Status, at time.Time) error {
	r.status, r.updatedAt = to, at.UnixMilli()
	if err := tx.Send(ctx, `UPDATE payins SET status = $1, stage = $2, paid_amount = $3, fee = $4, reserve = $5,
		refunded = $6, last_refund = $7, refund_description = $8, pay_code = $9, otp_attempts = $10, balance_id = $11, updated_at = $12
		WHERE uuid = $13 AND merchant_id = $14`, string(r.status), r.stage, r.paid, r.fee, r.reserve, r.refunded, r.lastRefund, r.refundDescription,
		r.payCode, r.otpAttempts, r.balanceID, r.updatedAt, r.uuid, r.merchantID); err != nil {
		return fmt.Errorf("update payin %s: %w", r.uuid, err)
	}
	return s.emit(ctx, tx, *r, "payin."+string(to), at)
}

// SimulateRequest is the body of POST /v2/payins/simulate (sandbox).
type SimulateRequest struct {
	UUID   string      `json:"uuid" required:"true"`
	Status string      `json:"status" required:"true" enum:"completed,failed" doc:"completed: the customer paid (received); failed: the payment failed."`
	Amount money.Input `json:"amount,omitempty" doc:"What the customer paid; defaults to total."`
}

// Simulate completes or fails a pending payin as the sandbox rail.
func (s *Service) Simulate(ctx context.Context, tx *store.Tx, p merchant.Principal, req SimulateRequest) (Payin, error) {
	if req.UUID == "" || (req.Status != "completed" && req.Status != "failed") {
		f := fault.Fields{}
		if req.UUID == "" {
			f.Add("uuid", "is required")
		}
		if req.Status != "completed" && req.Status != "failed" {
			f.Add("status", "must be completed or failed")
		}
		return Payin{}, f.Err()
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.UUID, lockPayin)
	if err != nil {
		return Payin{}, err
	}
	paid := r.total
	if !req.Amount.IsZero() {
		c := r.cur
		if paid, _, err = money.ParseField("amount", req.Amount, c); err != nil {
			return Payin{}, err
		}
		// An over- or underpayment is possible, but not beyond what the method takes.
		if m := r.meth; paid > max(r.total, m.MaxMinor) {
			return Payin{}, fault.Rule(fault.CodeAmountOutOfRange, "%s takes at most %s %s", r.method, money.Format(max(r.total, m.MaxMinor), c), c.Code)
		}
	}
	if err := s.complete(ctx, tx, &r, req.Status, paid, now); err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}

// complete is the rail's answer to a pending payin: "completed" with the
// amount paid, or "failed".
func (s *Service) complete(ctx context.Context, tx *store.Tx, r *row, outcome string, paid int64, now time.Time) error {
	if r.status != Pending {
		return fault.State("payin %s is %s; only a pending payin can be completed or failed", r.uuid, r.status)
	}
	if r.stage == StageAuthorizeOTP {
		return fault.State("payin %s awaits its OTP: confirm it first (POST /v2/payins/bank/confirm_otp)", r.uuid)
	}
	if outcome == "failed" {
		return s.setStatus(ctx, tx, r, Failed, now)
	}
	return s.receive(ctx, tx, r, paid, now)
}

// receive records a payment of paid: the money lands in incoming with a
// waiting balance record, and a job clears it to available less fees and
// the rolling reserve.
func (s *Service) receive(ctx context.Context, tx *store.Tx, r *row, paid int64, now time.Time) error {
	m := r.meth
	// The account's reserve rate is read with the post below, not in a
	// round trip of its own: only the payin's update, after the post,
	// needs it.
	sentReserve, err := store.SendValue[int64](ctx, tx, `SELECT reserve_bps FROM accounts WHERE id = $1 AND merchant_id = $2`, r.accountID, r.merchantID)
	if err != nil {
		return fmt.Errorf("receive payin %s: %w", r.uuid, err)
	}
	r.paid = paid
	r.fee = min(paid, money.Percent(paid, m.FeeBPS)+m.FeeFixedMinor)
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.currency,
		RequestType: ledger.MoneyIn, TransactionType: ledger.Payment, Status: ledger.Waiting,
		Amount: paid - r.fee, Fees: r.fee, Total: paid, ReferenceID: r.uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return err
	}
	r.balanceID = &rec.ID
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "payin.receive",
		RecordID: rec.ID, Spread: r.uuid, At: now, Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.External, Amount: -paid},
			{Account: r.accountID, Bucket: ledger.Incoming, Amount: paid},
		}}); err != nil {
		return err
	}
	if err := tx.ReadSent(ctx); err != nil {
		return fmt.Errorf("receive payin %s: %w", r.uuid, err)
	}
	reserveBPS, err := sentReserve.Get()
	if err != nil {
		return fmt.Errorf("receive payin %s: %w", r.uuid, err)
	}
	r.reserve = money.Percent(paid-r.fee, reserveBPS)
	// The clearing moves the money of the receipt's slot: it runs in the
	// slot's lane, group-committed with other clearings of the slot, beside
	// the other slots' lanes and the receipts.
	if err := job.Enqueue(ctx, tx, s.queue, jobClear, ref{MerchantID: r.merchantID, UUID: r.uuid},
		job.Options{ClockOf: r.merchantID, RunAt: now, Lane: Lane(r.merchantID, r.uuid)}); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, r, Received, now)
}

// Lane is the store lane (store.WithLane) of a payin's receipt and its
// clearing: their entries are spread by the payin (ledger.Entry.Spread), so
// they run in the lane of its slot.
func Lane(merchantID, uuid string) string { return ledger.Lane(merchantID, uuid) }

// clearJob moves a received payment from incoming to available, less fees
// and the rolling reserve, and schedules the reserve's release.
func (s *Service) clearJob(ctx context.Context, tx *store.Tx, j job.Job, target ref) error {
	r, now, err := s.payinOf(ctx, tx, j, target, clearLock(ctx, target))
	if err != nil {
		return err
	}
	return s.clear(ctx, tx, []row{r}, now)
}

// clearJobs is clearJob for several of one merchant's payins at once (a
// hot account's clearings that came together, job.RegisterBatch): one read
// of the payins, then each one's post.
func (s *Service) clearJobs(ctx context.Context, tx *store.Tx, jobs []job.Job, targets []ref) error {
	merchantID, l := targets[0].MerchantID, lockPayin
	uuids := make([]string, len(targets))
	for i, t := range targets {
		if t.MerchantID != merchantID {
			return fmt.Errorf("clear payins: a batch of %s's payins holds one of %s", merchantID, t.MerchantID)
		}
		if clearLock(ctx, t) == lockAccount {
			l = lockAccount
		}
		uuids[i] = t.UUID
	}
	rs, err := s.getAll(ctx, tx, merchantID, uuids, l)
	if err != nil {
		return err
	}
	now, err := s.clock.OfJob(ctx, tx, jobs[0], merchantID)
	if err != nil {
		return err
	}
	return s.clear(ctx, tx, rs, now)
}

// clearLock is how a clearing locks its payin. In its own slot's lane (its
// lane run, group-committed with receipts and clearings of that slot alone)
// the clearing holds only the payin and its slot. A worker runs it among
// the merchant's other jobs in one transaction (in the merchant's lane),
// where it queues on the account first, as they do: holding its slot's rows
// while a job after it waits for the account, it would deadlock with a
// refund or payout that holds the account and waits for the whole bucket.
func clearLock(ctx context.Context, target ref) lock {
	if store.LaneOf(ctx) == Lane(target.MerchantID, target.UUID) {
		return lockPayin
	}
	return lockAccount
}

// clear moves each received payment of rs (one merchant's payins, read
// locked) from incoming to available, less fees and the rolling reserve,
// and schedules each reserve's release. A payin with no payment waiting
// (balanceID unset) is left as it is.
func (s *Service) clear(ctx context.Context, tx *store.Tx, rs []row, now time.Time) error {
	// The reserve periods are read with the posts, not in round trips of
	// their own.
	sentDays := make([]*store.Pending[int], len(rs))
	for i, r := range rs {
		if r.balanceID == nil {
			continue
		}
		if r.reserve > 0 {
			var err error
			if sentDays[i], err = store.SendValue[int](ctx, tx, `SELECT reserve_days FROM accounts WHERE id = $1 AND merchant_id = $2`, r.accountID, r.merchantID); err != nil {
				return err
			}
		}
		if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "payin.clear",
			RecordID: *r.balanceID, Spread: r.uuid, At: now, Legs: []ledger.Leg{
				{Account: r.accountID, Bucket: ledger.Incoming, Amount: -r.paid},
				{Account: r.accountID, Bucket: ledger.Available, Amount: r.paid - r.fee - r.reserve},
				{Account: r.accountID, Bucket: ledger.RollingReserve, Amount: r.reserve},
				{Account: r.accountID, Bucket: ledger.Fees, Amount: r.fee},
			}}); err != nil {
			return err
		}
		if err := ledger.Finish(ctx, tx, r.merchantID, *r.balanceID, ledger.Done, now); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(sentDays, func(p *store.Pending[int]) bool { return p != nil }) {
		return nil
	}
	if err := tx.ReadSent(ctx); err != nil {
		return err
	}
	for i, r := range rs {
		if sentDays[i] == nil {
			continue
		}
		days, err := sentDays[i].Get()
		if err != nil {
			return err
		}
		if err := job.Enqueue(ctx, tx, s.queue, jobReleaseReserve, ref{MerchantID: r.merchantID, UUID: r.uuid},
			job.Options{ClockOf: r.merchantID, RunAt: now.AddDate(0, 0, days)}); err != nil {
			return err
		}
	}
	return nil
}

// releaseReserveJob returns a payin's rolling reserve to available once the
// account's reserve period has passed.
func (s *Service) releaseReserveJob(ctx context.Context, tx *store.Tx, j job.Job, target ref) error {
	r, now, err := s.payinOf(ctx, tx, j, target, lockAccount)
	if err != nil || r.reserve == 0 || r.balanceID == nil {
		return err
	}
	_, err = ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "payin.release_reserve",
		RecordID: *r.balanceID, Spread: r.uuid, At: now, Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.RollingReserve, Amount: -r.reserve},
			{Account: r.accountID, Bucket: ledger.Available, Amount: r.reserve},
		}})
	return err
}

// payinOf reads the payin target names for job j (its payload), locked as
// l says, and the time on its merchant's clock.
func (s *Service) payinOf(ctx context.Context, tx *store.Tx, j job.Job, target ref, l lock) (row, time.Time, error) {
	r, err := s.get(ctx, tx, target.MerchantID, target.UUID, l)
	if err != nil {
		return row{}, time.Time{}, err
	}
	now, err := s.clock.OfJob(ctx, tx, j, r.merchantID)
	return r, now, err
}

// expireJob expires a payin still pending at its expired_at: the job of one
// payin that earlier versions queued (see expiry.go).
func (s *Service) expireJob(ctx context.Context, tx *store.Tx, j job.Job, target ref) error {
	r, now, err := s.payinOf(ctx, tx, j, target, lockAccount)
	if err != nil || r.status != Pending {
		return err
	}
	return s.setStatus(ctx, tx, &r, Expired, now)
}

// UUIDRequest is a body that names a payin.
type UUIDRequest struct {
	UUID string `json:"uuid" required:"true"`
}

// Cancel cancels a pending, cancellable payin.
func (s *Service) Cancel(ctx context.Context, tx *store.Tx, p merchant.Principal, req UUIDRequest) (Payin, error) {
	if req.UUID == "" {
		return Payin{}, fault.Field("uuid", "is required")
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.UUID, lockAccount)
	if err != nil {
		return Payin{}, err
	}
	if !r.meth.Cancellable {
		return Payin{}, fault.Rule(CodeNotCancellable, "%s payins cannot be cancelled", r.method)
	}
	if r.status != Pending {
		return Payin{}, fault.State("payin %s is %s; only a pending payin can be cancelled", r.uuid, r.status)
	}
	if err := s.setStatus(ctx, tx, &r, Cancelled, now); err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}

// RefundRequest is the body of POST /v2/payins/refund.
type RefundRequest struct {
	UUID        string      `json:"uuid" required:"true"`
	Amount      money.Input `json:"amount,omitempty" doc:"Defaults to everything not yet refunded."`
	Description string      `json:"description" required:"true" doc:"5 to 255 characters. In the sandbox, a description containing [sandbox:expire] makes the refund fail (return_expired)."`
}

// Refund starts a (partial) refund of a received payin: the amount moves
// from available to outgoing now and leaves when the rail confirms.
// Refunds never add up to more than was paid: the payin row is locked, and
// a refund in progress blocks another.
func (s *Service) Refund(ctx context.Context, tx *store.Tx, p merchant.Principal, req RefundRequest) (Payin, error) {
	f := fault.Fields{}
	if req.UUID == "" {
		f.Add("uuid", "is required")
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(req.Description)); n < 5 || n > 255 {
		f.Add("description", "must be 5 to 255 characters")
	}
	if err := f.Err(); err != nil {
		return Payin{}, err
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.UUID, lockAccount)
	if err != nil {
		return Payin{}, err
	}
	if !r.meth.Refundable {
		return Payin{}, fault.Rule(CodeNotRefundable, "%s payins cannot be refunded", r.method)
	}
	if r.status != Received && r.status != ReturnReceived && r.status != ReturnExpired {
		return Payin{}, fault.State("payin %s is %s; only a received payin can be refunded", r.uuid, r.status)
	}
	c := r.cur
	left := r.paid - r.refunded
	amount := left
	if !req.Amount.IsZero() {
		if amount, _, err = money.ParseField("amount", req.Amount, c); err != nil {
			return Payin{}, err
		}
	}
	if amount > left || left <= 0 {
		return Payin{}, fault.Rule(fault.CodeAmountOutOfRange, "at most %s %s is left to refund", money.Format(left, c), c.Code)
	}
	rec := ledger.Record{MerchantID: r.merchantID, AccountID: r.accountID, Currency: r.currency,
		RequestType: ledger.MoneyOut, TransactionType: ledger.Refund, Status: ledger.Waiting,
		Amount: amount, Outgoing: amount, Total: amount, ReferenceID: r.uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return Payin{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "refund.start",
		RecordID: rec.ID, At: now, Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Available, Amount: -amount},
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: amount},
		}}); err != nil {
		if fault.Is(err, fault.CodeInsufficientFunds) {
			return Payin{}, fault.Rule(fault.CodeInsufficientFunds, "the available balance is lower than the refund of %s %s (the payment's fees are not refunded, so a full refund needs other funds)",
				money.Format(amount, c), c.Code)
		}
		return Payin{}, err
	}
	refundID := store.RandomID(store.UUIDLen)
	if _, err := tx.ExecContext(ctx, `INSERT INTO payin_refunds (uuid, payin_uuid, merchant_id, amount, description, status, balance_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $7)`, refundID, r.uuid, r.merchantID, amount, req.Description, rec.ID, now.UnixMilli()); err != nil {
		return Payin{}, fmt.Errorf("refund payin %s: %w", r.uuid, err)
	}
	r.refunded += amount
	r.lastRefund = amount
	r.refundDescription = req.Description
	if err := job.Enqueue(ctx, tx, s.queue, jobRefund, refundRef{MerchantID: r.merchantID, Refund: refundID},
		job.Options{ClockOf: r.merchantID, RunAt: now.Add(s.RefundDelay)}); err != nil {
		return Payin{}, err
	}
	if err := s.setStatus(ctx, tx, &r, ReturnPending, now); err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}

// sandboxExpire in a refund's description makes the sandbox rail fail it:
// an explicit marker, so that no ordinary wording triggers it.
const sandboxExpire = "[sandbox:expire]"

// refundRef is the payload of jobRefund: the refund the rail answers.
type refundRef struct {
	MerchantID string `json:"merchant_id"`
	Refund     string `json:"refund"`
}

// refundJob is the sandbox rail answering a refund: it reaches the customer
// (return_received: the money leaves outgoing) or, for a description
// containing sandboxExpire, it cannot be delivered (return_expired: the money
// goes back to available).
func (s *Service) refundJob(ctx context.Context, tx *store.Tx, j job.Job, ref refundRef) error {
	var payinUUID, description, balanceID, status string
	var amount int64
	if err := tx.QueryRowContext(ctx, `SELECT payin_uuid, description, balance_id, status, amount FROM payin_refunds WHERE uuid = $1 AND merchant_id = $2`,
		ref.Refund, ref.MerchantID).Scan(&payinUUID, &description, &balanceID, &status, &amount); err != nil {
		return fmt.Errorf("refund %s: %w", ref.Refund, err)
	}
	if status != "pending" {
		return nil
	}
	r, err := s.get(ctx, tx, ref.MerchantID, payinUUID, lockAccount)
	if err != nil {
		return err
	}
	now, err := s.clock.OfJob(ctx, tx, j, r.merchantID)
	if err != nil {
		return err
	}
	failed := strings.Contains(description, sandboxExpire)
	to, final, outcome, back := ReturnReceived, ledger.Done, "received", ledger.External
	if failed {
		to, final, outcome, back = ReturnExpired, ledger.Failed, "expired", ledger.Available
		r.refunded -= amount
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: r.merchantID, Currency: r.currency, Kind: "refund." + outcome,
		RecordID: balanceID, At: now, Legs: []ledger.Leg{
			{Account: r.accountID, Bucket: ledger.Outgoing, Amount: -amount},
			{Account: r.accountID, Bucket: back, Amount: amount},
		}}); err != nil {
		return err
	}
	if err := ledger.Finish(ctx, tx, r.merchantID, balanceID, final, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payin_refunds SET status = $1, updated_at = $2 WHERE uuid = $3 AND merchant_id = $4`, outcome, now.UnixMilli(), ref.Refund, r.merchantID); err != nil {
		return err
	}
	return s.setStatus(ctx, tx, &r, to, now)
}

// issuePayCodeJob gives jp_bank_jpy and au_payid_npp_aud payins their
// payment details shortly after creation and tells the merchant by webhook.
func (s *Service) issuePayCodeJob(ctx context.Context, tx *store.Tx, j job.Job, target ref) error {
	r, now, err := s.payinOf(ctx, tx, j, target, lockAccount)
	if err != nil || r.status != Pending {
		return err
	}
	r.payCode = s.laterPayCode(r, now)
	r.updatedAt = now.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE payins SET pay_code = $1, updated_at = $2 WHERE uuid = $3 AND merchant_id = $4`, r.payCode, r.updatedAt, r.uuid, r.merchantID); err != nil {
		return err
	}
	if err := claimPayCode(ctx, tx, r); err != nil {
		return err
	}
	return s.emit(ctx, tx, r, "payin.pay_code", now)
}

// OTPRequest is the body of POST /v2/payins/bank/confirm_otp.
type OTPRequest struct {
	UUID string `json:"uuid" required:"true" doc:"The payin's uuid."`
	Code string `json:"code" required:"true" doc:"The OTP the account owner received (sandbox: 123456)."`
}

// OTPResult is the 200 answer of confirm_otp.
type OTPResult struct {
	PayCode map[string]any `json:"pay_code"`
}

// sandboxOTP is the code the sandbox rail accepts; maxOTPAttempts wrong
// codes fail the payin.
const (
	sandboxOTP     = "123456"
	maxOTPAttempts = 5
)

// OTPOutcome is what confirm_otp decided: the payment details, or the
// refusal of a wrong code, which is an answer (400) whose counted attempt
// must still be committed.
type OTPOutcome struct {
	Result  OTPResult
	Refusal error
}

// ConfirmOTP checks the OTP of a payin at stage authorize_otp. The right
// code clears the stage, issues pay_code and sends it by webhook. A wrong
// code is counted in tx and refused (Refusal); the fifth fails the payin.
func (s *Service) ConfirmOTP(ctx context.Context, tx *store.Tx, p merchant.Principal, req OTPRequest) (OTPOutcome, error) {
	f := fault.Fields{}
	if req.UUID == "" {
		f.Add("uuid", "is required")
	}
	if req.Code == "" {
		f.Add("code", "is required")
	}
	if err := f.Err(); err != nil {
		e, _ := fault.As(err)
		e.Kind = fault.Malformed
		return OTPOutcome{}, e
	}
	now := s.clock.Of(p)
	r, err := s.get(ctx, tx, p.MerchantID, req.UUID, lockAccount)
	if err != nil {
		return OTPOutcome{}, err
	}
	if r.status != Pending || r.stage != StageAuthorizeOTP {
		return OTPOutcome{}, otpError("payin %s is not waiting for an OTP", r.uuid)
	}
	if len(req.Code) > 16 || req.Code != sandboxOTP {
		return s.wrongOTP(ctx, tx, &r, now)
	}
	r.stage = ""
	r.payCode = s.otpPayCode(r)
	r.updatedAt = now.UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE payins SET stage = '', pay_code = $1, updated_at = $2 WHERE uuid = $3 AND merchant_id = $4`, r.payCode, r.updatedAt, r.uuid, r.merchantID); err != nil {
		return OTPOutcome{}, err
	}
	if err := claimPayCode(ctx, tx, r); err != nil {
		return OTPOutcome{}, err
	}
	if err := s.emit(ctx, tx, r, "payin.pay_code", now); err != nil {
		return OTPOutcome{}, err
	}
	return OTPOutcome{Result: OTPResult{PayCode: r.view().PayCode}}, nil
}

// wrongOTP counts a wrong code; the maxOTPAttempts-th fails the payin.
func (s *Service) wrongOTP(ctx context.Context, tx *store.Tx, r *row, now time.Time) (OTPOutcome, error) {
	r.otpAttempts++
	if r.otpAttempts >= maxOTPAttempts {
		r.stage = ""
		if err := s.setStatus(ctx, tx, r, Failed, now); err != nil {
			return OTPOutcome{}, err
		}
		return OTPOutcome{Refusal: otpError("wrong code; %d wrong codes: the payin has failed", maxOTPAttempts)}, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payins SET otp_attempts = $1, updated_at = $2 WHERE uuid = $3 AND merchant_id = $4`, r.otpAttempts, now.UnixMilli(), r.uuid, r.merchantID); err != nil {
		return OTPOutcome{}, err
	}
	return OTPOutcome{Refusal: otpError("wrong code; %d attempts left", maxOTPAttempts-r.otpAttempts)}, nil
}

func otpError(format string, args ...any) error {
	return fault.New(fault.Malformed, CodeOTPInvalid, format, args...)
}
