package payout

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/param"
	"payd/internal/policy"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Request is the body of POST /v2/payouts.
type Request struct {
	Currency         string `json:"currency" required:"true" example:"AUD"`
	PayoutMethodName string `json:"payout_method_name" required:"true" doc:"A method from GET /v2/payouts/payout_methods." example:"au_bank_aud"`
	Description      string `json:"description" required:"true" doc:"5 to 255 characters." example:"Supplier invoices, week 5"`
	ScheduledAt      string `json:"scheduled_at,omitempty" doc:"When to submit the payout, in the future and at most 90 days ahead (RFC 3339); the payout is scheduled until then. A time in the past, further ahead, or one that cannot be read is a 422." example:"2025-01-31T09:00:00Z"`
	ExternalID       string `json:"external_id,omitempty" doc:"Up to 100 characters." example:"batch-2025-05"`
	// WebhookNotification is where payout and payout_transaction events go.
	WebhookNotification      webhook.Target       `json:"webhook_notification,omitempty"`
	PayoutTransactionDetails []TransactionRequest `json:"payout_transaction_details" required:"true" doc:"1 to 1,000 transactions."`
}

// TransactionRequest is one payment of a payout request.
type TransactionRequest struct {
	FirstName          string         `json:"first_name,omitempty" doc:"Up to 100 characters." example:"Jane"`
	LastName           string         `json:"last_name,omitempty" doc:"Up to 100 characters." example:"Doe"`
	Email              string         `json:"email,omitempty" example:"jane@example.com"`
	Amount             money.Input    `json:"amount" required:"true" example:"125.50"`
	ExternalID         *string        `json:"external_id,omitempty" doc:"Up to 100 characters; may be null."`
	PayoutMethodParams map[string]any `json:"payout_method_params" required:"true" doc:"The method's fields (GET /v2/payouts/payout_method/params)." example:"{\"bsb\":\"062000\",\"account_number\":\"12345678\",\"account_name\":\"Jane Doe\"}"`
}

// Bounds of a payout request.
const (
	MaxTransactions = 1000
	// MinDescriptionLen is the fewest characters of a description, in
	// either API (v1 bounds it at 140, v2 at maxDescriptionLen).
	MinDescriptionLen = 5
	maxDescriptionLen = 255
	maxNameLen        = 100
	maxExternalIDLen  = 100
)

// CodeDecisionConflict refuses a decision on a payout no longer held
// (policy's code: transfers answer it too).
const CodeDecisionConflict = policy.CodeDecisionConflict

// Maker is who creates a payout: an app of the API, or a portal user (who
// then may not decide it).
type Maker struct {
	// Label is shown as approval.created_by: app:<app-id>, or the user's email.
	Label  string
	UserID string
}

// checked is a payout request once validated.
type checked struct {
	method      Method
	scheduledAt *time.Time
	amounts     []int64
	fees        []int64
	// total and feeTotal are the sums of amounts and fees.
	total, feeTotal int64
}

// Create accepts a v2 payout made through the API.
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request) (Payout, error) {
	return s.CreateBy(ctx, tx, p, r, Maker{Label: "app:" + p.AppID})
}

// CreateBy accepts a payout: it checks every rule of CONTRACT §5, moves the
// amounts and fees from available to outgoing (422 INSUFFICIENT_FUNDS when
// they are not there, and then nothing is created), and starts the payout
// held (the account requires approval), scheduled, or processing.
func (s *Service) CreateBy(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request, maker Maker) (Payout, error) {
	rw, err := s.create(ctx, tx, p, r, maker, "v2", false)
	if err != nil {
		return Payout{}, err
	}
	return rw.view(), nil
}

// create is CreateBy for either API version.
func (s *Service) create(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request, maker Maker, apiVersion string, isRetry bool) (row, error) {
	now := s.clock.Of(p)
	c, err := s.validate(p, &r, now)
	if err != nil {
		return row{}, err
	}
	if err := s.checkFileNames(ctx, tx, c.method, r); err != nil {
		return row{}, err
	}
	evaluation, err := s.sendEvaluate(ctx, tx, p, r.Currency, c.total, maker, now)
	if err != nil {
		return row{}, err
	}
	acc, err := s.holdFunds(ctx, tx, p, r.Currency, c, now)
	if err != nil {
		return row{}, err
	}
	rw := row{merchantID: p.MerchantID, accountID: acc.ID, apiVersion: apiVersion, isRetry: isRetry, method: c.method.Code, currency: r.Currency,
		description: r.Description, totalAmount: c.total, totalFees: c.feeTotal, externalID: r.ExternalID,
		endpointURL: r.WebhookNotification.EndpointURL, authorizationHeader: r.WebhookNotification.AuthorizationHeader,
		createdBy: maker.Label, createdByUser: maker.UserID, createdAt: now.UnixMilli(), updatedAt: now.UnixMilli(), meth: c.method}
	if c.scheduledAt != nil {
		ms := c.scheduledAt.UnixMilli()
		rw.scheduledAt = &ms
	}
	hold, err := evaluation.Get()
	if err != nil {
		return row{}, err
	}
	rw.status = s.initialStatus(&rw, acc, c, hold, now)
	if err := s.insert(ctx, tx, &rw, r.PayoutTransactionDetails, c, now); err != nil {
		return row{}, err
	}
	if err := s.start(ctx, tx, rw, now); err != nil {
		return row{}, err
	}
	if err := s.emit(ctx, tx, rw, "payout."+string(rw.status), now.UnixMilli()); err != nil {
		return row{}, err
	}
	return rw, nil
}

