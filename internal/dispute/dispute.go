// Package dispute is the chargebacks of card payments (CONTRACT §22, §25):
// a cardholder's bank disputes a paid card payment (a gateway payment or a
// Payment Gateway 3 card link), the merchant answers with evidence before
// due_by or accepts, and the network decides. Every state change moves its
// money in the same transaction, as balanced ledger entries, with its event:
//
//	opened         available → outgoing (a waiting dispute money_out record);
//	               available may go below zero, by a dispute only
//	won            outgoing → available (the record failed)
//	lost           outgoing → out of payd (the record done), and the
//	               account's dispute fee from available (a dispute_fee record)
//
// The deadline is a job on the merchant's clock; each change locks the
// payment's account, then the dispute's row, so two answers (accept against
// submit, two processes) decide once.
package dispute

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Status is where a dispute stands (CONTRACT §22).
type Status string

const (
	NeedsResponse Status = "needs_response"
	UnderReview   Status = "under_review"
	Won           Status = "won"
	Lost          Status = "lost"
)

// Statuses lists them in their order.
var Statuses = []Status{NeedsResponse, UnderReview, Won, Lost}

// Reasons a cardholder's bank gives (CONTRACT §25).
var Reasons = []string{"fraudulent", "duplicate", "product_not_received", "product_unacceptable", "credit_not_processed", "general"}

// ResponseWindow is how long the merchant has to answer: due_by is this
// long after the dispute opened, on the merchant's clock.
const ResponseWindow = 7 * 24 * time.Hour

// Event types.
const (
	EventCreated = "dispute.created"
	EventUpdated = "dispute.updated"
	EventClosed  = "dispute.closed"
)

// Dispute is a dispute as its endpoints and events carry it.
type Dispute struct {
	UUID                string        `json:"uuid"`
	PaymentType         string        `json:"payment_type" enum:"gateway_payment,payin_link"`
	PaymentID           string        `json:"payment_id" doc:"The gateway payment's id (as a string) or the payin link's uuid."`
	Amount              money.String  `json:"amount" doc:"What the cardholder's bank took back: moved from available when the dispute opened."`
	Currency            string        `json:"currency"`
	Reason              string        `json:"reason" enum:"fraudulent,duplicate,product_not_received,product_unacceptable,credit_not_processed,general"`
	ReasonCode          string        `json:"reason_code" doc:"The card network's own code for the reason."`
	Status              Status        `json:"status" enum:"needs_response,under_review,won,lost" doc:"needs_response: answer with evidence (submit) or accept before due_by; under_review: evidence submitted, the network decides; won: the amount is back in available (final); lost: accepted, decided against, or unanswered by due_by: the amount is gone and the account's dispute fee debited (final)."`
	DueBy               clock.Time    `json:"due_by" doc:"7 days after opening, on the merchant's clock: unanswered by then, the dispute is lost."`
	Evidence            Evidence      `json:"evidence"`
	EvidenceSubmittedAt *clock.Time   `json:"evidence_submitted_at"`
	Fee                 *money.String `json:"fee" doc:"The dispute fee debited when lost; null until then."`
	BalanceID           string        `json:"balance_id" doc:"The dispute's money_out balance record (transaction_type dispute)."`
	CreatedAt           clock.Time    `json:"created_at"`
	UpdatedAt           clock.Time    `json:"updated_at"`
}

// Evidence is what the merchant answers with, staged until submitted.
type Evidence struct {
	ProductDescription    string `json:"product_description"`
	CustomerCommunication string `json:"customer_communication"`
	RefundPolicy          string `json:"refund_policy"`
	UncategorizedText     string `json:"uncategorized_text"`
	Files                 []File `json:"files"`
}

func (e Evidence) empty() bool {
	return e.ProductDescription == "" && e.CustomerCommunication == "" && e.RefundPolicy == "" && e.UncategorizedText == "" && len(e.Files) == 0
}

// File is one file of the evidence (its content is GET /v2/disputes/evidence/file's).
type File struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	ContentType string     `json:"content_type" enum:"application/pdf,image/png,image/jpeg"`
	Size        int64      `json:"size"`
	SHA256      string     `json:"sha256"`
	CreatedAt   clock.Time `json:"created_at"`
}

// Service runs disputes.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	webhooks *webhook.Dispatcher
	gateway  *gateway.Service
}

