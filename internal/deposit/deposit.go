// Package deposit credits inbound bank transfers to a merchant's account.
// A transfer lands in the incoming balance with a waiting balance record, and
// a job (enqueued in the same transaction) clears it to available and marks
// the record done. In the sandbox, POST /v1/simulate_deposit stands in for
// the bank's notification.
package deposit

import (
	"context"
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
	"payd/internal/store"
)

// JobClear is the job that moves a deposit from incoming to available.
var JobClear = job.NewKind[clearJob]("deposit.clear")

// Status of a deposit.
type Status string

const (
	Received Status = "received"
	Cleared  Status = "cleared"
)

// Service credits deposits.
type Service struct {
	db    *store.DB
	queue *job.Queue
	clock merchant.Clock
	// ClearAfter is how long a deposit waits in incoming before it clears.
	ClearAfter time.Duration
}

// Deps are what a Service needs.
type Deps struct {
	DB    *store.DB
	Queue *job.Queue
	Clock merchant.Clock
}

// NewService returns a Service and registers its job with the queue.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock}
	job.Register(d.Queue, JobClear, s.clear)
	return s
}

// Request is the body of POST /v1/simulate_deposit.
type Request struct {
	AccountNumber      string      `json:"account_number" doc:"Account number of one of the caller's accounts (payments or treasury)." example:"123456789012"`
	Amount             money.Input `json:"amount" doc:"Whole units of the account's currency (whole yen for JPY); a fraction is refused." example:"250"`
	RemitterName       string      `json:"remitter_name,omitempty" doc:"Optional. For JPY, half-width katakana."`
	RemitterBankName   string      `json:"remitter_bank_name,omitempty" doc:"Optional. For JPY, half-width katakana."`
	RemitterBranchName string      `json:"remitter_branch_name,omitempty" doc:"Optional. For JPY, half-width katakana."`
	Remarks            string      `json:"remarks,omitempty" doc:"Optional free text, at most 140 characters."`
}

// Deposit is a credited transfer as the API returns it.
type Deposit struct {
	UUID               string       `json:"uuid"`
	BalanceID          string       `json:"balance_id" doc:"The Balance ID of the deposit's balance record."`
	AccountNumber      string       `json:"account_number"`
	Currency           string       `json:"currency"`
	Amount             money.String `json:"amount"`
	Status             Status       `json:"status" enum:"received,cleared"`
	RemitterName       string       `json:"remitter_name"`
	RemitterBankName   string       `json:"remitter_bank_name"`
	RemitterBranchName string       `json:"remitter_branch_name"`
	Remarks            string       `json:"remarks"`
	BankReference      *string      `json:"bank_reference,omitempty" doc:"The key of the operator's bank entry that credited it: present only on a deposit a bank feed made."`
	CreatedAt          clock.Time   `json:"created_at"`
}

// maxTextLen bounds each remitter field and the remarks.
const maxTextLen = 140

type validated struct {
	account  merchant.Account
	currency money.Currency
	amount   int64
}

func (s *Service) validate(ctx context.Context, q store.Querier, p merchant.Principal, r *Request) (validated, error) {
	f := fault.Fields{}
	r.AccountNumber = strings.TrimSpace(r.AccountNumber)
	if r.AccountNumber == "" {
		f.Add("account_number", "is required")
	} else if len(r.AccountNumber) > 34 {
		f.Add("account_number", "is at most 34 characters")
	}
	for _, field := range []struct{ name, value string }{
		{"remitter_name", r.RemitterName}, {"remitter_bank_name", r.RemitterBankName},
		{"remitter_branch_name", r.RemitterBranchName}, {"remarks", r.Remarks},
	} {
		if utf8.RuneCountInString(field.value) > maxTextLen || !utf8.ValidString(field.value) {
			f.Add(field.name, fmt.Sprintf("is at most %d characters", maxTextLen))
		}
	}
	if r.Amount.IsZero() {
		f.Add("amount", "is required")
	}
	if err := f.Err(); err != nil {
		return validated{}, err
	}
	acc, err := merchant.AccountByNumber(ctx, q, p.MerchantID, r.AccountNumber)
	if err != nil {
		return validated{}, err
	}
	cur, err := money.Lookup(acc.Currency)
	if err != nil {
		return validated{}, err
	}
	amount, err := money.ParseWholeField("amount", r.Amount, cur)
	if err != nil {
		return validated{}, err
	}
	if cur.Code == "JPY" {
		// Domestic Japanese transfers (Zengin format) carry names in half-width katakana.
		for _, field := range []struct{ name, value string }{
			{"remitter_name", r.RemitterName}, {"remitter_bank_name", r.RemitterBankName}, {"remitter_branch_name", r.RemitterBranchName},
		} {
			if !IsZenginText(field.value) {
				f.Add(field.name, "must be half-width katakana for JPY (for example ﾔﾏﾀﾞ ﾀﾛｳ)")
			}
		}
	}
	return validated{account: acc, currency: cur, amount: amount}, f.Err()
}

