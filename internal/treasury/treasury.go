// Package treasury opens a merchant's treasury accounts: accounts of its own
// inside payd that settlements and transfers move money into and out of
// (CONTRACT §12, §15). An AUD account opens at once; a USD account goes
// through review first, and every submission of business details is kept
// (spec rule 7). The account's money is on the ledger like any other.
package treasury

import (
	"context"
	"database/sql"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/store"
)

// SubmissionStatus is where a review submission stands.
type SubmissionStatus string

const (
	InReview SubmissionStatus = "in_review"
	Approved SubmissionStatus = "approved"
	Rejected SubmissionStatus = "rejected"
	// Superseded is an earlier submission that a later one replaced before
	// it was reviewed; it stays listed.
	Superseded SubmissionStatus = "superseded"
)

// openAtOnce are the currencies whose treasury accounts open active; the
// others of offered go through review.
var (
	offered    = map[string]bool{"AUD": true, "USD": true}
	openAtOnce = map[string]bool{"AUD": true}
)

// Service opens and reviews treasury accounts.
type Service struct {
	db    *store.DB
	clock merchant.Clock
	bank  Bank
}

// Bank is who holds the treasury accounts, as their details show it.
type Bank struct {
	Name string
	// BSB is the AUD accounts' branch number.
	BSB string
}

// Deps are what a Service needs.
type Deps struct {
	DB    *store.DB
	Clock merchant.Clock
	// Bank is who holds the treasury accounts.
	Bank Bank
}

// NewService returns the service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, clock: d.Clock, bank: d.Bank}
}

// Account is a treasury account as the API shows it (CONTRACT §15).
type Account struct {
	ID            string       `json:"id" doc:"The treasury account's id: the treasury_account_id of settlement configs and transfers, and the account parameter of balances."`
	Currency      string       `json:"currency"`
	Status        string       `json:"status" enum:"active,in_review,rejected"`
	AccountNumber *string      `json:"account_number" doc:"null until the account is active."`
	BSB           *string      `json:"bsb,omitempty" doc:"AUD accounts, once active: the BSB the operator configured (--treasury-bsb)."`
	BankName      string       `json:"bank_name"`
	Submissions   []Submission `json:"submissions" doc:"Every review submission, oldest first (USD); empty for accounts that open at once, and for a USD account whose business details have not come yet."`
	CreatedAt     clock.Time   `json:"created_at"`
}

// Submission is one set of business details sent for review.
type Submission struct {
	ID          string           `json:"id"`
	Status      SubmissionStatus `json:"status" enum:"in_review,approved,rejected,superseded"`
	SubmittedAt clock.Time       `json:"submitted_at"`
	ReviewedAt  *clock.Time      `json:"reviewed_at"`
	Reason      *string          `json:"reason" doc:"Why a rejected submission was refused."`
	BusinessDetails
}

// BusinessDetails are what a review looks at (CONTRACT §16): all six are
// required in a submission, and a create request carries either all of them
// (its first submission) or none.
type BusinessDetails struct {
	BusinessName   string `json:"business_name,omitempty" example:"Shop Pty Ltd"`
	BusinessNumber string `json:"business_number,omitempty" doc:"The company or tax registration number." example:"51824753556"`
	Address        string `json:"address,omitempty" example:"1 Market St, Sydney NSW 2000"`
	Country        string `json:"country,omitempty" doc:"ISO 3166-1 alpha-2." example:"AU"`
	ContactName    string `json:"contact_name,omitempty" example:"Jane Doe"`
	ContactEmail   string `json:"contact_email,omitempty" example:"jane@shop.example"`
}

// CreateRequest is the body of POST /v2/treasury_accounts.
type CreateRequest struct {
	Currency string `json:"currency,omitempty" doc:"AUD (opens at once) or USD (goes through review: the business details come with it as its first submission, or later through POST /v2/treasury_accounts/submissions). Absent: the calling app's currency."`
	BusinessDetails
}

// SubmissionRequest is the body of POST /v2/treasury_accounts/submissions.
type SubmissionRequest struct {
	TreasuryAccountID string `json:"treasury_account_id" required:"true"`
	BusinessDetails
}