// Deps are what a Service needs.
type Deps struct {
	DB       *store.DB
	Queue    *job.Queue
	Clock    merchant.Clock
	Webhooks *webhook.Dispatcher
	// Gateway has the card payments; the Service answers its refunds'
	// question (is the payment disputed?) and its network's notices.
	Gateway *gateway.Service
}

var jobDeadline = job.NewKind[ref]("dispute.deadline")

type ref struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// NewService returns a Service and registers its job and its part of the
// gateway.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, webhooks: d.Webhooks, gateway: d.Gateway}
	d.Gateway.OnDispute(s.disputed, s.notice)
	job.Register(d.Queue, jobDeadline, s.deadlineJob)
	return s
}

// row is a dispute as stored.
type row struct {
	merchantID, uuid, paymentType, paymentID string
	accountID                                int64
	currency                                 string
	cur                                      money.Currency
	amount                                   int64
	reason, reasonCode                       string
	status                                   Status
	dueBy                                    int64
	evidence                                 Evidence
	submittedAt, fee                         *int64
	recordID                                 string
	feeRecordID                              *string
	endpointURL, authorizationHeader         string
	createdAt, updatedAt                     int64
}

const columns = `merchant_id, uuid, payment_type, payment_id, account_id, currency, amount, reason, reason_code, status, due_by,
	evidence, evidence_submitted_at, fee, record_id, fee_record_id, endpoint_url, authorization_header, created_at, updated_at`

func scan(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	var evidence string
	err := sc.Scan(&r.merchantID, &r.uuid, &r.paymentType, &r.paymentID, &r.accountID, &r.currency, &r.amount, &r.reason, &r.reasonCode,
		&r.status, &r.dueBy, &evidence, &r.submittedAt, &r.fee, &r.recordID, &r.feeRecordID, &r.endpointURL, &r.authorizationHeader,
		&r.createdAt, &r.updatedAt)
	if err != nil {
		return r, err
	}
	if r.cur, err = money.Lookup(r.currency); err != nil {
		return r, fmt.Errorf("dispute %s: %w", r.uuid, err)
	}
	if r.evidence, err = decodeEvidence(evidence); err != nil {
		return r, fmt.Errorf("dispute %s: evidence: %w", r.uuid, err)
	}
	return r, nil
}

// storedEvidence is Evidence as the evidence column keeps it (times in
// Unix ms).
type storedEvidence struct {
	ProductDescription    string       `json:"product_description,omitempty"`
	CustomerCommunication string       `json:"customer_communication,omitempty"`
	RefundPolicy          string       `json:"refund_policy,omitempty"`
	UncategorizedText     string       `json:"uncategorized_text,omitempty"`
	Files                 []storedFile `json:"files"`
}

type storedFile struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	CreatedAt   int64  `json:"created_at"`
}

func encodeEvidence(e Evidence) (string, error) {
	s := storedEvidence{ProductDescription: e.ProductDescription, CustomerCommunication: e.CustomerCommunication,
		RefundPolicy: e.RefundPolicy, UncategorizedText: e.UncategorizedText, Files: []storedFile{}}
	for _, f := range e.Files {
		s.Files = append(s.Files, storedFile{ID: f.ID, Name: f.Name, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256,
			CreatedAt: f.CreatedAt.T.UnixMilli()})
	}
	b, err := json.Marshal(s)
	return string(b), err
}

func decodeEvidence(text string) (Evidence, error) {
	var s storedEvidence
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return Evidence{}, err
	}
	e := Evidence{ProductDescription: s.ProductDescription, CustomerCommunication: s.CustomerCommunication,
		RefundPolicy: s.RefundPolicy, UncategorizedText: s.UncategorizedText, Files: []File{}}
	for _, f := range s.Files {
		e.Files = append(e.Files, File{ID: f.ID, Name: f.Name, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256, CreatedAt: at(f.CreatedAt)})
	}
	return e, nil
}

func (r row) target() webhook.Target {
	return webhook.Target{EndpointURL: r.endpointURL, AuthorizationHeader: r.authorizationHeader}
}

func at(ms int64) clock.Time { return clock.Time{T: clock.FromMillis(ms)} }

