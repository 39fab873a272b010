// Package transfer moves a merchant's money between its own accounts in one
// currency (payments account to treasury account and back) and out of its
// treasury account to an external bank account (CONTRACT §12, §15). A
// transfer starts processing with its amount in the source account's
// outgoing balance, as one balance record whose Balance ID is the transfer's
// uuid, and ends completed (the money arrives: a Transfer In record on the
// destination account, or it leaves for the bank) or failed (the money goes
// back). In the sandbox the outcome comes from POST /v2/transfers/simulate;
// in production an internal transfer completes at once and an external one
// when the rail confirms it.
package transfer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/rail"
	"payd/internal/settlement"
	"payd/internal/store"
	"payd/internal/treasury"
	"payd/internal/webhook"
)

// Status of a transfer.
type Status string

const (
	Processing Status = "processing"
	Completed  Status = "completed"
	Failed     Status = "failed"
	// Returned: an external transfer completed, then sent back by the
	// beneficiary's bank (CONTRACT §25); its amount is back in available.
	Returned Status = "returned"
	// Held: an external transfer an approval policy caught waits for its
	// approvals (CONTRACT §20, §25), its amount out of available; Rejected
	// and Expired: never sent, its amount back.
	Held     Status = "held"
	Rejected Status = "rejected"
	Expired  Status = "expired"
)

// Direction of an internal transfer, seen from the treasury account.
const (
	directionIn  = "in"
	directionOut = "out"
)

// keyPrefix marks the rail transfers of external transfers.
const keyPrefix = "trf_"

// jobRelease sends a production transfer on after its creation commits.
var jobRelease = job.NewKind[ref]("transfer.release")

// Service runs transfers.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	rail     rail.Rail
	banks    settlement.Zengin
	sandbox  bool
	policies *policy.Service
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	Rail     rail.Rail
	Banks    settlement.Zengin
	// Sandbox leaves every transfer processing until it is simulated.
	Sandbox bool
	// Policies evaluates the merchant's approval policies on an external transfer.
	Policies *policy.Service
}

// NewService returns the service, its job registered and its rail outcomes heard.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, webhooks: d.Webhooks, policy: d.Policy, rail: d.Rail, banks: d.Banks, sandbox: d.Sandbox, policies: d.Policies}
	job.Register(d.Queue, jobRelease, s.releaseJob)
	job.Register(d.Queue, jobExpireHold, s.expireHoldJob)
	d.Rail.Listen(keyPrefix, s.outcome)
	return s
}

// Request is the body of POST /v2/transfers.
type Request struct {
	Currency            string                  `json:"currency,omitempty" doc:"Absent: the calling app's currency."`
	Amount              money.Input             `json:"amount" required:"true" example:"100.00"`
	Description         string                  `json:"description" required:"true" doc:"1 to 140 characters." example:"Move to treasury"`
	TreasuryAccountID   string                  `json:"treasury_account_id,omitempty" doc:"The merchant's active treasury account in the currency: the money goes into it from the payments account, or out of it into the payments account with direction out. Exactly one of treasury_account_id and external_bank_account."`
	Direction           string                  `json:"direction,omitempty" enum:"in,out" doc:"With treasury_account_id: in (default) or out."`
	ExternalBankAccount *settlement.BankAccount `json:"external_bank_account,omitempty" doc:"A bank account the money leaves for, out of the merchant's active treasury account in the currency; validated as a settlement beneficiary is."`
	WebhookNotification webhook.Target          `json:"webhook_notification,omitempty" doc:"Where the transfer.<status> events go; none when absent."`
}

// Transfer is a transfer as the API returns it and its webhooks carry it.
type Transfer struct {
	UUID          string       `json:"uuid" doc:"The Balance ID of the record the transfer wrote on the account the money left."`
	Status        Status       `json:"status" enum:"held,processing,completed,failed,returned,rejected,expired" doc:"held while an external transfer an approval policy caught waits for its approvals (then processing, or rejected or expired with its amount back in available); processing until it lands; completed or failed; returned when a completed external transfer came back from the beneficiary's bank (its amount back in available, failure_reason says why)."`
	Currency      string       `json:"currency"`
	Amount        money.String `json:"amount"`
	Description   string       `json:"description"`
	From          Party        `json:"from"`
	To            Party        `json:"to"`
	CreatedAt     clock.Time   `json:"created_at"`
	CompletedAt   *clock.Time  `json:"completed_at"`
	FailureReason *string      `json:"failure_reason"`
	BankReference *string      `json:"bank_reference" doc:"What the bank and the beneficiary's statement name an external transfer by, from its creation (16 upper-case letters and digits; 10 digits when a zengin bank-file rail serves the currency's transfers); null for a transfer between the merchant's own accounts."`
	Approval      *Approval    `json:"approval" doc:"The approval of an external transfer an approval policy held, like a payout's; null for every other transfer."`
}