// Simulate credits a simulated inbound transfer: incoming now, available once cleared.
func (s *Service) Simulate(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request) (Deposit, error) {
	v, err := s.validate(ctx, tx, p, &r)
	if err != nil {
		return Deposit{}, err
	}
	return s.credit(ctx, tx, p.MerchantID, v, r, "", s.clock.Of(p))
}

// BankCredit is a bank feed's booked credit to a treasury account
// (CONTRACT §18): its amount in minor units as the bank booked it (cents
// too, unlike simulate_deposit's whole units), and the entry's key.
type BankCredit struct {
	MerchantID, AccountNumber string
	AmountMinor               int64
	Currency                  string
	RemitterName, Remarks     string
	BankReference             string
}

// ErrNotTreasury is the refusal of a bank credit whose account is no
// active treasury account of the credit's currency.
var ErrNotTreasury = errors.New("not a treasury account of the credit's currency")

// Credit applies a bank feed's credit to a merchant's treasury account in
// tx, as Simulate credits a simulated one (one rule: credit), the deposit
// showing the entry's key as its bank_reference. Texts beyond what a
// deposit holds are cut.
func (s *Service) Credit(ctx context.Context, tx *store.Tx, c BankCredit) (Deposit, error) {
	acc, err := merchant.AccountByNumber(ctx, tx, c.MerchantID, c.AccountNumber)
	if err != nil {
		return Deposit{}, err
	}
	if acc.Kind != merchant.Treasury || acc.Currency != c.Currency {
		return Deposit{}, fmt.Errorf("%w: account %s is a %s account in %s", ErrNotTreasury, c.AccountNumber, acc.Kind, acc.Currency)
	}
	cur, err := money.Lookup(acc.Currency)
	if err != nil {
		return Deposit{}, err
	}
	if c.AmountMinor <= 0 || c.AmountMinor > money.MaxMinor {
		return Deposit{}, fmt.Errorf("credit of %d minor units: %w", c.AmountMinor, money.ErrOutOfRange)
	}
	now, err := s.clock.Read(ctx, tx, c.MerchantID)
	if err != nil {
		return Deposit{}, err
	}
	r := Request{AccountNumber: acc.AccountNumber, RemitterName: cut(c.RemitterName), Remarks: cut(c.Remarks)}
	return s.credit(ctx, tx, c.MerchantID, validated{account: acc, currency: cur, amount: c.AmountMinor}, r, c.BankReference, now)
}

// cut is s within maxTextLen characters.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxTextLen {
		return s
	}
	return string([]rune(s)[:maxTextLen])
}

