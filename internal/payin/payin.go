// Package payin is the v2 payin: a merchant asks its customer for money by a
// method from the catalogue (bank transfer, virtual account, QR, e-wallet,
// mobile money), the customer pays, the money lands in the ledger, and the
// merchant hears of every status change by webhook. Refunds, cancellations,
// expiry and OTP confirmation live here too.
package payin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"payd/internal/clock"
	"payd/internal/contact"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// Status of a payin (CONTRACT §4).
type Status string

const (
	Pending        Status = "pending"
	Received       Status = "received"
	Failed         Status = "failed"
	Expired        Status = "expired"
	Cancelled      Status = "cancelled"
	ReturnPending  Status = "return_pending"
	ReturnReceived Status = "return_received"
	ReturnExpired  Status = "return_expired"
)

// statusText is the human-readable status_text of each status.
var statusText = map[Status]string{
	Pending:        "Waiting for the customer's payment",
	Received:       "Payment received",
	Failed:         "Payment failed",
	Expired:        "Payment expired before it was made",
	Cancelled:      "Payment cancelled by the merchant",
	ReturnPending:  "Refund in progress",
	ReturnReceived: "Refund received by the customer",
	ReturnExpired:  "Refund could not be delivered; funds returned to the balance",
}

// Statuses are every payin status, in the order of a payin's life (the
// portal's status select).
var Statuses = []Status{Pending, Received, Failed, Expired, Cancelled, ReturnPending, ReturnReceived, ReturnExpired}

// ValidStatus reports whether s names a payin status.
func ValidStatus(s string) bool {
	_, ok := statusText[Status(s)]
	return ok
}

// StageAuthorizeOTP means an OTP was sent and must be confirmed before the
// payment details are issued.
const StageAuthorizeOTP = "authorize_otp"

// Contacts is what payins need to know about contacts.
type Contacts interface {
	Standing(ctx context.Context, q store.Querier, merchantID, email string) (contact.Standing, error)
}

// Service runs payins.
type Service struct {
	db       *store.DB
	queue    *job.Queue
	clock    merchant.Clock
	log      *slog.Logger
	webhooks *webhook.Dispatcher
	policy   webhook.Policy
	contacts Contacts
	// PublicURL is the base of the hosted payment pages (pay_url).
	PublicURL string
	// linkKey signs pay_url links.
	linkKey []byte
	// PayCodeDelay is how long after creation jp_bank_jpy and
	// au_payid_npp_aud receive their pay_code; RefundDelay how long a refund
	// takes to reach the customer (sandbox rails).
	PayCodeDelay time.Duration
	RefundDelay  time.Duration
}

// Deps are what a Service needs.
type Deps struct {
	DB        *store.DB
	Queue     *job.Queue
	Clock     merchant.Clock
	Log       *slog.Logger
	Webhooks  *webhook.Dispatcher
	Policy    webhook.Policy
	Contacts  Contacts
	PublicURL string
	LinkKey   []byte
}

// NewService returns a Service and registers its jobs.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, queue: d.Queue, clock: d.Clock, log: d.Log, webhooks: d.Webhooks, policy: d.Policy,
		contacts: d.Contacts, PublicURL: d.PublicURL, linkKey: d.LinkKey, PayCodeDelay: 2 * time.Second, RefundDelay: 5 * time.Second}
	job.Register(d.Queue, jobExpire, s.expireJob)
	job.Register(d.Queue, jobExpireSecond, s.expireSecondJob)
	job.Register(d.Queue, jobExpireMinute, s.expireMinuteJob)
	job.RegisterBatch(d.Queue, jobClear, s.clearJob, s.clearJobs)
	job.Register(d.Queue, jobReleaseReserve, s.releaseReserveJob)
	job.Register(d.Queue, jobIssuePayCode, s.issuePayCodeJob)
	job.Register(d.Queue, jobRefund, s.refundJob)
	return s
}

