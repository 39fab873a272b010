// Package payout is money out: a merchant pays a batch of recipients from its
// available balance by a method of the catalogue. The engine holds the funds
// when the batch is accepted, waits for approval (maker-checker, when the
// account asks for it) or the scheduled time, submits each transaction to a
// rail exactly once, and settles each on the rail's outcome, with a webhook
// on every status change. v2 and v1 payouts and the portal all create
// payouts here.
package payout

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	"payd/internal/store"
	"payd/internal/webhook"
)

// Status of a payout (a batch).
type Status string

const (
	Held       Status = "held"
	Scheduled  Status = "scheduled"
	Processing Status = "processing"
	Completed  Status = "completed"
	Rejected   Status = "rejected"
	Expired    Status = "expired"
)

// Statuses are every payout status, in the order of a payout's life (the
// portal's status select).
var Statuses = []Status{Held, Scheduled, Processing, Completed, Rejected, Expired}

// ValidStatus reports whether s names a payout status.
func ValidStatus(s string) bool { return slices.Contains(Statuses, Status(s)) }

// TxStatus is the status of one transaction of a payout.
type TxStatus string

const (
	TxPending TxStatus = "pending"
	TxDone    TxStatus = "done"
	TxFailed  TxStatus = "failed"
	// TxReturned: done, then sent back by the recipient's bank (CONTRACT
	// §17, §25); amount and fee are back in available.
	TxReturned TxStatus = "returned"
)

// ApprovalStatus is where a payout's maker-checker decision stands.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalRejected ApprovalStatus = "rejected"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Payout is the payout record as the detail endpoint and every payout
// webhook carry it.
type Payout struct {
	UUID                string          `json:"uuid"`
	Currency            string          `json:"currency"`
	PayoutMethodName    string          `json:"payout_method_name"`
	Description         string          `json:"description"`
	TotalAmount         money.String    `json:"total_amount" doc:"The sum of the transactions' amounts."`
	TotalFees           money.String    `json:"total_fees" doc:"The sum of the transactions' fees, taken from the available balance with the amounts."`
	Status              Status          `json:"status" enum:"held,scheduled,processing,completed,rejected,expired" doc:"held: awaiting approval; scheduled: waiting for scheduled_at; processing: submitted to the rail; completed: every transaction is done or failed (a done one may later be returned; the payout stays completed); rejected and expired: never processed, funds returned."`
	ScheduledAt         *clock.Time     `json:"scheduled_at"`
	ExternalID          string          `json:"external_id"`
	WebhookNotification *webhook.Target `json:"webhook_notification"`
	Approval            *Approval       `json:"approval" doc:"The maker-checker record; null when neither the account's approvals setting nor an approval policy held the payout."`
	PayoutTransactions  []Transaction   `json:"payout_transactions"`
	CreatedAt           clock.Time      `json:"created_at"`
	UpdatedAt           clock.Time      `json:"updated_at"`
	// id is the integer id v1 payouts answer with.
	id int64
}

// ID is the payout's integer id (the v1 API's).
func (p Payout) ID() int64 { return p.id }

// Approval is the maker-checker record of a payout.
type Approval struct {
	Status          ApprovalStatus `json:"status" enum:"pending,approved,rejected,expired"`
	CreatedBy       string         `json:"created_by" doc:"Who created the payout: a portal user's email, or app:<app-id> for the API."`
	DecidedBy       *string        `json:"decided_by" doc:"The email of the user who decided; null until decided."`
	DecidedAt       *clock.Time    `json:"decided_at"`
	RejectionReason string         `json:"rejection_reason"`
	// RequiredApprovals is how many distinct approvers the payout needs
	// (CONTRACT §20): the policy's, 1 without one.
	RequiredApprovals int           `json:"required_approvals" doc:"How many distinct allowed approvers must approve the payout: the policy's approvals, 1 without a policy."`
	Approvals         []policy.Step `json:"approvals" doc:"The approvals recorded so far, oldest first."`
	Policy            *policy.Ref   `json:"policy" doc:"The approval policy that caught the payout at its creation (name and version), or null."`
}