// credit records a deposit of v into incoming, with its waiting balance
// record, and queues its clearing.
func (s *Service) credit(ctx context.Context, tx *store.Tx, merchantID string, v validated, r Request, bankRef string, now time.Time) (Deposit, error) {
	// A deposit is group-committed in the merchant's lane with its other
	// work, jobs among it, each of which locks the account before anything
	// else: so does the deposit (ledger.SendLockAccount). The lock goes to
	// the server with the post, in its round trip.
	if err := ledger.SendLockAccount(ctx, tx, merchantID, v.account.ID, v.currency.Code); err != nil {
		return Deposit{}, fmt.Errorf("credit deposit: %w", err)
	}
	uuid := store.RandomID(store.UUIDLen)
	rec := ledger.Record{
		MerchantID: merchantID, AccountID: v.account.ID, Currency: v.currency.Code,
		RequestType: ledger.MoneyIn, TransactionType: ledger.TopUp, Status: ledger.Waiting,
		Amount: v.amount, Total: v.amount, ReferenceID: uuid, CreatedAt: now,
	}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return Deposit{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{
		MerchantID: merchantID, Currency: v.currency.Code, Kind: "deposit.receive", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: v.account.ID, Bucket: ledger.External, Amount: -v.amount},
			{Account: v.account.ID, Bucket: ledger.Incoming, Amount: v.amount},
		},
	}); err != nil {
		return Deposit{}, err
	}
	d := Deposit{
		UUID: uuid, BalanceID: rec.ID, AccountNumber: v.account.AccountNumber, Currency: v.currency.Code,
		Amount: money.StringOf(v.amount, v.currency), Status: Received,
		RemitterName: r.RemitterName, RemitterBankName: r.RemitterBankName, RemitterBranchName: r.RemitterBranchName,
		Remarks: r.Remarks, CreatedAt: clock.Time{T: now},
	}
	var ref any
	if bankRef != "" {
		d.BankReference, ref = &bankRef, bankRef
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO deposits (uuid, merchant_id, account_id, balance_id, currency, amount,
		remitter_name, remitter_bank_name, remitter_branch_name, remarks, status, created_at, updated_at, bank_reference)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)`,
		uuid, merchantID, v.account.ID, rec.ID, v.currency.Code, v.amount,
		r.RemitterName, r.RemitterBankName, r.RemitterBranchName, r.Remarks, string(Received), now.UnixMilli(), ref); err != nil {
		return Deposit{}, fmt.Errorf("store deposit: %w", err)
	}
	err := job.Enqueue(ctx, tx, s.queue, JobClear, clearJob{MerchantID: merchantID, UUID: uuid},
		job.Options{ClockOf: merchantID, RunAt: now.Add(s.ClearAfter)})
	return d, err
}

// clearJob is the payload of JobClear: the deposit to clear.
type clearJob struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// clear moves a received deposit from incoming to available and marks its
// balance record done. It runs in the job's transaction, so it happens once.
func (s *Service) clear(ctx context.Context, tx *store.Tx, _ job.Job, c clearJob) error {
	// A worker runs the clearing among the merchant's other jobs in one
	// transaction, each of which queues on the account before anything else
	// (ledger.LockAccount): so does this one. The lock goes to the server
	// with the deposit's read.
	if err := ledger.SendLockAccountOf(ctx, tx, c.MerchantID, `SELECT account_id, currency FROM deposits WHERE uuid = $1 AND merchant_id = $2`,
		c.UUID, c.MerchantID); err != nil {
		return fmt.Errorf("clear deposit %s: %w", c.UUID, err)
	}
	var (
		accountID, amount int64
		balanceID, cur    string
		status            Status
	)
	err := tx.QueryRowContext(ctx, `SELECT account_id, amount, balance_id, currency, status FROM deposits WHERE uuid = $1 AND merchant_id = $2`,
		c.UUID, c.MerchantID).Scan(&accountID, &amount, &balanceID, &cur, &status)
	if err != nil {
		return fmt.Errorf("clear deposit %s: %w", c.UUID, err)
	}
	if status != Received {
		return nil
	}
	now, err := s.clock.Read(ctx, tx, c.MerchantID)
	if err != nil {
		return fmt.Errorf("clear deposit %s: %w", c.UUID, err)
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{
		MerchantID: c.MerchantID, Currency: cur, Kind: "deposit.clear", RecordID: balanceID, At: now,
		Legs: []ledger.Leg{
			{Account: accountID, Bucket: ledger.Incoming, Amount: -amount},
			{Account: accountID, Bucket: ledger.Available, Amount: amount},
		},
	}); err != nil {
		return err
	}
	if err := ledger.Finish(ctx, tx, c.MerchantID, balanceID, ledger.Done, now); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE deposits SET status = $1, updated_at = $2 WHERE uuid = $3 AND merchant_id = $4`,
		string(Cleared), now.UnixMilli(), c.UUID, c.MerchantID)
	return err
}
