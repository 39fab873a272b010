// Package reconcile proves that the money payd says it sent reached the
// merchant's bank (CONTRACT §19, §25): a merchant uploads the statement of
// the bank account payd settles into (camt.053, BAI2 or the CSV of §19, read
// by package statement's readers), each booked credit of it becomes a line,
// and each line is matched to the settlement or external transfer it is
// (same currency and amount, its reference containing the record's bank
// reference, its value date within three business days of the record's in
// the merchant's zone), or stays unmatched until a person matches or
// ignores it. The records sent to that account in the statement's period
// that no line matched are missing. The summary adds up: payd's total sent
// in the period is matched + missing, the statement's credits are matched +
// unmatched + ignored.
//
// A statement is known by the SHA-256 of its bytes: the same file again is
// the same statement, and adds nothing. Manual changes (match, unmatch,
// ignore) and uploads are written to the portal's audit log in the same
// transaction.
package reconcile

import (
	"time"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/portal"
	"payd/internal/statement"
	"payd/internal/store"
)

// LineStatus is what explains a statement's credit.
type LineStatus string

const (
	// Matched: the credit is a settlement or an external transfer of payd's.
	Matched LineStatus = "matched"
	// Unmatched: nothing of payd's explains it yet.
	Unmatched LineStatus = "unmatched"
	// Ignored: a person said it needs no explaining (with a reason).
	Ignored LineStatus = "ignored"
)

// RecordType is the kind of payd record a line matches.
type RecordType string

const (
	SettlementRecord RecordType = "settlement"
	TransferRecord   RecordType = "transfer"
)

// Bounds of an upload (TIGER_STYLE: a limit on everything).
const (
	// MaxFileBytes is the largest statement an upload takes.
	MaxFileBytes = 8 << 20
	// MaxEntries is the most entries (credits and debits) a statement may hold.
	MaxEntries = 20_000
	// MaxPeriodDays is the longest period a statement may report.
	MaxPeriodDays = 366
	// MaxReasonRunes bounds an ignore's reason.
	MaxReasonRunes = 500
	// businessDays is how far a credit's value date may be from its
	// record's date (CONTRACT §19), Monday to Friday (§25).
	businessDays = 3
)

// The entries this package writes to the portal's audit log.
const (
	AuditUploaded  portal.AuditAction = "statement_uploaded"
	AuditMatched   portal.AuditAction = "statement_line_matched"
	AuditUnmatched portal.AuditAction = "statement_line_unmatched"
	AuditIgnored   portal.AuditAction = "statement_line_ignored"
)

// Actor is who changes a reconciliation, as the audit log names them: a
// portal user's email, or an API app ("app APPID"), and from which address.
type Actor struct {
	Label  string
	Client string
}

// AppActor is the actor of an API call by app appID.
func AppActor(appID, client string) Actor { return Actor{Label: "app " + appID, Client: client} }

// Summary is what a statement's answers share: the statement, and how its
// lines stand.
type Summary struct {
	ID             string        `json:"id"`
	Format         string        `json:"format" enum:"camt053,bai2,csv"`
	AccountNumber  string        `json:"account_number" doc:"The bank account the statement reports: the file's (camt Acct/Id, BAI2 03), or the upload's account_number for a CSV."`
	Currency       string        `json:"currency"`
	From           string        `json:"from" doc:"The first day the statement reports (YYYY-MM-DD)."`
	To             string        `json:"to" doc:"The last day the statement reports (YYYY-MM-DD)."`
	OpeningBalance *money.String `json:"opening_balance" doc:"As the statement states it; null when it states none (a CSV)."`
	ClosingBalance *money.String `json:"closing_balance" doc:"As the statement states it; null when it states none (a CSV)."`
	Entries        int           `json:"entries" doc:"Every entry of the statement, debits included; its credits are the lines."`
	Matched        int           `json:"matched" doc:"Lines matched to a settlement or transfer."`
	Unmatched      int           `json:"unmatched" doc:"Lines nothing of payd's explains."`
	Ignored        int           `json:"ignored" doc:"Lines a person ignored."`
	SHA256         string        `json:"sha256" doc:"The SHA-256 of the file: the same file again is this statement."`
	CreatedAt      clock.Time    `json:"created_at"`
}

// Statement is an uploaded statement as the upload and the list answer it.
type Statement struct {
	Summary
	Missing int `json:"missing" doc:"Completed settlements and external transfers to the account in the statement's period that no line matched."`
}

// Detail is a statement with its lines and what is missing from it.
type Detail struct {
	Summary
	Lines   []Line          `json:"lines" doc:"The statement's credits, in file order."`
	Missing []MissingRecord `json:"missing" doc:"Completed settlements and external transfers to the account in the statement's period that no line matched."`
}

// Line is one credit of a statement.
type Line struct {
	ID          string       `json:"id"`
	Date        string       `json:"date" doc:"The value date (YYYY-MM-DD)."`
	Amount      money.String `json:"amount"`
	Reference   string       `json:"reference"`
	Description string       `json:"description"`
	Status      LineStatus   `json:"status" enum:"matched,unmatched,ignored"`
	MatchedTo   *RecordRef   `json:"matched_to" doc:"The record a matched line is; null otherwise."`
	Reason      *string      `json:"reason" doc:"Why an ignored line was ignored; null otherwise."`
	amountMinor int64
}

// RecordRef names a settlement or an external transfer.
type RecordRef struct {
	Type RecordType `json:"type" enum:"settlement,transfer"`
	UUID string     `json:"uuid"`
}

// MissingRecord is a completed record of payd's that no line matched.
type MissingRecord struct {
	Type   RecordType   `json:"type" enum:"settlement,transfer"`
	UUID   string       `json:"uuid"`
	Amount money.String `json:"amount"`
	Date   string       `json:"date" doc:"The local date it completed (YYYY-MM-DD)."`
}

// Service keeps the merchants' reconciliations.
type Service struct {
	db    *store.DB
	clock merchant.Clock
}

// Deps are what a Service needs.
type Deps struct {
	DB    *store.DB
	Clock merchant.Clock
}

// NewService returns the service.
func NewService(d Deps) *Service { return &Service{db: d.DB, clock: d.Clock} }

// lockNamespace names the lock a reconciliation change of one merchant
// holds (store.Tx.LockKey): uploads and manual changes of a merchant
// happen one at a time, so that a record is matched by one line at most.
const lockNamespace = "reconcile"

// dateOf is the calendar date in loc of t, in milliseconds.
func dateOf(t int64, loc *time.Location) statement.Date {
	return statement.DateOf(clock.FromMillis(t).In(loc))
}