// Transaction is one payment of a payout.
type Transaction struct {
	UUID               string         `json:"uuid"`
	FirstName          string         `json:"first_name"`
	LastName           string         `json:"last_name"`
	Email              string         `json:"email"`
	Amount             money.String   `json:"amount"`
	Fee                money.String   `json:"fee"`
	Status             TxStatus       `json:"status" enum:"pending,done,failed,returned" doc:"pending until the rail answers; done or failed; returned when a done transaction came back from the recipient's bank (its amount and fee are back in available, failure_reason says why)."`
	FailureReason      string         `json:"failure_reason"`
	ExternalID         *string        `json:"external_id"`
	PayoutMethodParams map[string]any `json:"payout_method_params"`
	BalanceID          string         `json:"balance_id" doc:"The transaction's balance record (transaction_type payout) in balance history."`
	BankReference      *string        `json:"bank_reference" doc:"What the bank and the recipient's statement name the transaction by (16 upper-case letters and digits; 10 digits when a zengin bank-file rail pays it), given when the transaction is handed to a rail; null before (a held, scheduled or just created payout)."`
}

// Service runs payouts.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	rail     rail.Rail
	banks    Banks
	policies *policy.Service
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Log      *slog.Logger
	Webhooks *webhook.Dispatcher
	Policy   webhook.Policy
	Rail     rail.Rail
	Banks    Banks
	// Policies evaluates the merchant's approval policies at creation.
	Policies *policy.Service
}

// Job kinds of the payout lifecycle, each with the payout it works on.
var (
	jobRelease    = job.NewKind[ref]("payout.release")
	jobSubmit     = job.NewKind[ref]("payout.submit")
	jobExpireHold = job.NewKind[ref]("payout.expire_hold")
)

// NewService returns a Service, registers its jobs and listens to the rail.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy, rail: d.Rail, banks: d.Banks, policies: d.Policies}
	job.Register(d.Queue, jobRelease, s.releaseJob)
	job.Register(d.Queue, jobSubmit, s.submitJob)
	job.Register(d.Queue, jobExpireHold, s.expireHoldJob)
	d.Rail.Listen("", s.settle)
	return s
}

// row is a payouts row.
type row struct {
	id                               int64
	uuid, merchantID                 string
	accountID                        int64
	apiVersion, method, currency     string
	description                      string
	status                           Status
	totalAmount, totalFees           int64
	scheduledAt                      *int64
	externalID                       string
	isRetry                          bool
	endpointURL, authorizationHeader string
	createdBy, createdByUser         string
	approvalStatus                   ApprovalStatus
	decidedBy                        string
	decidedAt                        *int64
	rejectionReason                  string
	holdUntil                        *int64
	createdAt, updatedAt             int64
	// requiredApprovals (0: one) and approvalRoles ("": admin and
	// finance) are what its evaluation decided, policyName and
	// policyVersion the policy that caught it.
	requiredApprovals int
	approvalRoles     string
	policyName        *string
	policyVersion     *int
	meth              Method
	txs               []txRow
	steps             []policy.Step
}

type txRow struct {
	uuid                       string
	seq                        int
	firstName, lastName, email string
	externalID                 *string
	amount, fee                int64
	params                     string
	status                     TxStatus
	failureReason              string
	balanceID                  string
	submittedAt                *int64
	bankReference              *string
}

// payee is the recipient's name as the payout gives it, for a method whose
// parameters name no account holder (a PayID).
func (t txRow) payee() string { return strings.TrimSpace(t.firstName + " " + t.lastName) }

const rowColumns = `id, uuid, merchant_id, account_id, api_version, method, currency, description, status, total_amount,
	total_fees, scheduled_at, external_id, is_retry, endpoint_url, authorization_header, created_by, created_by_user,
	approval_status, decided_by, decided_at, rejection_reason, hold_until, created_at, updated_at, required_approvals, approval_roles,
	policy_name, policy_version`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.id, &r.uuid, &r.merchantID, &r.accountID, &r.apiVersion, &r.method, &r.currency, &r.description,
		&r.status, &r.totalAmount, &r.totalFees, &r.scheduledAt, &r.externalID, &r.isRetry, &r.endpointURL,
		&r.authorizationHeader, &r.createdBy, &r.createdByUser, &r.approvalStatus, &r.decidedBy, &r.decidedAt,
		&r.rejectionReason, &r.holdUntil, &r.createdAt, &r.updatedAt, &r.requiredApprovals, &r.approvalRoles, &r.policyName, &r.policyVersion)
	if err != nil {
		return row{}, err
	}
	if r.meth, err = Lookup(r.method); err != nil {
		return row{}, fmt.Errorf("payout %s: %w", r.uuid, err)
	}
	return r, nil
}

func notFound(uuid string) error { return fault.NotFoundf("no payout %s", uuid) }