// sendEvaluate sends the evaluation of the merchant's approval policies on
// the payout being created, once (CONTRACT §20, §25), with the post that
// holds its funds: every entry point (v2, v1, a CSV file, the portal)
// creates payouts here.
func (s *Service) sendEvaluate(ctx context.Context, tx *store.Tx, p merchant.Principal, currency string, total int64, maker Maker, now time.Time) (*policy.PendingHold, error) {
	if s.policies == nil {
		return nil, nil // a service without policies holds by the account's setting alone
	}
	return s.policies.SendEvaluate(ctx, tx, policy.Subject{MerchantID: p.MerchantID, Currency: currency, Amount: total,
		CreatorLabel: maker.Label, CreatorUserID: maker.UserID, Now: now, Zone: p.Timezone})
}

// initialStatus is where a new payout starts: held when the account requires
// approval or a policy caught it (until its decisions or the hold window's
// end), else scheduled when scheduled_at is ahead, else processing.
func (s *Service) initialStatus(rw *row, acc merchant.Account, c checked, hold policy.Hold, now time.Time) Status {
	if hold.Held {
		rw.requiredApprovals, rw.approvalRoles = hold.Required, policy.JoinRoles(hold.Roles)
		if hold.Policy != nil {
			rw.policyName, rw.policyVersion = &hold.Policy.Name, &hold.Policy.Version
		}
	}
	if acc.Approvals || hold.Held {
		rw.requiredApprovals = max(rw.requiredApprovals, 1)
		rw.approvalStatus = ApprovalPending
		until := now.Add(acc.ApprovalHold).UnixMilli()
		rw.holdUntil = &until
		return Held
	}
	if c.scheduledAt != nil && c.scheduledAt.After(now) {
		return Scheduled
	}
	return Processing
}

// start queues what a payout's status waits for: its decision's deadline,
// its scheduled time, or its submission to the rail.
func (s *Service) start(ctx context.Context, tx *store.Tx, rw row, now time.Time) error {
	ref := ref{MerchantID: rw.merchantID, UUID: rw.uuid}
	switch rw.status {
	case Held:
		return job.Enqueue(ctx, tx, s.queue, jobExpireHold, ref, job.Options{ClockOf: rw.merchantID,
			RunAt: clock.FromMillis(*rw.holdUntil), UniqueKey: jobExpireHold.String() + ":" + rw.uuid})
	case Scheduled:
		return job.Enqueue(ctx, tx, s.queue, jobRelease, ref, job.Options{ClockOf: rw.merchantID,
			RunAt: clock.FromMillis(*rw.scheduledAt), UniqueKey: jobRelease.String() + ":" + rw.uuid})
	case Processing:
		return job.Enqueue(ctx, tx, s.queue, jobSubmit, ref, job.Options{ClockOf: rw.merchantID, RunAt: now,
			UniqueKey: jobSubmit.String() + ":" + rw.uuid})
	}
	return fmt.Errorf("start payout %s: nothing to start in status %s", rw.uuid, rw.status)
}