// Payin is the payin record as every endpoint and webhook returns it.
type Payin struct {
	UUID                string            `json:"uuid"`
	Name                string            `json:"name"`
	Email               string            `json:"email"`
	ExternalID          string            `json:"external_id"`
	Status              Status            `json:"status" enum:"pending,received,failed,expired,cancelled,return_pending,return_received,return_expired"`
	Stage               string            `json:"stage,omitempty" doc:"authorize_otp while an OTP awaits confirmation; absent otherwise."`
	StatusText          string            `json:"status_text"`
	PayCode             map[string]any    `json:"pay_code" doc:"How to pay; its shape depends on the method's family: qr_string (QR; th_qrpay_thb also bank_information), virtual_account_number/virtual_bank_code/virtual_bank_name (virtual accounts), pay_url (redirect methods). jp_bank_jpy and au_payid_npp_aud receive theirs shortly after creation, by webhook. Empty until issued."`
	Currency            string            `json:"currency"`
	Amount              money.String      `json:"amount" doc:"The recorded amount (VND, JPY, XAF, KRW, XOF rounded to whole units)."`
	GST                 bool              `json:"gst"`
	GSTAmount           money.Number      `json:"gst_amount" doc:"10 % of amount when gst is true (AU merchants in AUD only), else 0: a JSON number, as the public schema types it."`
	Total               money.String      `json:"total" doc:"amount + gst_amount: what the customer is asked to pay."`
	PaidAmount          money.String      `json:"paid_amount"`
	PaymentMethod       string            `json:"payment_method"`
	PayinMethodParams   map[string]any    `json:"payin_method_params"`
	Description         string            `json:"description"`
	IsRefundable        bool              `json:"is_refundable"`
	ExpiredAt           clock.Time        `json:"expired_at"`
	PayBy               string            `json:"pay_by" doc:"The method's family: bank_transfer, virtual_account, qr, e_wallet or mobile_money."`
	WebhookNotification *webhook.Target   `json:"webhook_notification"`
	Metadata            map[string]string `json:"metadata"`
	RefundInformation   RefundInformation `json:"refund_information"`
	BankReference       *string           `json:"bank_reference,omitempty" doc:"The key of the operator's bank entry that paid it: present only on a payin a bank feed received."`
	CreatedAt           clock.Time        `json:"created_at"`
	UpdatedAt           clock.Time        `json:"updated_at"`
}

// RefundInformation summarises refunds of a payin.
type RefundInformation struct {
	TotalAmount  money.String `json:"total_amount" doc:"What was paid: the most that can be refunded in all."`
	RefundAmount money.String `json:"refund_amount" doc:"Refunded so far (including a refund in progress)."`
	Description  string       `json:"description" doc:"Description of the latest refund."`
}

// row is a payins row.
type row struct {
	uuid, merchantID, method, currency   string
	meth                                 Method         // the catalogue's entry for method
	cur                                  money.Currency // currency's definition
	accountID                            int64
	status                               Status
	stage                                string
	amount, gstAmount, total, paid, fee  int64
	reserve, refunded, lastRefund        int64
	gst                                  bool
	refundDescription                    string
	name, email, externalID, description string
	params, payCode, metadata            string
	endpointURL, authorizationHeader     string
	otpAttempts                          int
	balanceID                            *string
	bankReference                        *string
	expiredAt, createdAt, updatedAt      int64
}

const rowColumns = `uuid, merchant_id, account_id, method, currency, status, stage, amount, gst, gst_amount, total, paid_amount,
	fee, reserve, refunded, last_refund, refund_description, name, email, external_id, description, params, pay_code, metadata,
	endpoint_url, authorization_header, otp_attempts, balance_id, bank_reference, expired_at, created_at, updated_at`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.uuid, &r.merchantID, &r.accountID, &r.method, &r.currency, &r.status, &r.stage, &r.amount, &r.gst,
		&r.gstAmount, &r.total, &r.paid, &r.fee, &r.reserve, &r.refunded, &r.lastRefund, &r.refundDescription, &r.name, &r.email,
		&r.externalID, &r.description, &r.params, &r.payCode, &r.metadata, &r.endpointURL, &r.authorizationHeader,
		&r.otpAttempts, &r.balanceID, &r.bankReference, &r.expiredAt, &r.createdAt, &r.updatedAt)
	if err != nil {
		return row{}, err
	}
	if r.meth, err = Lookup(r.method); err != nil {
		return row{}, fmt.Errorf("payin %s: %w", r.uuid, err)
	}
	if r.cur, err = money.Lookup(r.currency); err != nil {
		return row{}, fmt.Errorf("payin %s: %w", r.uuid, err)
	}
	return r, nil
}

func (r row) target() webhook.Target {
	return webhook.Target{EndpointURL: r.endpointURL, AuthorizationHeader: r.authorizationHeader}
}

