package payout

import (
	"context"
	"fmt"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// V1Payout is the v1 payout record: the detail endpoint's answer and the
// body of its webhooks.
type V1Payout struct {
	ID                  int64           `json:"id"`
	UUID                string          `json:"uuid"`
	Currency            string          `json:"currency" enum:"AUD"`
	Description         string          `json:"description"`
	TotalAmount         money.String    `json:"total_amount"`
	TotalFees           money.String    `json:"total_fees"`
	Status              Status          `json:"status" enum:"held,scheduled,processing,completed,rejected,expired"`
	ScheduledAt         *clock.Time     `json:"scheduled_at"`
	IsRetry             bool            `json:"is_retry"`
	ExternalID          string          `json:"external_id"`
	WebhookNotification *webhook.Target `json:"webhook_notification"`
	Approval            *Approval       `json:"approval"`
	Transactions        []V1TxRecord    `json:"payout_transactions"`
	CreatedAt           clock.Time      `json:"created_at"`
	UpdatedAt           clock.Time      `json:"updated_at"`
}

// V1TxRecord is one transaction of a v1 payout record.
type V1TxRecord struct {
	UUID          string       `json:"uuid"`
	Payee         string       `json:"payee"`
	Email         string       `json:"email"`
	Amount        money.String `json:"amount"`
	Fee           money.String `json:"fee"`
	Address       string       `json:"address"`
	PayID         *string      `json:"payid"`
	PayIDType     *string      `json:"payid_type"`
	BSB           *string      `json:"bsb"`
	AccountNumber *string      `json:"account_number"`
	Status        TxStatus     `json:"status" enum:"pending,done,failed,returned"`
	FailureReason string       `json:"failure_reason"`
	BalanceID     string       `json:"balance_id"`
	BankReference *string      `json:"bank_reference" doc:"What the bank and the recipient's statement name the transaction by (16 upper-case letters and digits), given when the transaction is handed to a rail; null before."`
}

// CreateV1 accepts a payout made through the v1 API (CONTRACT §6): r is the
// engine's request a v1 body comes to (httpapi translates it), and the
// payout is recorded as a v1 payout, its record and its webhooks' bodies the
// V1Payout. Its external_id is unique among the merchant's v1 payouts unless
// isRetry reuses that of a payout with a failed transaction; then the engine's
// rules apply, each problem named by r's members.
func (s *Service) CreateV1(ctx context.Context, tx *store.Tx, p merchant.Principal, r Request, isRetry bool) (V1Payout, error) {
	if err := s.checkExternalID(ctx, tx, p.MerchantID, r.ExternalID, isRetry); err != nil {
		return V1Payout{}, err
	}
	created, err := s.create(ctx, tx, p, r, Maker{Label: "app:" + p.AppID}, "v1", isRetry)
	if err != nil {
		return V1Payout{}, err
	}
	return created.v1View(), nil
}

// ValidateRequest applies the engine's rules that need no database to r, as Create
// would, for an entry point that reports the problems of its own request
// with the engine's, all at once (the v1 API).
func (s *Service) ValidateRequest(p merchant.Principal, r Request) error {
	_, err := s.validate(p, &r, s.clock.Of(p))
	return err
}

// checkExternalID applies the v1 rule on external_id: unique among the
// merchant's v1 payouts, unless is_retry reuses the id of a payout with a
// failed transaction (the retry pays only what it carries). Concurrent
// creates with one id are made one at a time.
func (s *Service) checkExternalID(ctx context.Context, tx *store.Tx, merchantID, externalID string, isRetry bool) error {
	if externalID == "" {
		if isRetry {
			return fault.Field("is_retry", "needs the external_id of the payout it retries")
		}
		return nil
	}
	if err := tx.LockKey(ctx, "payout.external_id", merchantID+"\x00"+externalID); err != nil {
		return fmt.Errorf("lock external_id: %w", err)
	}
	var uuid string
	err := tx.QueryRowContext(ctx, `SELECT uuid FROM payouts WHERE merchant_id = $1 AND external_id = $2 AND api_version = 'v1'
		ORDER BY id DESC LIMIT 1`, merchantID, externalID).Scan(&uuid)
	if store.IsNoRows(err) {
		if isRetry {
			return fault.Field("is_retry", fmt.Sprintf("no earlier payout has external_id %q to retry", externalID))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("check external_id: %w", err)
	}
	earlier, err := s.get(ctx, tx, merchantID, uuid)
	if err != nil {
		return err
	}
	if !isRetry {
		return fault.New(fault.Conflict, fault.CodeAlreadyExists, "payout %d (uuid %s) already has external_id %q; send is_retry: true to retry a payout with a failed transaction",
			earlier.id, earlier.uuid, externalID)
	}
	if !earlier.hasFailed() {
		return fault.New(fault.Conflict, fault.CodeAlreadyExists, "payout %d (uuid %s) with external_id %q has no failed transaction (it is %s); only a payout with a failed transaction may be retried",
			earlier.id, earlier.uuid, externalID, earlier.status)
	}
	return nil
}

// hasFailed reports whether a transaction of r failed, which is what lets
// is_retry reuse r's external_id (CONTRACT §24), whether r is completed or
// still processing the others. A rejected or expired payout's transactions
// have all failed.
func (r row) hasFailed() bool {
	for _, t := range r.txs {
		if t.status == TxFailed {
			return true
		}
	}
	return false
}

// GetV1 reads one of the caller's v1 payouts by id (which wins) or uuid.
func (s *Service) GetV1(ctx context.Context, p merchant.Principal, id int64, uuid string) (V1Payout, error) {
	q := s.db.Read()
	if id != 0 {
		if err := q.QueryRowContext(ctx, `SELECT uuid FROM payouts WHERE id = $1 AND merchant_id = $2 AND api_version = 'v1'`,
			id, p.MerchantID).Scan(&uuid); err != nil {
			if store.IsNoRows(err) {
				return V1Payout{}, fault.NotFoundf("no payout %d", id)
			}
			return V1Payout{}, fmt.Errorf("read payout %d: %w", id, err)
		}
	}
	r, err := s.get(ctx, q, p.MerchantID, uuid)
	if err != nil {
		return V1Payout{}, err
	}
	if r.apiVersion != "v1" {
		return V1Payout{}, notFound(uuid)
	}
	return r.v1View(), nil
}

// v1View renders r as the v1 record.
func (r row) v1View() V1Payout {
	v2 := r.view()
	out := V1Payout{ID: r.id, UUID: r.uuid, Currency: r.currency, Description: r.description, TotalAmount: v2.TotalAmount,
		TotalFees: v2.TotalFees, Status: r.status, ScheduledAt: v2.ScheduledAt, IsRetry: r.isRetry, ExternalID: r.externalID,
		WebhookNotification: v2.WebhookNotification, Approval: v2.Approval, Transactions: []V1TxRecord{},
		CreatedAt: v2.CreatedAt, UpdatedAt: v2.UpdatedAt}
	for _, t := range v2.PayoutTransactions {
		rec := V1TxRecord{UUID: t.UUID, Payee: t.FirstName, Email: t.Email, Amount: t.Amount, Fee: t.Fee, Status: t.Status,
			FailureReason: t.FailureReason, BalanceID: t.BalanceID, BankReference: t.BankReference}
		rec.Address, _ = t.PayoutMethodParams["address"].(string)
		str := func(k string) *string {
			if v, ok := t.PayoutMethodParams[k].(string); ok {
				return &v
			}
			return nil
		}
		rec.BSB, rec.AccountNumber, rec.PayID = str("bsb"), str("account_number"), str("pay_id")
		if typ := str("pay_id_type"); typ != nil {
			lower := strings.ToLower(*typ)
			rec.PayIDType = &lower
		}
		out.Transactions = append(out.Transactions, rec)
	}
	return out
}