// holdFunds reads the caller's payments account (validate has checked that
// it is in the payout's currency), fresh (its approvals and methods may have
// changed since the caller authenticated), checks that the method is enabled
// on it, and moves the payout's amounts and fees from its available balance
// to outgoing. The principal carries the account's id, so the read goes to
// the server with the post instead of in a round trip of its own, and is
// used only once the post has returned (ReadSent then sends nothing more,
// unless the post was refused before it ran); a method that is not enabled
// is still refused before funds that are not there.
func (s *Service) holdFunds(ctx context.Context, tx *store.Tx, p merchant.Principal, currency string, c checked, now time.Time) (merchant.Account, error) {
	var acc merchant.Account
	sent, err := merchant.SendAccountByCurrency(ctx, tx, p.MerchantID, merchant.Payments, currency)
	if err != nil {
		return acc, err
	}
	// The account first, as every change in the merchant's lane locks it
	// (ledger.SendLockAccount), sent with the post: a group commit runs the
	// payout with the lane's jobs, which lock the whole account.
	if err := ledger.SendLockAccount(ctx, tx, p.MerchantID, p.AccountID, currency); err != nil {
		return acc, err
	}
	held := s.hold(ctx, tx, p.MerchantID, p.AccountID, currency, c, now)
	if _, refused := fault.As(held); held != nil && !refused {
		return acc, held
	}
	if err := tx.ReadSent(ctx); err != nil {
		return acc, err
	}
	accounts, err := sent.Get()
	if err != nil {
		return acc, err
	}
	found := len(accounts) > 0
	if found {
		acc = accounts[0]
	}
	switch {
	case !found:
		return acc, fault.Rule(fault.CodeCurrency, "the merchant has no %s payments account", currency)
	case acc.ID != p.AccountID:
		// An app's key belongs to a payments account (merchant.CreateAppIn):
		// the post ran on another account, and the failure rolls it back.
		return acc, fmt.Errorf("create payout: the caller's account %d is not the %s payments account %d", p.AccountID, currency, acc.ID)
	case !enabled(c.method, acc.Currency, acc.Methods):
		return acc, fault.Rule(fault.CodeMethodNotEnabled, "%s is not enabled on this account", c.method.Code)
	}
	return acc, held
}

// hold moves the payout's amounts and fees from the account's available
// balance to outgoing (422 INSUFFICIENT_FUNDS when they are not there).
func (s *Service) hold(ctx context.Context, tx *store.Tx, merchantID string, accountID int64, currency string, c checked, now time.Time) error {
	cur := c.method.currency
	hold := c.total + c.feeTotal
	_, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchantID, Currency: currency, Kind: "payout.accept", At: now,
		Legs: []ledger.Leg{
			{Account: accountID, Bucket: ledger.Available, Amount: -hold},
			{Account: accountID, Bucket: ledger.Outgoing, Amount: hold},
		}})
	if fault.Is(err, fault.CodeInsufficientFunds) {
		return fault.Rule(fault.CodeInsufficientFunds, "the available balance is lower than the payout's %s %s (amounts %s plus fees %s)",
			money.Format(hold, cur), cur.Code, money.Format(c.total, cur), money.Format(c.feeTotal, cur))
	}
	return err
}