// get reads merchantID's payout uuid with its transactions.
func (s *Service) get(ctx context.Context, q store.Querier, merchantID, uuid string) (row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM payouts WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, notFound(uuid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read payout %s: %w", uuid, err)
	}
	if r.txs, err = readTransactions(ctx, q, r.merchantID, r.id); err != nil {
		return row{}, err
	}
	return r, r.readSteps(ctx, q)
}

// readSteps reads the approvals of a payout that has an approval record.
func (r *row) readSteps(ctx context.Context, q store.Querier) error {
	if r.approvalStatus == "" {
		return nil
	}
	steps, err := policy.Steps(ctx, q, r.merchantID, policy.PayoutSubject, []string{r.uuid})
	r.steps = steps[r.uuid]
	return err
}

// required is how many approvals r needs: 1 without a policy.
func (r row) required() int { return max(r.requiredApprovals, 1) }

// sendAccountLock queues the lock of the account of merchantID's payout
// uuid (ledger.SendLockAccountOf) for a change that may post: it goes to the
// server with the transaction's next statement, before the payout's lock.
func sendAccountLock(ctx context.Context, tx *store.Tx, merchantID, uuid string) error {
	return ledger.SendLockAccountOf(ctx, tx, merchantID, `SELECT account_id, currency FROM payouts WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID)
}

// lock is get in tx, locking the payout row (PostgreSQL): every change of a
// payout or its transactions takes that lock first. The payout and its
// transactions are read in one round trip.
func (s *Service) lock(ctx context.Context, tx *store.Tx, merchantID, uuid string) (row, error) {
	sentPayout, err := store.SendQuery(ctx, tx, `SELECT `+rowColumns+` FROM payouts WHERE uuid = $1 AND merchant_id = $2`+s.db.ForUpdate(),
		[]any{uuid, merchantID}, scanRow)
	if err != nil {
		return row{}, err
	}
	sentTxs, err := store.SendQuery(ctx, tx, `SELECT `+txColumns+` FROM payout_transactions
		WHERE payout_id = (SELECT id FROM payouts WHERE uuid = $1 AND merchant_id = $2) AND merchant_id = $2 ORDER BY seq`,
		[]any{uuid, merchantID}, scanTransaction)
	if err != nil {
		return row{}, err
	}
	if err := tx.ReadSent(ctx); err != nil {
		return row{}, fmt.Errorf("read payout %s: %w", uuid, err)
	}
	payouts, err := sentPayout.Get()
	if err != nil {
		return row{}, fmt.Errorf("read payout %s: %w", uuid, err)
	}
	if len(payouts) == 0 {
		return row{}, notFound(uuid)
	}
	r := payouts[0]
	if r.txs, err = sentTxs.Get(); err != nil {
		return row{}, fmt.Errorf("read payout %s: %w", uuid, err)
	}
	return r, r.readSteps(ctx, tx)
}

const txColumns = `uuid, seq, first_name, last_name, email, external_id, amount, fee, params, status, failure_reason, balance_id, submitted_at,
	bank_reference`

func scanTransaction(sc interface{ Scan(...any) error }) (txRow, error) {
	var t txRow
	err := sc.Scan(&t.uuid, &t.seq, &t.firstName, &t.lastName, &t.email, &t.externalID, &t.amount, &t.fee, &t.params,
		&t.status, &t.failureReason, &t.balanceID, &t.submittedAt, &t.bankReference)
	return t, err
}

func readTransactions(ctx context.Context, q store.Querier, merchantID string, payoutID int64) ([]txRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+txColumns+` FROM payout_transactions WHERE payout_id = $1 AND merchant_id = $2 ORDER BY seq`, payoutID, merchantID)
	if err != nil {
		return nil, fmt.Errorf("read payout transactions: %w", err)
	}
	defer rows.Close()
	var out []txRow
	for rows.Next() {
		t, err := scanTransaction(rows)
		if err != nil {
			return nil, fmt.Errorf("read payout transactions: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (r row) target() webhook.Target {
	return webhook.Target{EndpointURL: r.endpointURL, AuthorizationHeader: r.authorizationHeader}
}

func millisTime(ms *int64) *clock.Time {
	if ms == nil {
		return nil
	}
	return &clock.Time{T: clock.FromMillis(*ms)}
}

// view renders r as the API's record.
func (r row) view() Payout {
	c := r.meth.currency
	p := Payout{
		UUID: r.uuid, Currency: r.currency, PayoutMethodName: r.method, Description: r.description,
		TotalAmount: money.StringOf(r.totalAmount, c), TotalFees: money.StringOf(r.totalFees, c), Status: r.status,
		ScheduledAt: millisTime(r.scheduledAt), ExternalID: r.externalID,
		CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}, UpdatedAt: clock.Time{T: clock.FromMillis(r.updatedAt)},
		PayoutTransactions: make([]Transaction, 0, len(r.txs)), id: r.id,
	}
	if t := r.target(); !t.IsZero() {
		p.WebhookNotification = &t
	}
	if r.approvalStatus != "" {
		a := &Approval{Status: r.approvalStatus, CreatedBy: r.createdBy, DecidedAt: millisTime(r.decidedAt), RejectionReason: r.rejectionReason}
		if r.decidedBy != "" {
			a.DecidedBy = &r.decidedBy
		}
		a.RequiredApprovals, a.Approvals = r.required(), r.steps
		if a.Approvals == nil {
			a.Approvals = []policy.Step{}
		}
		if r.policyName != nil && r.policyVersion != nil {
			a.Policy = &policy.Ref{Name: *r.policyName, Version: *r.policyVersion}
		}
		p.Approval = a
	}
	for _, t := range r.txs {
		params := map[string]any{}
		json.Unmarshal([]byte(t.params), &params)
		p.PayoutTransactions = append(p.PayoutTransactions, Transaction{
			UUID: t.uuid, FirstName: t.firstName, LastName: t.lastName, Email: t.email,
			Amount: money.StringOf(t.amount, c), Fee: money.StringOf(t.fee, c), Status: t.status, FailureReason: t.failureReason,
			ExternalID: t.externalID, PayoutMethodParams: params, BalanceID: t.balanceID, BankReference: t.bankReference,
		})
	}
	return p
}

// emit sends the payout's current record to its webhook as eventType (and
// to the events log and webhook endpoints, which every event reaches).
func (s *Service) emit(ctx context.Context, tx *store.Tx, r row, eventType string, at int64) error {
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: eventType, RecordUUID: r.uuid,
		Target: r.target(), Payload: r.record(), At: clock.FromMillis(at)})
	return err
}

// TransactionEvent is the body of payout_transaction.done, .failed and
// .returned: the transaction as its payout's record shows it, with the
// payout's identifiers.
// It carries one transaction, not the batch, so that a batch of n
// transactions sends n small events and one full record (payout.completed).
type TransactionEvent struct {
	PayoutUUID       string `json:"payout_uuid"`
	PayoutExternalID string `json:"payout_external_id"`
	// PayoutID is the payout's v1 integer id (v1 payouts only).
	PayoutID    *int64 `json:"payout_id,omitempty"`
	Transaction any    `json:"payout_transaction" doc:"The transaction, as payout_transactions lists it in the payout's record."`
}

// emitTransaction sends payout_transaction.<status> for t.
func (s *Service) emitTransaction(ctx context.Context, tx *store.Tx, r row, t txRow, now time.Time) error {
	one := r
	one.txs = []txRow{t}
	ev := TransactionEvent{PayoutUUID: r.uuid, PayoutExternalID: r.externalID}
	if r.apiVersion == "v1" {
		ev.PayoutID, ev.Transaction = &r.id, one.v1View().Transactions[0]
	} else {
		ev.Transaction = one.view().PayoutTransactions[0]
	}
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: "payout_transaction." + string(t.status),
		RecordUUID: r.uuid, Target: r.target(), Payload: ev, At: now})
	return err
}

// record is r as its API version's detail endpoint answers it.
func (r row) record() any {
	if r.apiVersion == "v1" {
		return r.v1View()
	}
	return r.view()
}

// setStatus moves r to status and sends payout.<status>.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, r *row, to Status, at int64) error {
	r.status, r.updatedAt = to, at
	if err := tx.Send(ctx, `UPDATE payouts SET status = $1, approval_status = $2, decided_by = $3, decided_at = $4,
		rejection_reason = $5, updated_at = $6 WHERE id = $7 AND merchant_id = $8`,
		string(r.status), string(r.approvalStatus), r.decidedBy, r.decidedAt, r.rejectionReason, r.updatedAt, r.id, r.merchantID); err != nil {
		return fmt.Errorf("update payout %s: %w", r.uuid, err)
	}
	return s.emit(ctx, tx, *r, "payout."+string(to), at)
}