// List is the answer of GET /v2/treasury_accounts.
type List struct {
	Records []Account `json:"records"`
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

func (d BusinessDetails) check(f fault.Fields) {
	text := func(name, v string, maxLen int) {
		if n := len(strings.TrimSpace(v)); n == 0 || n > maxLen {
			f.Add(name, fmt.Sprintf("must be 1 to %d characters", maxLen))
		}
	}
	text("business_name", d.BusinessName, 140)
	text("business_number", d.BusinessNumber, 40)
	text("address", d.Address, 300)
	text("contact_name", d.ContactName, 140)
	if !countryCode.MatchString(d.Country) {
		f.Add("country", "must be an ISO 3166-1 alpha-2 code such as AU or US")
	}
	if a, err := mail.ParseAddress(d.ContactEmail); err != nil || a.Address != d.ContactEmail || len(d.ContactEmail) > 254 {
		f.Add("contact_email", "must be an email address")
	}
}

func (d BusinessDetails) empty() bool { return d == BusinessDetails{} }

// Create opens a treasury account in the request's currency: active at once
// (AUD), or in review (USD). A USD account's business details may come with
// it, as its first submission, or later through Submit: currency alone opens
// it with no submission yet (CONTRACT §24).
func (s *Service) Create(ctx context.Context, tx *store.Tx, p merchant.Principal, r CreateRequest) (Account, error) {
	currency := strings.ToUpper(r.Currency)
	if currency == "" {
		currency = p.Currency
	}
	f := fault.Fields{}
	if !offered[currency] {
		f.Add("currency", "treasury accounts are offered in AUD and USD")
	}
	review := !openAtOnce[currency]
	submitted := !r.BusinessDetails.empty()
	switch {
	case review && submitted:
		r.BusinessDetails.check(f)
	case submitted:
		f.Add("business_name", fmt.Sprintf("%s treasury accounts open without review: send only currency", currency))
	}
	if err := f.Err(); err != nil {
		return Account{}, err
	}
	if existing, err := merchant.AccountByCurrency(ctx, tx, p.MerchantID, merchant.Treasury, currency); err == nil {
		return Account{}, fault.New(fault.Conflict, fault.CodeAlreadyExists, "the merchant already has the %s treasury account %s", currency, existing.PublicID)
	}
	now := s.clock.Of(p)
	status := merchant.TreasuryActive
	if review {
		status = merchant.TreasuryInReview
	}
	acc, err := merchant.OpenTreasury(ctx, tx, p.MerchantID, currency, status, now)
	if err != nil {
		return Account{}, err
	}
	if review && submitted {
		if err := s.addSubmission(ctx, tx, acc, r.BusinessDetails, now); err != nil {
			return Account{}, err
		}
	}
	return s.view(ctx, tx, acc)
}

// Submit adds a submission to an account in review or rejected: its first,
// when it was opened with currency alone, or another; earlier submissions
// stay listed, an unreviewed one as superseded.
func (s *Service) Submit(ctx context.Context, tx *store.Tx, p merchant.Principal, r SubmissionRequest) (Account, error) {
	f := fault.Fields{}
	if r.TreasuryAccountID == "" {
		f.Add("treasury_account_id", "is required")
	}
	r.BusinessDetails.check(f)
	if err := f.Err(); err != nil {
		return Account{}, err
	}
	acc, err := merchant.AccountByPublicID(ctx, tx, p.MerchantID, r.TreasuryAccountID)
	if err != nil {
		return Account{}, err
	}
	// Submissions and reviews of one account take its lock, one at a time.
	if err := ledger.LockAccount(ctx, tx, p.MerchantID, acc.ID, acc.Currency); err != nil {
		return Account{}, err
	}
	if acc, err = merchant.AccountByPublicID(ctx, tx, p.MerchantID, r.TreasuryAccountID); err != nil {
		return Account{}, err
	}
	if acc.Status == merchant.TreasuryActive {
		return Account{}, fault.State("treasury account %s is active: there is nothing to review", acc.PublicID)
	}
	now := s.clock.Of(p)
	if _, err := tx.ExecContext(ctx, `UPDATE treasury_submissions SET status = $1 WHERE merchant_id = $2 AND account_id = $3 AND status = $4`,
		string(Superseded), p.MerchantID, acc.ID, string(InReview)); err != nil {
		return Account{}, fmt.Errorf("supersede submissions: %w", err)
	}
	if err := s.addSubmission(ctx, tx, acc, r.BusinessDetails, now); err != nil {
		return Account{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET status = $1 WHERE merchant_id = $2 AND id = $3`,
		merchant.TreasuryInReview, p.MerchantID, acc.ID); err != nil {
		return Account{}, fmt.Errorf("treasury account %s: %w", acc.PublicID, err)
	}
	acc.Status = merchant.TreasuryInReview
	return s.view(ctx, tx, acc)
}

func (s *Service) addSubmission(ctx context.Context, tx *store.Tx, acc merchant.Account, d BusinessDetails, now time.Time) error {
	// The number is read first, not in the insert: Citus takes no subquery
	// in an INSERT.
	var seq int
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM treasury_submissions WHERE merchant_id = $1 AND account_id = $2`,
		acc.MerchantID, acc.ID).Scan(&seq)
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO treasury_submissions (id, merchant_id, account_id, seq, status, business_name, business_number,
			address, country, contact_name, contact_email, submitted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			store.RandomID(store.UUIDLen), acc.MerchantID, acc.ID, seq, string(InReview), strings.TrimSpace(d.BusinessName), strings.TrimSpace(d.BusinessNumber),
			strings.TrimSpace(d.Address), d.Country, strings.TrimSpace(d.ContactName), d.ContactEmail, now.UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("store submission: %w", err)
	}
	return nil
}

// Outcome is a review's decision.
type Outcome string

const (
	Approve Outcome = "approved"
	Reject  Outcome = "rejected"
)

// ReviewRequest is the body of POST /v2/sandbox/treasury_accounts/review.
type ReviewRequest struct {
	TreasuryAccountID string  `json:"treasury_account_id" required:"true"`
	Outcome           Outcome `json:"outcome" required:"true" enum:"approved,rejected"`
	Reason            string  `json:"reason,omitempty" doc:"Why it was rejected (at most 500 characters)."`
}

// Review decides an account's submission in review: approved opens the
// account (its number is shown from then on), rejected leaves it rejected
// until the merchant submits again. It is the operator's command, which may
// decide an account with no submission yet (on details that came some other
// way), and, in the sandbox, an endpoint (SandboxReview), which may not.
func (s *Service) Review(ctx context.Context, tx *store.Tx, merchantID string, r ReviewRequest) (Account, error) {
	return s.review(ctx, tx, merchantID, r, false)
}

// review is Review; with requireSubmission, an account in review with no
// submission yet has nothing to decide (409 INVALID_STATE).
func (s *Service) review(ctx context.Context, tx *store.Tx, merchantID string, r ReviewRequest, requireSubmission bool) (Account, error) {
	f := fault.Fields{}
	if r.TreasuryAccountID == "" {
		f.Add("treasury_account_id", "is required")
	}
	if r.Outcome != Approve && r.Outcome != Reject {
		f.Add("outcome", "must be approved or rejected")
	}
	if len(r.Reason) > 500 {
		f.Add("reason", "must be at most 500 characters")
	}
	if err := f.Err(); err != nil {
		return Account{}, err
	}
	acc, err := merchant.AccountByPublicID(ctx, tx, merchantID, r.TreasuryAccountID)
	if err != nil {
		return Account{}, err
	}
	if err := ledger.LockAccount(ctx, tx, merchantID, acc.ID, acc.Currency); err != nil {
		return Account{}, err
	}
	if acc, err = merchant.AccountByPublicID(ctx, tx, merchantID, r.TreasuryAccountID); err != nil {
		return Account{}, err
	}
	if acc.Status != merchant.TreasuryInReview {
		return Account{}, fault.State("treasury account %s is %s, not in review", acc.PublicID, acc.Status)
	}
	if requireSubmission {
		if err := checkSubmitted(ctx, tx, acc); err != nil {
			return Account{}, err
		}
	}
	now, err := s.clock.Read(ctx, tx, merchantID)
	if err != nil {
		return Account{}, err
	}
	var reason any
	status := merchant.TreasuryActive
	if r.Outcome == Reject {
		status, reason = merchant.TreasuryRejected, r.Reason
	}
	if _, err := tx.ExecContext(ctx, `UPDATE treasury_submissions SET status = $1, reason = $2, reviewed_at = $3
		WHERE merchant_id = $4 AND account_id = $5 AND status = $6`,
		string(r.Outcome), reason, now.UnixMilli(), merchantID, acc.ID, string(InReview)); err != nil {
		return Account{}, fmt.Errorf("review treasury account %s: %w", acc.PublicID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE accounts SET status = $1 WHERE merchant_id = $2 AND id = $3`, status, merchantID, acc.ID); err != nil {
		return Account{}, fmt.Errorf("review treasury account %s: %w", acc.PublicID, err)
	}
	acc.Status = status
	return s.view(ctx, tx, acc)
}

// checkSubmitted refuses an account in review whose business details have
// not come yet (opened with currency alone, CONTRACT §24).
func checkSubmitted(ctx context.Context, tx *store.Tx, acc merchant.Account) error {
	var pending int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM treasury_submissions WHERE merchant_id = $1 AND account_id = $2 AND status = $3`,
		acc.MerchantID, acc.ID, string(InReview)).Scan(&pending); err != nil {
		return fmt.Errorf("review treasury account %s: %w", acc.PublicID, err)
	}
	if pending == 0 {
		return fault.State("treasury account %s has no submission to review yet: send its business details with POST /v2/treasury_accounts/submissions", acc.PublicID)
	}
	return nil
}

// ReviewByOperator is Review in a transaction of its own, for the operator command.
func (s *Service) ReviewByOperator(ctx context.Context, merchantID string, r ReviewRequest) (Account, error) {
	return store.Do(ctx, s.db, func(tx *store.Tx) (Account, error) { return s.Review(ctx, tx, merchantID, r) })
}

// SandboxReview is Review for the caller's own account, as a reviewer
// makes it: it decides what was submitted, so an account with no
// submission yet is 409 INVALID_STATE.
func (s *Service) SandboxReview(ctx context.Context, tx *store.Tx, p merchant.Principal, r ReviewRequest) (Account, error) {
	return s.review(ctx, tx, p.MerchantID, r, true)
}

// List is every treasury account of the merchant.
func (s *Service) List(ctx context.Context, p merchant.Principal) (List, error) {
	accounts, err := merchant.AccountsOfKind(ctx, s.db.Read(), p.MerchantID, merchant.Treasury)
	if err != nil {
		return List{}, err
	}
	out := List{Records: []Account{}}
	for _, acc := range accounts {
		v, err := s.view(ctx, s.db.Read(), acc)
		if err != nil {
			return List{}, err
		}
		out.Records = append(out.Records, v)
	}
	return out, nil
}

// Active is the merchant's active treasury account with the given id, for
// the settlements and transfers that move money into or out of it.
func Active(ctx context.Context, q store.Querier, merchantID, id, currency string) (merchant.Account, error) {
	acc, err := merchant.AccountByPublicID(ctx, q, merchantID, id)
	if err != nil || acc.Kind != merchant.Treasury {
		return merchant.Account{}, fault.Field("treasury_account_id", fmt.Sprintf("is not one of your %s treasury accounts", currency))
	}
	if acc.Currency != currency {
		return merchant.Account{}, fault.Field("treasury_account_id", fmt.Sprintf("is a %s account, not %s", acc.Currency, currency))
	}
	if acc.Status != merchant.TreasuryActive {
		return merchant.Account{}, fault.State("treasury account %s is %s: money moves only through active accounts", id, acc.Status)
	}
	return acc, nil
}

func (s *Service) view(ctx context.Context, q store.Querier, acc merchant.Account) (Account, error) {
	v := Account{ID: acc.PublicID, Currency: acc.Currency, Status: acc.Status, BankName: s.bank.Name,
		Submissions: []Submission{}, CreatedAt: clock.Time{T: acc.CreatedAt}}
	if acc.Status == merchant.TreasuryActive {
		number := acc.AccountNumber
		v.AccountNumber = &number
		if acc.Currency == "AUD" && s.bank.BSB != "" {
			bsb := s.bank.BSB
			v.BSB = &bsb
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT id, status, business_name, business_number, address, country, contact_name, contact_email,
		reason, submitted_at, reviewed_at FROM treasury_submissions WHERE merchant_id = $1 AND account_id = $2 ORDER BY seq`,
		acc.MerchantID, acc.ID)
	if err != nil {
		return Account{}, fmt.Errorf("treasury submissions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			sub       Submission
			reason    sql.NullString
			submitted int64
			reviewed  sql.NullInt64
		)
		if err := rows.Scan(&sub.ID, &sub.Status, &sub.BusinessName, &sub.BusinessNumber, &sub.Address, &sub.Country, &sub.ContactName,
			&sub.ContactEmail, &reason, &submitted, &reviewed); err != nil {
			return Account{}, fmt.Errorf("treasury submissions: %w", err)
		}
		sub.SubmittedAt = clock.Time{T: clock.FromMillis(submitted)}
		if reviewed.Valid {
			sub.ReviewedAt = &clock.Time{T: clock.FromMillis(reviewed.Int64)}
		}
		if reason.Valid {
			sub.Reason = &reason.String
		}
		v.Submissions = append(v.Submissions, sub)
	}
	return v, rows.Err()
}