// insert writes the payout, its transactions and their balance records.
func (s *Service) insert(ctx context.Context, tx *store.Tx, rw *row, details []TransactionRequest, c checked, now time.Time) error {
	var err error
	rw.uuid, err = store.InsertWithID(ctx, store.UUIDLen, func(id string) (bool, error) {
		err := tx.QueryRowContext(ctx, `INSERT INTO payouts (uuid, merchant_id, account_id, api_version, method, currency, description,
			status, total_amount, total_fees, scheduled_at, external_id, is_retry, endpoint_url, authorization_header, created_by,
			created_by_user, approval_status, hold_until, created_at, updated_at, required_approvals, approval_roles, policy_name, policy_version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20, $21, $22, $23, $24)
			ON CONFLICT (merchant_id, uuid) DO NOTHING RETURNING id`,
			id, rw.merchantID, rw.accountID, rw.apiVersion, rw.method, rw.currency, rw.description, string(rw.status),
			rw.totalAmount, rw.totalFees, rw.scheduledAt, rw.externalID, rw.isRetry, rw.endpointURL, rw.authorizationHeader,
			rw.createdBy, rw.createdByUser, string(rw.approvalStatus), rw.holdUntil, rw.createdAt, rw.requiredApprovals, rw.approvalRoles,
			rw.policyName, rw.policyVersion).Scan(&rw.id)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("create payout: %w", err)
	}
	for i, d := range details {
		t, err := s.insertTransaction(ctx, tx, rw, i, d, c.amounts[i], c.fees[i], now)
		if err != nil {
			return err
		}
		rw.txs = append(rw.txs, t)
	}
	return nil
}

func (s *Service) insertTransaction(ctx context.Context, tx *store.Tx, rw *row, seq int, d TransactionRequest, amount, fee int64, now time.Time) (txRow, error) {
	params, err := json.Marshal(nonNil(d.PayoutMethodParams))
	if err != nil {
		return txRow{}, fmt.Errorf("payout transaction params: %w", err)
	}
	t := txRow{uuid: store.RandomID(store.UUIDLen), seq: seq, firstName: d.FirstName, lastName: d.LastName, email: d.Email,
		externalID: d.ExternalID, amount: amount, fee: fee, params: string(params), status: TxPending}
	rec := ledger.Record{MerchantID: rw.merchantID, AccountID: rw.accountID, Currency: rw.currency,
		RequestType: ledger.MoneyOut, TransactionType: ledger.Payout, Status: ledger.Waiting,
		Amount: amount, Fees: fee, Outgoing: amount + fee, Total: amount + fee, ReferenceID: rw.uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return txRow{}, err
	}
	t.balanceID = rec.ID
	t.uuid, err = store.InsertWithID(ctx, store.UUIDLen, func(id string) (bool, error) {
		return tx.InsertDrawn(ctx, `INSERT INTO payout_transactions (uuid, payout_id, merchant_id, seq, first_name,
			last_name, email, external_id, amount, fee, params, status, balance_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
			id, rw.id, rw.merchantID, seq, t.firstName, t.lastName, t.email, t.externalID, amount, fee, t.params,
			string(t.status), t.balanceID, now.UnixMilli())
	})
	if err != nil {
		return txRow{}, fmt.Errorf("create payout transaction: %w", err)
	}
	return t, nil
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// validate checks everything that needs no database: the rules on the
// currency and the method first, then every member (all problems reported
// together, range problems included), then the amounts against the method's
// limits alone (422 AMOUNT_OUT_OF_RANGE naming each transaction outside them).
func (s *Service) validate(p merchant.Principal, r *Request, now time.Time) (checked, error) {
	if r.Currency != "" && r.Currency != p.Currency {
		return checked{}, fault.Rule(fault.CodeCurrency, "currency %s is not the currency of this app's account (%s)", r.Currency, p.Currency)
	}
	f := fault.Fields{}
	var c checked
	s.checkMembers(f, p, r, now, &c)
	m, err := Lookup(r.PayoutMethodName)
	if err != nil && r.PayoutMethodName != "" {
		f.Add("payout_method_name", "is not a payout method: GET /v2/payouts/payout_methods lists them")
	}
	if err != nil || len(r.PayoutTransactionDetails) > MaxTransactions {
		return checked{}, f.Err()
	}
	if r.Currency != "" && m.Currency != r.Currency {
		return checked{}, fault.Rule(fault.CodeMethodNotEnabled, "%s pays out %s, not %s", m.Code, m.Currency, r.Currency)
	}
	c.method = m
	for i, d := range r.PayoutTransactionDetails {
		s.checkParams(f, m, fmt.Sprintf("payout_transaction_details[%d]", i), d.PayoutMethodParams)
	}
	outside := c.checkAmounts(f, r.PayoutTransactionDetails)
	if len(f) > 0 {
		for k, v := range outside {
			f.Add(k, v)
		}
		return checked{}, f.Err()
	}
	if len(outside) > 0 {
		e, _ := fault.As(outside.Err())
		e.Code = fault.CodeAmountOutOfRange
		return checked{}, e
	}
	return c, nil
}

// MaxScheduleAheadDays bounds scheduled_at (CONTRACT §24): a payout waits at
// most this many days ahead of the merchant's now, so that no payout holds
// its funds for ever. MaxScheduleAhead is the same bound as a duration.
const (
	MaxScheduleAheadDays = 90
	MaxScheduleAhead     = MaxScheduleAheadDays * 24 * time.Hour
)

// DescriptionProblem is the rule on a payout's description, MinDescriptionLen
// to maxLen characters (spaces at its ends aside), as a problem or "": one
// wording for v2 (5–255) and v1 (5–140).
func DescriptionProblem(description string, maxLen int) string {
	if n := utf8.RuneCountInString(strings.TrimSpace(description)); n < MinDescriptionLen || n > maxLen {
		return fmt.Sprintf("must be %d to %d characters", MinDescriptionLen, maxLen)
	}
	return ""
}

// checkMembers checks the request's members other than the method's fields.
func (s *Service) checkMembers(f fault.Fields, p merchant.Principal, r *Request, now time.Time, c *checked) {
	text := func(name, v string, max int) {
		if utf8.RuneCountInString(v) > max || !utf8.ValidString(v) {
			f.Add(name, fmt.Sprintf("must be at most %d characters", max))
		}
	}
	if r.Currency == "" {
		f.Add("currency", "is required")
	}
	if r.PayoutMethodName == "" {
		f.Add("payout_method_name", "is required")
	}
	if problem := DescriptionProblem(r.Description, maxDescriptionLen); problem != "" {
		f.Add("description", problem)
	}
	text("external_id", r.ExternalID, maxExternalIDLen)
	if err := s.policy.Validate("webhook_notification", r.WebhookNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	if r.ScheduledAt != "" {
		t, err := clock.Parse(r.ScheduledAt)
		switch {
		case err != nil || len(r.ScheduledAt) > 64:
			f.Add("scheduled_at", "must be a time such as 2025-01-31T09:00:00Z")
		case !t.After(now) && p.ClockOffset != 0:
			f.Add("scheduled_at", "must be after "+merchant.NowText(p, now))
		case !t.After(now):
			f.Add("scheduled_at", "must be in the future")
		case t.After(now.Add(MaxScheduleAhead)):
			f.Add("scheduled_at", fmt.Sprintf("must be at most %d days ahead (it is %s; now is %s on the merchant's clock)",
				MaxScheduleAheadDays, t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
		default:
			c.scheduledAt = &t
		}
	}
	switch n := len(r.PayoutTransactionDetails); {
	case n == 0:
		f.Add("payout_transaction_details", "must list at least one transaction")
	case n > MaxTransactions:
		f.Add("payout_transaction_details", fmt.Sprintf("lists %d transactions; at most %d are allowed in one payout", n, MaxTransactions))
	}
	if len(r.PayoutTransactionDetails) > MaxTransactions {
		return
	}
	for i, d := range r.PayoutTransactionDetails {
		prefix := fmt.Sprintf("payout_transaction_details[%d].", i)
		text(prefix+"first_name", d.FirstName, maxNameLen)
		text(prefix+"last_name", d.LastName, maxNameLen)
		if d.Email != "" && param.Email(d.Email) != "" {
			f.Add(prefix+"email", "must be an email address")
		}
		if d.ExternalID != nil {
			text(prefix+"external_id", *d.ExternalID, maxExternalIDLen)
		}
		if d.Amount.IsZero() {
			f.Add(prefix+"amount", "is required")
		}
		if d.PayoutMethodParams == nil {
			f.Add(prefix+"payout_method_params", "is required")
		}
	}
}

// checkParams checks one transaction's payout_method_params against m,
// including the rules that span members.
func (s *Service) checkParams(f fault.Fields, m Method, prefix string, params map[string]any) {
	field := prefix + ".payout_method_params"
	param.Validate(field, m.Code, m.Params, m.Rules, params, f)
	if m.BankField == "" {
		return
	}
	code, _ := params[m.BankField].(string)
	if code == "" {
		return
	}
	if !s.listed(m) {
		return // no directory to check against: the code's shape was checked above
	}
	if !s.hasBank(m, code) {
		f.Add(field+"."+m.BankField, fmt.Sprintf("%q is not one of %s's banks: GET /v2/payouts/payout_method/params lists them", code, m.Code))
		return
	}
	if m.BranchField != "" {
		branch, _ := params[m.BranchField].(string)
		if bc, ok := s.banks.(BranchChecker); ok && branch != "" && !bc.HasBranch(code, branch) {
			f.Add(field+"."+m.BranchField, fmt.Sprintf("%q is not a branch of bank %s in the Zengin directory: GET /v2/banks/branches?bank_code=%s lists them", branch, code, code))
		}
	}
}

// listed reports whether a directory lists m's banks.
func (s *Service) listed(m Method) bool {
	l, ok := s.banks.(interface{ Listed(string) bool })
	return ok && l.Listed(m.Code)
}

func (s *Service) hasBank(m Method, code string) bool {
	if s.banks == nil {
		return false
	}
	for _, b := range s.banks.Banks(m.Code) {
		if b.Code == code {
			return true
		}
	}
	return false
}

// checkAmounts parses each amount in the method's currency (problems added
// to f) and adds up amounts and fees; it returns the amounts outside the
// method's limits.
func (c *checked) checkAmounts(f fault.Fields, details []TransactionRequest) fault.Fields {
	m, cur := c.method, c.method.currency
	outside := fault.Fields{}
	for i, d := range details {
		name := fmt.Sprintf("payout_transaction_details[%d].amount", i)
		if d.Amount.IsZero() {
			continue // reported as required
		}
		amount, _, err := money.ParseField(name, d.Amount, cur)
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
			continue
		}
		if amount < m.MinMinor || amount > m.MaxMinor {
			outside.Add(name, fmt.Sprintf("must be %s to %s %s for %s", money.Format(m.MinMinor, cur), money.Format(m.MaxMinor, cur), cur.Code, m.Code))
		}
		fee := m.Fee(amount)
		c.amounts = append(c.amounts, amount)
		c.fees = append(c.fees, fee)
		c.total += amount
		c.feeTotal += fee
	}
	return outside
}