func (r row) view() Dispute {
	d := Dispute{UUID: r.uuid, PaymentType: r.paymentType, PaymentID: r.paymentID, Amount: money.StringOf(r.amount, r.cur),
		Currency: r.currency, Reason: r.reason, ReasonCode: r.reasonCode, Status: r.status, DueBy: at(r.dueBy),
		Evidence: r.evidence, BalanceID: r.recordID, CreatedAt: at(r.createdAt), UpdatedAt: at(r.updatedAt)}
	if d.Evidence.Files == nil {
		d.Evidence.Files = []File{}
	}
	if r.submittedAt != nil {
		t := at(*r.submittedAt)
		d.EvidenceSubmittedAt = &t
	}
	if r.fee != nil {
		f := money.StringOf(*r.fee, r.cur)
		d.Fee = &f
	}
	return d
}

func notFound(uuid string) error { return fault.NotFoundf("no dispute %s", uuid) }

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// get reads merchantID's dispute uuid; lock (for a change) takes its
// account's ledger lock first, then the row's.
func (s *Service) get(ctx context.Context, q store.Querier, merchantID, uuid string, lock bool) (row, error) {
	if uuid == "" || len(uuid) > 64 {
		return row{}, notFound(uuid)
	}
	forUpdate := ""
	if tx, ok := q.(*store.Tx); ok && lock {
		found, err := ledger.LockAccountOf(ctx, tx, merchantID, `SELECT account_id, currency FROM disputes WHERE uuid = $1 AND merchant_id = $2`, uuid)
		if err != nil {
			return row{}, err
		}
		if !found {
			return row{}, notFound(uuid)
		}
		forUpdate = s.db.ForUpdate()
	}
	r, err := scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM disputes WHERE merchant_id = $1 AND uuid = $2`+forUpdate, merchantID, uuid))
	if isNoRows(err) {
		return row{}, notFound(uuid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read dispute %s: %w", uuid, err)
	}
	return r, nil
}

// ofPayment reads the dispute of a payment, if it has one (the caller
// holds the payment's account lock).
func (s *Service) ofPayment(ctx context.Context, tx *store.Tx, merchantID, typ, id string) (row, bool, error) {
	r, err := scan(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM disputes WHERE merchant_id = $1 AND payment_type = $2 AND payment_id = $3`+s.db.ForUpdate(),
		merchantID, typ, id))
	if isNoRows(err) {
		return row{}, false, nil
	}
	if err != nil {
		return row{}, false, fmt.Errorf("read dispute of %s %s: %w", typ, id, err)
	}
	return r, true, nil
}

// disputed answers the gateway's refunds: a payment with a dispute, open
// or decided, is not refunded.
func (s *Service) disputed(ctx context.Context, tx *store.Tx, merchantID, typ, id string) (bool, error) {
	_, ok, err := s.ofPayment(ctx, tx, merchantID, typ, id)
	return ok, err
}

// Get returns the caller's dispute uuid (GET /v2/disputes/detail).
func (s *Service) Get(ctx context.Context, p merchant.Principal, uuid string) (Dispute, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid, false)
	if err != nil {
		return Dispute{}, err
	}
	return r.view(), nil
}

// ListQuery selects disputes.
type ListQuery struct {
	Status   Status
	Currency string
	// Page from 1; PerPage 1 to 100.
	Page, PerPage int
}

// List returns a page of the caller's disputes, newest first, and how many
// match in all. Every currency's, unless Currency names one.
func (s *Service) List(ctx context.Context, p merchant.Principal, q ListQuery) ([]Dispute, int, error) {
	where := `merchant_id = $1 AND ($2 = '' OR status = $2) AND ($3 = '' OR currency = $3)`
	args := []any{p.MerchantID, string(q.Status), q.Currency}
	db := s.db.Read()
	var total int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM disputes WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count disputes: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT `+columns+` FROM disputes WHERE `+where+` ORDER BY created_at DESC, uuid DESC LIMIT $4 OFFSET $5`,
		append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list disputes: %w", err)
	}
	defer rows.Close()
	out := []Dispute{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list disputes: %w", err)
		}
		out = append(out, r.view())
	}
	return out, total, rows.Err()
}

// emit writes the dispute's event to its payment's target and the
// merchant's endpoints.
func (s *Service) emit(ctx context.Context, tx *store.Tx, r row, typ string, now time.Time) error {
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: typ, RecordUUID: r.uuid, Target: r.target(),
		Payload: r.view(), At: now})
	return err
}