// Party is one end of a transfer: one of the merchant's accounts, or a bank account.
type Party struct {
	Type                string                  `json:"type" enum:"payments_account,treasury_account,external_bank_account"`
	TreasuryAccountID   *string                 `json:"treasury_account_id,omitempty"`
	AccountNumber       *string                 `json:"account_number,omitempty" doc:"The payments or treasury account's number."`
	ExternalBankAccount *settlement.BankAccount `json:"external_bank_account,omitempty"`
}

// SimulateRequest is the body of POST /v2/transfers/simulate.
type SimulateRequest struct {
	UUID   string `json:"uuid" required:"true" doc:"The transfer's Balance ID."`
	Status Status `json:"status" required:"true" enum:"completed,failed"`
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Create starts a transfer: its amount leaves the source account's available
// balance for outgoing, as one balance record.
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request) (Transfer, error) {
	currency := strings.ToUpper(r.Currency)
	if currency == "" {
		currency = p.Currency
	}
	c, err := money.Lookup(currency)
	if err != nil {
		return Transfer{}, fault.Field("currency", "is not a supported ISO 4217 currency code")
	}
	f := fault.Fields{}
	if n := len(strings.TrimSpace(r.Description)); n == 0 || n > 140 {
		f.Add("description", "must be 1 to 140 characters")
	}
	if (r.TreasuryAccountID == "") == (r.ExternalBankAccount == nil) {
		f.Add("treasury_account_id", "give exactly one of treasury_account_id and external_bank_account")
	}
	if r.ExternalBankAccount != nil {
		if r.Direction != "" {
			f.Add("direction", "applies only with treasury_account_id")
		}
		r.ExternalBankAccount.Check(f, currency, s.banks)
	}
	if r.Direction != "" && r.Direction != directionIn && r.Direction != directionOut {
		f.Add("direction", "must be in or out")
	}
	if err := s.policy.Validate("webhook_notification", r.WebhookNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	amount, _, err := money.ParseField("amount", r.Amount, c)
	if err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	} else if amount <= 0 {
		f.Add("amount", "must be positive")
	}
	if r.ExternalBankAccount != nil {
		// What a bank-file rail's file cannot hold is refused now, not at
		// its cut-off (CONTRACT §17, §25).
		texts, err := rail.FileTextsOf(ctx, tx, s.rail, currency, rail.TransferMethod, "external transfers")
		if err != nil {
			return Transfer{}, err
		}
		texts.Name(f, "external_bank_account.account_name", r.ExternalBankAccount.AccountName)
		texts.Description(f, "description", r.Description)
	}
	if err := f.Err(); err != nil {
		return Transfer{}, err
	}
	from, to, err := s.ends(ctx, tx, p.MerchantID, currency, r)
	if err != nil {
		return Transfer{}, err
	}
	now := s.clock.Of(p)
	if err := ledger.LockAccount(ctx, tx, p.MerchantID, from.ID, currency); err != nil {
		return Transfer{}, err
	}
	if r.ExternalBankAccount != nil {
		if err := s.notOverdrawn(ctx, tx, p.MerchantID, currency); err != nil {
			return Transfer{}, err
		}
	}
	balances, err := ledger.Balances(ctx, tx, p.MerchantID, string(from.Kind), currency)
	if err != nil {
		return Transfer{}, err
	}
	var withdrawable int64
	for _, b := range balances {
		if b.AccountID == from.ID {
			withdrawable = b.Withdrawable
		}
	}
	if amount > withdrawable {
		return Transfer{}, fault.Rule(fault.CodeInsufficientFunds, "%s %s is withdrawable from the %s account", money.Format(withdrawable, c), c.Code, from.Kind)
	}
	hold, err := s.evaluate(ctx, tx, p, currency, amount, r, now)
	if err != nil {
		return Transfer{}, err
	}
	rec := ledger.Record{MerchantID: p.MerchantID, AccountID: from.ID, Currency: currency, RequestType: ledger.MoneyOut,
		TransactionType: ledger.TransferOut, Status: ledger.Waiting, Amount: amount, Outgoing: amount, Total: amount, SelfReference: true, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return Transfer{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: p.MerchantID, Currency: currency, Kind: "transfer.submit", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: from.ID, Bucket: ledger.Available, Amount: -amount},
			{Account: from.ID, Bucket: ledger.Outgoing, Amount: amount},
		}}); err != nil {
		return Transfer{}, err
	}
	var toID, reference any
	bank := ""
	if to.ID != 0 {
		toID = to.ID
	} else {
		raw, _ := json.Marshal(r.ExternalBankAccount)
		bank = string(raw)
		// An external transfer has its bank reference from its creation
		// (CONTRACT §25); an internal one never leaves payd.
		if reference, err = rail.DrawReference(ctx, tx, s.rail, p.MerchantID, currency, rail.TransferMethod); err != nil {
			return Transfer{}, err
		}
	}
	status, a := Processing, newApproval(p, hold, from, now)
	if hold.Held {
		status = Held
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO transfers (uuid, merchant_id, currency, amount, description, from_account_id, to_account_id,
		bank_account, status, endpoint_url, authorization_header, created_at, updated_at, bank_reference, created_by, created_by_user,
		approval_status, required_approvals, approval_roles, policy_name, policy_version, hold_until)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, '', $15, $16, $17, $18, $19, $20)`,
		rec.ID, p.MerchantID, currency, amount, strings.TrimSpace(r.Description), from.ID, toID, bank, string(status),
		r.WebhookNotification.EndpointURL, r.WebhookNotification.AuthorizationHeader, now.UnixMilli(), reference, a.createdBy,
		a.status, a.required, a.roles, a.policyName, a.policyVersion, a.holdUntil); err != nil {
		return Transfer{}, fmt.Errorf("store transfer: %w", err)
	}
	t, err := s.get(ctx, tx, p.MerchantID, rec.ID)
	if err != nil {
		return Transfer{}, err
	}
	if err := s.emit(ctx, tx, t, now); err != nil {
		return Transfer{}, err
	}
	if t.status == Held {
		if err := job.Enqueue(ctx, tx, s.queue, jobExpireHold, ref{MerchantID: p.MerchantID, UUID: rec.ID}, job.Options{ClockOf: p.MerchantID,
			RunAt: clock.FromMillis(t.holdUntil.Int64), UniqueKey: jobExpireHold.String() + ":" + rec.ID}); err != nil {
			return Transfer{}, err
		}
		return t.view()
	}
	release, err := s.released(ctx, tx, t)
	if err != nil {
		return Transfer{}, err
	}
	if release {
		if err := job.Enqueue(ctx, tx, s.queue, jobRelease, ref{MerchantID: p.MerchantID, UUID: rec.ID}, job.Options{ClockOf: p.MerchantID, RunAt: now}); err != nil {
			return Transfer{}, err
		}
	}
	return t.view()
}

// released reports whether a new transfer is sent on by itself (its release
// job): every transfer in production; in the sandbox, which simulates
// transfers' outcomes, only an external one that a bank-file rail serves
// (CONTRACT §17: a rail set on a sandbox works as in production).
func (s *Service) released(ctx context.Context, tx *store.Tx, t row) (bool, error) {
	if !s.sandbox {
		return true, nil
	}
	if t.toAccountID.Valid {
		return false, nil
	}
	format, err := rail.FileFormatOf(ctx, tx, s.rail, t.currency, rail.TransferMethod)
	return format != "", err
}

// notOverdrawn refuses money leaving the merchant by an external transfer
// while its payments account in currency is below zero, which only a lost
// card dispute does (CONTRACT §25): what it owes is covered first. The
// treasury account the transfer leaves from is locked, and is locked
// before the payments account by every writer (it has the higher id, a
// payments account being opened with the merchant), so the payments
// account's balance is read as committed, without its lock: a dispute
// taking it below zero after the read is the dispute's, not this
// transfer's, to answer for.
func (s *Service) notOverdrawn(ctx context.Context, tx *store.Tx, merchantID, currency string) error {
	balances, err := ledger.Balances(ctx, tx, merchantID, string(merchant.Payments), currency)
	if err != nil {
		return err
	}
	for _, b := range balances {
		if b.Available < 0 {
			c := money.MustLookup(currency)
			return fault.Rule(fault.CodeInsufficientFunds, "the %s payments account's available balance is %s (a lost card dispute): money leaves the merchant again once it is covered",
				currency, money.Format(b.Available, c))
		}
	}
	return nil
}

// ends resolves where a transfer's money leaves from and goes to (to.ID is
// 0 for a bank account).
func (s *Service) ends(ctx context.Context, tx *store.Tx, merchantID, currency string, r Request) (from, to merchant.Account, err error) {
	var tre merchant.Account
	if r.TreasuryAccountID != "" {
		tre, err = treasury.Active(ctx, tx, merchantID, r.TreasuryAccountID, currency)
	} else {
		tre, err = merchant.AccountByCurrency(ctx, tx, merchantID, merchant.Treasury, currency)
		if err == nil && tre.Status != merchant.TreasuryActive {
			err = fault.State("the %s treasury account %s is %s: external transfers leave an active treasury account", currency, tre.PublicID, tre.Status)
		} else if err != nil {
			err = fault.Field("external_bank_account", fmt.Sprintf("external transfers leave the merchant's %s treasury account, and it has none", currency))
		}
	}
	if err != nil {
		return from, to, err
	}
	if r.ExternalBankAccount != nil {
		return tre, merchant.Account{}, nil
	}
	payments, err := merchant.AccountByCurrency(ctx, tx, merchantID, merchant.Payments, currency)
	if err != nil {
		return from, to, fault.Field("currency", fmt.Sprintf("the merchant has no %s payments account", currency))
	}
	if r.Direction == directionOut {
		return tre, payments, nil
	}
	return payments, tre, nil
}

type ref struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// releaseJob sends a production transfer on: an internal one completes, an
// external one goes to the rail.
func (s *Service) releaseJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	t, now, err := s.locked(ctx, tx, rf.MerchantID, rf.UUID)
	if err != nil || t.status != Processing {
		return err
	}
	if t.toAccountID.Valid {
		return s.finish(ctx, tx, &t, true, "", now)
	}
	var b settlement.BankAccount
	if err := json.Unmarshal([]byte(t.bank), &b); err != nil {
		return fmt.Errorf("transfer %s: bank account: %w", t.uuid, err)
	}
	if !t.bankReference.Valid {
		return fmt.Errorf("transfer %s: no bank reference", t.uuid)
	}
	return s.rail.Submit(ctx, tx, rail.Transfer{Key: keyPrefix + t.uuid, MerchantID: t.merchantID, Method: rail.TransferMethod, Currency: t.currency,
		AmountMinor: t.amount, Params: b.RailParams(), At: now, BankReference: t.bankReference.String, Description: t.description})
}

// outcome applies the rail's word on an external transfer, in the
// outcome order (rail.Judge): a processing one completes or fails, a
// completed one is returned; any other word changes nothing.
func (s *Service) outcome(ctx context.Context, tx *store.Tx, o rail.Outcome) (rail.Applied, error) {
	t, now, err := s.locked(ctx, tx, o.MerchantID, strings.TrimPrefix(o.Key, keyPrefix))
	if err != nil {
		return rail.Applied{}, err
	}
	applied := rail.Applied{Effect: rail.Judge(settlement.StateOf(settlement.Status(t.status)), o.Verdict), Was: string(t.status), Status: string(t.status)}
	if applied.Effect != rail.Changed {
		return applied, nil
	}
	if o.Verdict == rail.Returned {
		err = s.giveBack(ctx, tx, &t, o.Reason, now)
	} else {
		err = s.finish(ctx, tx, &t, o.Verdict == rail.Done, o.Reason, now)
	}
	return rail.Applied{Effect: rail.Changed, Was: applied.Was, Status: string(t.status)}, err
}

// giveBack books the return of a completed external transfer
// (settlement.Return) and sends transfer.returned.
func (s *Service) giveBack(ctx context.Context, tx *store.Tx, t *row, reason string, now time.Time) error {
	end, err := settlement.Return(ctx, tx, settlement.Transfers, ledger.Outflow{MerchantID: t.merchantID, Currency: t.currency,
		Operation: "transfer", RecordID: t.uuid, Reference: t.uuid, From: t.fromAccountID, To: t.toAccountID, Amount: t.amount}, reason, now)
	if err != nil {
		return err
	}
	t.status, t.failure = Status(end.Status), end.Failure
	return s.emit(ctx, tx, *t, now)
}

// Simulate drives a sandbox transfer to its final state; a finished one is
// 409 INVALID_STATE.
func (s *Service) Simulate(ctx context.Context, tx *store.Tx, p merchant.Principal, r SimulateRequest) (Transfer, error) {
	f := fault.Fields{}
	if r.UUID == "" {
		f.Add("uuid", "is required")
	}
	if r.Status != Completed && r.Status != Failed {
		f.Add("status", "must be completed or failed")
	}
	if err := f.Err(); err != nil {
		return Transfer{}, err
	}
	t, now, err := s.locked(ctx, tx, p.MerchantID, r.UUID)
	if err != nil {
		return Transfer{}, err
	}
	if t.status != Processing {
		return Transfer{}, fault.State("transfer %s is already %s", t.uuid, t.status)
	}
	// One handed to a bank-file rail is in (or waits for) a bank file: only
	// the bank's answer ends it, or a simulated failure would give back
	// money the file still pays.
	if handed, err := rail.Handed(ctx, tx, t.merchantID, keyPrefix+t.uuid); err != nil || handed {
		if err != nil {
			return Transfer{}, err
		}
		return Transfer{}, fault.State("transfer %s went to the operator's bank-file rail: the bank's answer ends it, not a simulation", t.uuid)
	}
	reason := ""
	if r.Status == Failed {
		reason = "failed by simulation"
	}
	if err := s.finish(ctx, tx, &t, r.Status == Completed, reason, now); err != nil {
		return Transfer{}, err
	}
	return t.view()
}

// finish ends a transfer. Completed: the amount leaves the source's
// outgoing for the destination's available (with a Transfer In record
// there) or for the bank. Failed: it returns to the source's available.
func (s *Service) finish(ctx context.Context, tx *store.Tx, t *row, done bool, reason string, now time.Time) error {
	end, err := settlement.Finish(ctx, tx, settlement.Transfers, ledger.Outflow{MerchantID: t.merchantID, Currency: t.currency,
		Operation: "transfer", RecordID: t.uuid, Reference: t.uuid, From: t.fromAccountID, To: t.toAccountID, Amount: t.amount}, done, reason, now)
	if err != nil {
		return err
	}
	t.status, t.completedAt, t.failure = Status(end.Status), end.CompletedAt, end.Failure
	return s.emit(ctx, tx, *t, now)
}

func (s *Service) emit(ctx context.Context, tx *store.Tx, t row, now time.Time) error {
	return settlement.Announce(ctx, tx, s.webhooks, webhook.Event{MerchantID: t.merchantID, Type: "transfer." + string(t.status), RecordUUID: t.uuid,
		Target: webhook.Target{EndpointURL: t.endpoint, AuthorizationHeader: t.auth}, At: now}, func() (any, error) { return t.view() })
}

// locked reads a transfer under the ledger locks of both its accounts
// (ledger.LockAccounts), and the merchant's time.
func (s *Service) locked(ctx context.Context, tx *store.Tx, merchantID, uuid string) (row, time.Time, error) {
	read := func() (row, error) { return s.get(ctx, tx, merchantID, uuid) }
	return settlement.ReadLocked(ctx, tx, s.clock, merchantID, read, func(t row) error {
		return ledger.LockAccounts(ctx, tx, merchantID, t.currency, t.fromAccountID, t.toAccountID.Int64)
	})
}

// Get is one transfer.
func (s *Service) Get(ctx context.Context, p merchant.Principal, uuid string) (Transfer, error) {
	t, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid)
	if err != nil {
		return Transfer{}, err
	}
	return t.view()
}

// Statuses lists every status of a transfer, for a list's filter.
var Statuses = []Status{Held, Processing, Completed, Failed, Returned, Rejected, Expired}

// List is a page of the merchant's transfers, newest first, and how many
// match in all; status ("" for any) filters. Each is read as Get reads it,
// in one query for the page and one for the approvals of those held.
func (s *Service) List(ctx context.Context, merchantID string, status Status, page, perPage int) ([]Transfer, int, error) {
	q := s.db.Read()
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM transfers WHERE merchant_id = $1 AND ($2 = '' OR status = $2)`, merchantID, string(status)).
		Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count transfers: %w", err)
	}
	rows, err := q.QueryContext(ctx, selectRows+`WHERE t.merchant_id = $1 AND ($2 = '' OR t.status = $2)
		ORDER BY t.created_at DESC, t.uuid DESC LIMIT $3 OFFSET $4`, merchantID, string(status), perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, fmt.Errorf("list transfers: %w", err)
	}
	var found []row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("list transfers: %w", err)
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list transfers: %w", err)
	}
	if err := withSteps(ctx, q, merchantID, found); err != nil {
		return nil, 0, err
	}
	out := make([]Transfer, 0, len(found))
	for _, r := range found {
		t, err := r.view()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	return out, total, nil
}