// view renders a row as the API's record.
func (r row) view() Payin {
	c, m := r.cur, r.meth
	p := Payin{
		UUID: r.uuid, Name: r.name, Email: r.email, ExternalID: r.externalID, Status: r.status, Stage: r.stage,
		StatusText: statusText[r.status], Currency: r.currency,
		Amount: money.StringOf(r.amount, c), GST: r.gst, GSTAmount: money.NumberOf(r.gstAmount, c), Total: money.StringOf(r.total, c),
		PaidAmount: money.StringOf(r.paid, c), PaymentMethod: r.method, Description: r.description, IsRefundable: m.Refundable,
		ExpiredAt: clock.Time{T: clock.FromMillis(r.expiredAt)}, PayBy: string(m.Family),
		RefundInformation: RefundInformation{TotalAmount: money.StringOf(r.paid, c), RefundAmount: money.StringOf(r.refunded, c), Description: r.refundDescription},
		CreatedAt:         clock.Time{T: clock.FromMillis(r.createdAt)}, UpdatedAt: clock.Time{T: clock.FromMillis(r.updatedAt)},
		BankReference: r.bankReference,
	}
	p.PayCode, p.PayinMethodParams, p.Metadata = map[string]any{}, map[string]any{}, map[string]string{}
	json.Unmarshal([]byte(r.payCode), &p.PayCode)
	json.Unmarshal([]byte(r.params), &p.PayinMethodParams)
	json.Unmarshal([]byte(r.metadata), &p.Metadata)
	if t := r.target(); !t.IsZero() {
		p.WebhookNotification = &t
	}
	return p
}

// lock says what a read of a payin locks (on PostgreSQL).
type lock int

const (
	// readOnly locks nothing.
	readOnly lock = iota
	// lockAccount is for a change, which may post to the ledger: it locks
	// the payin's account first (ledger.LockAccount), then the payin, so
	// that batches of changes (group-committed ones, job batches) all queue
	// on the account before they hold any payin, and never deadlock.
	lockAccount
	// lockPayin locks the payin alone: for a change whose only posts are
	// spread by the payin (a receipt, its clearing in its slot's lane),
	// which take the slot's rows last, so concurrent receipts into one
	// account do not queue on it.
	lockPayin
)

// get reads merchantID's payin uuid, locking what l says.
func (s *Service) get(ctx context.Context, q store.Querier, merchantID, uuid string, l lock) (row, error) {
	query := `SELECT ` + rowColumns + ` FROM payins WHERE uuid = $1 AND merchant_id = $2`
	if tx, ok := q.(*store.Tx); ok && l != readOnly {
		if l == lockAccount {
			if err := s.lockAccountOf(ctx, tx, merchantID, uuid); err != nil {
				return row{}, err
			}
		}
		query += s.db.ForUpdate()
	}
	r, err := scanRow(q.QueryRowContext(ctx, query, uuid, merchantID))
	if isNoRows(err) {
		return row{}, notFound(uuid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read payin %s: %w", uuid, err)
	}
	return r, nil
}

// getAll is get for several of merchantID's payins, in one statement (and
// with lockAccount one more, which locks their accounts first, in account
// id order): the payins found, in uuid order, the order their locks are
// taken in.
func (s *Service) getAll(ctx context.Context, tx *store.Tx, merchantID string, uuids []string, l lock) ([]row, error) {
	in, args := store.In(2, uuids)
	args = append([]any{merchantID}, args...)
	if l == lockAccount {
		if _, err := ledger.LockAccountOf(ctx, tx, merchantID, `SELECT DISTINCT account_id, currency FROM payins WHERE merchant_id = $1 AND uuid IN (`+in+`)`, args...); err != nil {
			return nil, fmt.Errorf("read %d payins: %w", len(uuids), err)
		}
	}
	query := `SELECT ` + rowColumns + ` FROM payins WHERE merchant_id = $1 AND uuid IN (` + in + `) ORDER BY uuid`
	if l != readOnly {
		query += s.db.ForUpdate()
	}
	var rows []row
	err := tx.Query(ctx, query, args, func(sc store.Row) error {
		r, err := scanRow(sc)
		rows = append(rows, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %d payins: %w", len(uuids), err)
	}
	return rows, nil
}

func (s *Service) lockAccountOf(ctx context.Context, tx *store.Tx, merchantID, uuid string) error {
	found, err := ledger.LockAccountOf(ctx, tx, merchantID, `SELECT account_id, currency FROM payins WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID)
	if err != nil {
		return fmt.Errorf("read payin %s: %w", uuid, err)
	}
	if !found {
		return notFound(uuid)
	}
	return nil
}

// emit sends the payin's current record to its webhook as eventType.
func (s *Service) emit(ctx context.Context, tx *store.Tx, r row, eventType string, at time.Time) error {
	_, err := s.webhooks.Emit(ctx, tx, webhook.Event{MerchantID: r.merchantID, Type: eventType, RecordUUID: r.uuid,
		Target: r.target(), Payload: r.view(), At: at})
	return err
}
